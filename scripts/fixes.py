#!/usr/bin/python3
"""The code edits of a batch of episodes, grouped by fix.

usage: fixes.py TRAJECTORIES.jsonl [TOP]

An episode's fix is its last applied edit_file call: old_string and
new_string with surrounding blanks stripped. Prints a Markdown table of
the TOP (default 10) most frequent fixes, with the episodes that ended on
each and how many of them passed, then one line: episodes, episodes with
an applied edit, distinct fixes, and the share of the passes that the
most frequent passing fix accounts for. A GRPO policy that converged on
one string edit (results/grpo-family-h.md: `= 1;` -> `= 0;`) shows as one
fix holding most of the passes. Exits 2 on usage errors, 1 when the file
cannot be read or a line is not a trajectory record.
"""
import json
import sys


def last_fix(messages):
    """(old, new) of the last edit_file call that applied, or None."""
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


def read_records(path, prog):
    """The records of a trajectories file; a one-line error and exit 1 on a bad file."""
    out = []
    try:
        with open(path) as fh:
            for n, line in enumerate(fh, 1):
                try:
                    r = json.loads(line)
                except ValueError:
                    r = None
                if not isinstance(r, dict) or not isinstance(r.get("task"), str):
                    print("%s: %s line %d: expected a trajectory record (JSON with a task)" % (prog, path, n),
                          file=sys.stderr)
                    sys.exit(1)
                out.append(r)
    except OSError as e:
        print("%s: %s: %s" % (prog, path, e.strerror), file=sys.stderr)
        sys.exit(1)
    return out


def cell(s):
    """One line of code as a Markdown table cell."""
    s = " ".join(s.split()).replace("|", "\\|").replace("`", "'")
    return "`%s`" % (s[:60] + "..." if len(s) > 60 else s)


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and (not sys.argv[2].isdigit() or int(sys.argv[2]) < 1)):
        print("fixes: expected TRAJECTORIES.jsonl and optionally TOP (a positive integer)", file=sys.stderr)
        sys.exit(2)
    top = int(sys.argv[2]) if len(sys.argv) == 3 else 10
    eps, passed = {}, {}
    records = read_records(sys.argv[1], "fixes")
    for r in records:
        f = last_fix(r.get("messages", []))
        if f is None:
            continue
        eps[f] = eps.get(f, 0) + 1
        passed[f] = passed.get(f, 0) + (r.get("reward") == 1)
    print("| fix (old -> new) | episodes | passed |")
    print("|---|---|---|")
    for f in sorted(eps, key=lambda f: (-eps[f], -passed[f], f))[:top]:
        print("| %s -> %s | %d | %d |" % (cell(f[0]), cell(f[1]), eps[f], passed[f]))
    wins = sum(passed.values())
    best = max(passed.values(), default=0)
    print("\n%d episodes, %d with an applied edit, %d distinct fixes; the most frequent passing fix is %d of %d passes"
          % (len(records), sum(eps.values()), len(eps), best, wins))


if __name__ == "__main__":
    main()
