#!/usr/bin/env python3
"""Prints a comma-separated random sample of task ids, K per repository
(all when fewer), for `harness batch --tasks` / `harness validate --tasks`.

usage: sample-tasks.py K REPO[,REPO...] [--seed S] [--only GLOB]
The same K, repositories, seed and task files give the same sample."""
import argparse
import fnmatch
import glob
import json
import os
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("k", type=int)
    ap.add_argument("repos")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--only", default="*", help="ids matching this glob only")
    a = ap.parse_args()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tasks")
    by_repo = {}
    for p in glob.glob(os.path.join(root, "*.json")) + glob.glob(os.path.join(root, "generated", "*", "*.json")):
        with open(p) as f:
            t = json.load(f)
        if fnmatch.fnmatch(t["instance_id"], a.only):
            by_repo.setdefault(t["repo"], []).append(t["instance_id"])
    out = []
    for repo in a.repos.split(","):
        ids = sorted(by_repo.get(repo, []))
        rng = random.Random(f"{a.seed}:{repo}")
        out += sorted(rng.sample(ids, min(a.k, len(ids))))
    print(",".join(out))


if __name__ == "__main__":
    main()
