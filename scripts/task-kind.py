#!/usr/bin/python3
"""The tasks of a list whose generated bug is of one kind.

usage: task-kind.py TASKS_DIR KIND IDS

Prints, comma-separated and in the order given, the ids of IDS (a
comma-separated list) whose task file under TASKS_DIR has
generator.mutation equal to KIND (flip_cmp, off_by_one, wrong_return,
flip_logic: scripts/family-gen.py). grpo-family.sh VARIANT=sk uses it to
train GRPO on flipped comparisons only, the bug kind of 54 of the 72
held-out-repository tasks. Exits 2 on usage errors, 1 when an id has no
task file or a file cannot be read.
"""
import glob
import json
import os
import sys


def main():
    if len(sys.argv) != 4 or not sys.argv[2]:
        print("task-kind: expected TASKS_DIR, KIND and IDS (comma-separated task ids)", file=sys.stderr)
        sys.exit(2)
    tasks_dir, kind = sys.argv[1], sys.argv[2]
    ids = [i for i in sys.argv[3].split(",") if i]
    kinds = {}
    for path in glob.glob(os.path.join(tasks_dir, "**", "*.json"), recursive=True):
        try:
            with open(path) as fh:
                t = json.load(fh)
        except (OSError, ValueError) as e:
            print("task-kind: %s: %s" % (path, e), file=sys.stderr)
            sys.exit(1)
        if isinstance(t, dict) and isinstance(t.get("instance_id"), str):
            kinds[t["instance_id"]] = (t.get("generator") or {}).get("mutation")
    missing = [i for i in ids if i not in kinds]
    if missing:
        print("task-kind: %s: no task file under %s" % (missing[0], tasks_dir), file=sys.stderr)
        sys.exit(1)
    print(",".join(i for i in ids if kinds[i] == kind))


if __name__ == "__main__":
    main()
