#!/usr/bin/env bash
# The rooms' one-way dependencies (docs/ARCHITECTURE.md, "Rooms"): every #include "room/..." in a
# room's files names the room itself or one the table allows. Prints each include that crosses a
# line and fails; silent and 0 when none does.
#
# Usage: tests/layering_test.sh SOURCE_DIR
set -euo pipefail
top=${1:?usage: layering_test.sh SOURCE_DIR}
cd "$top"

declare -A allowed=(
  [src/base]=""
  [src/io]="base"
  [src/bz2]="base"
  [src/index]="base io bz2"
  [src/engine]="base io bz2 index"
  [src/catalog]="base io bz2 index engine"
  [src/fs]="base io bz2 index engine catalog"
  [python/src]="base io bz2 index engine catalog"
  [src/programs]="base io bz2 index engine catalog fs"
)
rooms="base io bz2 index engine catalog fs programs"

bad=0
checked=0
for room in "${!allowed[@]}"; do
  [[ -d $room ]] || { echo "layering: no room $room" >&2; bad=1; continue; }
  own=${room#src/}
  while IFS= read -r line; do
    file=${line%%:*}
    target=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"${line#*:}")
    [[ " $rooms " == *" $target "* ]] || continue  # not a room (a file of the same directory, version.h)
    checked=$((checked + 1))
    [[ $target == "$own" || " ${allowed[$room]} " == *" $target "* ]] && continue
    echo "layering: $file includes $target/ (${room} may include: ${allowed[$room]:-nothing of ours})"
    bad=1
  done < <(grep -rHE '^#include "[a-z_]+/' "$room" --include='*.h' --include='*.cc' || true)
done
((checked > 0)) || { echo "layering: no include was checked" >&2; exit 1; }
exit $bad
