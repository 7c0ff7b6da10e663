#!/usr/bin/python3
"""The probe's passed tasks, at most K per fix.

usage: probe-cap.py TRAJECTORIES.jsonl K

Prints the comma-separated ids of the tasks passed in a probe's
trajectories (scripts/grpo-probe.sh), keeping at most K tasks per fix: the
last applied edit_file of the passing episode, as its old_string and
new_string with surrounding blanks stripped. In a generated family one
string edit can repair the same mutation in many repositories
(results/grpo-family-h.md: `= 1;` -> `= 0;`, 10 of 31 passes); a GRPO train
set full of it rewards applying that edit everywhere rather than reading
the code. Ties are kept in task-id order, so the output is a function of
the file. Exits 2 on usage errors, 1 when the file cannot be read.
"""
import sys

from fixes import last_fix, read_records


def main():
    if len(sys.argv) != 3 or not sys.argv[2].isdigit() or int(sys.argv[2]) < 1:
        print("probe-cap: expected TRAJECTORIES.jsonl and K (a positive integer)", file=sys.stderr)
        sys.exit(2)
    fixes = {}
    for r in read_records(sys.argv[1], "probe-cap"):
        if r.get("reward") == 1:
            fixes.setdefault(r["task"], last_fix(r.get("messages", [])))
    per_fix, kept = {}, []
    for task in sorted(fixes):
        f = fixes[task]
        if f is None or per_fix.get(f, 0) < int(sys.argv[2]):
            per_fix[f] = per_fix.get(f, 0) + 1
            kept.append(task)
    print(",".join(kept))
    print("probe-cap: %d passed tasks, %d kept (at most %s per fix)" % (len(fixes), len(kept), sys.argv[2]),
          file=sys.stderr)


if __name__ == "__main__":
    main()
