"""An HTTP server written with Python's standard library, for tests/test_http.c.

Binds 127.0.0.1 on a free port, prints the port on one line, then serves:
  POST /echo            200 with the request body and content type; X-Seen-Auth
                        says whether an Authorization header came (never its value)
  GET  /flaky?n=K&id=X  429 (Retry-After: 0) for the first K requests of id X, then 200
  GET  /stall           never answers (sleeps a minute)
  GET  /big?n=N         N bytes, no Content-Length: the body ends when the
                        connection closes (HTTP/1.0)
  GET  /drop            closes the connection without answering
"""
import sys
import time
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse, parse_qs

seen = {}
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="text/plain", extra=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        url = urlparse(self.path)
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        if url.path != "/echo":
            return self.reply(404, b"no such path")
        auth = "yes" if self.headers.get("Authorization") else "no"
        self.reply(200, body, self.headers.get("Content-Type", "application/octet-stream"),
                   {"X-Seen-Auth": auth})

    def do_GET(self):
        url = urlparse(self.path)
        q = parse_qs(url.query)
        if url.path == "/flaky":
            key = q.get("id", [""])[0]
            with lock:
                seen[key] = seen.get(key, 0) + 1
                count = seen[key]
            if count <= int(q.get("n", ["0"])[0]):
                return self.reply(429, b"slow down", extra={"Retry-After": "0"})
            return self.reply(200, b"ok after %d" % (count - 1))
        if url.path == "/stall":
            time.sleep(60)
            return
        if url.path == "/big":
            n = int(q.get("n", ["0"])[0])
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            self.wfile.write(b"x" * n)
            self.close_connection = True
            return
        if url.path == "/drop":
            self.close_connection = True
            return
        self.reply(404, b"no such path")


ThreadingHTTPServer.daemon_threads = True
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
