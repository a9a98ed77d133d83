# fsspec's chained forms of a remote dump, mibz2::https://host/path/NAME and mibz2::s3://bucket/NAME
# (NAME.bz2 there, under the name the mount would show), against nginx and moto on loopback: what
# bz2 reads, through fsspec.open and through Dask splitting the object into partitions. The
# machine's fsspec has neither requests nor s3fs: mibz2's stand-ins take the URLs apart.

import fsspec
import pytest

from chains import chained, plain_and_file
import mibz2  # noqa: F401 (registers the stand-ins for a chain's inner protocol)
from remote_servers import nginx_server, s3_server  # noqa: F401 (fixtures)


def test_chained_https_reads_name_bz2_there(nginx_server, corpus, index_dir):
    plain, data = plain_and_file(corpus)
    nginx_server.put("chained.jsonl.bz2", data)
    url = chained(nginx_server.url("chained.jsonl"))
    with fsspec.open(url, "rb", mibz2={"index_dir": index_dir}) as f:
        assert f.read() == plain
    fs, path = fsspec.core.url_to_fs(url, mibz2={"index_dir": index_dir})
    assert fs.info(path)["size"] == len(plain)
    assert fs.cat_file(path, start=1000, end=2000) == plain[1000:2000]
    with pytest.raises(FileNotFoundError, match="404"):
        fsspec.open(chained(nginx_server.url("nowhere.jsonl")), "rb").open()


def test_dask_splits_a_chained_https_dump(nginx_server, corpus, index_dir):
    db = pytest.importorskip("dask.bag")
    plain, data = plain_and_file(corpus)
    nginx_server.put("dask.jsonl.bz2", data)
    bag = db.read_text(chained(nginx_server.url("dask.jsonl")), blocksize=256 << 10,
                       storage_options={"mibz2": {"index_dir": index_dir}})
    assert bag.npartitions > 2  # no compression inferred from the shown name: split by range
    lines = bag.compute(scheduler="threads")
    assert "".join(lines).encode() == plain


def test_chained_s3_reads_name_bz2_there(s3_server, corpus, index_dir, monkeypatch):
    plain, data = plain_and_file(corpus)
    s3_server.make_bucket("mibz2-chain")
    s3_server.put("mibz2-chain", "dumps/latest.jsonl.bz2", data)
    for name, value in s3_server.environ().items():
        monkeypatch.setenv(name, value)
    with fsspec.open(chained("s3://mibz2-chain/dumps/latest.jsonl"), "rb", mibz2={"index_dir": index_dir}) as f:
        f.seek(len(plain) // 3)
        assert f.read(5000) == plain[len(plain) // 3:len(plain) // 3 + 5000]
