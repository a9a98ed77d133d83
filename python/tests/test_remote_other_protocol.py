# A chained mibz2::PROTO://...NAME whose inner protocol the engine does not read itself (here
# fsspec's memory:// and file://, standing for sftp, ftp, gcs, ...): NAME.bz2 read through that
# protocol's own fsspec filesystem and decompressed by Python's bz2 module. Every byte is compared
# with the original: whole, by range, after seeks back, and through Dask on a LocalCluster of
# worker processes (with file://, which each worker process reaches).
import fsspec
import pytest

from chains import chained, plain_and_file
import mibz2  # noqa: F401 (registers mibz2:// with fsspec)


def test_memory_protocol_is_read_through_its_filesystem(corpus):
    plain, data = plain_and_file(corpus)
    memory = fsspec.filesystem("memory")
    memory.pipe("/mibz2-other/dump.jsonl.bz2", data)
    try:
        url = chained("memory://mibz2-other/dump.jsonl")
        with fsspec.open(url, "rb") as f:
            assert f.read() == plain
            f.seek(len(plain) // 3)
            assert f.read(5000) == plain[len(plain) // 3:len(plain) // 3 + 5000]
            f.seek(10)  # backwards: decompressed from the start again
            assert f.read(100) == plain[10:110]
        fs, path = fsspec.core.url_to_fs(url)
        assert fs.info(path)["size"] == len(plain)
        assert fs.cat_file(path, start=1000, end=2000) == plain[1000:2000]
        assert fs.cat_file(path, start=-50) == plain[-50:]
        with pytest.raises(FileNotFoundError):
            fsspec.open(chained("memory://mibz2-other/nowhere.jsonl"), "rb").open().read()
    finally:
        memory.rm("/mibz2-other", recursive=True)


def test_dask_cluster_reads_through_another_protocol(corpus, tmp_path):
    distributed = pytest.importorskip("distributed")
    import dask.bag as db

    plain, data = plain_and_file(corpus)
    (tmp_path / "dump.jsonl.bz2").write_bytes(data)
    url = chained("file://" + str(tmp_path / "dump.jsonl"))
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        bag = db.read_text(url, blocksize=256 << 10)
        assert bag.npartitions > 2  # split by range of the decompressed content
        lines = bag.compute(scheduler=client.get)
    assert "".join(lines).encode() == plain
