#!/usr/bin/env python3
"""Writes difflib_ratio.json: SequenceMatcher(None, a, b, autojunk=False).ratio()
from CPython's difflib for random pairs (small alphabets, so ties and repeats
exercise the longest-match tie-breaking), plus Unicode pairs."""
import difflib, json, random

random.seed(20261130)
pairs = []
for n in range(300):
    alpha = random.choice(["ab", "abc", "abcd ", "the dose was 240 mg", "é😀ж "])
    a = "".join(random.choice(alpha) for _ in range(random.randint(0, 60)))
    b = "".join(random.choice(alpha) for _ in range(random.randint(0, 120)))
    pairs.append([a, b, difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()])
json.dump(pairs, open("difflib_ratio.json", "w"), ensure_ascii=False)
