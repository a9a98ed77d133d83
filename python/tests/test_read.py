# mibz2.open, index and info against bzip2 -dc: whole files, ranges, seek + readline, text mode,
# threads, fork, an index made by `mibz2 index` reused, and errors.
import errno
import io
import os
import random
import subprocess
import threading

import pytest

import mibz2
from conftest import MAKERS, bzip2_dc

KINDS = ["text", "jsonl"]


@pytest.mark.parametrize("maker", list(MAKERS))
@pytest.mark.parametrize("kind", KINDS)
def test_whole_file_is_what_bzip2_gives(corpus, maker, kind):
    path = corpus["files"][kind][maker]
    expected = bzip2_dc(path)
    assert expected == corpus["plain"][kind]
    with mibz2.open(path) as f:
        assert isinstance(f, io.BufferedReader)
        assert f.read() == expected
        assert f.read() == b""
        assert f.tell() == len(expected)
    # In 1 MiB chunks, through readinto.
    got = bytearray()
    buf = bytearray(1 << 20)
    with mibz2.open(path) as f:
        while n := f.readinto(buf):
            got += buf[:n]
    assert got == expected


@pytest.mark.parametrize("maker", list(MAKERS))
def test_ranges_and_random_seek_readline(corpus, maker):
    path = corpus["files"]["text"][maker]
    expected = corpus["plain"]["text"]
    rng = random.Random(25)
    with mibz2.open(path) as f:
        assert f.raw.size == len(expected)
        assert f.seek(0, io.SEEK_END) == len(expected)
        for _ in range(200):
            pos = rng.randrange(0, len(expected) + 10)
            f.seek(pos)
            line = f.readline()
            end = expected.find(b"\n", pos)
            assert line == (expected[pos:] if end < 0 else expected[pos:end + 1]), pos
            n = rng.randrange(0, 300_000)
            start = rng.randrange(0, len(expected))
            f.seek(start)
            assert f.read(n) == expected[start:start + n]
            assert f.raw.pread(n, start) == expected[start:start + n]
        # Backwards, from the end: what bz2.open would decode from the start each time.
        f.seek(-100, io.SEEK_END)
        assert f.read() == expected[-100:]
        f.seek(10)
        assert f.read(5) == expected[10:15]


def test_text_mode_and_iteration(corpus):
    path = corpus["files"]["jsonl"]["pbzip2"]
    expected = corpus["plain"]["jsonl"].decode("utf-8")
    with mibz2.open(path, "rt", encoding="utf-8") as f:
        assert isinstance(f, io.TextIOWrapper)
        lines = list(f)
    assert lines == expected.splitlines(keepends=True)
    with mibz2.open(path, "rb") as f:
        assert sum(1 for _ in f) == expected.count("\n")


def test_readers_in_threads_get_exact_bytes(corpus):
    path = corpus["files"]["text"]["lbzip2"]
    expected = corpus["plain"]["text"]
    failures = []

    def reader(seed):
        rng = random.Random(seed)
        with mibz2.open(path) as f:
            for _ in range(30):
                start = rng.randrange(0, len(expected))
                n = rng.randrange(1, 400_000)
                f.seek(start)
                if f.read(n) != expected[start:start + n]:
                    failures.append((seed, start, n))

    threads = [threading.Thread(target=reader, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_one_engine_per_settings():
    a = mibz2._engine(None, None, None)
    assert mibz2._engine(None, None, None) is a
    threads, cache = mibz2.engine_settings()
    assert a.threads == threads and a.cache_size == cache
    b = mibz2._engine(1, "40MiB", None)
    assert b is not a and b.threads == 1 and b.cache_size == 40 << 20


def test_a_file_opened_before_fork_reads_in_the_child(corpus):
    path = corpus["files"]["text"]["bzip2"]
    expected = corpus["plain"]["text"]
    f = mibz2.open(path)
    assert f.read(1000) == expected[:1000]
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's engine has no threads here
        try:
            f.seek(500_000)
            ok = f.read(200_000) == expected[500_000:700_000]
            with mibz2.open(path) as g:
                ok = ok and g.read() == expected
            os.write(w, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(w)
    answer = os.read(r, 1)
    os.close(r)
    os.waitpid(pid, 0)
    assert answer == b"1"
    f.seek(0)
    assert f.read() == expected
    f.close()


def test_an_index_made_by_mibz2_index_is_reused(corpus, mibz2_bin, index_dir, tmp_path):
    path = tmp_path / "reused.json.bz2"
    path.write_bytes(open(corpus["files"]["jsonl"]["bzip2"], "rb").read())
    subprocess.run([mibz2_bin, "index", "--index-dir", index_dir, str(path)], check=True, stdout=subprocess.PIPE)
    [index_file] = os.listdir(index_dir)
    index_path = os.path.join(index_dir, index_file)
    before = os.stat(index_path).st_mtime_ns
    with mibz2.open(path, index_dir=index_dir) as f:
        assert f.read() == corpus["plain"]["jsonl"]
    got = mibz2.info(path, index_dir=index_dir)
    assert got["index"] == {"path": index_path, "state": "current"}
    assert os.listdir(index_dir) == [index_file]
    assert os.stat(index_path).st_mtime_ns == before
    # The same object as `mibz2 info --json`.
    import json

    out = subprocess.run([mibz2_bin, "info", "--json", "--index-dir", index_dir, str(path)], check=True,
                         stdout=subprocess.PIPE).stdout
    assert json.loads(out) == got


def test_an_index_made_here_serves_mibz2(corpus, mibz2_bin, index_dir, tmp_path):
    path = tmp_path / "made.txt.bz2"
    path.write_bytes(open(corpus["files"]["text"]["pbzip2"], "rb").read())
    got = mibz2.index(path, index_dir=index_dir)
    assert got["index"]["state"] == "built now"
    assert got["decompressed_size"] == len(corpus["plain"]["text"])
    import json

    out = subprocess.run([mibz2_bin, "info", "--json", "--index-dir", index_dir, str(path)], check=True,
                         stdout=subprocess.PIPE).stdout
    assert json.loads(out)["index"]["state"] == "current"


def check_progress(calls, size):
    """A build's progress calls: the last says done, none goes back or beyond, totals are the size."""
    assert calls, "no progress call for a build"
    assert calls[-1] == (size, size)
    assert all(total == size for _, total in calls)
    dones = [done for done, _ in calls]
    assert dones == sorted(dones)
    assert 0 <= dones[0]


def test_progress_ends_with_the_compressed_size_for_every_build(corpus, index_dir, tmp_path):
    # Whatever the build's length (this one may finish before the first periodic call), the
    # caller that waited for it hears of its end; opens that load an index or find it ready do not.
    path = tmp_path / "progress.json.bz2"
    path.write_bytes(open(corpus["files"]["jsonl"]["lbzip2"], "rb").read())
    size = os.path.getsize(path)
    calls = []
    with mibz2.open(path, index_dir=index_dir, progress=lambda d, t: calls.append((d, t))) as f:
        assert f.read() == corpus["plain"]["jsonl"]
    check_progress(calls, size)

    calls.clear()
    with mibz2.open(path, index_dir=index_dir, progress=lambda d, t: calls.append((d, t))):
        pass  # ready in this process's engine
    assert mibz2.info(path, index_dir=index_dir, threads=3, progress=lambda d, t: calls.append((d, t)))[
        "index"]["state"] == "current"  # another engine: loaded from the store
    assert calls == []

    got = mibz2.index(path, force=True, index_dir=index_dir, progress=lambda d, t: calls.append((d, t)))
    assert got["index"]["state"] == "built now"
    check_progress(calls, size)


def block_start_bit(data, number):
    """The bit offset of the magic of block `number` (0-based) of a one-stream bzip2 file."""
    magic = bytes.fromhex("314159265359")
    bits = int.from_bytes(data, "big")
    starts = set()
    for shift in range(8):
        # Bit i of `data` is bit i + 8 - shift of `shifted`.
        shifted = (bits << shift).to_bytes(len(data) + 1, "big")
        p = shifted.find(magic)
        while p >= 0:
            starts.add(p * 8 - 8 + shift)
            p = shifted.find(magic, p + 1)
    ordered = sorted(starts)
    if number >= len(ordered):
        pytest.fail(f"no block {number}")
    return ordered[number]


def good_bytes_by_bzip2recover(damaged, workdir):
    """What the blocks before the first bad one decode to, by bzip2recover and bzip2 alone."""
    subprocess.run(["bzip2recover", damaged], cwd=workdir, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    name = os.path.basename(damaged)
    pieces = sorted(p for p in os.listdir(workdir) if p.startswith("rec") and p.endswith(name))
    good = b""
    for p in pieces:
        r = subprocess.run(["bzip2", "-dc", os.path.join(workdir, p)], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            return good
        good += r.stdout
    pytest.fail("bzip2recover found no bad block")


def read_in_chunks(path, size=1 << 20, **kw):
    got = bytearray()
    with mibz2.open(path, **kw) as f:
        try:
            while chunk := f.read(size):
                got += chunk
        except OSError as e:
            return bytes(got), e
    return bytes(got), None


@pytest.mark.parametrize("where", ["middle", "block_crc"])
def test_damage_reads_every_good_byte_then_eio(corpus, tmp_path, where):
    original = open(corpus["files"]["text"]["bzip2"], "rb").read()
    damaged = tmp_path / "damaged.txt.bz2"
    data = bytearray(original)
    if where == "middle":
        data[len(data) // 2] ^= 0x10  # one bit inside a block in the middle: it cannot be decoded
    else:
        # One bit of the CRC stored in block 5's header (48 bits after its magic): the block
        # decodes, to bytes that do not match it.
        start = mibz2.info(corpus["files"]["text"]["bzip2"])["damaged_blocks"]  # none: find block 5's bit
        assert start == []
        bit = block_start_bit(original, 5) + 48 + 3
        data[bit // 8] ^= 0x80 >> (bit % 8)
    damaged.write_bytes(bytes(data))
    work = tmp_path / "recover"
    work.mkdir()
    (work / damaged.name).write_bytes(bytes(data))
    good = good_bytes_by_bzip2recover(str(work / damaged.name), str(work))
    assert 0 < len(good) < len(corpus["plain"]["text"])
    got, error = read_in_chunks(damaged, size=100_000)
    assert got == good
    assert isinstance(error, OSError) and error.errno == errno.EIO
    assert str(damaged) in str(error) and "block" in str(error)
    # Line by line: every whole line before the damage.
    lines = []
    with mibz2.open(damaged) as f:
        with pytest.raises(OSError) as e:
            for line in f:
                lines.append(line)
        assert e.value.errno == errno.EIO
    assert b"".join(lines) == good[: good.rfind(b"\n") + 1]
    # Through the raw file and readinto: the same bytes.
    with mibz2.open(damaged) as f:
        buf = bytearray(len(good) + 500_000)
        assert f.readinto(buf) == len(good) and buf[: len(good)] == good
        with pytest.raises(OSError):
            f.readinto(buf)
    # The same with a single read of the whole file, and with read(): the error, not bytes.
    with mibz2.open(damaged) as f:
        with pytest.raises(OSError) as e:
            f.read()
        assert e.value.errno == errno.EIO
    info = mibz2.info(damaged)
    bad = info["damaged_blocks"][0]  # (a wrong block CRC also fails the stream CRC: its last block)
    assert bad["offset"] == len(good)
    if where == "middle":
        return
    # A block after the damaged one still reads (a CRC mismatch does not shift the offsets).
    assert bad["kind"] == "crc_mismatch"
    after = bad["offset"] + bad["size"]
    with mibz2.open(damaged) as f:
        f.seek(after)
        assert f.read(1000) == corpus["plain"]["text"][after:after + 1000]


def test_truncation_reads_every_good_byte_then_eio(corpus, tmp_path):
    original = open(corpus["files"]["jsonl"]["lbzip2"], "rb").read()
    cut = tmp_path / "cut.json.bz2"
    cut.write_bytes(original[: len(original) * 2 // 3])
    # bzip2 -dc writes each block it could decode whole, then fails.
    r = subprocess.run(["bzip2", "-dc", str(cut)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert r.returncode != 0
    good = r.stdout
    assert 0 < len(good) < len(corpus["plain"]["jsonl"])
    got, error = read_in_chunks(cut, size=65536)
    assert got == good
    assert isinstance(error, OSError) and error.errno == errno.EIO
    assert str(cut) in str(error) and "block" in str(error)
    assert mibz2.info(cut)["truncated_at_bit"] > 0


def test_not_bzip2_is_a_clear_error(tmp_path):
    p = tmp_path / "plain.bz2"
    p.write_bytes(b"this is not bzip2\n" * 100)
    with pytest.raises(OSError) as e:
        mibz2.open(p)
    assert e.value.errno == errno.EILSEQ
    assert str(p) in str(e.value) and "bzip2" in str(e.value)
    with pytest.raises(FileNotFoundError):
        mibz2.open(tmp_path / "missing.bz2")
    with pytest.raises(IsADirectoryError):
        mibz2.open(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        mibz2.open(fifo)


def test_arguments(corpus):
    path = corpus["files"]["text"]["bzip2"]
    for mode in ("w", "wb", "a", "rb+", "x"):
        with pytest.raises(ValueError):
            mibz2.open(path, mode)
    with pytest.raises(ValueError):
        mibz2.open(path, "rb", encoding="utf-8")
    with pytest.raises(ValueError):
        mibz2.open(path, threads=0)
    assert mibz2.parse_size("64MiB") == 64 << 20 and mibz2.parse_size("1G") == 1 << 30
    assert mibz2.parse_size(4096) == 4096
    with pytest.raises(ValueError):
        mibz2.parse_size("lots")
    f = mibz2.open(path)
    f.close()
    with pytest.raises(ValueError):
        f.read()


def test_names_that_are_not_utf8(corpus, tmp_path):
    d = os.fsencode(str(tmp_path))
    good = d + b"/caf\xe9.txt.bz2"
    with open(good, "wb") as f:
        f.write(open(corpus["files"]["text"]["bzip2"], "rb").read())
    with mibz2.open(good) as f:
        assert f.read(1000) == corpus["plain"]["text"][:1000]
    assert mibz2.info(good)["decompressed_size"] == len(corpus["plain"]["text"])
    bad = d + b"/\xff\xfe not bzip2.bz2"
    with open(bad, "wb") as f:
        f.write(b"plain text\n")
    with pytest.raises(OSError) as e:
        mibz2.open(bad)
    assert e.value.errno == errno.EILSEQ and "not bzip2" in str(e.value)
    # The fsspec view shows it under its decompressed name, as the mount does.
    import fsspec

    fs = fsspec.filesystem("mibz2")
    assert os.fsdecode(d + b"/caf\xe9.txt") in fs.ls(str(tmp_path), detail=False)
