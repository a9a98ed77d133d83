# mibz2.open of a URL: an object served by nginx on loopback reads as bz2 reads the same bytes
# (whole, by seek, by line), and a missing object is FileNotFoundError naming the URL and the
# status. The readers below the module are tested against the same servers in
# tests/io_remote_*_test.cc and tests/catalog_remote_source_test.cc.
import bz2
import errno

import pytest

import mibz2
from remote_servers import fault_proxy, nginx_server  # noqa: F401 (fixtures)


def test_open_url_reads_what_bz2_reads(nginx_server, corpus, index_dir):
    path = corpus["files"]["jsonl"]["lbzip2"]
    with open(path, "rb") as f:
        nginx_server.put("py-open.jsonl.bz2", f.read())
    expected = bz2.open(path).read()
    url = nginx_server.url("py-open.jsonl.bz2")
    with mibz2.open(url, index_dir=index_dir) as f:
        assert f.read() == expected
        f.seek(len(expected) // 2)
        assert f.read(1000) == expected[len(expected) // 2:len(expected) // 2 + 1000]
        f.seek_line(11)
        assert f.readline() == expected.split(b"\n")[10] + b"\n"
    assert mibz2.info(url, index_dir=index_dir)["decompressed_size"] == len(expected)


def test_missing_url_names_url_and_status(nginx_server, index_dir):
    url = nginx_server.url("py-nowhere.bz2")
    with pytest.raises(FileNotFoundError) as e:
        mibz2.open(url, index_dir=index_dir)
    assert url in str(e.value) and "404" in str(e.value)


def test_object_replaced_while_read_is_estale(nginx_server, fault_proxy, corpus, index_dir):
    path = corpus["files"]["text"]["bzip2"]
    with open(path, "rb") as f:
        nginx_server.put("py-moving.bz2", f.read())
    proxy = fault_proxy(nginx_server.base)
    url = proxy.url("py-moving.bz2")
    mibz2.index(url, index_dir=index_dir)
    expected = bz2.open(path).read()
    with mibz2.open(url, index_dir=index_dir, threads=1) as f:
        # Replaced once it is open: every GET from now on finds another ETag (If-Match gets 412).
        # (The open read only the fingerprinted ends; the middle must be asked for.)
        proxy.set_faults([{"kind": "etag", "times": -1, "methods": ["GET"]}])
        f.seek(len(expected) // 2)
        with pytest.raises(OSError) as e:
            f.read(1000)
        assert e.value.errno == errno.ESTALE and "changed" in str(e.value)
