#!/usr/bin/python3
"""An HTTP proxy in front of one server, on loopback, that makes the network as bad as a test or a
benchmark wants: latency added to every request, bandwidth capped per connection, and faults
injected into chosen requests.

    fault_proxy.py --upstream http://127.0.0.1:8080 [--port 0] [--latency-ms 20] [--rate 5M]
                   [--fault JSON]...

When it is ready it prints one line of JSON, {"port": N, "url": "http://127.0.0.1:N"}, and runs
until SIGTERM or SIGINT (or until its standard input ends, with --stdin-eof-stops).

Faults are rules, tried in order for each request (control requests aside); the first that
applies is used, and counts one of its `times`. A rule is a JSON object:

    {"kind": KIND, "times": 1, "skip": 0, "methods": ["GET"], ...}

    times     how many requests it applies to (-1: every one)
    skip      how many requests it lets through first (counted among the requests it could apply
              to: an "etag" rule with skip 3 changes the object from the 4th request on)
    methods   the methods it applies to

    KIND            what the request gets
    reset           the reply's headers and `after_bytes` of its body (default 0), then a TCP reset
    short           the headers (the full Content-Length) and `after_bytes` of the body, then the
                    connection is closed cleanly: a body shorter than it said
    status          `status` (503 by default) with Retry-After: `retry_after` if given, and no body
                    worth reading; the server is not asked
    slow            the reply, `delay_ms` late (its first byte)
    etag            the object replaced: its ETag is `etag` (default the server's + "-new"), and an
                    If-Match naming another ETag gets 412, unless "honour_if_match": false (then the
                    reply comes with the new ETag)
    ignore_range    the Range header dropped: 200 and the whole body
    short_range     a shorter range than asked: 206 with the first `bytes` (default 1000) of it, and
                    a Content-Range that says so

Control, over HTTP on the same port (paths under /_proxy/):

    POST /_proxy/faults     a JSON list of rules: replaces the rules
    POST /_proxy/settings   {"latency_ms": N, "rate": BYTES_PER_SECOND} (0: none)
    POST /_proxy/reset      no rules, counters to zero
    GET  /_proxy/stats      {"requests", "gets", "heads", "body_bytes", "connections",
                             "faults_applied", "max_in_flight" (requests being answered at
                             once, at most), "ranges": [the Range header of each GET]}

Run with Debian's /usr/bin/python3 (python3-aiohttp).
"""

import argparse
import asyncio
import json
import os
import signal
import socket
import struct
import sys

from aiohttp import ClientSession, ClientTimeout, TCPConnector, web
from multidict import CIMultiDict

HOP_BY_HOP = {
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
    "transfer-encoding", "upgrade", "host", "content-length",
}
CHUNK = 64 * 1024


def parse_rate(text):
    """'5M' -> 5 * 2**20 bytes per second; '0' -> no cap."""
    text = str(text).strip()
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    if text and text[-1].lower() in units:
        return int(float(text[:-1]) * units[text[-1].lower()])
    return int(text)


class Rule:
    def __init__(self, spec):
        self.spec = spec
        self.kind = spec["kind"]
        if self.kind not in ("reset", "short", "status", "slow", "etag", "ignore_range", "short_range"):
            raise ValueError(f"unknown fault kind {self.kind!r}")
        self.times = int(spec.get("times", 1))
        self.skip = int(spec.get("skip", 0))
        self.methods = {m.upper() for m in spec.get("methods", ["GET"])}

    def take(self, method):
        """Whether the rule applies to this request (and counts it)."""
        if method not in self.methods or self.times == 0:
            return False
        if self.skip > 0:
            self.skip -= 1
            return False
        if self.times > 0:
            self.times -= 1
        return True


class Proxy:
    def __init__(self, upstream, latency_ms, rate):
        self.upstream = upstream.rstrip("/")
        self.latency = latency_ms / 1000.0
        self.rate = rate
        self.rules = []
        self.reset_counters()
        self.session = None
        self.sent_on = {}  # connection -> [bytes sent, time of its first byte]

    def reset_counters(self):
        self.stats = {"requests": 0, "gets": 0, "heads": 0, "body_bytes": 0, "connections": 0,
                      "faults_applied": 0, "max_in_flight": 0, "ranges": []}
        self.in_flight = 0
        self.seen_connections = set()

    async def start(self):
        self.session = ClientSession(connector=TCPConnector(limit=0), auto_decompress=False,
                                     timeout=ClientTimeout(total=None))

    # ---- control ----------------------------------------------------------------------------

    async def control(self, request):
        what = request.match_info["what"]
        if what == "stats" and request.method == "GET":
            return web.json_response(self.stats)
        if request.method != "POST":
            return web.Response(status=405)
        if what == "faults":
            try:
                self.rules = [Rule(spec) for spec in await request.json()]
            except (ValueError, KeyError, TypeError) as e:
                return web.Response(status=400, text=str(e))
        elif what == "settings":
            body = await request.json()
            if "latency_ms" in body:
                self.latency = float(body["latency_ms"]) / 1000.0
            if "rate" in body:
                self.rate = parse_rate(body["rate"])
        elif what == "reset":
            self.rules = []
            self.reset_counters()
        else:
            return web.Response(status=404)
        return web.json_response({"ok": True})

    # ---- proxying ---------------------------------------------------------------------------

    def rule_for(self, method):
        for rule in self.rules:
            if rule.take(method):
                self.stats["faults_applied"] += 1
                return rule
        return None

    async def send(self, request, response, data):
        """Writes data, no faster than the cap for this connection."""
        conn = id(request.transport)
        for start in range(0, len(data), CHUNK):
            piece = data[start:start + CHUNK]
            if self.rate:
                loop = asyncio.get_running_loop()
                sent = self.sent_on.setdefault(conn, [0, loop.time()])
                sent[0] += len(piece)
                due = sent[1] + sent[0] / self.rate
                if due > loop.time():
                    await asyncio.sleep(due - loop.time())
            await response.write(piece)
            self.stats["body_bytes"] += len(piece)

    async def handle(self, request):
        self.in_flight += 1
        self.stats["max_in_flight"] = max(self.stats["max_in_flight"], self.in_flight)
        try:
            return await self.proxy(request)
        finally:
            self.in_flight -= 1

    async def proxy(self, request):
        method = request.method
        self.stats["requests"] += 1
        if method == "GET":
            self.stats["gets"] += 1
            self.stats["ranges"].append(request.headers.get("Range", ""))
        elif method == "HEAD":
            self.stats["heads"] += 1
        if id(request.transport) not in self.seen_connections:
            self.seen_connections.add(id(request.transport))
            self.stats["connections"] += 1
        rule = self.rule_for(method)
        kind = rule.kind if rule else None
        if self.latency:
            await asyncio.sleep(self.latency)
        if kind == "slow":
            await asyncio.sleep(int(rule.spec.get("delay_ms", 1000)) / 1000.0)
        if kind == "status":
            status = int(rule.spec.get("status", 503))
            headers = {}
            if "retry_after" in rule.spec:
                headers["Retry-After"] = str(rule.spec["retry_after"])
            return web.Response(status=status, headers=headers, text=f"fault: status {status}\n")

        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        if kind == "ignore_range":
            headers.pop("Range", None)
            headers.pop("If-Match", None)
        new_etag = None
        if kind == "etag":
            if_match = headers.pop("If-Match", None)
        async with self.session.request(method, self.upstream + request.path_qs, headers=headers,
                                        allow_redirects=False) as up:
            if kind == "etag":
                new_etag = rule.spec.get("etag") or (up.headers.get("ETag", '"x"').rstrip('"') + '-new"')
                if if_match and if_match != new_etag and rule.spec.get("honour_if_match", True):
                    return web.Response(status=412, headers={"ETag": new_etag}, text="fault: precondition failed\n")
            out_headers = CIMultiDict((k, v) for k, v in up.headers.items() if k.lower() not in HOP_BY_HOP)
            if new_etag:
                out_headers["ETag"] = new_etag
            length = int(up.headers["Content-Length"]) if "Content-Length" in up.headers else None
            limit = None  # body bytes sent before the fault, or all of them
            if kind == "short_range" and up.status == 206 and length is not None:
                limit = min(length, int(rule.spec.get("bytes", 1000)))
                first = int(up.headers["Content-Range"].split()[1].split("-")[0])
                total = up.headers["Content-Range"].split("/")[1]
                out_headers["Content-Range"] = f"bytes {first}-{first + limit - 1}/{total}"
                length = limit
            elif kind in ("reset", "short"):
                limit = int(rule.spec.get("after_bytes", 0))

            response = web.StreamResponse(status=up.status, headers=out_headers)
            if length is not None:
                response.content_length = length
            await response.prepare(request)
            if method == "HEAD":
                await response.write_eof()
                return response
            sent = 0
            async for chunk in up.content.iter_chunked(CHUNK):
                if limit is not None:
                    chunk = chunk[:max(0, limit - sent)]
                if chunk:
                    await self.send(request, response, chunk)
                    sent += len(chunk)
                if limit is not None and sent >= limit:
                    break
        if kind in ("reset", "short"):
            await asyncio.sleep(0.05)  # let the bytes leave before the connection goes
            sock = request.transport.get_extra_info("socket") if request.transport else None
            if kind == "reset" and sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                request.transport.abort()
            elif request.transport:
                request.transport.close()
            return response
        await response.write_eof()
        return response


async def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", required=True, help="the server's URL, e.g. http://127.0.0.1:8080")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0: a free port, printed when ready")
    ap.add_argument("--latency-ms", type=float, default=0.0, help="added before each request is answered")
    ap.add_argument("--rate", default="0", help="bytes per second per connection (5M, 500k; 0: no cap)")
    ap.add_argument("--fault", action="append", default=[], help="a rule as JSON (see above); repeatable")
    ap.add_argument("--stdin-eof-stops", action="store_true", help="stop when standard input ends")
    args = ap.parse_args()

    proxy = Proxy(args.upstream, args.latency_ms, parse_rate(args.rate))
    proxy.rules = [Rule(json.loads(spec)) for spec in args.fault]
    await proxy.start()
    app = web.Application(client_max_size=1 << 20)
    app.router.add_route("*", "/_proxy/{what}", proxy.control)
    app.router.add_route("*", "/{tail:.*}", proxy.handle)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, args.host, args.port)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print(json.dumps({"port": port, "url": f"http://{args.host}:{port}"}), flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if args.stdin_eof_stops:
        def watch_stdin():
            while os.read(0, 4096):
                pass
            loop.call_soon_threadsafe(stop.set)
        loop.run_in_executor(None, watch_stdin)
    await stop.wait()
    await runner.cleanup()
    await proxy.session.close()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
