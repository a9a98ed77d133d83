# S3 settings given in Python (mibz2.open's s3=, and the inner protocol's storage options of a
# chained mibz2::s3://... as fsspec passes them), against moto on loopback, with no AWS_* variable
# and no AWS settings file: the options alone reach the object, a wrong secret is PermissionError
# naming the URL, anon=True reads a public object, options mibz2 does not take are refused, and no
# secret shows in a message, a log line or a repr.
import bz2
import os
import subprocess
import sys
import textwrap

import fsspec
import pytest

from chains import chained
import mibz2
from remote_servers import s3_server  # noqa: F401 (fixture)

BUCKET = "mibz2-options"
WRONG_SECRET = "WrongSecretThatMustNeverBeShown0123456789"


@pytest.fixture
def no_aws_settings(monkeypatch, tmp_path):
    """No AWS_* variable and no ~/.aws: whatever reaches S3 comes from the options."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def dump(s3_server, corpus):
    """(plain bytes, key) of a JSON Lines dump put in the bucket, private."""
    path = corpus["files"]["jsonl"]["lbzip2"]
    with open(path, "rb") as f:
        data = f.read()
    s3_server.make_bucket(BUCKET)
    s3_server.put(BUCKET, "dumps/private.jsonl.bz2", data)
    return bz2.decompress(data), "dumps/private.jsonl.bz2"


@pytest.fixture
def signed(s3_server):
    s3_server.require_signatures(True)
    yield s3_server
    s3_server.require_signatures(False)


def user_options(s3):
    return {"key": s3.key, "secret": s3.secret, "endpoint_url": s3.endpoint}


def test_options_alone_reach_the_object(signed, dump, no_aws_settings, index_dir):
    plain, key = dump
    url = f"s3://{BUCKET}/{key}"
    with mibz2.open(url, s3=user_options(signed), index_dir=index_dir, threads=1) as f:
        assert f.read() == plain
    # As s3fs users write the endpoint and region, and with temporary credentials.
    boto_style = {"key": signed.session_key, "secret": signed.session_secret, "token": signed.session_token,
                  "client_kwargs": {"endpoint_url": signed.endpoint, "region_name": signed.region}}
    assert mibz2.info(url, s3=boto_style, index_dir=index_dir, threads=1)["decompressed_size"] == len(plain)
    # Through fsspec's chain: the s3 keyword is the inner protocol's options.
    shown = chained(f"s3://{BUCKET}/{key[:-len('.bz2')]}")
    with fsspec.open(shown, "rb", s3=user_options(signed), mibz2={"index_dir": index_dir, "threads": 1}) as f:
        f.seek(len(plain) // 2)
        assert f.read(3000) == plain[len(plain) // 2:len(plain) // 2 + 3000]


def test_wrong_secret_is_permission_error_naming_the_url(signed, dump, no_aws_settings, index_dir):
    _, key = dump
    url = f"s3://{BUCKET}/{key}"
    wrong = dict(user_options(signed), secret=WRONG_SECRET)
    with pytest.raises(PermissionError) as e:
        mibz2.open(url, s3=wrong, index_dir=index_dir, threads=1)
    assert url in str(e.value) and "403" in str(e.value)
    assert WRONG_SECRET not in str(e.value) and signed.key not in str(e.value)
    with pytest.raises(PermissionError) as e:
        fsspec.open(chained(url[:-len(".bz2")]), "rb", s3=wrong, mibz2={"index_dir": index_dir}).open()
    assert url in str(e.value) and WRONG_SECRET not in str(e.value)


def test_anon_reads_a_public_object_only(s3_server, dump, no_aws_settings, monkeypatch, index_dir):
    # moto answers an unsigned request with 500 while it checks signatures, so anonymous access is
    # tried with its checks off: a public-read object reads, a private one is 403 (moto's ACL).
    plain, key = dump
    s3_server.put(BUCKET, "dumps/public.jsonl.bz2", bz2.compress(plain), public=True)
    # Credentials in the environment (wrong ones) are not used: anon means unsigned.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAWRONGWRONGWRONG")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", WRONG_SECRET)
    anon = {"anon": True, "endpoint_url": s3_server.endpoint}
    with mibz2.open(f"s3://{BUCKET}/dumps/public.jsonl.bz2", s3=anon, index_dir=index_dir, threads=1) as f:
        assert f.read() == plain
    with pytest.raises(PermissionError, match="403"):
        mibz2.open(f"s3://{BUCKET}/{key}", s3=anon, index_dir=index_dir, threads=1)


def test_options_not_taken_are_refused_by_name(s3_server, index_dir):
    url = f"s3://{BUCKET}/dumps/private.jsonl.bz2"
    with pytest.raises(ValueError, match="requester_pays") as e:
        mibz2.open(url, s3={"requester_pays": True, "secret": WRONG_SECRET, "key": "k"}, index_dir=index_dir)
    assert WRONG_SECRET not in str(e.value)
    with pytest.raises(ValueError, match="signature_version"):
        fsspec.open(chained(url[:-4]), "rb", s3={"client_kwargs": {"signature_version": "v2"}}).open()
    with pytest.raises(TypeError, match="anon must be a bool"):
        mibz2.open(url, s3={"anon": "yes"}, index_dir=index_dir)
    with pytest.raises(ValueError, match="endpoint_url"):
        mibz2.open(url, s3={"endpoint_url": "http://a", "client_kwargs": {"endpoint_url": "http://b"}})
    with pytest.raises(ValueError, match="no storage options"):
        fsspec.open(chained("https://example.invalid/x.json"), "rb", https={"headers": {}}).open()


def test_no_secret_in_logs_messages_or_reprs(signed, dump, tmp_path, index_dir):
    # In a process of its own with the engine's log on (MIBZ2_LOG=1): a read with the options, a
    # refused secret, and the reprs of what a user prints; the secret and the key id appear nowhere.
    _, key = dump
    script = textwrap.dedent(f"""
        import fsspec, mibz2
        url = "s3://{BUCKET}/{key}"
        good = {{"key": {signed.key!r}, "secret": {signed.secret!r}, "endpoint_url": {signed.endpoint!r}}}
        bad = dict(good, secret={WRONG_SECRET!r})
        with mibz2.open(url, s3=good, index_dir={index_dir!r}, threads=1) as f:
            f.read(1000)
            print(repr(f), repr(f.raw), f.raw.name)
        try:
            mibz2.open(url, s3=bad, index_dir={index_dir!r}, threads=1)
        except OSError as e:
            print("refused:", repr(e), e)
        chain = {chained(f"s3://{BUCKET}/{key[:-4]}")!r}
        of = fsspec.open(chain, "rb", s3=bad, mibz2={{"index_dir": {index_dir!r}}})
        print(repr(of), str(of), repr(of.fs), str(of.fs))
        try:
            of.open()
        except OSError as e:
            print("refused:", repr(e), e)
        of = fsspec.open(chain, "rb", s3=good, mibz2={{"index_dir": {index_dir!r}}})
        with of as f:
            print(repr(f), repr(of), of.fs.info("/"))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(MIBZ2_LOG="1", HOME=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert out.count("refused:") == 2 and "403" in out, out
    for secret in (signed.secret, WRONG_SECRET, signed.key):
        assert secret not in out, out
