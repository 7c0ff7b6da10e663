#!/bin/sh
# loadtest-env.sh - `make loadtest`: N episodes (default 1000) through
# `harness serve` on loopback, OPEN (default 64) open at once, driven by
# examples/env_client.py replaying the oracle's moves. Checks that every
# episode is recorded exactly once with the reward `harness run --policy
# oracle` gets on the same task, and reports the step latency (whole and
# without the test runs), the memory per open episode (server memory plus
# work trees) and how many open episodes 4 GB would hold. Then a second
# server holds OPEN_MAX (default 1000) episodes open at once
# (scripts/env-open-many.py): reset latency near 1, 100 and OPEN_MAX open,
# server memory plus work trees, measured rather than extrapolated.
# Usage: scripts/loadtest-env.sh [BINDIR] [EPISODES] [OPEN] [OPEN_MAX]
set -eu
bin=${1:-bin}
n=${2:-1000}
open=${3:-64}
open_max=${4:-1000}
tasks="leapyear roman_subtractive strutil_ends_with base64_lowercase_z ringbuf_capacity"
dir=$(mktemp -d /tmp/rl-loadtest-XXXXXX)
chmod 755 "$dir"
export RL_WS_ROOT="$dir/ws"
srv=""
cleanup() {
    [ -n "$srv" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null || true
    rm -rf "$dir"
}
# the start-up line of the server logging to $1 names its port
port_of() {
    p=""
    for _ in $(seq 1 200); do
        p=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$1" | head -1)
        [ -n "$p" ] && break
        sleep 0.1
    done
    [ -n "$p" ] || { echo "loadtest: harness serve did not start" >&2; cat "$1" >&2; exit 1; }
    echo "$p"
}
trap cleanup EXIT INT TERM

for t in $tasks; do
    RL_WS_ROOT="$dir/refws" "$bin/harness" run --task "$t" --policy oracle --out "$dir/ref.jsonl" >/dev/null 2>&1
done

"$bin/harness" serve --port 0 --max-episodes "$open" --out "$dir/rec.jsonl" --server-id load \
    --idle-timeout 600 2>"$dir/serve.log" &
srv=$!
port=$(port_of "$dir/serve.log")
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

rc=0
/usr/bin/python3 - "$dir" "$n" "$base_kb" <<'EOF' || rc=1
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
kill "$srv"
wait "$srv" 2>/dev/null || true

# OPEN_MAX episodes open at once on a server of their own
RL_WS_ROOT="$dir/ws-open" "$bin/harness" serve --port 0 --max-episodes "$open_max" --out "$dir/open.jsonl" \
    --server-id many --idle-timeout 0 2>"$dir/serve-open.log" &
srv=$!
port=$(port_of "$dir/serve-open.log")
/usr/bin/python3 scripts/env-open-many.py "http://127.0.0.1:$port" "$open_max" "$srv" "$dir/ws-open" >"$dir/open.json" || rc=1
kill "$srv"
wait "$srv" 2>/dev/null || true
srv=""
/usr/bin/python3 - "$dir" "$open_max" <<'EOF' || rc=1
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
o = json.load(open(f"{d}/open.json"))
recs = sum(1 for l in open(f"{d}/open.jsonl") if l.strip())
lv = o["reset_ms"]
print("loadtest: %d episodes open at once: reset latency %s; server %.1f MB (idle %.1f MB), work trees %.1f MB: "
      "%.1f MB in all, %.0f KB per open episode, %d open episodes in 4 GB; %d of %d recorded at the stop" % (
          n, ", ".join(f"p50 {v['p50_ms']:.1f} ms p99 {v['p99_ms']:.1f} ms at {k} open" for k, v in lv.items()),
          o["rss_open_mb"], o["rss_idle_mb"], o["trees_mb"], o["total_mb"], o["per_episode_kb"], o["open_in_4gb"],
          recs, n))
sys.exit(0 if recs == n and o["total_mb"] < 4096 else 1)
EOF
exit $rc
