# Dask on a LocalCluster of worker processes reading a dump that exists only on a server (nginx
# over HTTP, moto over S3), through the chained names mibz2::https://... and mibz2::s3://...: the
# bag's lines and the dataframe's rows are those of the original, whose local copy is gone before
# anything is computed. The workers have no AWS_* variable and no ~/.aws: the S3 settings reach
# them as the storage options of the chain's inner protocol, pickled with the filesystem.
import bz2
import io
import os
import shutil
import tempfile

import pytest

from chains import chained
import mibz2  # noqa: F401 (registers the stand-ins for a chain's inner protocol)
from remote_servers import nginx_server, s3_server  # noqa: F401 (fixtures)

distributed = pytest.importorskip("distributed")
import dask.bag as db  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402

BUCKET = "mibz2-cluster"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # Workers inherit the environment they start in: one without AWS settings.
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name.startswith("AWS_"):
                mp.delenv(name)
        mp.setenv("HOME", str(tmp_path_factory.mktemp("worker-home")))
        c = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                                     silence_logs=40)
    with c, distributed.Client(c) as client:
        yield client


@pytest.fixture(scope="module")
def served(corpus, nginx_server, s3_server):
    """The plain bytes of a JSON Lines dump whose .bz2 is on nginx and in a bucket, and nowhere
    else: the copy it was put from is removed here."""
    scratch = tempfile.mkdtemp(prefix="mibz2-served-")
    local = os.path.join(scratch, "entities.jsonl.bz2")
    shutil.copy(corpus["files"]["jsonl"]["pbzip2"], local)
    with open(local, "rb") as f:
        data = f.read()
    nginx_server.put("cluster/entities.jsonl.bz2", data)
    s3_server.make_bucket(BUCKET)
    s3_server.put(BUCKET, "dumps/entities.jsonl.bz2", data)
    shutil.rmtree(scratch)
    return bz2.decompress(data)


@pytest.fixture
def signed(s3_server):
    s3_server.require_signatures(True)
    yield s3_server
    s3_server.require_signatures(False)


def sources(nginx_server, s3_server, index_dir):
    """(chained URL, storage options) of the served dump on each server."""
    mibz2_options = {"index_dir": index_dir}
    s3_options = {"key": s3_server.key, "secret": s3_server.secret, "endpoint_url": s3_server.endpoint}
    return [(chained(nginx_server.url("cluster/entities.jsonl")), {"mibz2": mibz2_options}),
            (chained(f"s3://{BUCKET}/dumps/entities.jsonl"), {"mibz2": mibz2_options, "s3": s3_options})]


def test_workers_have_no_aws_settings(cluster):
    seen = cluster.run(lambda: sorted(k for k in os.environ if k.startswith("AWS_")))
    assert len(seen) == 2 and all(v == [] for v in seen.values())


def test_read_text_on_worker_processes(cluster, served, nginx_server, signed, index_dir):
    expected = served.decode().splitlines(keepends=True)
    for url, options in sources(nginx_server, signed, index_dir):
        bag = db.read_text(url, blocksize=256 << 10, storage_options=options)
        assert bag.npartitions > 2, url  # split by range: no compression inferred from the name
        assert bag.compute() == expected, url
    # The S3 partitions were read in the workers, by engines made with the options they were sent.
    with_options = cluster.run(lambda: any(key[-1] is not None for key in mibz2._engines))
    assert any(with_options.values()), with_options


def test_dataframe_read_json_on_worker_processes(cluster, served, nginx_server, signed, index_dir):
    expected = pd.read_json(io.BytesIO(served), lines=True)
    for url, options in sources(nginx_server, signed, index_dir):
        df = dd.read_json(url, lines=True, blocksize=256 << 10, storage_options=options)
        assert df.npartitions > 2, url
        got = df.compute().reset_index(drop=True)
        pd.testing.assert_frame_equal(got, expected)
