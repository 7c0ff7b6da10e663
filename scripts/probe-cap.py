#!/usr/bin/python3
"""The probe's passed tasks, at most K per fix (issue 7).

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
import json
import sys


def last_fix(messages):
    fix = None
    for i, m in enumerate(messages):
        if m.get("role") != "tool" or m.get("name") != "edit_file" or m.get("content", "").startswith("error"):
            continue
        for call in messages[i - 1].get("tool_calls") or []:
            if call.get("id") == m.get("tool_call_id"):
                try:
                    a = json.loads(call["function"]["arguments"])
                    fix = (a.get("old_string", "").strip(), a.get("new_string", "").strip())
                except (KeyError, TypeError, ValueError):
                    pass
    return fix


def main():
    if len(sys.argv) != 3 or not sys.argv[2].isdigit() or int(sys.argv[2]) < 1:
        print("probe-cap: expected TRAJECTORIES.jsonl and K (a positive integer)", file=sys.stderr)
        sys.exit(2)
    fixes = {}
    try:
        with open(sys.argv[1]) as fh:
            for n, line in enumerate(fh, 1):
                try:
                    r = json.loads(line)
                except ValueError:
                    r = None
                if not isinstance(r, dict) or not isinstance(r.get("task"), str):
                    print("probe-cap: %s line %d: expected a trajectory record (JSON with a task)" % (sys.argv[1], n),
                          file=sys.stderr)
                    sys.exit(1)
                if r.get("reward") == 1:
                    fixes.setdefault(r["task"], last_fix(r.get("messages", [])))
    except OSError as e:
        print("probe-cap: %s: %s" % (sys.argv[1], e.strerror), file=sys.stderr)
        sys.exit(1)
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
