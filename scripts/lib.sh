# shellcheck shell=bash
# Helpers shared by the scripts in scripts/: sourced, never run. A script starts with
#
#   set -euo pipefail
#   # shellcheck source-path=SCRIPTDIR source=lib.sh
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# and then has $repo (the repository root) and the functions below. scripts/setup stands alone: it
# must work before anything else is in place.

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# usage: the comment at the top of the running script, from its second line to `set -euo`, without
# the leading "# " (each script's --help).
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

# median: the median of the numbers on standard input, one a line (the mean of the middle two for
# an even count).
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# build_targets BUILD_DIR TARGET...: builds the targets through scripts/build, quietly (compiler
# errors still show). A new BUILD_DIR is configured Release; one that is configured keeps its
# build type.
build_targets() {
  local dir=$1 type=Release
  shift
  if [[ -f $dir/CMakeCache.txt ]]; then
    type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$dir/CMakeCache.txt")
  fi
  local targets=() t
  for t in "$@"; do targets+=(--target "$t"); done
  "$repo/scripts/build" "${targets[@]}" "$dir" "-DCMAKE_BUILD_TYPE=${type:-Release}" >/dev/null
}

# need_tools NAME TOOL...: exits with "NAME: TOOL not found (run scripts/setup)" unless every TOOL
# is on the PATH.
need_tools() {
  local name=$1 tool
  shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$name: $tool not found (run scripts/setup)" >&2; exit 1; }
  done
}

# corpus_ext KIND: the extension of scripts/make-corpus's document of KIND (json, xml or tar);
# status 1 for a kind it does not make.
corpus_ext() {
  case $1 in
    wikidata | real-json) echo json ;;
    wikipedia) echo xml ;;
    linux-tar) echo tar ;;
    *) return 1 ;;
  esac
}

# corpus_default_size KIND: the size a benchmark takes of KIND when none is given (real-json's
# source is about 130 MB of Debian's files).
corpus_default_size() { if [[ $1 == real-json ]]; then echo 130M; else echo 200M; fi; }

# scratch_cache: a scratch directory in $scratch, removed at exit, and XDG_CACHE_HOME inside it, so
# that the indexes mibz2 writes stay out of the user's ~/.cache. Sets the EXIT trap.
scratch_cache() {
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  export XDG_CACHE_HOME=$scratch/cache
}
