#!/bin/sh
# loadtest-env.sh - `make loadtest`: N episodes (default 1000) through
# `harness serve` on loopback, OPEN (default 64) open at once, driven by
# examples/env_client.py replaying the oracle's moves. Checks that every
# episode is recorded exactly once with the reward `harness run --policy
# oracle` gets on the same task, and reports the step latency (whole and
# without the test runs), the memory per open episode (server memory plus
# work trees) and how many open episodes 4 GB would hold.
# Usage: scripts/loadtest-env.sh [BINDIR] [EPISODES] [OPEN]
set -eu
bin=${1:-bin}
n=${2:-1000}
open=${3:-64}
tasks="leapyear roman_subtractive strutil_ends_with base64_lowercase_z ringbuf_capacity"
dir=$(mktemp -d /tmp/rl-loadtest-XXXXXX)
chmod 755 "$dir"
export RL_WS_ROOT="$dir/ws"
srv=""
cleanup() {
    [ -n "$srv" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM

for t in $tasks; do
    RL_WS_ROOT="$dir/refws" "$bin/harness" run --task "$t" --policy oracle --out "$dir/ref.jsonl" >/dev/null 2>&1
done

"$bin/harness" serve --port 0 --max-episodes "$open" --out "$dir/rec.jsonl" --server-id load \
    --idle-timeout 600 2>"$dir/serve.log" &
srv=$!
port=""
for _ in $(seq 1 200); do
    port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/serve.log" | head -1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { echo "loadtest: harness serve did not start" >&2; cat "$dir/serve.log" >&2; exit 1; }
base_kb=$(awk '/VmRSS/ {print $2}' /proc/$srv/status)

# a sampler: server memory, work trees and open episodes, every 2 s
(
    while kill -0 "$srv" 2>/dev/null; do
        rss=$(awk '/VmRSS/ {print $2}' /proc/$srv/status 2>/dev/null || echo 0)
        trees=$(du -sk "$RL_WS_ROOT/trees" 2>/dev/null | cut -f1)
        openep=$(curl -s "http://127.0.0.1:$port/health" | sed -n 's/.*"open_episodes":\([0-9]*\).*/\1/p')
        echo "${rss:-0} ${trees:-0} ${openep:-0}"
        sleep 2
    done
) >"$dir/samples" 2>/dev/null &
sampler=$!

timeout 7200 /usr/bin/python3 examples/env_client.py --url "http://127.0.0.1:$port" --replay "$dir/ref.jsonl" \
    --episodes "$n" --parallel "$open" --summary "$dir/summary.json"
curl -s "http://127.0.0.1:$port/metrics" >"$dir/metrics"
kill "$sampler" 2>/dev/null || true

/usr/bin/python3 - "$dir" "$n" "$base_kb" <<'EOF'
import json, sys
d, n, base_kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
recs = [json.loads(l) for l in open(f"{d}/rec.jsonl") if l.strip()]
ids = [r["episode_id"] for r in recs]
ref = {}
for l in open(f"{d}/ref.jsonl"):
    r = json.loads(l)
    ref[r["task"]] = r["reward"]
summary = json.load(open(f"{d}/summary.json"))
lost = n - len(set(ids))
dup = len(ids) - len(set(ids))
wrong = sum(1 for r in recs if r["reward"] != ref.get(r["task"]))
m = {}
for line in open(f"{d}/metrics"):
    if line.startswith("rl_env_step_latency"):
        k, v = line.rsplit(" ", 1)
        m[k] = float(v)
best = None
for line in open(f"{d}/samples"):
    rss, trees, op = (int(x) for x in line.split())
    if op and (best is None or op > best[2] or (op == best[2] and rss + trees > best[0] + best[1])):
        best = (rss, trees, op)
per_kb = ((best[0] - base_kb) + best[1]) / best[2] if best else float("nan")
print(f"loadtest: {len(recs)} records of {n} episodes: {lost} lost, {dup} duplicated, "
      f"{wrong} rewards differ from harness run --policy oracle; client wall {summary['wall_s']} s")
print("loadtest: step latency p50 %.1f ms p99 %.1f ms; without test runs p50 %.2f ms p99 %.2f ms" % (
    m.get('rl_env_step_latency_ms{quantile="0.5"}', float("nan")),
    m.get('rl_env_step_latency_ms{quantile="0.99"}', float("nan")),
    m.get('rl_env_step_latency_excl_tests_ms{quantile="0.5"}', float("nan")),
    m.get('rl_env_step_latency_excl_tests_ms{quantile="0.99"}', float("nan"))))
if best:
    print(f"loadtest: {best[2]} open episodes: server {best[0]} KB (idle {base_kb} KB), work trees {best[1]} KB; "
          f"{per_kb:.0f} KB per open episode, {int(4 * 1024 * 1024 / per_kb)} open episodes in 4 GB")
sys.exit(0 if lost == 0 and dup == 0 and wrong == 0 and summary["failed"] == 0 else 1)
EOF
