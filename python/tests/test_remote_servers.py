# The servers of remote_servers.py answer as the remote tests need: ranges with an ETag that
# If-Match checks (nginx, over HTTP and HTTPS with the test's certificate), a fault that a proxy
# injects, and S3 objects signed for and public (moto). What reads through them is tested with the
# readers (tests/io_remote_*_test.cc, and the module's own remote tests).
import http.client
import ssl
import urllib.error
import urllib.request

import pytest

from remote_servers import fault_proxy, nginx_server, s3_server  # noqa: F401 (fixtures)


def get(url, headers=None, context=None):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, context=context) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_nginx_answers_ranges_and_if_match(nginx_server):
    data = bytes(range(256)) * 4000
    nginx_server.put("py-range.bin", data)
    status, headers, body = get(nginx_server.url("py-range.bin"), {"Range": "bytes=1000-1999"})
    assert status == 206 and body == data[1000:2000]
    assert headers["Content-Range"] == f"bytes 1000-1999/{len(data)}"
    status, _, _ = get(nginx_server.url("py-range.bin"), {"Range": "bytes=0-9", "If-Match": '"not-it"'})
    assert status == 412
    status, _, body = get(nginx_server.url("py-range.bin"), {"Range": "bytes=0-9", "If-Match": headers["ETag"]})
    assert status == 206 and body == data[:10]
    context = ssl.create_default_context(cafile=nginx_server.ca)
    status, _, body = get(nginx_server.https_url("py-range.bin"), {"Range": "bytes=5-9"}, context)
    assert status == 206 and body == data[5:10]


def test_a_proxy_injects_the_fault_asked_for(nginx_server, fault_proxy):
    nginx_server.put("py-proxy.bin", b"x" * 100_000)
    proxy = fault_proxy(nginx_server.base)
    proxy.set_faults([{"kind": "status", "status": 503, "retry_after": 2}])
    status, headers, _ = get(proxy.url("py-proxy.bin"))
    assert status == 503 and headers["Retry-After"] == "2"
    status, _, body = get(proxy.url("py-proxy.bin"), {"Range": "bytes=0-99"})
    assert status == 206 and body == b"x" * 100
    proxy.set_faults([{"kind": "short", "after_bytes": 10}])
    with pytest.raises(http.client.IncompleteRead):
        get(proxy.url("py-proxy.bin"))
    assert proxy.stats()["gets"] == 3


def test_s3_serves_public_objects_anonymously(s3_server):
    s3_server.make_bucket("py-public")
    s3_server.put("py-public", "open.bin", b"hello", public=True)
    s3_server.put("py-public", "closed.bin", b"secret", public=False)
    status, _, body = get(f"{s3_server.endpoint}/py-public/open.bin")
    assert status == 200 and body == b"hello"
    status, _, _ = get(f"{s3_server.endpoint}/py-public/closed.bin")
    assert status == 403
