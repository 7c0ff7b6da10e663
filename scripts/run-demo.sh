#!/bin/sh
# run-demo.sh - what `make run` shows: the default policy of `harness run`
# and `harness batch` (the shipped checkpoint, or the oracle without one) on
# leapyear, seeds 1-8, at the harness defaults (temperature 0.7), then the
# recorded episode of the first passing seed (of seed 1 when none passed)
# with `harness show --transcript`: what the policy wrote, what the tools
# answered, the final diff. Sampling is seeded, but which seeds pass also
# depends on the OpenBLAS kernels (rounding), so the demo shows the pass
# rate, not a chosen seed.
set -eu
cd "$(dirname "$0")/.."
OUT=${1:-runs/make-run}
rm -rf "$OUT"
bin/harness batch --tasks leapyear --seeds 1-8 --workers 2 --out "$OUT" --progress plain
index=$(grep -n '"reward":1[,}]' "$OUT/trajectories.jsonl" | head -n 1 | cut -d: -f1)
if [ -n "$index" ]; then
    seed=$(sed -n "${index}p" "$OUT/trajectories.jsonl" | sed -n 's/.*"config":{[^}]*"seed":\([0-9]*\).*/\1/p')
    echo "run-demo: seed $seed passed; its recorded episode:"
else
    index=1
    echo "run-demo: no seed passed; the first record:"
fi
bin/harness show "$OUT/trajectories.jsonl" --index $((index - 1)) --transcript
