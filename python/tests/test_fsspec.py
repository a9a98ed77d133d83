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
