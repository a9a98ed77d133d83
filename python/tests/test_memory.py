# A long-running process (a Dask worker reading a directory of dumps for days) stays within its
# memory bound: what mibz2 keeps of the files it opened and closed (their catalog entries and
# indexes) is bounded in bytes, not one entry for every path it ever opened.
import bz2
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent(
    """
    import os, sys
    import mibz2

    def rss_kib():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])

    d, index_dir, n, warm = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    data = open(os.path.join(d, "one.bz2"), "rb").read()
    for i in range(n):
        p = os.path.join(d, f"f{i}.bz2")
        with open(p, "wb") as w:
            w.write(data)
        with mibz2.open(p, threads=1, cache_size="1MiB", index_dir=index_dir) as f:
            assert f.read() == b"a line of a small file\\n" * 200
        os.unlink(p)
        if i == warm:
            before = rss_kib()
    print(before, rss_kib())
    """
)


def test_files_opened_and_closed_one_after_another_keep_a_bounded_memory(tmp_path):
    (tmp_path / "one.bz2").write_bytes(bz2.compress(b"a line of a small file\n" * 200, 9))
    index_dir = tmp_path / "idx"
    index_dir.mkdir()
    # Past the first few thousand files (the recently closed ones kept for a later open, 4 MiB at
    # most), 5000 more: at the 1.6 KiB an entry that each path used to keep, 8 MiB more.
    out = subprocess.run([sys.executable, "-c", PROGRAM, str(tmp_path), str(index_dir), "8000", "3000"],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    before, after = map(int, out.split())
    assert after - before < 3 * 1024, f"RSS grew from {before} KiB to {after} KiB over 5000 files"
