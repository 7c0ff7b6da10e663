#!/usr/bin/env python3
"""Lists generated tasks whose bug diff equals that of an earlier task of the
same repository (another seed may reach the same mutant). With --delete,
removes the later duplicates (the lower id is kept)."""
import glob
import json
import os
import sys


def main():
    delete = "--delete" in sys.argv[1:]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tasks", "generated")
    seen = {}
    dups = 0
    for path in sorted(glob.glob(os.path.join(root, "*", "*.json"))):
        with open(path) as f:
            t = json.load(f)
        key = (t["repo"], t["bug"])
        if key in seen:
            dups += 1
            print(f"{t['instance_id']}: same bug as {seen[key]}")
            if delete:
                os.unlink(path)
        else:
            seen[key] = t["instance_id"]
    print(f"{dups} duplicates", file=sys.stderr)


if __name__ == "__main__":
    main()
