#!/usr/bin/python3
"""Random strings of code points assigned in Python's Unicode version (14.0
for Python 3.11, that of protocol/unicode_tables.c), mixed with ASCII, for
the Hugging Face tokenizer tests. Usage: tok_cpfuzz.py SEED N OUT"""
import json
import random
import sys
import unicodedata as ud

r = random.Random(int(sys.argv[1]))
cps = [cp for cp in range(1, 0x110000)
       if not 0xD800 <= cp <= 0xDFFF and ud.category(chr(cp)) != "Cn"]
ascii_bits = [" ", "a", "e", "1", "\n", "'", ".", "  ", "'s", "x"]
out = []
for _ in range(int(sys.argv[2])):
    n = r.randint(1, 16)
    s = "".join(chr(r.choice(cps)) if r.random() < 0.6 else r.choice(ascii_bits) for _ in range(n))
    out.append(json.dumps(s))
with open(sys.argv[3], "w") as f:
    f.write("\n".join(out) + "\n")
