#!/usr/bin/env python3
"""env_client.py - a client of `harness serve` (docs/env-server.md), standard library only.

As a library:

    from env_client import EnvClient
    env = EnvClient("http://127.0.0.1:8100", token=os.environ.get("RL_ENV_TOKEN"))
    ep = env.reset("leapyear", seed=1)               # {episode_id, messages, tools, info}
    out = env.step(ep["episode_id"], assistant_text)  # {messages, done, reward, info}

As a program it replays the moves of recorded episodes (the oracle's, from
`harness run --policy oracle` or `harness batch`) through the server, K
episodes open at once, and checks each reward against the recorded one:

    env_client.py --url URL --replay REF.jsonl [--episodes N] [--parallel K]
                  [--as-messages] [--token-env VAR] [--summary FILE]

--as-messages sends every second turn as an OpenAI assistant message with
tool_calls instead of the template text. Exit 0 when every episode ended
with its recorded reward, 1 otherwise, 2 on a usage error.
"""
import argparse
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request


class EnvError(Exception):
    """A 4xx/5xx answer: status, the field at fault and the message."""

    def __init__(self, status, param, message):
        super().__init__(f"HTTP {status}: {message}")
        self.status, self.param, self.message = status, param, message


class EnvClient:
    def __init__(self, base_url, token=None, timeout=600, retries=5):
        self.base = base_url.rstrip("/")
        self.token, self.timeout, self.retries = token, timeout, retries

    def _call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data else {}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as r:
                    text = r.read().decode()
                    return json.loads(text) if r.headers.get_content_type() == "application/json" else text
            except urllib.error.HTTPError as e:
                text = e.read().decode(errors="replace")
                if e.code == 429 and attempt < self.retries:  # all episodes open: wait for one to end
                    time.sleep(float(e.headers.get("Retry-After", "1")))
                    continue
                try:
                    err = json.loads(text)["error"]
                except (ValueError, KeyError, TypeError):
                    err = {"message": text, "param": None}
                raise EnvError(e.code, err.get("param"), err.get("message")) from None
        raise EnvError(429, None, "the server stayed full")

    def reset(self, task, seed=None, config=None):
        body = {"task": task}
        if seed is not None:
            body["seed"] = seed
        if config:
            body["config"] = config
        return self._call("POST", "/v1/reset", body)

    def step(self, episode_id, message, finish_reason=None):
        body = {"episode_id": episode_id, "message": message}
        if finish_reason:
            body["finish_reason"] = finish_reason
        return self._call("POST", "/v1/step", body)

    def close(self, episode_id):
        return self._call("POST", "/v1/close", {"episode_id": episode_id})

    def state(self, episode_id):
        return self._call("GET", "/v1/state?episode_id=" + urllib.request.quote(episode_id))

    def tasks(self, select="all"):
        return self._call("GET", "/v1/tasks?select=" + urllib.request.quote(select))["tasks"]

    def health(self):
        return self._call("GET", "/health")

    def metrics(self):
        return self._call("GET", "/metrics")


def assistant_messages(record):
    """The assistant messages of a record, in turn order."""
    return [m for m in record.get("messages", []) if m.get("role") == "assistant"]


def play(env, ref, as_messages):
    """One episode of ref's task and seed, its turns replayed. Returns (reward, episode_id, steps)."""
    ep = env.reset(ref["task"], seed=ref["config"].get("seed", 1))
    eid = ep["episode_id"]
    assert ep["messages"][0]["role"] == "system" and ep["messages"][1]["role"] == "user", ep["messages"]
    assert {t["function"]["name"] for t in ep["tools"]} >= {"read_file", "edit_file", "run_tests", "submit"}
    msgs = assistant_messages(ref)
    out = None
    for k, turn in enumerate(ref["turns"]):
        if as_messages and k % 2 == 1 and k < len(msgs):
            m = {key: v for key, v in msgs[k].items() if key != "raw"}
            out = env.step(eid, m)
        else:
            out = env.step(eid, turn["generated"])
        if out["done"]:
            break
    if out is None or not out["done"]:
        env.close(eid)
        return None, eid, len(ref["turns"])
    final = env.state(eid)  # the finished episode's record, as the server wrote it
    assert final["episode_id"] == eid and final["reward"] == out["reward"], (eid, final.get("reward"), out["reward"])
    return out["reward"], eid, out["info"]["turn"]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--replay", required=True, help="records whose moves are played (JSONL)")
    ap.add_argument("--episodes", type=int, default=0, help="episodes to play (default: one per record)")
    ap.add_argument("--parallel", type=int, default=4, help="episodes open at once")
    ap.add_argument("--as-messages", action="store_true")
    ap.add_argument("--token-env", default=None)
    ap.add_argument("--summary", default=None, help="write {episode_id: reward, ...} and figures here")
    a = ap.parse_args(argv)
    token = os.environ.get(a.token_env) if a.token_env else None
    refs = [json.loads(line) for line in open(a.replay) if line.strip()]
    if not refs:
        print("env_client: --replay: no records", file=sys.stderr)
        return 2
    n = a.episodes or len(refs)
    env = EnvClient(a.url, token=token)
    lock = threading.Lock()
    todo = list(range(n))
    results, failures = {}, []

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                i = todo.pop(0)
            ref = refs[i % len(refs)]
            try:
                reward, eid, turns = play(env, ref, a.as_messages)
            except Exception as e:  # one line per failed episode, the rest go on
                with lock:
                    failures.append(f"{ref['task']}: {e}")
                continue
            with lock:
                results[eid] = {"task": ref["task"], "reward": reward, "expected": ref["reward"], "turns": turns}

    t0 = time.time()
    threads = [threading.Thread(target=worker) for _ in range(max(1, a.parallel))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wrong = [f"{eid} {r['task']}: reward {r['reward']}, recorded {r['expected']}"
             for eid, r in results.items() if r["reward"] != r["expected"]]
    for line in failures + wrong:
        print("env_client: " + line, file=sys.stderr)
    summary = {"episodes": len(results), "failed": len(failures), "mismatched": len(wrong),
               "wall_s": round(time.time() - t0, 3), "results": results}
    if a.summary:
        with open(a.summary, "w") as f:
            json.dump(summary, f)
    print(f"env_client: {len(results)} episodes, {len(failures)} failed, {len(wrong)} rewards differ, "
          f"{summary['wall_s']} s")
    return 0 if not failures and not wrong and len(results) == n else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
