"""A deterministic OpenAI-compatible server for the openai policy's tests.

Usage: fake_server.py PORTFILE MODE [KEY]
It listens on a free loopback port and writes the port to PORTFILE.
MODE picks the behaviour of every request:
  ok        answer: chat requests with the leapyear fix as tool_calls
            (turn 1 edit_file, turn 2 submit); completions requests with
            the same calls written as text, with their token ids as
            "token_id:N" strings and logprobs (model "fake-text": text
            only; chat with model "fake-intext": the calls left in the
            content as text; "fake-reasoning": reasoning_content too)
  500       answer 500 with an OpenAI error body
  stall     never answer (the client's timeout ends the request)
  drop      close the connection without answering
  malformed answer 200 with a body that is not JSON
  truncated announce a longer body than is sent, then close
  slow      like ok, after 0.3 s (to count concurrent requests)
The file PORTFILE.mode, when present, overrides MODE for later requests.
Every request's body is appended as one line to PORTFILE.log together with
its Authorization header and the number of requests open when it arrived.
"""
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTFILE, MODE = sys.argv[1], sys.argv[2]
KEY = sys.argv[3] if len(sys.argv) > 3 else None
LOCK = threading.Lock()
OPEN = [0, 0]  # now, max

EDIT = {"path": "src/leapyear.c",
        "old_string": "year % 100 == 0 && year % 400 == 0",
        "new_string": "year % 100 == 0 && year % 400 != 0"}


def xml_call(name, args):
    s = "<tool_call>\n<function=%s>\n" % name
    for k, v in args.items():
        s += "<parameter=%s>\n%s\n</parameter>\n" % (k, v)
    return s + "</function>\n</tool_call>"


def turn_of(messages):
    return sum(1 for m in messages if m.get("role") == "assistant")


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-request-id", "req-%d" % int(time.time() * 1e6))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        with LOCK:
            OPEN[0] += 1
            OPEN[1] = max(OPEN[1], OPEN[0])
            with open(PORTFILE + ".log", "a") as f:
                f.write(json.dumps({"path": self.path, "auth": self.headers.get("Authorization"),
                                    "open": OPEN[0], "max_open": OPEN[1],
                                    "body": json.loads(raw)}) + "\n")
        try:
            self.answer(json.loads(raw))
        finally:
            with LOCK:
                OPEN[0] -= 1

    def answer(self, req):
        global MODE
        try:
            MODE = open(PORTFILE + ".mode").read().strip()
        except OSError:
            pass
        if MODE == "500":
            return self.send_json(500, {"error": {"message": "the model fell over", "type": "server_error"}})
        if MODE == "stall":
            time.sleep(30)
            return
        if MODE == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if MODE == "malformed":
            body = b"{not json"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if MODE == "truncated":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"choices": [{"text": "<tool_')
            self.close_connection = True
            return
        if MODE == "slow":
            time.sleep(0.3)
        if self.path.endswith("/chat/completions"):
            t = turn_of(req["messages"])
            call = ("edit_file", EDIT) if t == 0 else ("submit", {})
            msg = {"role": "assistant", "content": None,
                   "tool_calls": [{"id": "c%d" % t, "type": "function",
                                   "function": {"name": call[0], "arguments": json.dumps(call[1])}}]}
            if req["model"] == "fake-intext":
                # a server without a tool parser: the call stays in the text
                msg = {"role": "assistant", "content": "Fixing it.\n\n" + xml_call(*call)}
            if req["model"] == "fake-reasoning":
                # a reasoning model: its thinking beside the content
                msg["reasoning_content"] = "Turn %d: the century rule is inverted." % t
            return self.send_json(200, {"id": "chatcmpl-%d" % t, "object": "chat.completion",
                                        "model": req["model"] + "-served",
                                        "prompt_token_ids": [1, 2, 3],
                                        "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls"}],
                                        "usage": {"prompt_tokens": 3, "completion_tokens": 7, "total_tokens": 10}})
        # completions: the turn from the <|im_start|> count of the prompt
        # (system, user, then two per earlier turn: its tool response and
        # the next generation prompt); the reply's ids are its bytes (ids
        # 0-255 of the built-in tokenizer) and <|im_end|>, unless the
        # model asked for is "fake-text"
        prompt = req["prompt"]
        t = max(0, (sum(1 for x in prompt if x == SPECIAL["<|im_start|>"]) - 3) // 2)
        text = xml_call("edit_file", EDIT) if t == 0 else xml_call("submit", {})
        choice = {"index": 0, "text": text, "finish_reason": "stop"}
        if req["model"] != "fake-text":
            ids = list(text.encode()) + [SPECIAL["<|im_end|>"]]
            choice["logprobs"] = {"tokens": ["token_id:%d" % i for i in ids],
                                  "token_logprobs": [-0.125] * len(ids)}
        return self.send_json(200, {"id": "cmpl-%d" % t, "object": "text_completion", "model": req["model"],
                                    "choices": [choice],
                                    "usage": {"prompt_tokens": len(prompt), "completion_tokens": 9}})


SPECIAL = {t["content"]: t["id"] for t in json.load(open("models/tokenizer.json"))["special_tokens"]}
srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
