#!/usr/bin/python3
"""Keeps the extra generated tasks fit for SFT data: split train, and no bug
identical to one of the committed corpus or of an earlier extra set
(held-out tasks must never be trained on; a train duplicate only adds
weight). Removes the rest.

usage: sft-filter.py EXTRA_TASKS_DIR CORPUS_TASKS_DIR [EARLIER_EXTRA_DIR...]
"""
import json, os, sys

def tasks(root):
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith(".json"):
                p = os.path.join(dirpath, f)
                with open(p) as fh:
                    yield p, json.load(fh)

if len(sys.argv) < 3:
    sys.exit(__doc__.strip())
extra, known = sys.argv[1], sys.argv[2:]
seen = {(t["repo"], t["bug"]) for root in known for _, t in tasks(root)}
kept = dropped_split = dropped_dup = 0
for p, t in list(tasks(extra)):
    if t.get("split") != "train":
        dropped_split += 1
        os.remove(p)
    elif (t["repo"], t["bug"]) in seen:
        dropped_dup += 1
        os.remove(p)
    else:
        seen.add((t["repo"], t["bug"]))
        kept += 1
print(f"sft-filter: kept {kept}, dropped {dropped_split} held-out by split, {dropped_dup} identical to the corpus")
