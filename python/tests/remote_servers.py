"""Real servers on loopback for the Python tests of remote sources, as tests/remote_servers.h gives
them to the C++ tests (the same scripts of testtools/ start them):

    nginx_server   nginx serving a scratch directory over HTTP and HTTPS (HTTP/2); .put(name,
                   data) serves a file, .url(name) / .https_url(name) name it, .ca is the
                   certificate to trust (CURL_CA_BUNDLE)
    s3_server      moto's S3 in the Python beside `moto_server` (on PATH or in ~/.pyenv/shims;
                   MIBZ2_MOTO_PYTHON overrides), with .endpoint, .key, .secret, .region and
                   .make_bucket(), .put(bucket, key, data, public=False), .require_signatures(on);
                   .environ() gives AWS_* variables pointing at it
    fault_proxy    a function: fault_proxy(upstream, latency_ms=0, rate=0) starts a proxy of the
                   test's own (testtools/fault_proxy.py) with .url(path), .set_faults(rules),
                   .reset(), .stats()

Use them from a test module with `from remote_servers import *  # noqa` (the fixtures), or from
conftest.py. A server that cannot start skips its tests with the reason.
"""

import json
import os
import shutil
import subprocess
import tempfile
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TESTTOOLS = os.path.join(HERE, "..", "..", "testtools")
SYSTEM_PYTHON = "/usr/bin/python3"


class ServerProcess:
    """A child that prints one line of JSON when ready; stopped by closing its input and SIGTERM."""

    def __init__(self, argv, timeout=60):
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     start_new_session=True)
        line = self.proc.stdout.readline().decode()
        if not line.startswith("{"):
            self.err.seek(0)
            why = self.err.read().decode(errors="replace")
            self.stop()
            raise RuntimeError(f"{os.path.basename(argv[1])} did not start: {line}{why}")
        self.ready = json.loads(line)

    def command(self, obj):
        self.proc.stdin.write((json.dumps(obj) + "\n").encode())
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def stop(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()


class Nginx:
    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="mibz2-nginx-root-")
        self.process = ServerProcess([SYSTEM_PYTHON, os.path.join(TESTTOOLS, "nginx_server.py"), "--root", self.root,
                                      "--https", "--stdin-eof-stops"])
        self.base = self.process.ready["url"]
        self.https_base = self.process.ready["https_url"]
        self.ca = self.process.ready["ca"]

    def put(self, name, data):
        path = os.path.join(self.root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".part", "wb") as f:
            f.write(data)
        os.replace(path + ".part", path)

    def url(self, name):
        return f"{self.base}/{name}"

    def https_url(self, name):
        return f"{self.https_base}/{name}"

    def stop(self):
        self.process.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def moto_python():
    """The Python that runs moto_server (and so has moto and boto3), or None."""
    if os.environ.get("MIBZ2_MOTO_PYTHON"):
        return os.environ["MIBZ2_MOTO_PYTHON"]
    script = shutil.which("moto_server")
    for home in (os.environ.get("HOME"), "/root"):
        if not script and home and os.access(f"{home}/.pyenv/shims/moto_server", os.X_OK):
            script = f"{home}/.pyenv/shims/moto_server"
    if not script:
        return None
    with open(script, "rb") as f:
        first = f.readline().decode(errors="replace")
        rest = f.read().decode(errors="replace")
    if "pyenv" in rest and "python" not in first:
        root = os.path.dirname(os.path.dirname(script))
        r = subprocess.run([f"{root}/libexec/pyenv", "which", "moto_server"], capture_output=True, text=True,
                           env=dict(os.environ, PYENV_ROOT=root))
        if r.returncode != 0:
            return None
        with open(r.stdout.strip(), "rb") as f:
            first = f.readline().decode(errors="replace")
    if not first.startswith("#!") or "python" not in first:
        return None
    return first[2:].strip().split()[0]


class S3:
    def __init__(self):
        python = moto_python()
        if not python:
            raise RuntimeError("no moto_server (set MIBZ2_MOTO_PYTHON to a Python with moto and boto3)")
        self.scratch = tempfile.mkdtemp(prefix="mibz2-s3-")
        self.process = ServerProcess([python, os.path.join(TESTTOOLS, "s3_server.py")])
        r = self.process.ready
        self.endpoint, self.key, self.secret, self.region = r["url"], r["key"], r["secret"], r["region"]
        # Temporary credentials (STS AssumeRole of a role allowed the same).
        self.session_key, self.session_secret, self.session_token = (
            r["session_key"], r["session_secret"], r["session_token"])

    def _do(self, obj):
        answer = self.process.command(obj)
        assert answer.get("ok"), f"{obj} -> {answer}"

    def make_bucket(self, name):
        self._do({"op": "bucket", "name": name})

    def put(self, bucket, key, data, public=False):
        path = os.path.join(self.scratch, "object")
        with open(path, "wb") as f:
            f.write(data)
        self._do({"op": "put", "bucket": bucket, "key": key, "file": path, "public": public})

    def require_signatures(self, on):
        self._do({"op": "signatures", "on": bool(on)})

    def environ(self):
        """AWS_* variables for a process that should reach this server with the user's key."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": self.key,
                "AWS_SECRET_ACCESS_KEY": self.secret, "AWS_DEFAULT_REGION": self.region}

    def stop(self):
        self.process.stop()
        shutil.rmtree(self.scratch, ignore_errors=True)


class FaultProxy:
    def __init__(self, upstream, latency_ms=0, rate=0):
        self.process = ServerProcess([SYSTEM_PYTHON, os.path.join(TESTTOOLS, "fault_proxy.py"), "--upstream", upstream,
                                      "--latency-ms", str(latency_ms), "--rate", str(rate), "--stdin-eof-stops"])
        self.base = self.process.ready["url"]

    def url(self, path):
        return f"{self.base}/{path}"

    def _post(self, what, body):
        req = urllib.request.Request(f"{self.base}/_proxy/{what}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req) as r:
            return json.loads(r.read())

    def set_faults(self, rules):
        self._post("faults", rules)

    def reset(self):
        self._post("reset", {})

    def stats(self):
        with urllib.request.urlopen(f"{self.base}/_proxy/stats") as r:
            return json.loads(r.read())

    def stop(self):
        self.process.stop()


def _started(make):
    try:
        return make()
    except (RuntimeError, OSError) as e:
        pytest.skip(f"no test server: {e}")


@pytest.fixture(scope="session")
def nginx_server():
    server = _started(Nginx)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def s3_server():
    server = _started(S3)
    yield server
    server.stop()


@pytest.fixture
def fault_proxy():
    proxies = []

    def start(upstream, latency_ms=0, rate=0):
        proxies.append(_started(lambda: FaultProxy(upstream, latency_ms, rate)))
        return proxies[-1]
    yield start
    for p in proxies:
        p.stop()
