#!/usr/bin/env python3
"""copy-data.py - synthetic one-turn records that teach copying from context.

A model trained from scratch on the oracle's trajectories alone does not
learn to copy: scoring a leapyear demonstration, the tokens of new_string
(which repeat old_string, twenty tokens earlier, but for one operator) cost
1 to 2.3 nats each, and the file name just shown by list_files 4.5. Every
repair needs that skill, so this script writes records whose policy tokens
are almost all copies, in the harness's exact formats:

  read   a read_file response (a window of a source file of a training
         repository, numbered as the tool numbers it), then an edit_file
         call whose path, old_string (1-3 lines of the window) and
         new_string (the same lines with one operator or digit changed)
         are copied from it;
  list   a list_files response, then a read_file call of one listed file.

With --kind repeat it writes instead the plainest copying there is, for a
language-model stage ("loss_on": "all") before SFT: a tool response of
4-8 lines of random words, each one token of the tokenizer (--tokenizer),
then the same lines again, and a policy turn that repeats one of them.
The second copy can be predicted only by finding the first one earlier in
the context: the data that grows induction heads (see
results/copy-probe.md).

Only the training repositories are used (never a held-out repository's
code). The records have no token ids: the SFT loader tokenizes them by
their segments like the oracle's. They teach a skill, not a behaviour
(the edits fix nothing): use them before or beside the oracle's data.

  scripts/copy-data.py [--kind edit|repeat] [--count N] [--seed S] [--tokenizer F] [--out FILE]
"""
import argparse
import json
import os
import random
import re
import sys

TRAIN_REPOS = ["base64", "datelib", "ini", "leapyear", "pydate", "pysemver", "roman", "strutil", "utf8"]
SOURCE_EXT = (".c", ".h", ".py")
SWAPS = [("==", "!="), ("!=", "=="), ("<=", "<"), (">=", ">"), (" < ", " <= "), (" > ", " >= "),
         (" + ", " - "), (" - ", " + "), ("&&", "||"), ("||", "&&"), (" and ", " or "), (" or ", " and "),
         ("True", "False"), ("False", "True"), ("+ 1", "- 1"), ("- 1", "+ 1")]

HEAD = "<|im_start|>user\n<tool_response>\n"
TAIL = "\n</tool_response><|im_end|>\n<|im_start|>assistant\n"


def files_of(root, repo):
    out = []
    base = os.path.join(root, repo)
    for d, _, names in os.walk(base):
        for n in names:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, base)
            if rel.startswith(".git/") or rel == ".git":
                continue
            out.append(rel)
    return sorted(out)


def numbered(lines, a, b):
    w = len(str(b))
    return "".join("%*d|%s%s\n" % (w, i, " " if lines[i - 1] else "", lines[i - 1]) for i in range(a, b + 1))


def mutate(rng, text):
    cands = [(o, n) for o, n in SWAPS if o in text]
    if cands:
        o, n = rng.choice(cands)
        at = [i for i in range(len(text)) if text.startswith(o, i)]
        i = rng.choice(at)
        return text[:i] + n + text[i + len(o):]
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    if digits:
        i = rng.choice(digits)
        return text[:i] + str((int(text[i]) + 1) % 10) + text[i + 1:]
    return text


def record(rng, i, kind, context_tool, gen):
    ctx = HEAD + context_tool + TAIL
    segs = [[0, len(HEAD.encode()), "template"],
            [len(HEAD.encode()), len(context_tool.encode()), "tool"],
            [len((HEAD + context_tool).encode()), len(TAIL.encode()), "template"]]
    return {"schema": 1, "key": "copy-%s-%d" % (kind, i), "task": "copy-%s-%d" % (kind, i), "repo": None,
            "split": "train", "kind": "synthetic-copy",
            "config": {"policy": "copy-data", "history": "keep", "think": True, "seed": i},
            "turns": [{"context": {"text": ctx}, "generated": gen, "segments": segs}],
            "reward": 1, "end_reason": "submit"}


def read_sample(rng, i, root, repo, srcs):
    path = rng.choice(srcs)
    with open(os.path.join(root, repo, path), encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    n = len(lines)
    good = [k for k in range(n) if len(lines[k].strip()) >= 8]
    if not good:
        return None
    k = rng.choice(good)  # 0-based first line of the edit
    m = min(rng.choice([1, 1, 2, 3]), n - k)
    span = 40 + rng.randrange(60)  # the window read, around the edit
    a = max(1, k + 1 - rng.randrange(span))
    b = min(n, a + span)
    if k + m > b:
        b = k + m
    if b - a + 1 < n:
        head = "%s: lines %d-%d of %d\n" % (path, a, b, n)
    else:
        head = "%s: lines 1-%d of %d\n" % (path, n, n)
    old = "\n".join(lines[k:k + m]) + "\n"
    new = mutate(rng, old)
    gen = ("<think>\nFix the defect with a minimal edit.\n</think>\n\n<tool_call>\n<function=edit_file>\n"
           "<parameter=path>\n%s\n</parameter>\n<parameter=old_string>\n%s\n</parameter>\n"
           "<parameter=new_string>\n%s\n</parameter>\n</function>\n</tool_call>" % (path, old, new))
    return record(rng, i, "read", head + numbered(lines, a, b), gen)


def list_sample(rng, i, root, repo, files, srcs):
    listing = "".join(p + "\n" for p in files)
    path = rng.choice(srcs)
    gen = ("<think>\nRead the code the failing test exercises.\n</think>\n\n<tool_call>\n<function=read_file>\n"
           "<parameter=path>\n%s\n</parameter>\n</function>\n</tool_call>" % path)
    return record(rng, i, "list", listing, gen)


def repeat_sample(rng, i, words):
    lines = [" ".join(rng.choice(words) for _ in range(rng.randrange(6, 12))) for _ in range(rng.randrange(4, 9))]
    block = "".join(line + "\n" for line in lines)
    k = rng.randrange(len(lines))
    gen = "<think>\nline %d\n</think>\n\n%s" % (k + 1, lines[k])
    return record(rng, i, "repeat", block + "\n" + block, gen)


def one_token_words(path):
    """The tokenizer's tokens that are a space and an identifier (joined
    with spaces, each stays one token)."""
    with open(path, encoding="utf-8") as f:
        tok = json.load(f)
    vocab = [bytes([i]) for i in range(256)]
    for a, b in tok["merges"]:
        vocab.append(vocab[a] + vocab[b])
    return sorted({v[1:].decode() for v in vocab if re.fullmatch(rb" [A-Za-z_][A-Za-z0-9_]+", v)})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repos", default="repos")
    ap.add_argument("--kind", choices=["edit", "repeat"], default="edit")
    ap.add_argument("--tokenizer", default="models/tokenizer.json")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.count < 1:
        print("copy-data: --count must be at least 1", file=sys.stderr)
        return 2
    if a.out is None:
        a.out = "runs/sft-data/%s/trajectories.jsonl" % ("copy" if a.kind == "edit" else "repeat")
    rng = random.Random(a.seed)
    trees = {}
    for r in TRAIN_REPOS:
        if not os.path.isdir(os.path.join(a.repos, r)):
            print("copy-data: %s/%s is missing: expected the training repositories" % (a.repos, r), file=sys.stderr)
            return 1
        files = files_of(a.repos, r)
        srcs = [p for p in files if p.endswith(SOURCE_EXT)]
        trees[r] = (files, srcs)
    words = one_token_words(a.tokenizer) if a.kind == "repeat" else None
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    tmp = a.out + ".tmp"
    made = 0
    with open(tmp, "w", encoding="utf-8") as f:
        while made < a.count:
            r = rng.choice(TRAIN_REPOS)
            files, srcs = trees[r]
            if a.kind == "repeat":
                rec = repeat_sample(rng, made, words)
            elif rng.random() < 0.75:
                rec = read_sample(rng, made, a.repos, r, srcs)
            else:
                rec = list_sample(rng, made, a.repos, r, files, srcs)
            if rec:
                f.write(json.dumps(rec) + "\n")
                made += 1
    os.replace(tmp, a.out)
    print("copy-data: %d records -> %s" % (made, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
