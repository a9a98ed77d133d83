# A file that changes while a mibz2 file object reads it: rewritten in place (cp over it, a
# resumed download), the open file raises OSError(ESTALE) "... changed while it was read", having
# returned only the old content's bytes, and a new open reads the new content; replaced by a rename
# (mv), the open file reads its old content to the end.
import bz2
import errno
import os
import random

import pytest

import mibz2

SIZE = 8 << 20


def text(seed):
    rng = random.Random(seed)
    words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(4000)]
    out = bytearray()
    while len(out) < SIZE:
        out += b" ".join(rng.choice(words) for _ in range(12)) + b"\n"
    return bytes(out[:SIZE])


@pytest.fixture(scope="module")
def contents():
    old, new = text(1), text(2)
    return old, new, bz2.compress(old, 1), bz2.compress(new, 1)


def open_small(path, index_dir):
    # One decoder and a small cache: what was not read yet is decoded from the file as it is then.
    return mibz2.open(path, threads=1, cache_size="2MiB", index_dir=index_dir)


def test_a_file_rewritten_in_place_while_read_raises_estale(contents, tmp_path, index_dir):
    old, new, old_file, new_file = contents
    p = tmp_path / "x.bz2"
    p.write_bytes(old_file)
    with open_small(p, index_dir) as f:
        got = f.read(1 << 20)
        assert got == old[: 1 << 20]
        with open(p, "r+b") as w:  # the same inode, as cp writes over a file
            w.truncate(0)
            w.write(new_file)
        with pytest.raises(OSError) as e:
            while True:
                chunk = f.read(256 << 10)
                if not chunk:
                    break
                got += chunk
        assert e.value.errno == errno.ESTALE, e.value
        assert "changed while it was read" in str(e.value) and str(p) in str(e.value)
        assert len(got) < len(old) and old.startswith(got), "bytes that are not the old content's"
        # pread, from another offset, says the same.
        with pytest.raises(OSError) as e2:
            f.raw.pread(1000, len(old) - 5000)
        assert e2.value.errno == errno.ESTALE
    with open_small(p, index_dir) as f:
        assert f.read() == new


def test_a_file_replaced_by_a_rename_while_read_reads_its_old_content(contents, tmp_path, index_dir):
    old, _, old_file, new_file = contents
    p = tmp_path / "x.bz2"
    p.write_bytes(old_file)
    with open_small(p, index_dir) as f:
        got = f.read(1 << 20)
        other = tmp_path / "other.bz2"
        other.write_bytes(new_file)
        os.rename(other, p)
        got += f.read()
    assert got == old
