#!/bin/sh
# sft-eval.sh - what an SFT checkpoint fixes, on the tasks it was trained
# on and on held-out ones (the sets of results/sft-heldout.md).
#
#   scripts/sft-eval.sh [CKPT] [OUT]   (default models/policy.safetensors,
#                                       runs/sft-eval)
#
# Episode settings are those of configs/grpo-main.json: temperature
# 0.7, 8 turns, a 3,584-token context, 8,000-byte observations. Sets:
#   leapyear       the task of `make run`, seeds 1-8
#   train          every train task, seed 1
#   heldout-bugs   held-out bugs of the training repositories, seeds 1-2
#   heldout-repos  held-out repositories (pyinterval, ringbuf), seeds 1-2
# Prints one line per set: episodes, passed, pass rate with its 95% Wilson
# interval, share of well-formed turns, tool success. Reports (summary.md,
# SVG) in OUT/<set>/. Running it again finishes only missing episodes.
# SETS="leapyear heldout-bugs" (say) runs only those sets.
# About 40 minutes on 2 cores.
set -eu
cd "$(dirname "$0")/.."
CKPT=${1:-models/policy.safetensors}
OUT=${2:-runs/sft-eval}
[ -f "$CKPT" ] || { echo "sft-eval: $CKPT: no such checkpoint" >&2; exit 1; }
make -j2 >/dev/null

ids() { # ids of the held-out tasks of the given repositories, comma-separated
    for r in "$@"; do bin/harness list --split heldout --repo "$r" | awk '$4 == "heldout" { print $1 }'; done | paste -sd, -
}
run() { # set, selector, seeds
    bin/harness batch --tasks "$2" --seeds "$3" --policy "model:$CKPT" --temperature 0.7 \
        --max-turns 8 --max-context-tokens 3584 --obs-budget 8000 --workers 2 \
        --out "$OUT/$1" --progress plain >/dev/null 2>"$OUT/$1.log" ||
        { echo "sft-eval: set $1 failed, see $OUT/$1.log" >&2; exit 1; }
    /usr/bin/python3 - "$1" "$OUT/$1/summary.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[2]))["runs"][0]
print("%-14s %4d episodes %4d passed  %.3f [%.3f, %.3f]  well-formed turns %.3f  tool success %.3f"
      % (sys.argv[1], r["episodes"], r["passed"], r["pass_rate"], r["ci95_lo"], r["ci95_hi"],
         r["wellformed_turn_share"], r["tool_success_rate"]))
EOF
}
mkdir -p "$OUT"
echo "sft-eval: $CKPT"
want() { case " ${SETS:-leapyear train heldout-bugs heldout-repos} " in *" $1 "*) return 0 ;; esac; return 1; }
if want leapyear; then run leapyear leapyear 1-8; fi
if want train; then run train split:train 1; fi
if want heldout-bugs; then run heldout-bugs "$(ids base64 datelib ini leapyear pydate pysemver roman strutil utf8)" 1-2; fi
if want heldout-repos; then run heldout-repos "$(ids pyinterval ringbuf)" 1-2; fi
