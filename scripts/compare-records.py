#!/usr/bin/python3
"""compare-records.py A.jsonl B.jsonl - are two runs' trajectory records the
same episodes, apart from timings?

Records are matched by their `key`. Before comparing, every field that
measures time is dropped: `timings`, `started_at`, and the key `ms` and any key ending in
`_ms` or `_s` (durations inside turns and tool results), and pointer
values in test output (0x followed by 8 or more hex digits). Prints one line per
differing record (the first differing path), then a summary; exits 1 when a
record differs or is missing on either side.
"""
import json
import re
import sys

TIME_KEYS = {"timings", "started_at", "ended_at"}
# Addresses printed by a test run differ from run to run (ASLR).
ADDR = re.compile(r"0x[0-9a-fA-F]{8,}")


def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items()
                if k not in TIME_KEYS and k != "ms" and not k.endswith("_ms") and not k.endswith("_s")}
    if isinstance(o, list):
        return [strip(v) for v in o]
    if isinstance(o, str):
        return ADDR.sub("0xADDR", o)
    return o


def first_diff(a, b, path=""):
    if type(a) is not type(b):
        return path or "."
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}"
            d = first_diff(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}[len {len(a)} vs {len(b)}]"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else (path or ".")


def load(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                r = json.loads(line)
                out[r["key"]] = strip(r)
    return out


def main():
    if len(sys.argv) != 3:
        print("usage: compare-records.py A.jsonl B.jsonl", file=sys.stderr)
        return 2
    a, b = load(sys.argv[1]), load(sys.argv[2])
    bad = 0
    for k in sorted(set(a) | set(b)):
        if k not in a or k not in b:
            print(f"{k}: only in {'B' if k not in a else 'A'}")
            bad += 1
            continue
        d = first_diff(a[k], b[k])
        if d:
            print(f"{k}: differs at {d}")
            bad += 1
    print(f"compare-records: {len(a)} vs {len(b)} records, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
