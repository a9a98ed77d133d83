# Dask and pandas through mibz2:// and mibz2.open: one dump split into partitions read by worker
# processes, counted against bzip2 -dc.
import os
import shutil

import pytest

import mibz2
from conftest import bzip2_dc

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
import dask.bag as db  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                                  silence_logs=40) as c, distributed.Client(c) as client:
        yield client


@pytest.fixture
def dump(corpus, tmp_path):
    d = tmp_path / "dumps"
    d.mkdir()
    shutil.copy(corpus["files"]["wikidata"]["lbzip2"], d / "latest-all.json.bz2")
    shutil.copy(corpus["files"]["jsonl"]["bzip2"], d / "entities.jsonl.bz2")
    return d


def test_read_text_in_partitions_on_worker_processes(cluster, dump):
    src = str(dump / "latest-all.json.bz2")
    expected = bzip2_dc(src)
    bag = db.read_text(f"mibz2://{dump}/latest-all.json", blocksize="256KiB")
    assert bag.npartitions > 1
    assert bag.count().compute() == expected.count(b"\n")  # bzip2 -dc | wc -l
    assert bag.map(len).sum().compute() == len(expected.decode("utf-8"))
    # Each worker sized its engine from its own nthreads: one decoder thread.
    settings = cluster.gather([cluster.submit(mibz2.engine_settings, pure=False, workers=[w])
                               for w in cluster.scheduler_info()["workers"]])
    assert [t for t, _ in settings] == [1, 1]


def test_dataframe_read_json_lines(cluster, dump):
    src = str(dump / "entities.jsonl.bz2")
    lines = bzip2_dc(src).count(b"\n")
    df = dd.read_json(f"mibz2://{dump}/entities.jsonl", lines=True, blocksize=512 * 1024)
    assert df.npartitions > 1
    assert len(df) == lines
    assert "id" in df.columns


def test_pandas_read_json_in_chunks(dump):
    src = str(dump / "entities.jsonl.bz2")
    lines = bzip2_dc(src).count(b"\n")
    with mibz2.open(src) as f:
        rows = sum(len(chunk) for chunk in pd.read_json(f, lines=True, chunksize=500))
    assert rows == lines


def count_share(path, first, last):
    """Lines first..last (1-based) of the file, read by a worker: seek_line to the share's first
    line, readline up to where the next share starts. Returns (lines read, first line, bytes)."""
    with mibz2.open(path) as f:
        end = f.line_offset(last + 1)
        f.seek_line(first)
        head = f.readline()
        count, size = (1, len(head)) if head else (0, 0)
        while f.tell() < end:
            line = f.readline()
            count += 1
            size += len(line)
        return count, head, size


def test_equal_shares_of_lines_on_worker_processes(cluster, dump):
    src = str(dump / "latest-all.json.bz2")
    expected = bzip2_dc(src)
    with mibz2.open(src) as f:
        total = f.line_count
    assert total == expected.count(b"\n") + (not expected.endswith(b"\n"))  # sed's count
    shares = 7
    bounds = [(k * total // shares + 1, (k + 1) * total // shares) for k in range(shares)]
    futures = [cluster.submit(count_share, src, first, last, pure=False) for first, last in bounds]
    results = cluster.gather(futures)
    lines = expected.split(b"\n")
    for (first, last), (count, head, _) in zip(bounds, results):
        assert count == last - first + 1
        assert head.rstrip(b"\n") == lines[first - 1]
    assert sum(count for count, _, _ in results) == total
    assert sum(size for _, _, size in results) == len(expected)  # every byte in exactly one share
