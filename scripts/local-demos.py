#!/usr/bin/python3
"""Localizing demonstrations from oracle trajectories.

usage: local-demos.py ORACLE.jsonl OUT_DIR

The oracle reads the whole file the fix touches and edits it: a demo of
the tool-call format that shows no localization. This rewrites each
passing single-edit oracle episode into the plan a repair agent follows
when it localizes from the failure:

    run_tests -> search NAME -> read_file PATH START -> edit_file -> run_tests -> submit

NAME is the function that encloses the fix, START its header line (which
the search response shows as PATH:START); read_file shows the 40 lines
from START (RL_TOOL_READ_WINDOW), so the plan has no end line to work out.
The edit is the oracle's own minimal edit (unique in the whole file).
Episodes whose fix sits outside any function or past the window, or spans
several files or hunks, are left out.

For each kept episode it writes OUT_DIR/TASK.jsonl, one record with the
scripted replies in "turns" and the plan's function, path and header line
in "plan" (what scripts/repair-chain.py compares episodes with); `harness batch --policy replay:FILE` runs it
for real, so the tool responses in the demonstration are the harness's
own. Prints one line of counts.
"""
import json
import os
import re
import sys

LIMITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common", "limits.h")
# the lines read_file shows from start_line alone, as the harness defines it
READ_WINDOW = int(re.search(r"#define RL_TOOL_READ_WINDOW (\d+)", open(LIMITS).read()).group(1))
C_HEAD = re.compile(r"^(?!(?:if|for|while|switch|return|typedef|else|do)\b)[A-Za-z_][^;{}=#]*?\b([A-Za-z_]\w*)\s*\([^;]*$")
PY_DEF = re.compile(r"^(\s*)def\s+([A-Za-z_]\w*)\s*\(")


def reply(why, tool, args):
    out = "<think>\n%s\n</think>\n\n<tool_call>\n<function=%s>\n" % (why, tool)
    for k, v in args:
        out += "<parameter=%s>\n%s\n</parameter>\n" % (k, v)
    return out + "</function>\n</tool_call>"


def read_lines(content):
    """The numbered lines of a whole-file read_file response."""
    body = content.split("\n")[1:]
    lines = []
    for l in body:
        m = re.match(r"^\s*(\d+)\| ?(.*)$", l)
        if not m:
            break
        lines.append(m.group(2))
    return lines


def enclosing(lines, at, py):
    """(name, header line) of the function around 0-based line at, or None."""
    if py:
        ind = len(lines[at]) - len(lines[at].lstrip())
        for i in range(at, -1, -1):
            m = PY_DEF.match(lines[i])
            if m and (i == at or len(m.group(1)) < ind):
                return m.group(2), i + 1
        return None
    for i in range(at, -1, -1):
        l = lines[i]
        if l.startswith("}") and i != at:
            return None
        m = C_HEAD.match(l)
        if m and not l.startswith((" ", "\t")):
            return m.group(1), i + 1
    return None


def convert(rec):
    edits, reads = [], {}
    msgs = rec["messages"]
    for m in msgs:
        for c in m.get("tool_calls") or []:
            if c["function"]["name"] == "edit_file":
                edits.append(json.loads(c["function"]["arguments"]))
        if m["role"] == "tool" and m["name"] == "read_file":
            first = m["content"].split("\n", 1)[0]
            reads[first.split(":", 1)[0]] = m["content"]
    if len(edits) != 1 or edits[0]["path"] not in reads:
        return None, "not one edit"
    e = edits[0]
    lines = read_lines(reads[e["path"]])
    text = "\n".join(lines)
    pos = text.find(e["old_string"])
    if pos < 0 or text.find(e["old_string"], pos + 1) >= 0:
        return None, "edit not unique"
    at = text.count("\n", 0, pos)
    last = at + e["old_string"].count("\n")
    found = enclosing(lines, at, e["path"].endswith(".py"))
    if not found:
        return None, "outside a function"
    name, head = found
    if last + 1 > head + READ_WINDOW - 1:
        return None, "past the window"
    turns = [
        reply("First, run the tests to see what fails.", "run_tests", []),
        reply("The failing tests exercise %s. I search for its definition." % name, "search", [("pattern", name)]),
        reply("%s is defined at %s:%d. I read it." % (name, e["path"], head), "read_file",
              [("path", e["path"]), ("start_line", head)]),
        reply("Fix the defect with a minimal edit.", "edit_file",
              [("path", e["path"]), ("old_string", e["old_string"]), ("new_string", e["new_string"])]),
        reply("Re-run the tests to check the fix.", "run_tests", []),
        reply("The tests pass; submit.", "submit", []),
    ]
    plan = {"function": name, "path": e["path"], "line": head}
    return {"task": rec["task"], "plan": plan, "turns": [{"generated": g} for g in turns]}, "kept"


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: local-demos.py ORACLE.jsonl OUT_DIR\n")
        return 2
    os.makedirs(sys.argv[2], exist_ok=True)
    counts = {}
    for line in open(sys.argv[1]):
        rec = json.loads(line)
        if rec.get("reward") != 1:
            why = "oracle failed"
        else:
            out, why = convert(rec)
            if out:
                with open(os.path.join(sys.argv[2], rec["task"] + ".jsonl"), "w") as f:
                    f.write(json.dumps(out) + "\n")
        counts[why] = counts.get(why, 0) + 1
    print(" ".join("%s: %d" % kv for kv in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
