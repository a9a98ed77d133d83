#!/usr/bin/python3
"""nginx (Debian's nginx-light) serving one directory on loopback, for tests and benchmarks: HTTP
on one free port, and with --https HTTPS (HTTP/2 offered) on another with a self-signed
certificate made here with openssl, for 127.0.0.1 and localhost.

    nginx_server.py --root DIR [--https] [--nginx /usr/sbin/nginx] [--stdin-eof-stops]

Range requests and ETags are on (nginx's defaults for static files), and If-Match is honoured.
When it is ready it prints one line of JSON:

    {"port": N, "url": "http://127.0.0.1:N", "https_port": M, "https_url": "https://127.0.0.1:M",
     "ca": "/tmp/.../cert.pem"}

(the https fields with --https only; "ca" is the file to trust, as CURL_CA_BUNDLE), then runs
until SIGTERM or SIGINT (or the end of its standard input, with --stdin-eof-stops), stops nginx and removes its files.
Everything nginx writes (configuration, pid, logs, temporary files) is in a directory of its own.
Exits 2 with a message on standard error when nginx cannot start.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

CONFIG = """
daemon off;
master_process off;
worker_processes 1;
pid {state}/nginx.pid;
error_log {state}/error.log warn;
events {{ worker_connections 512; }}
http {{
  access_log off;
  client_body_temp_path {state}/body;
  proxy_temp_path {state}/proxy;
  fastcgi_temp_path {state}/fastcgi;
  uwsgi_temp_path {state}/uwsgi;
  scgi_temp_path {state}/scgi;
  default_type application/octet-stream;
  sendfile on;
  keepalive_requests 100000;
  server {{
    listen 127.0.0.1:{port};
    root {root};
  }}
{https}
}}
"""

HTTPS = """
  server {{
    listen 127.0.0.1:{port} ssl http2;
    ssl_certificate {state}/cert.pem;
    ssl_certificate_key {state}/key.pem;
    root {root};
  }}
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def make_certificate(state):
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-keyout", f"{state}/key.pem", "-out", f"{state}/cert.pem", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def start(nginx, root, state, https):
    """Starts nginx on free ports (trying again should another process take one meanwhile)."""
    last_error = ""
    for _ in range(5):
        port = free_port()
        https_port = free_port() if https else None
        text = CONFIG.format(state=state, port=port, root=root,
                             https=HTTPS.format(port=https_port, state=state, root=root) if https else "")
        with open(f"{state}/nginx.conf", "w") as f:
            f.write(text)
        proc = subprocess.Popen([nginx, "-e", f"{state}/error.log", "-p", state, "-c", f"{state}/nginx.conf"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            if answers(port) and (not https or answers(https_port)):
                return proc, port, https_port
            time.sleep(0.02)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        try:
            with open(f"{state}/error.log") as f:
                last_error = f.read()[-2000:]
        except OSError:
            last_error = proc.stderr.read().decode(errors="replace")[-2000:]
    raise RuntimeError(f"nginx did not start: {last_error.strip()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True, help="the directory to serve")
    ap.add_argument("--https", action="store_true", help="also HTTPS, with a certificate made here")
    ap.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    ap.add_argument("--stdin-eof-stops", action="store_true", help="stop when standard input ends")
    args = ap.parse_args()
    if not os.access(args.nginx, os.X_OK):
        print(f"nginx_server: no nginx at {args.nginx} (Debian: apt-get install nginx-light)", file=sys.stderr)
        sys.exit(2)
    state = tempfile.mkdtemp(prefix="mibz2-nginx-")
    try:
        for d in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            os.mkdir(f"{state}/{d}")
        if args.https:
            make_certificate(state)
        proc, port, https_port = start(args.nginx, os.path.abspath(args.root), state, args.https)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        print(f"nginx_server: {e}", file=sys.stderr)
        shutil.rmtree(state, ignore_errors=True)
        sys.exit(2)

    ready = {"port": port, "url": f"http://127.0.0.1:{port}"}
    if args.https:
        ready.update(https_port=https_port, https_url=f"https://127.0.0.1:{https_port}", ca=f"{state}/cert.pem")
    print(json.dumps(ready), flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    def watch_stdin():
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        stop.set()
    if args.stdin_eof_stops:
        threading.Thread(target=watch_stdin, daemon=True).start()
    while not stop.wait(0.2) and proc.poll() is None:
        pass
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
