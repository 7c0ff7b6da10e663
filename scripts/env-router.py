#!/usr/bin/python3
"""env-router.py - a load balancer for several `harness serve` processes
(docs/env-server.md), Python standard library only.

    env-router.py [--host 127.0.0.1] [--port N] ID=URL [ID=URL ...]

ID is a server's --server-id, URL its base address. POST /v1/reset goes to
the servers in turn (round robin; a server answering 429 is skipped for the
next one); /v1/step, /v1/close and GET /v1/state go to the server named by
the episode id's first part (the ids are SERVER-BOOT-N); GET /v1/tasks and
/metrics to the first server; GET /health answers for all. Bodies and
answers pass through unchanged, the Authorization header too. --port 0
picks a free port; the start-up line on stderr names it. Exit 2 on a usage
error.
"""
import argparse
import itertools
import json
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BODY_MAX = 1 << 20  # the servers' own request cap (ENVSRV_BODY_MAX)


class Router:
    def __init__(self, backends):
        self.backends = backends  # [(id, url)]
        self.by_id = dict(backends)
        self.turn = itertools.cycle(range(len(backends)))
        self.lock = threading.Lock()

    def next_order(self):
        with self.lock:
            k = next(self.turn)
        return self.backends[k:] + self.backends[:k]


def forward(url, method, path, body, headers):
    req = urllib.request.Request(url + path, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=3600) as r:
            return r.status, r.headers.get("Content-Type", "application/json"), r.read(), r.headers.get("Retry-After")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", "application/json"), e.read(), e.headers.get("Retry-After")
    except (urllib.error.URLError, OSError) as e:
        msg = {"error": {"message": f"{url}: unreachable ({e})", "type": "server_error", "param": None, "code": None}}
        return 502, "application/json", json.dumps(msg).encode(), None


def make_handler(router):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def reply(self, status, ctype, data, retry_after=None):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            if retry_after:
                self.send_header("Retry-After", retry_after)
            self.end_headers()
            self.wfile.write(data)

        def error(self, status, param, message):
            body = {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}
            self.reply(status, "application/json", json.dumps(body).encode())

        def headers_out(self):
            h = {"Content-Type": "application/json"}
            if self.headers.get("Authorization"):
                h["Authorization"] = self.headers["Authorization"]
            return h

        def owner(self, episode_id):
            server = episode_id.split("-", 1)[0] if isinstance(episode_id, str) else None
            return router.by_id.get(server)

        def route(self, method):
            path = self.path
            route = urllib.parse.urlsplit(path).path
            n = int(self.headers.get("Content-Length") or 0)
            if n > BODY_MAX:
                return self.error(413, "body", f"body: expected at most {BODY_MAX} bytes")
            body = self.rfile.read(n) if n else None
            if route == "/health" and method == "GET":
                servers = {}
                for sid, url in router.backends:
                    st, _, data, _ = forward(url, "GET", "/health", None, {})
                    servers[sid] = json.loads(data) if st == 200 else {"status": "unreachable"}
                ok = all(v.get("status") == "ok" for v in servers.values())
                return self.reply(200, "application/json", json.dumps({"status": "ok" if ok else "degraded",
                                                                       "servers": servers}).encode())
            if route == "/v1/reset" and method == "POST":
                for sid, url in router.next_order():
                    st, ctype, data, ra = forward(url, method, path, body, self.headers_out())
                    if st != 429:
                        break
                return self.reply(st, ctype, data, ra)
            if route in ("/v1/step", "/v1/close") and method == "POST":
                try:
                    eid = json.loads(body or b"{}").get("episode_id")
                except (ValueError, AttributeError):
                    return self.error(400, "body", "body: expected a JSON object")
            elif route == "/v1/state" and method == "GET":
                eid = (urllib.parse.parse_qs(urllib.parse.urlsplit(path).query).get("episode_id") or [None])[0]
            else:
                url = router.backends[0][1]  # /v1/tasks, /metrics and whatever else: the first server answers
                return self.reply(*forward(url, method, path, body, self.headers_out()))
            url = self.owner(eid)
            if url is None:
                return self.error(404, "episode_id", f"episode_id: '{str(eid)[:80]}' names no server behind this router "
                                  f"(servers: {', '.join(router.by_id)})")
            return self.reply(*forward(url, method, path, body, self.headers_out()))

        def do_GET(self):
            self.route("GET")

        def do_POST(self):
            self.route("POST")

    return Handler


def main():
    ap = argparse.ArgumentParser(description="load balancer for harness serve")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8099)
    ap.add_argument("backends", nargs="+", metavar="ID=URL")
    a = ap.parse_args()
    backends = []
    for b in a.backends:
        sid, sep, url = b.partition("=")
        if not sep or not sid or not url.startswith("http"):
            print(f"env-router: {b}: expected ID=URL (a server id and its http:// address)", file=sys.stderr)
            return 2
        backends.append((sid, url.rstrip("/")))
    srv = ThreadingHTTPServer((a.host, a.port), make_handler(Router(backends)))
    srv.daemon_threads = True
    print(f"env-router: listening on http://{a.host}:{srv.server_address[1]} ({len(backends)} servers)",
          file=sys.stderr, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
