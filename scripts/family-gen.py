#!/usr/bin/python3
"""A family of small generated C repositories with mutation bugs.

usage: family-gen.py OUT_DIR [--repos N] [--heldout-repos M] [--seed S]

Each repository is one library file, src/lib.c, of three functions drawn
from a dozen array and integer routines (clamp, count, index of, max,
sortedness, ...), with identifiers, parameter names and constants drawn per
repository, and Check tests whose expected values come from a Python
reference of each routine, so the tests are right by construction.

Bugs are mutations of src/lib.c (a comparison flipped or its bound moved
by one, && <-> ||, a +/- 1 dropped or flipped, a return value changed),
each compiled and tested here: a mutation is kept only when it compiles
and makes at least one test fail. Test arrays carry a guard element on
each side, so a mutant that reads one past either end fails or passes the
same way every run. FAIL_TO_PASS are the tests it breaks,
PASS_TO_PASS the others. Up to --bugs kept mutations per repository.

Splits: the first N repositories are training repositories; in each, the
last of its bugs is held out ("held-out bugs of training repositories").
The next M repositories are held out whole ("held-out repositories"):
same routines, new names, constants and combinations.

Writes OUT_DIR/repos/<name>/ and OUT_DIR/tasks/generated/<name>/<id>.json, loadable
with --tasks-dir OUT_DIR/tasks --repos-dir OUT_DIR/repos. Same seed, same
output. Prints one line of counts.
"""
import difflib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

MAKEFILE_FROM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "repos", "strutil", "Makefile")

# name stems of each routine; the repository's prefix is put in front
ROUTINES = {
    "clamp": ["clamp", "bound", "limit"],
    "count_below": ["count_below", "count_less", "num_under"],
    "index_of": ["index_of", "find", "position"],
    "max_of": ["max_of", "largest", "peak"],
    "is_sorted": ["is_sorted", "ascending", "in_order"],
    "sum_range": ["sum_range", "sum_between", "total_in"],
    "in_range": ["in_range", "within", "inside"],
    "sign": ["sign", "signum", "direction"],
    "abs_diff": ["abs_diff", "distance", "gap"],
    "count_equal": ["count_equal", "occurrences", "tally"],
    "last_index": ["last_index", "rfind", "last_pos"],
    "first_above": ["first_above", "first_over", "first_past"],
}
PREFIXES = ["acc", "arr", "buf", "cal", "dat", "grid", "hist", "lot", "mat", "num", "pack", "pool",
            "row", "seq", "set", "stat", "tab", "vec", "win", "zone"]
ARRAYS = ["a", "xs", "vals", "items", "data", "v"]
LENS = ["n", "len", "count", "size"]
IDX = ["i", "k", "j"]


def c_body(kind, f, a, n, i):
    """C source of one routine (and its prototype)."""
    if kind == "clamp":
        return f"int {f}(int x, int lo, int hi)", f"""{{
    if (x < lo)
        return lo;
    if (x > hi)
        return hi;
    return x;
}}"""
    if kind == "count_below":
        return f"int {f}(const int *{a}, int {n}, int limit)", f"""{{
    int c = 0;
    for (int {i} = 0; {i} < {n}; {i}++) {{
        if ({a}[{i}] < limit)
            c++;
    }}
    return c;
}}"""
    if kind == "index_of":
        return f"int {f}(const int *{a}, int {n}, int want)", f"""{{
    for (int {i} = 0; {i} < {n}; {i}++) {{
        if ({a}[{i}] == want)
            return {i};
    }}
    return -1;
}}"""
    if kind == "max_of":
        return f"int {f}(const int *{a}, int {n})", f"""{{
    int best = {a}[0];
    for (int {i} = 1; {i} < {n}; {i}++) {{
        if ({a}[{i}] > best)
            best = {a}[{i}];
    }}
    return best;
}}"""
    if kind == "is_sorted":
        return f"int {f}(const int *{a}, int {n})", f"""{{
    for (int {i} = 1; {i} < {n}; {i}++) {{
        if ({a}[{i} - 1] > {a}[{i}])
            return 0;
    }}
    return 1;
}}"""
    if kind == "sum_range":
        return f"int {f}(const int *{a}, int {n}, int lo, int hi)", f"""{{
    int s = 0;
    for (int {i} = 0; {i} < {n}; {i}++) {{
        if ({a}[{i}] >= lo && {a}[{i}] <= hi)
            s += {a}[{i}];
    }}
    return s;
}}"""
    if kind == "in_range":
        return f"int {f}(int x, int lo, int hi)", f"""{{
    return x >= lo && x <= hi;
}}"""
    if kind == "sign":
        return f"int {f}(int x)", f"""{{
    if (x > 0)
        return 1;
    if (x < 0)
        return -1;
    return 0;
}}"""
    if kind == "abs_diff":
        return f"int {f}(int x, int y)", f"""{{
    if (x > y)
        return x - y;
    return y - x;
}}"""
    if kind == "count_equal":
        return f"int {f}(const int *{a}, int {n}, int want)", f"""{{
    int c = 0;
    for (int {i} = 0; {i} < {n}; {i}++) {{
        if ({a}[{i}] == want)
            c++;
    }}
    return c;
}}"""
    if kind == "last_index":
        return f"int {f}(const int *{a}, int {n}, int want)", f"""{{
    for (int {i} = {n} - 1; {i} >= 0; {i}--) {{
        if ({a}[{i}] == want)
            return {i};
    }}
    return -1;
}}"""
    if kind == "first_above":
        return f"int {f}(const int *{a}, int {n}, int limit)", f"""{{
    for (int {i} = 0; {i} < {n}; {i}++) {{
        if ({a}[{i}] > limit)
            return {i};
    }}
    return -1;
}}"""
    raise ValueError(kind)


def reference(kind, args):
    """The routine's correct value, for the tests."""
    if kind == "clamp":
        x, lo, hi = args
        return lo if x < lo else hi if x > hi else x
    if kind == "in_range":
        x, lo, hi = args
        return int(lo <= x <= hi)
    if kind == "sign":
        (x,) = args
        return (x > 0) - (x < 0)
    if kind == "abs_diff":
        x, y = args
        return abs(x - y)
    arr = args[0]
    if kind == "count_below":
        return sum(1 for v in arr if v < args[1])
    if kind == "index_of":
        return arr.index(args[1]) if args[1] in arr else -1
    if kind == "max_of":
        return max(arr)
    if kind == "is_sorted":
        return int(all(arr[k - 1] <= arr[k] for k in range(1, len(arr))))
    if kind == "sum_range":
        return sum(v for v in arr if args[1] <= v <= args[2])
    if kind == "count_equal":
        return arr.count(args[1])
    if kind == "last_index":
        return len(arr) - 1 - arr[::-1].index(args[1]) if args[1] in arr else -1
    if kind == "first_above":
        return next((k for k, v in enumerate(arr) if v > args[1]), -1)
    raise ValueError(kind)


def cases(kind, rnd):
    """Argument tuples that exercise the routine's edges (array first)."""
    def arr(k=6):
        return [rnd.randint(-9, 30) for _ in range(k)]
    if kind in ("clamp", "in_range"):
        lo = rnd.randint(-5, 10)
        hi = lo + rnd.randint(3, 20)
        return [(lo - rnd.randint(1, 9), lo, hi), (lo, lo, hi), (hi, lo, hi), (hi + rnd.randint(1, 9), lo, hi),
                ((lo + hi) // 2, lo, hi)]
    if kind == "sign":
        return [(rnd.randint(1, 99),), (-rnd.randint(1, 99),), (0,)]
    if kind == "abs_diff":
        x, y = rnd.randint(-20, 20), rnd.randint(-20, 20)
        return [(x, y), (y, x), (x, x), (rnd.randint(21, 60), rnd.randint(-9, 20))]
    if kind == "is_sorted":
        s = sorted(arr())
        u = list(s)
        u[-1], u[-2] = u[-2] - 1, u[-1]
        d = list(s)
        d[0], d[1] = d[1] + 1, d[0]
        return [(s,), (u,), (d,), (sorted(arr(4)),), ([s[0]] * 3,)]
    if kind == "max_of":
        a1, a2 = arr(), arr(5)
        a3 = arr(5)
        a3[0] = max(a3) + 5
        a4 = arr(5)
        a4[-1] = max(a4) + 3
        return [(a1,), (a2,), (a3,), (a4,)]
    if kind in ("count_below", "first_above"):
        a1 = arr()
        return [(a1, a1[2]), (a1, max(a1) + 1), (a1, min(a1) - 1), (a1, a1[-1]), (arr(5), rnd.randint(0, 20))]
    if kind == "sum_range":
        a1 = arr(7)
        lo = sorted(a1)[1]
        hi = sorted(a1)[5]
        return [(a1, lo, hi), (a1, min(a1), max(a1)), (a1, hi, hi), (a1, max(a1) + 1, max(a1) + 5)]
    # index_of, count_equal, last_index
    a1 = arr()
    a1[1] = a1[4]
    return [(a1, a1[0]), (a1, a1[4]), (a1, a1[-1]), (a1, 99), (a1, a1[2])]


# An array argument sits between two guard elements (the call passes
# in0 + 1): a mutant that reads one element before or past the end reads a
# guard, a defined value, instead of whatever the stack holds. Without
# them such a bug's tests pass or fail by chance (7.6% of the bugs of
# seed 2's family could read out of bounds, and some of those held-out
# tasks passed unedited in 2-7 of 288 runs).
GUARD_BEFORE, GUARD_AFTER = 1000, -1000


def c_call(f, kind, args, arrname):
    if kind in ("clamp", "in_range", "sign", "abs_diff"):
        return "%s(%s)" % (f, ", ".join(str(v) for v in args)), ""
    arr = args[0]
    decl = "    const int %s[] = {%s}; /* the %d values between two guards */\n" % (
        arrname, ", ".join(str(v) for v in [GUARD_BEFORE] + arr + [GUARD_AFTER]), len(arr))
    rest = "".join(", %d" % v for v in args[1:])
    return "%s(%s + 1, %d%s)" % (f, arrname, len(arr), rest), decl


def make_repo(rnd, name):
    """(lib.c, lib.h, test file, [test names]) of one repository."""
    prefix = rnd.choice(PREFIXES)
    kinds = rnd.sample(sorted(ROUTINES), 3)
    protos, bodies, tests, names = [], [], [], []
    for kind in kinds:
        f = "%s_%s" % (prefix, rnd.choice(ROUTINES[kind]))
        proto, body = c_body(kind, f, rnd.choice(ARRAYS), rnd.choice(LENS), rnd.choice(IDX))
        protos.append(proto + ";")
        bodies.append(proto + "\n" + body)
        cs = cases(kind, rnd)
        half = (len(cs) + 1) // 2
        for t, group in enumerate((cs[:half], cs[half:])):
            tname = "test_%s_%d" % (f, t + 1)
            lines = []
            for k, args in enumerate(group):
                call, decl = c_call(f, kind, args, "in%d" % k)
                lines.append(decl + "    ck_assert_int_eq(%s, %d);" % (call, reference(kind, args)))
            tests.append("START_TEST(%s)\n{\n%s\n}\nEND_TEST\n" % (tname, "\n".join(lines)))
            names.append(tname)
    guard = name.upper() + "_LIB_H"
    header = "/* lib.h - %s: small integer and array routines. */\n#ifndef %s\n#define %s\n\n%s\n\n#endif\n" % (
        name, guard, guard, "\n".join(protos))
    lib = "/* lib.c - %s: small integer and array routines. */\n#include \"lib.h\"\n\n%s\n" % (
        name, "\n\n".join(bodies))
    adds = "".join("    tcase_add_test(tc, %s);\n" % t for t in names)
    test = ("/* test_lib.c - Check tests for %s. */\n#include <check.h>\n#include <stdlib.h>\n\n"
            "#include \"lib.h\"\n\n%s\nstatic Suite *lib_suite(void)\n{\n    Suite *s = suite_create(\"%s\");\n"
            "    TCase *tc = tcase_create(\"core\");\n    tcase_set_timeout(tc, 2);\n%s"
            "    suite_add_tcase(s, tc);\n    return s;\n}\n\nint main(void)\n{\n"
            "    SRunner *sr = srunner_create(lib_suite());\n    srunner_set_fork_status(sr, CK_FORK);\n"
            "    srunner_run_all(sr, CK_VERBOSE);\n    int failed = srunner_ntests_failed(sr);\n"
            "    srunner_free(sr);\n    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;\n}\n") % (
                name, "\n".join(tests), name, adds)
    return lib, header, test, names


# (pattern, replacements, mutation name): applied to one occurrence at a time
MUTATIONS = [
    (r"(?<=[\s(])<(?=\s)", ["<=", ">"], "flip_cmp"),
    (r"(?<=[\s(])<=(?=\s)", ["<", ">="], "flip_cmp"),
    (r"(?<=[\s(])>(?=\s)", [">=", "<"], "flip_cmp"),
    (r"(?<=[\s(])>=(?=\s)", [">", "<="], "flip_cmp"),
    (r"(?<=[\s(])==(?=\s)", ["!="], "flip_cmp"),
    (r"&&", ["||"], "flip_logic"),
    (r"(?<=\s)- 1(?=[;\]\s])", ["+ 1"], "off_by_one"),
    (r"(?<=\s)= 1;", ["= 0;"], "off_by_one"),
    (r"(?<=\s)= 0;", ["= 1;"], "off_by_one"),
    (r"return -1;", ["return 0;"], "wrong_return"),
    (r"return (lo|hi|x);", None, "wrong_return"),
]


def mutants(lib):
    """(mutated lib.c, mutation name, 1-based line) for every site."""
    out = []
    for pat, reps, mname in MUTATIONS:
        for m in re.finditer(pat, lib):
            if reps is None:
                others = [v for v in ("lo", "hi", "x") if v != m.group(1)]
                reps_here = ["return %s;" % v for v in others]
            else:
                reps_here = reps
            for r in reps_here:
                out.append((lib[:m.start()] + r + lib[m.end():], mname, lib.count("\n", 0, m.start()) + 1))
    return out


def run_tests(d, names):
    """Names of the tests that fail in repository folder d (None: no build)."""
    p = subprocess.run(["make", "-s", "test"], cwd=d, capture_output=True, text=True, timeout=60)
    status = {}
    for line in (p.stdout + p.stderr).splitlines():
        m = re.match(r"^[^:]+:\d+:([PFE]):[^:]*:([A-Za-z_]\w*):", line)
        if m:
            status[m.group(2)] = m.group(1)
    if not status:
        return None
    return [t for t in names if status.get(t) != "P"]


def udiff(path, old, new):
    d = difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/" + path, "b/" + path, n=3)
    return "diff --git a/%s b/%s\n" % (path, path) + "".join(d)


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    out, opts = args[0], {"--repos": 40, "--heldout-repos": 12, "--seed": 1, "--bugs": 6}
    k = 1
    while k < len(args):
        if args[k] not in opts or k + 1 >= len(args) or not args[k + 1].isdigit():
            print("family-gen: expected --repos N, --heldout-repos M, --seed S or --bugs B, got %r" % args[k],
                  file=sys.stderr)
            sys.exit(2)
        opts[args[k]] = int(args[k + 1])
        k += 2
    rnd = random.Random(opts["--seed"])
    makefile = open(MAKEFILE_FROM).read()
    n_train, n_held = opts["--repos"], opts["--heldout-repos"]
    counts = {"train": 0, "heldout-bugs": 0, "heldout-repos": 0}
    shutil.rmtree(out, ignore_errors=True)
    for r in range(n_train + n_held):
        name = "fam%03d" % r
        lib, header, test, names = make_repo(rnd, name)
        rd = os.path.join(out, "repos", name)
        os.makedirs(os.path.join(rd, "src"))
        os.makedirs(os.path.join(rd, "tests"))
        files = {"Makefile": makefile, ".gitignore": "build/\n", "src/lib.c": lib, "src/lib.h": header,
                 "tests/test_lib.c": test}
        for p, text in files.items():
            with open(os.path.join(rd, p), "w") as fh:
                fh.write(text)
        with tempfile.TemporaryDirectory() as tmp:
            wd = os.path.join(tmp, name)
            shutil.copytree(rd, wd)
            if run_tests(wd, names) != []:
                sys.exit("family-gen: %s: the tests do not pass on the correct code" % name)
            cands = mutants(lib)
            rnd.shuffle(cands)
            kept = []
            for mlib, mname, line in cands:
                if len(kept) == opts["--bugs"]:
                    break
                with open(os.path.join(wd, "src/lib.c"), "w") as fh:
                    fh.write(mlib)
                failing = run_tests(wd, names)
                if failing is None or not failing:
                    continue
                kept.append((mlib, mname, line, failing))
        held_repo = r >= n_train
        for b, (mlib, mname, line, failing) in enumerate(kept):
            tid = "%s__m%d" % (name, b)
            split = "heldout" if held_repo or b == len(kept) - 1 else "train"
            counts["heldout-repos" if held_repo else "heldout-bugs" if split == "heldout" else "train"] += 1
            task = {
                "instance_id": tid,
                "repo": name,
                "problem_statement": "After a recent change to %s, the tests %s fail.\n\nThe tests describe the "
                                     "intended behaviour and are correct; fix the library code so that they pass "
                                     "again without breaking the others." % (
                                         name, ", ".join("`%s`" % t for t in failing)),
                "bug": udiff("src/lib.c", lib, mlib),
                "patch": udiff("src/lib.c", mlib, lib),
                "FAIL_TO_PASS": failing,
                "PASS_TO_PASS": [t for t in names if t not in failing],
                "test_cmd": "make test",
                "test_format": "check",
                "protected_paths": ["tests/", "Makefile"],
                "timeout_s": 60,
                "split": split,
                "kind": "generated",
                "generator": {"seed": opts["--seed"], "mutation": mname, "file": "src/lib.c", "line": line},
            }
            td = os.path.join(out, "tasks", "generated", name)
            os.makedirs(td, exist_ok=True)
            with open(os.path.join(td, tid + ".json"), "w") as fh:
                json.dump(task, fh, indent=1)
    print("family-gen: %d train tasks, %d held-out bugs of training repositories, %d tasks of %d held-out "
          "repositories -> %s" % (counts["train"], counts["heldout-bugs"], counts["heldout-repos"], n_held, out))


if __name__ == "__main__":
    main()
