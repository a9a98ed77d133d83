# Lines from the index: line_count against sed's count of the original bytes, and
# seek_line(n) + readline() against the original's line n, on files made by bzip2, lbzip2 and
# pbzip2 and a multistream file of mixed levels whose last line has no newline; at the start, the
# middle, the end, around every block boundary and past the end; in binary and text mode; a
# damaged file (lines before the damage found, after it unknown, said why); mibz2.info and the
# fsspec filesystem's info.
import errno
import io
import struct
import subprocess

import fsspec
import pytest

import mibz2
from conftest import MAKERS, compress


def sed_count(plain: bytes) -> int:
    """`sed -n '$='` of the bytes: their lines, a last one without its newline included."""
    out = subprocess.run(["sed", "-n", "$="], input=plain, stdout=subprocess.PIPE, check=True).stdout
    return int(out) if out.strip() else 0


def sed_line(plain: bytes, n: int) -> bytes:
    """`sed -n 'Np'` of the bytes."""
    return subprocess.run(["sed", "-n", f"{n}p"], input=plain, stdout=subprocess.PIPE, check=True).stdout


def lines_of(plain: bytes) -> list:
    """The lines as readline() returns them: each with its b"\\n", the last one maybe without."""
    parts = plain.split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def block_offsets(path, index_dir=None) -> list:
    """The decompressed offsets where the file's blocks start, from its index file (index/FORMAT.md:
    the block count at byte 48, 32-byte records from byte 128 with out_offset at +8)."""
    index_path = mibz2.info(path, index_dir=index_dir)["index"]["path"]
    with open(index_path, "rb") as f:
        data = f.read()
    count = struct.unpack_from("<Q", data, 48)[0]
    return [struct.unpack_from("<Q", data, 128 + 32 * i + 8)[0] for i in range(count)]


@pytest.fixture(scope="module")
def multistream(corpus, tmp_path_factory):
    """Three streams of levels 1, 9 and 5: text, JSON lines, and a last line without newline."""
    d = tmp_path_factory.mktemp("multistream")
    parts = [corpus["plain"]["text"][:450_000], corpus["plain"]["jsonl"][:300_000], b"no newline\nat the end"]
    out = d / "mixed.txt.bz2"
    with open(out, "wb") as o:
        for level, part in zip(["-1", "-9", "-5"], parts):
            o.write(subprocess.run(["bzip2", level, "-c"], input=part, stdout=subprocess.PIPE, check=True).stdout)
    return str(out), b"".join(parts)


def cases(corpus, multistream):
    for kind in ("text", "jsonl"):
        for maker in MAKERS:
            yield f"{kind}-{maker}", corpus["files"][kind][maker], corpus["plain"][kind]
    yield "multistream", multistream[0], multistream[1]


def line_numbers(path, plain, lines):
    """Lines to look at: the first and last few, the middle, past the end, and around the start of
    every block (the line holding its first byte, and those before and after it)."""
    picked = {1, 2, 3, len(lines) // 2, len(lines) - 1, len(lines), len(lines) + 1, len(lines) + 1000}
    for offset in block_offsets(path)[1:]:
        n = plain.count(b"\n", 0, offset) + 1  # the line that holds the block's first byte
        picked.update({n - 1, n, n + 1})
    return sorted(n for n in picked if n >= 1)


def test_line_count_is_seds(corpus, multistream):
    for name, path, plain in cases(corpus, multistream):
        with mibz2.open(path) as f:
            assert f.line_count == sed_count(plain), name
            assert f.line_count_unknown is None
            assert f.raw.line_count == f.line_count
        assert mibz2.info(path)["lines"] == sed_count(plain), name
    # The multistream file's last line has no newline: sed counts it, wc -l would not.
    assert sed_count(multistream[1]) == multistream[1].count(b"\n") + 1


def test_seek_line_then_readline_is_the_line(corpus, multistream):
    for name, path, plain in cases(corpus, multistream):
        lines = lines_of(plain)
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))
        numbers = line_numbers(path, plain, lines)
        assert len(numbers) > 12, name  # several block boundaries
        with mibz2.open(path) as f:
            for n in numbers:
                want = lines[n - 1] if n <= len(lines) else b""
                start = starts[n - 1] if n <= len(lines) else len(plain)
                assert f.line_offset(n) == start, (name, n)
                f.seek(12345)  # somewhere else first: the buffer holds other bytes
                f.readline()
                assert f.seek_line(n) == start, (name, n)
                assert f.tell() == start
                assert f.readline() == want, (name, n)
            # Against sed itself, for a few (GNU sed, as readline, keeps a last line's missing newline).
            for n in (1, len(lines) // 3, len(lines)):
                f.seek_line(n)
                assert f.readline() == sed_line(plain, n), (name, n)
            # The raw file moves alone (no buffer).
            raw = f.raw
            raw.seek_line(len(lines) // 2)
            assert raw.read(len(lines[len(lines) // 2 - 1])) == lines[len(lines) // 2 - 1]


def test_seek_line_in_text_mode(corpus):
    path, plain = corpus["files"]["jsonl"]["pbzip2"], corpus["plain"]["jsonl"]
    lines = lines_of(plain)
    with mibz2.open(path, "rt", encoding="utf-8") as f:
        assert isinstance(f, io.TextIOWrapper)
        assert f.line_count == len(lines)
        for n in (1, 2, len(lines) // 2, len(lines)):
            f.seek_line(n)
            assert f.readline() == lines[n - 1].decode("utf-8"), n
            assert f.readline() == (lines[n].decode("utf-8") if n < len(lines) else "")
        f.seek_line(len(lines) + 1)
        assert f.read() == ""


def test_line_numbers_below_one_and_closed_files(corpus):
    path = corpus["files"]["text"]["bzip2"]
    with mibz2.open(path) as f:
        for bad in (0, -1):
            with pytest.raises(ValueError):
                f.seek_line(bad)
            with pytest.raises(ValueError):
                f.line_offset(bad)
        with pytest.raises(TypeError):
            f.seek_line(1.5)
        assert f.line_offset(1 << 80) == f.raw.size  # past the last line, however far
    with pytest.raises(ValueError):
        f.seek_line(1)
    with pytest.raises(ValueError):
        f.line_count


def damaged_copy(corpus, tmp_path):
    """The bzip2-made text with one bit of the CRC stored in block 5's header flipped: the block
    decodes to bytes that do not match it."""
    from test_read import block_start_bit

    original = open(corpus["files"]["text"]["bzip2"], "rb").read()
    data = bytearray(original)
    bit = block_start_bit(original, 5) + 48 + 3
    data[bit // 8] ^= 0x80 >> (bit % 8)
    damaged = tmp_path / "damaged.txt.bz2"
    damaged.write_bytes(bytes(data))
    return damaged


def test_damaged_file_knows_the_lines_before_the_damage(corpus, tmp_path, index_dir):
    plain = corpus["plain"]["text"]
    damaged = damaged_copy(corpus, tmp_path)
    # Its own index dir: the index is built from the damaged file (the next test starts from the
    # original's).
    info = mibz2.info(damaged, index_dir=index_dir)
    assert info["lines"] is None
    bad = info["damaged_blocks"][0]
    assert bad["block"] == 5 and bad["kind"] == "crc_mismatch"
    good = plain[: bad["offset"]]  # the bytes before block 5
    known = good.count(b"\n") + 1  # the last line whose start is known
    lines = lines_of(plain)
    with mibz2.open(damaged, index_dir=index_dir) as f:
        assert f.line_count is None
        why = f.line_count_unknown
        assert str(damaged) in why and "block 5" in why and "damaged" in why, why
        for n in (1, known // 2, known - 1):
            f.seek_line(n)
            assert f.readline() == lines[n - 1], n
        assert f.line_offset(known) == good.rfind(b"\n") + 1
        with pytest.raises(OSError) as e:
            f.seek_line(known + 1)
        assert e.value.errno == errno.ENODATA
        assert f"line {known + 1}" in str(e.value) and "block 5" in str(e.value) and str(damaged) in str(e.value)
        assert f.tell() == f.line_offset(known)  # a failed seek_line does not move
    fs = fsspec.filesystem("mibz2", index_dir=index_dir)
    assert fs.info(str(tmp_path / "damaged.txt"))["lines"] is None


def test_an_index_found_wrong_while_seeking_a_line_is_built_again(corpus, tmp_path, index_dir):
    # The original's index, stored: the damaged copy has its size and the same first and last
    # 64 KiB (the fingerprint), so its open takes that index ("validated for this copy"), which
    # says block 5 is sound. Looking for a line in block 5 decodes it, finds it does not match, and
    # the file is indexed again, as read() does: then the line is unknown, and said so.
    original = corpus["files"]["text"]["bzip2"]
    plain = corpus["plain"]["text"]
    mibz2.index(original, index_dir=index_dir)
    block5 = block_offsets(original, index_dir)[5]
    damaged = damaged_copy(corpus, tmp_path)
    n = plain.count(b"\n", 0, block5) + 2  # the first line that starts inside block 5
    with mibz2.open(damaged, index_dir=index_dir) as f:
        assert mibz2.info(damaged, index_dir=index_dir)["index"]["state"] == "validated for this copy"
        with pytest.raises(OSError) as e:
            f.seek_line(n)
        assert e.value.errno == errno.ENODATA, e.value
        assert "block 5" in str(e.value) and "damaged" in str(e.value)
        assert f.line_count is None and "block 5" in f.line_count_unknown
        # The line before starts in block 4: still found.
        assert f.line_offset(n - 1) == plain.rfind(b"\n", 0, block5) + 1
    assert mibz2.info(damaged, index_dir=index_dir)["lines"] is None


def test_fsspec_info_carries_lines(corpus, tmp_path, index_dir):
    d = tmp_path / "src"
    d.mkdir()
    (d / "data.json.bz2").write_bytes(open(corpus["files"]["jsonl"]["lbzip2"], "rb").read())
    (d / "notes.txt").write_bytes(b"plain\nfile\n")
    compress("pbzip2", _write(tmp_path / "t.plain", b"one\ntwo\nthree"), d / "short.txt.bz2")
    fs = fsspec.filesystem("mibz2", index_dir=index_dir)
    assert fs.info(f"{d}/data.json")["lines"] == sed_count(corpus["plain"]["jsonl"])
    assert fs.info(f"{d}/short.txt")["lines"] == 3
    assert fs.info(f"{d}/notes.txt")["lines"] is None  # shown as it is: not counted
    listed = {e["name"]: e for e in fs.ls(str(d))}
    assert listed[f"{d}/short.txt"]["lines"] == 3
    with fs.open(f"{d}/data.json") as f:
        f.seek_line(10)
        assert f.readline() == lines_of(corpus["plain"]["jsonl"])[9]


def _write(path, data):
    path.write_bytes(data)
    return path
