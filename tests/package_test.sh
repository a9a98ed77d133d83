#!/usr/bin/env bash
# The install and the Debian package, as a user gets them (run by ctest as package_install):
#   1. `cmake --install` into a scratch root (DESTDIR): the programs, man pages, bash completions
#      and documents land where they belong, the installed programs run, the completion completes;
#   2. the uninstall script removes every installed file (the build's own install_manifest.txt
#      is put back as it was);
#   3. `cpack -G DEB` into a scratch directory: the package lists the programs and man pages,
#      depends on fuse3 and on the Debian packages of the libraries (and, with the Python module,
#      on the python3 it is built for), and its programs run.
#
# Usage: tests/package_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

build=$1 source=$2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mibz2-package-test.XXXXXX")
manifest=$build/install_manifest.txt
[[ -e $manifest ]] && cp -p "$manifest" "$scratch/manifest.saved"
restore() {
  if [[ -e $scratch/manifest.saved ]]; then cp -p "$scratch/manifest.saved" "$manifest"; else rm -f "$manifest"; fi
  rm -rf "$scratch"
}
trap restore EXIT

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
check_file() { [[ -f $1 ]] || fail "not installed: $1"; }

expected=(
  usr/bin/mibz2 usr/bin/mibz2fs
  usr/share/man/man1/mibz2fs.1 usr/share/man/man1/mibz2.1
  usr/share/bash-completion/completions/mibz2 usr/share/bash-completion/completions/mibz2fs
  usr/share/doc/mibz2fs/LICENSE usr/share/doc/mibz2fs/README.md usr/share/doc/mibz2fs/CHANGELOG.md
)

# ---- 1. cmake --install into a scratch root ----
root=$scratch/root
DESTDIR=$root cmake --install "$build" --prefix /usr >"$scratch/install.log" || { cat "$scratch/install.log"; exit 1; }
for f in "${expected[@]}"; do check_file "$root/$f"; done
for p in mibz2 mibz2fs; do
  [[ -x $root/usr/bin/$p ]] || fail "$p is not executable"
  version=$("$root/usr/bin/$p" --version) || fail "installed $p --version failed"
  [[ $version == "$p "[0-9]* ]] || fail "installed $p --version says: $version"
done
cmp -s "$source/man/mibz2fs.1" "$root/usr/share/man/man1/mibz2fs.1" || fail "mibz2fs.1 differs from the source"
# The completion, sourced as bash-completion sources it, completes subcommands and mount options.
got=$(bash -c 'source "$1"
  COMP_WORDS=(mibz2 in); COMP_CWORD=1; _mibz2; echo "${COMPREPLY[*]}"
  COMP_WORDS=(mibz2fs -o "ro,wait"); COMP_CWORD=2; _mibz2fs; echo "${COMPREPLY[*]}"
  complete -p mibz2 mibz2fs' _ "$root/usr/share/bash-completion/completions/mibz2")
[[ $got == $'index info\nro,wait_index\ncomplete -F _mibz2 mibz2\ncomplete -F _mibz2fs mibz2fs' ]] ||
  fail "bash completion gave: $got"

# The Python module, when built (-DMIBZ2_PYTHON=ON): the package and its dist-info in Debian's
# interpreter's dist-packages under the prefix, importable there, its fsspec protocol registered.
python_dir=
if [[ -d $build/python-package/mibz2 ]]; then
  python_dir=$(cd "$root" && ls -d usr/lib/python3.*/dist-packages 2>/dev/null | head -1)
  if [[ -z $python_dir ]]; then
    fail "the Python module is not installed in usr/lib/python3.*/dist-packages"
  else
    for f in mibz2/__init__.py mibz2/_fsspec.py mibz2/__init__.pyi mibz2/py.typed \
             mibz2-*.dist-info/METADATA mibz2-*.dist-info/entry_points.txt; do
      compgen -G "$root/$python_dir/$f" >/dev/null || fail "not installed: $python_dir/$f"
    done
    compgen -G "$root/$python_dir/mibz2/_core.*.so" >/dev/null || fail "not installed: $python_dir/mibz2/_core.*.so"
    got=$(cd / && PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$root/$python_dir /usr/bin/python3 -c 'import fsspec, mibz2
print(mibz2.__file__.startswith("'"$root"'"), type(fsspec.filesystem("mibz2")).__name__)') ||
      fail "the installed module cannot be imported"
    [[ $got == "True Mibz2FileSystem" ]] || fail "the installed module says: $got"
  fi
fi

# ---- 2. uninstall by the manifest ----
cp "$manifest" "$scratch/manifest"
grep -q "^/usr/bin/mibz2fs\$" "$scratch/manifest" || fail "the manifest does not list /usr/bin/mibz2fs"
DESTDIR=$root cmake -DMANIFEST="$scratch/manifest" -P "$source/cmake/uninstall.cmake" >"$scratch/uninstall.log" ||
  { cat "$scratch/uninstall.log"; fail "uninstall failed"; }
left=$(find "$root" -type f -o -type l)
[[ -z $left ]] || fail "left after uninstall: $left"
targets=$(cmake --build "$build" --target help)
grep -Eq '(^|[ .])uninstall$' <<<"$targets" || fail "no uninstall target"

# ---- 3. the Debian package ----
if command -v cpack >/dev/null && command -v dpkg-deb >/dev/null && command -v dpkg-shlibdeps >/dev/null; then
  (cd "$build" && cpack -G DEB -B "$scratch/deb" >"$scratch/cpack.log" 2>&1) || { cat "$scratch/cpack.log"; exit 1; }
  debs=("$scratch"/deb/mibz2fs_*.deb)
  [[ -f ${debs[0]} ]] || { ls -R "$scratch/deb"; fail "no mibz2fs_*.deb"; exit 1; }
  contents=$(dpkg-deb -c "${debs[0]}")
  for f in "${expected[@]}"; do grep -q " \./$f\$" <<<"$contents" || fail "the package lacks /$f"; done
  if [[ -n $python_dir ]]; then
    grep -q " \./$python_dir/mibz2/__init__.py\$" <<<"$contents" || fail "the package lacks the Python module"
  fi
  depends=$(dpkg-deb -f "${debs[0]}" Depends)
  for d in fuse3 libfuse3-3 libbz2-1.0 libc6; do
    grep -Eq "(^|, )$d( |,|$)" <<<"$depends" || fail "Depends lacks $d: $depends"
  done
  if [[ -n $python_dir ]]; then
    # The extension loads only in the interpreter of its ABI (usr/lib/python3.Y): that python3.
    minor=${python_dir#usr/lib/python3.}; minor=${minor%%/*}
    for d in "python3 (>= 3.$minor~)" "python3 (<< 3.$((minor + 1)))"; do
      grep -Fq "$d" <<<"$depends" || fail "Depends lacks $d: $depends"
    done
  fi
  dpkg-deb -x "${debs[0]}" "$scratch/unpacked"
  version=$("$scratch/unpacked/usr/bin/mibz2fs" --version) || fail "packaged mibz2fs --version failed"
  [[ $version == "mibz2fs "[0-9]* ]] || fail "packaged mibz2fs --version says: $version"
  echo "package: $(basename "${debs[0]}"), Depends: $depends"
else
  echo "package: cpack, dpkg-deb or dpkg-shlibdeps missing (scripts/setup installs them): the .deb is not checked"
fi

((failures == 0)) || { echo "$failures failures" >&2; exit 1; }
echo "install, uninstall and package: all good"
