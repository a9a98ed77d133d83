# index_dir naming a symlink: refused as the index directory, as mibz2 and mibz2fs refuse it (the
# store's rule, in one place), and said: a RuntimeWarning names it. Indexes are then kept in memory.
import os
import subprocess
import sys
import textwrap


def test_an_index_dir_that_is_a_symlink_is_refused_and_said(corpus, tmp_path):
    # A fresh interpreter: the module keeps one engine per settings for the life of the process.
    target = tmp_path / "idx-target"
    target.mkdir()
    link = tmp_path / "idx-link"
    link.symlink_to(target)
    probe = textwrap.dedent("""
        import sys, warnings
        import mibz2
        path, link, expected = sys.argv[1], sys.argv[2], open(sys.argv[3], "rb").read()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with mibz2.open(path, index_dir=link) as f:
                assert f.read() == expected
            with mibz2.open(path, index_dir=link) as f:  # the same engine: said once
                f.read(10)
        for w in caught:
            print(w.category.__name__, w.message)
    """)
    path = corpus["files"]["text"]["bzip2"]
    plain = tmp_path / "plain"
    plain.write_bytes(corpus["plain"]["text"])
    out = subprocess.run([sys.executable, "-c", probe, path, str(link), str(plain)], check=True,
                         stdout=subprocess.PIPE, env=dict(os.environ)).stdout.decode().splitlines()
    assert out == [f"RuntimeWarning {link} is a symlink, refused as index directory (name the directory "
                   "it points to): indexes are kept in memory only, so every process indexes every "
                   "file again"], out
    assert os.listdir(target) == []
