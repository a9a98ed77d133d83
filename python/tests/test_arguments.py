# What the module takes from its callers, checked at the call as io and os check theirs: buffers a
# read may fill (writable and contiguous, nothing written outside them), integers C++ cannot hold,
# and sizes and thread counts by the rules of mibz2 and mibz2fs.
import array
import subprocess
import sys

import pytest

import mibz2

FILL = b"\xaa"


def test_readinto_fills_only_writable_contiguous_buffers(corpus):
    plain = corpus["plain"]["text"]
    with mibz2.open(corpus["files"]["text"]["bzip2"]) as f:
        raw = f.raw
        memory = bytearray(FILL * 64)
        for view in (memoryview(memory)[16:48:2], memoryview(memory)[47:15:-1], memoryview(memory)[::-1]):
            raw.seek(0)
            with pytest.raises(TypeError, match="C-contiguous"):
                raw.readinto(view)
            assert memory == FILL * 64, view  # nothing written, in the view or around it
            assert raw.tell() == 0
        with pytest.raises(TypeError):
            raw.readinto(b"read-only bytes")
        # A contiguous part of a buffer gets exactly its bytes, and no byte around it.
        raw.seek(100)
        assert raw.readinto(memoryview(memory)[8:24]) == 16
        assert memory == FILL * 8 + plain[100:116] + FILL * 40
        # Any contiguous buffer, whatever its items: its bytes.
        ints = array.array("i", [0] * 8)
        raw.seek(0)
        assert raw.readinto(ints) == 32 and ints.tobytes() == plain[:32]
        grid = bytearray(16)
        assert raw.readinto(memoryview(grid).cast("B", (4, 4))) == 16 and grid == plain[32:48]
        # A strided array (every other column of a numpy grid) is refused as a strided view is.
        import numpy

        columns = numpy.zeros((8, 8), numpy.uint8)
        with pytest.raises(TypeError, match="C-contiguous"):
            raw.readinto(columns[:, ::2])
        assert not columns.any()


# A reversed view of 200 KB: its first byte is the buffer's last, and a read written forward from
# there ran past the buffer's end (the interpreter died of SIGSEGV). In a child, so that a crash
# fails this test rather than ending the test run.
REVERSED_VIEW = r"""
import sys, mibz2
with mibz2.open(sys.argv[1]) as f:
    memory = bytearray(200_000)
    try:
        f.raw.readinto(memoryview(memory)[::-1])
        print("read")
    except TypeError:
        print("refused", memory == bytes(200_000))
"""


def test_a_reversed_view_is_refused_not_overrun(corpus):
    done = subprocess.run([sys.executable, "-c", REVERSED_VIEW, corpus["files"]["text"]["bzip2"]],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    assert (done.returncode, done.stdout.split()) == (0, ["refused", "True"]), done.stderr[-500:]


def raises(kind, call):
    """The exception `call` raises, which must be a `kind` and not pybind11's complaint about
    arguments (a TypeError that prints the function's signature)."""
    with pytest.raises(kind) as e:
        call()
    assert "incompatible function arguments" not in str(e.value)
    return e.value


def test_integers_out_of_range_raise_at_the_call(corpus):
    with mibz2.open(corpus["files"]["text"]["bzip2"]) as f:
        raw = f.raw
        size = raw.size
        # Positions are off_t, as io's: past 2**63 - 1 is an OverflowError at the seek.
        raises(OverflowError, lambda: raw.seek(2**64))
        raises(OverflowError, lambda: raw.seek(2**63))
        raises(OverflowError, lambda: raw.seek(2**62, 0) and raw.seek(2**62, 1))
        raises((OverflowError, ValueError), lambda: f.seek(2**64))  # io.BufferedReader's own check
        raw.seek(0)
        raises(TypeError, lambda: raw.seek(1.5))
        assert raw.tell() == 0
        assert raw.seek(2**63 - 1) == 2**63 - 1 and raw.read(10) == b""
        raw.seek(0)
        # pread(size, offset), as os.pread.
        raises(OverflowError, lambda: raw.pread(10, 2**64))
        raises(OverflowError, lambda: raw.pread(2**64, 0))
        raises(ValueError, lambda: raw.pread(-1, 0))
        raises(ValueError, lambda: raw.pread(10, -1))
        raises(TypeError, lambda: raw.pread(1.0, 0))
        assert raw.pread(2**62, size - 5) == corpus["plain"]["text"][-5:]
        # Line numbers: from 1; any number past the last line is the end.
        raises(ValueError, lambda: raw.line_offset(0))
        raises(ValueError, lambda: f.seek_line(-(2**70)))
        assert raw.line_offset(2**200) == size
    # Settings, by the programs' rules.
    path = corpus["files"]["text"]["bzip2"]
    for threads in (0, 1025, 2**70, -1):
        assert "is not a thread count (1 to 1024)" in str(raises(ValueError, lambda: mibz2.open(path, threads=threads)))
    assert "is not a size" in str(raises(ValueError, lambda: mibz2.open(path, cache_size=2**70)))
    assert "too small for a cache" in str(raises(ValueError, lambda: mibz2.open(path, cache_size="100K")))


def test_sizes_are_read_as_mibz2_reads_them(corpus, mibz2_bin):
    # Powers of 1024 with or without "i" and "B", as mibz2 and mibz2fs read a SIZE.
    assert mibz2.parse_size("64MB") == 64 << 20 == mibz2.parse_size("64MiB") == mibz2.parse_size("64m")
    assert mibz2.parse_size("1.5K") == 1536 and mibz2.parse_size("0.3K") == 307
    assert mibz2.parse_size(4096) == 4096 and mibz2.parse_size("4096") == 4096
    assert mibz2.engine_settings(1, "64MB") == (1, 64 << 20)
    path = corpus["files"]["text"]["bzip2"]
    for text in ("1.5K", "1K", "3kb", "100"):
        out = subprocess.run([mibz2_bin, "cat", "--length", text, path], check=True, stdout=subprocess.PIPE).stdout
        assert len(out) == mibz2.parse_size(text), text
    # What is not a size, with the same words as mibz2's.
    for text in ("64 MB", "100.5", "-1", "lots", "", "18446744073709551616"):
        error = raises(ValueError, lambda: mibz2.parse_size(text))
        said = subprocess.run([mibz2_bin, "cat", "--length", text, path], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        assert said.returncode != 0 and str(error) in said.stderr, (text, said.stderr)
    raises(ValueError, lambda: mibz2.parse_size(-1))
    raises(TypeError, lambda: mibz2.parse_size(1.5))
