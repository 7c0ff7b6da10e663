#!/usr/bin/python3
"""env-open-many.py URL N PID WSROOT - opens N episodes on a `harness serve`
(started with --max-episodes N or more, its work trees under WSROOT, PID its
process), one reset after another and none closed, then prints one JSON
line: reset latency p50/p99 near 1, 100 and N open episodes (20 resets
each), the server's memory (VmRSS) before and with N open, the work trees
and their git dirs on disk (du of WSROOT), the memory per open episode and
how many open episodes 4 GB holds. The episodes stay open: stop the
server (SIGTERM records them unscored). Exit 1 when a reset fails."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from env_client import EnvClient, EnvError  # noqa: E402

TASKS = ["leapyear", "roman_subtractive", "strutil_ends_with", "base64_lowercase_z", "ringbuf_capacity"]


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1])
    return 0


def du_kb(path):
    out = subprocess.run(["du", "-sk", path], capture_output=True, text=True).stdout.split()
    return int(out[0]) if out else 0


def quantile(v, q):
    v = sorted(v)
    return v[max(0, min(len(v) - 1, int(-(-q * len(v) // 1)) - 1))]


def main(argv):
    if len(argv) != 4:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    url, n, pid, ws = argv[0], int(argv[1]), int(argv[2]), argv[3]
    env = EnvClient(url, retries=0)
    base_rss, base_ws = rss_kb(pid), du_kb(ws)
    lat = []
    t0 = time.time()
    for i in range(n):
        t = time.perf_counter()
        try:
            env.reset(TASKS[i % len(TASKS)], seed=i + 1)
        except EnvError as e:
            print(f"env-open-many: reset {i + 1} of {n}: {e}", file=sys.stderr)
            return 1
        lat.append((time.perf_counter() - t) * 1000)
    wall = time.time() - t0
    rss, ws_kb = rss_kb(pid), du_kb(ws)
    levels = {}
    for at in sorted({1, min(100, n), n}):
        lo = max(0, min(at - 10, n - 20))
        w = lat[lo:lo + 20]
        levels[str(at)] = {"resets": f"{lo + 1}-{lo + len(w)}", "p50_ms": round(quantile(w, 0.5), 2),
                           "p99_ms": round(quantile(w, 0.99), 2)}
    per_kb = (rss - base_rss + ws_kb - base_ws) / n
    print(json.dumps({"open": n, "wall_s": round(wall, 1), "reset_ms": levels,
                      "all_p50_ms": round(quantile(lat, 0.5), 2), "all_p99_ms": round(quantile(lat, 0.99), 2),
                      "rss_idle_mb": round(base_rss / 1024, 1), "rss_open_mb": round(rss / 1024, 1),
                      "trees_mb": round(ws_kb / 1024, 1), "per_episode_kb": round(per_kb, 1),
                      "total_mb": round((rss + ws_kb) / 1024, 1),
                      "open_in_4gb": int((4 << 20) / per_kb) if per_kb > 0 else None}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
