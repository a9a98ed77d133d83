# The mibz2:// filesystem: registered by its entry point, the mount's names, sizes and bytes.
import os
import shutil
import subprocess
import sys

import fsspec
import pytest

import mibz2
from conftest import bzip2_dc


@pytest.fixture
def tree(corpus, tmp_path, index_dir):
    """A source tree with every case of the mount's name rules."""
    d = tmp_path / "src"
    (d / "sub").mkdir(parents=True)
    files = corpus["files"]
    shutil.copy(files["jsonl"]["pbzip2"], d / "data.json.bz2")           # shown as data.json
    shutil.copy(files["text"]["bzip2"], d / "book.tbz2")                # shown as book.tar
    shutil.copy(files["text"]["lbzip2"], d / "taken.bz2")               # "taken" is real: raw
    (d / "taken").write_bytes(b"a real file\n")
    (d / "fake.bz2").write_bytes(b"not bzip2 at all\n")                 # not bzip2: as it is
    (d / "notes.txt").write_bytes(b"plain\n")
    shutil.copy(files["text"]["pbzip2"], d / "sub" / "deep.txt.bz2")     # sub/deep.txt
    os.symlink("data.json.bz2", d / "link.json.bz2")                    # shown as link.json
    fs = fsspec.filesystem("mibz2", index_dir=index_dir)
    return str(d), fs, corpus["plain"]


def test_registered_by_entry_point_without_import(tmp_path):
    code = ("import sys, fsspec; fs = fsspec.filesystem('mibz2'); "
            "print(type(fs).__module__, type(fs).__name__, 'mibz2' in fsspec.available_protocols())")
    out = subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.PIPE, text=True).stdout
    assert out.split() == ["mibz2._fsspec", "Mibz2FileSystem", "True"]


def test_names_as_the_mount_shows_them(tree):
    d, fs, plain = tree
    assert fs.ls(d, detail=False) == [f"{d}/{n}" for n in
                                      ["book.tar", "data.json", "fake.bz2", "link.json", "notes.txt", "sub", "taken",
                                       "taken.bz2"]]
    assert fs.ls(f"mibz2://{d}/sub", detail=False) == [f"{d}/sub/deep.txt"]
    assert sorted(fs.glob(f"{d}/*.json")) == [f"{d}/data.json", f"{d}/link.json"]
    assert "sub/deep.txt" in " ".join(fs.glob(f"mibz2://{d}/**/*.txt"))
    assert not fs.exists(f"{d}/data.json.bz2") and not fs.exists(f"{d}/book.tbz2")
    assert fs.isdir(f"{d}/sub") and fs.isfile(f"{d}/data.json")
    with pytest.raises(FileNotFoundError):
        fs.info(f"{d}/missing")


def test_glob_and_find_as_on_the_local_filesystem(tree, tmp_path):
    # The same tree with the names shown, on the local filesystem: the same answers.
    d, fs, _ = tree
    mirror = tmp_path / "mirror"
    (mirror / "sub").mkdir(parents=True)
    for name in ["book.tar", "data.json", "fake.bz2", "link.json", "notes.txt", "taken", "taken.bz2",
                 "sub/deep.txt"]:
        (mirror / name).write_bytes(b"")
    local = fsspec.filesystem("file")
    for pattern in ["*.json", "**/*.txt", "**", "*", "sub/*", "*.bz2", "t*", "**/deep*"]:
        want = [p[len(str(mirror)):] for p in local.glob(f"{mirror}/{pattern}")]
        got = [p[len(d):] for p in fs.glob(f"mibz2://{d}/{pattern}")]
        assert sorted(got) == sorted(want), pattern
    want = [p[len(str(mirror)):] for p in local.find(str(mirror), withdirs=True)]
    assert sorted(p[len(d):] for p in fs.find(d, withdirs=True)) == sorted(want)
    # Names only: nothing was indexed to be matched.
    assert fs.find(d, detail=True)[f"{d}/book.tar"]["size"] == len(tree[2]["text"])


def test_sizes_and_bytes(tree):
    d, fs, plain = tree
    info = fs.info(f"mibz2://{d}/data.json")
    assert info["type"] == "file" and info["size"] == len(plain["jsonl"])
    assert info["source"] == f"{d}/data.json.bz2"
    assert fs.size(f"{d}/book.tar") == len(plain["text"])
    assert fs.size(f"{d}/taken.bz2") == os.path.getsize(f"{d}/taken.bz2")  # raw
    assert fs.cat_file(f"{d}/taken.bz2") == open(f"{d}/taken.bz2", "rb").read()
    assert fs.cat_file(f"{d}/fake.bz2") == b"not bzip2 at all\n"
    assert fs.cat_file(f"{d}/data.json") == plain["jsonl"]
    assert fs.cat_file(f"{d}/link.json") == plain["jsonl"]
    assert fs.cat_file(f"{d}/sub/deep.txt") == bzip2_dc(f"{d}/sub/deep.txt.bz2")
    text = plain["text"]
    for start, end in [(0, 10), (123_456, 987_654), (-5000, None), (len(text) - 10, len(text) + 10), (-10, -2),
                       (500, 400)]:
        assert fs.cat_file(f"{d}/book.tar", start=start, end=end) == text[start:end], (start, end)
    detail = {e["name"]: e for e in fs.ls(d)}
    assert detail[f"{d}/data.json"]["size"] == len(plain["jsonl"])
    assert detail[f"{d}/sub"]["type"] == "directory"
    with fs.open(f"{d}/book.tar", "rb") as f:
        f.seek(1_000_000)
        assert f.read(100) == text[1_000_000:1_000_100]
    with fsspec.open(f"mibz2://{d}/data.json", "rt") as f:
        assert f.readline().encode() == plain["jsonl"].split(b"\n", 1)[0] + b"\n"


def test_read_only(tree):
    d, fs, _ = tree
    with pytest.raises(ValueError):
        fs.open(f"{d}/data.json", "wb")
    with pytest.raises(PermissionError):
        fs.rm(f"{d}/data.json")


SHOWN = ["book.tar", "data.json", "fake.bz2", "link.json", "notes.txt", "sub", "taken", "taken.bz2"]

# Run in a child process, so that an open that blocks (on a fifo) fails the test instead of
# hanging it.
NOTHING_BUT_THE_MOUNTS_ENTRIES = r"""
import errno, os, stat, sys, fsspec
d, specials = sys.argv[1], sys.argv[2:]
fs = fsspec.filesystem("mibz2", index_dir=os.environ["INDEX_DIR"])
print("ls", *[os.path.basename(p) for p in fs.ls(d, detail=False)])
print("types", *sorted({e["type"] for e in fs.ls(d)}))
print("find", *[p[len(d) + 1:] for p in fs.find(d, withdirs=True)])
print("glob", *[os.path.basename(p) for p in fs.glob(d + "/*")])
for name in specials:
    p = d + "/" + name
    refused = []
    for what, call in [("exists", lambda: fs.exists(p)), ("info", lambda: fs.info(p)),
                       ("open", lambda: fs.open(p).read(10)), ("cat", lambda: fs.cat_file(p))]:
        try:
            got = call()
        except FileNotFoundError:
            got = False
        if got is False:
            refused.append(what)
    print("refused", name, *refused)
sys.stdout.flush()
"""


def run_child(program, *args, index_dir):
    env = dict(os.environ, INDEX_DIR=index_dir)
    out = subprocess.run([sys.executable, "-c", program, *map(str, args)], env=env, check=True, timeout=60,
                         stdout=subprocess.PIPE, text=True).stdout
    return [line.split() for line in out.splitlines()]


def test_fifos_sockets_and_devices_are_left_out_as_the_mount_leaves_them(tree, index_dir):
    import socket
    import stat

    d, _, _ = tree
    specials = ["pipe", "pipe.bz2", "sock", "to_pipe", "to_zero.bz2"]
    os.mkfifo(f"{d}/pipe")
    os.mkfifo(f"{d}/pipe.bz2")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(f"{d}/sock")
    os.symlink("pipe", f"{d}/to_pipe")
    if os.geteuid() == 0:  # a device node: /dev/zero's (mknod needs root)
        os.mknod(f"{d}/zero", stat.S_IFCHR | 0o644, os.makedev(1, 5))
        specials.append("zero")
    os.symlink("zero", f"{d}/to_zero.bz2")
    try:
        got = run_child(NOTHING_BUT_THE_MOUNTS_ENTRIES, d, *specials, index_dir=index_dir)
    finally:
        sock.close()
    assert got[0] == ["ls", *SHOWN]
    assert got[1] == ["types", "directory", "file"]
    assert got[2] == ["find", *sorted(SHOWN + ["sub/deep.txt"])]
    assert got[3] == ["glob", *SHOWN]
    assert got[4:] == [["refused", name, "exists", "info", "open", "cat"] for name in specials]


# A listing kept while its directory's mtime holds (restored here, as `rsync -t` or `touch -r`
# would) may be older than an entry: a listed file that is now a fifo is refused, never waited on.
LISTED_FILE_NOW_A_FIFO = r"""
import os, sys, fsspec
d = sys.argv[1]
fs = fsspec.filesystem("mibz2", index_dir=os.environ["INDEX_DIR"])
assert fs.isfile(d + "/notes.txt") and fs.isfile(d + "/data.json")
st = os.stat(d)
for name in ("notes.txt", "data.json.bz2"):
    os.unlink(d + "/" + name)
    os.mkfifo(d + "/" + name)
os.utime(d, ns=(st.st_atime_ns, st.st_mtime_ns))
for name in ("notes.txt", "data.json"):
    try:
        fs.open(d + "/" + name).read(10)
        print("read", name)
    except OSError as e:
        print("refused", name, type(e).__name__)
"""


def test_a_listed_file_that_became_a_fifo_is_refused_without_blocking(tree, index_dir):
    d, _, _ = tree
    got = run_child(LISTED_FILE_NOW_A_FIFO, d, index_dir=index_dir)
    assert got == [["refused", "notes.txt", "FileNotFoundError"], ["refused", "data.json", "OSError"]]
