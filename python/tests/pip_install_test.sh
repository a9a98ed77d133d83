#!/usr/bin/env bash
# `pip install ./python` as a user runs it (ctest python_pip_install): into a fresh venv made from
# Debian's /usr/bin/python3 with --system-site-packages (so that the venv sees Debian's fsspec,
# setuptools, wheel and pybind11, which build and serve the module without the network), with
# --no-build-isolation and --no-index. Then, in that venv and nowhere else: mibz2 imports from the
# venv, reads a .bz2 as bzip2 -dc does, fsspec finds the mibz2 protocol by its entry point (the
# same one `cmake --install` writes), and the type stubs are installed.
#
# The build runs in a copy of the checkout's sources, so that it leaves nothing in the checkout;
# with ccache on the PATH it compiles through ccache (CMAKE_CXX_COMPILER_LAUNCHER, as any CMake
# build takes it), relative to the copy, so that a second run compiles little.
#
# Usage: python/tests/pip_install_test.sh SOURCE_DIR
set -euo pipefail

source=$1
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mibz2-pip-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# Nothing of the build tree or the caller's Python setup leaks in: the module must come from the venv.
unset PYTHONPATH PYTHONHOME PIP_REQUIRE_VIRTUALENV
export PYTHONDONTWRITEBYTECODE=1

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# The sources a checkout holds for the module: the top CMakeLists, its cmake/ and src/ (the C++
# libraries) and python/ (without what an earlier build left in it).
repo=$scratch/repo
mkdir "$repo"
cp -r "$source/CMakeLists.txt" "$source/LICENSE" "$source/cmake" "$source/src" "$source/python" "$repo/"
rm -rf "$repo/python/build" "$repo/python/dist" "$repo"/python/*.egg-info

if [[ -z ${CMAKE_CXX_COMPILER_LAUNCHER:-} ]] && command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR=$repo CCACHE_NOHASHDIR=1
fi

# What is tested is the packaging, not the optimiser: a Debug build compiles faster than the
# Release one a user's `pip install` makes (this test in the suite on a 2-core machine: 456 s in
# Release, 121 s in Debug). setup.py takes CMake's CMAKE_BUILD_TYPE.
export CMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-Debug}

venv=$scratch/venv
/usr/bin/python3 -m venv --system-site-packages "$venv"
start=$SECONDS
if ! (cd "$scratch" && "$venv/bin/python" -m pip install --no-build-isolation --no-index --no-cache-dir \
        ./repo/python) >"$scratch/pip.log" 2>&1; then
  cat "$scratch/pip.log" >&2
  echo "FAIL: pip install --no-build-isolation ./python" >&2
  exit 1
fi
echo "pip install ./python: $((SECONDS - start)) s (CMAKE_BUILD_TYPE=$CMAKE_BUILD_TYPE, CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-none})"

# A .bz2 to read: a real text, compressed by bzip2 in 100k blocks (several blocks).
cat /usr/share/common-licenses/* >"$scratch/text"
bzip2 -1 -k "$scratch/text"

got=$(cd / && XDG_CACHE_HOME=$scratch/cache "$venv/bin/python" - "$venv" "$scratch/text.bz2" "$scratch/text" <<'EOF'
import importlib.metadata as metadata
import os
import sys

import fsspec
import mibz2

venv, compressed, plain = sys.argv[1:]
print("from-venv", mibz2.__file__.startswith(venv + "/"))
with mibz2.open(compressed) as f:
    print("reads", f.read() == open(plain, "rb").read())
print("fsspec", type(fsspec.filesystem("mibz2")).__name__, "mibz2" in fsspec.available_protocols())
print("entry-point", *[e.value for e in metadata.entry_points(group="fsspec.specs") if e.name == "mibz2"])
package = os.path.dirname(mibz2.__file__)
print("stubs", os.path.isfile(f"{package}/__init__.pyi"), os.path.isfile(f"{package}/py.typed"))
print("version", metadata.version("mibz2") == mibz2.__version__)
EOF
) || fail "the installed module failed"

expect() { grep -qxF "$1" <<<"$got" || fail "expected '$1', the installed module said: $got"; }
expect "from-venv True"
expect "reads True"
expect "fsspec Mibz2FileSystem True"
expect "stubs True True"
expect "version True"
# The entry point is the one `cmake --install` writes (python/dist-info/entry_points.txt).
cmake_entry=$(sed -n 's/^mibz2 = //p' "$source/python/dist-info/entry_points.txt")
expect "entry-point $cmake_entry"

if ((failures)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "pip install ./python: a working module in a fresh venv"
