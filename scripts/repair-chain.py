#!/usr/bin/python3
"""Where a localizing episode breaks: one line of counts per record file.

usage: repair-chain.py PLANS_DIR RECORDS.jsonl [...]

PLANS_DIR holds the plans scripts/local-demos.py wrote for the same tasks
(the function that encloses the fix, its file and header line). For each
episode it checks, in the order of the plan, whether the policy
  searched for the enclosing function's name   (searched_name)
  got any match from a search                   (search_hit)
  read the file of the fix                      (read_file_of_fix)
  ... starting at the function's header line    (read_at_header)
  read any file without an error                (read_ok)
  applied an edit (old_string found once)       (edit_applied)
  passed the tests                              (passed)
Episodes of tasks without a plan count only in episodes, read_ok,
search_hit, edit_applied and passed.
"""
import json
import os
import sys

KEYS = ["episodes", "with_plan", "searched_name", "search_hit", "read_file_of_fix", "read_at_header",
        "read_ok", "edit_applied", "passed"]


def plan_of(plans, task):
    path = os.path.join(plans, task + ".jsonl")
    if not os.path.exists(path):
        return None
    plan = json.loads(open(path).readline())["plan"]
    return plan["function"], plan["path"], plan["line"]


def episode(rec, plan):
    seen = set()
    for m in rec["messages"]:
        for call in m.get("tool_calls") or []:
            try:
                a = json.loads(call["function"]["arguments"])
            except ValueError:
                a = {}
            fn = call["function"]["name"]
            if plan and fn == "search" and a.get("pattern") == plan[0]:
                seen.add("searched_name")
            if plan and fn == "read_file" and a.get("path") == plan[1]:
                seen.add("read_file_of_fix")
                if a.get("start_line") == plan[2]:
                    seen.add("read_at_header")
        if m["role"] == "tool" and "name" in m:
            out = m["content"]
            if m["name"] == "search" and not out.startswith(("no matches", "error")):
                seen.add("search_hit")
            if m["name"] == "read_file" and not out.startswith("error"):
                seen.add("read_ok")
            if m["name"] == "edit_file" and out.startswith("edited"):
                seen.add("edit_applied")
    if rec.get("reward") == 1:
        seen.add("passed")
    return seen


def main():
    if len(sys.argv) < 3:
        sys.stderr.write("usage: repair-chain.py PLANS_DIR RECORDS.jsonl [...]\n")
        return 2
    for path in sys.argv[2:]:
        c = dict.fromkeys(KEYS, 0)
        for line in open(path):
            rec = json.loads(line)
            plan = plan_of(sys.argv[1], rec["task"])
            c["episodes"] += 1
            c["with_plan"] += plan is not None
            for k in episode(rec, plan):
                c[k] += 1
        print(os.path.basename(path), " ".join("%s %d" % (k, c[k]) for k in KEYS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
