#!/usr/bin/python3
"""SFT vs RL over several held-out sets pooled.

usage: pooled.py SFT.jsonl RL.jsonl [SFT.jsonl RL.jsonl ...]

Each pair is one set's evaluation files as the GRPO report writes them
(<final.results>/<name>-<set>-sft.jsonl and -rl.jsonl): the same tasks and seeds
under both policies. Prints one line: tasks, episodes, passes and pass
rate of each policy over all the sets, the change, a two-sided paired
permutation p over tasks (the signs of the per-task changes in passes
flipped, 100,000 draws, fixed seed) and the tasks up and down. The report
(grpo/grpo_report.c) tests each set alone; this is the test of the held-out
pass rate as one number. Exits 2 on usage errors, 1 when a file cannot be
read or a pair does not hold the same tasks and episodes.
"""
import random
import sys

from fixes import read_records

DRAWS = 100000


def per_task(path):
    passed, episodes = {}, {}
    for r in read_records(path, "pooled"):
        episodes[r["task"]] = episodes.get(r["task"], 0) + 1
        passed[r["task"]] = passed.get(r["task"], 0) + (r.get("reward") == 1)
    return passed, episodes


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        print("pooled: expected pairs of evaluation files, SFT.jsonl RL.jsonl", file=sys.stderr)
        sys.exit(2)
    diffs, episodes, sft, rl = [], 0, 0, 0
    for i in range(0, len(args), 2):
        ps, ns = per_task(args[i])
        pr, nr = per_task(args[i + 1])
        if ns != nr:
            print("pooled: %s and %s: expected the same tasks and episodes per task" % (args[i], args[i + 1]),
                  file=sys.stderr)
            sys.exit(1)
        for t in sorted(ns):
            diffs.append(pr[t] - ps[t])
            episodes += ns[t]
            sft += ps[t]
            rl += pr[t]
    observed = abs(sum(diffs))
    rng = random.Random(7)
    hits = sum(abs(sum(d if rng.random() < 0.5 else -d for d in diffs)) >= observed for _ in range(DRAWS))
    print("pooled: %d tasks, %d episodes: SFT %d (%.3f), RL %d (%.3f), change %+.3f, permutation p %.2g, "
          "%d tasks up, %d down" % (len(diffs), episodes, sft, sft / episodes, rl, rl / episodes,
                                    (rl - sft) / episodes, (hits + 1) / (DRAWS + 1),
                                    sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)))


if __name__ == "__main__":
    main()
