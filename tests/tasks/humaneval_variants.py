"""HumanEval variants of issue 14: five wrong answers that HumanEval's own tests and
EvalPlus's extended tests miss (``<=`` for ``<`` in /0, ``in`` for ``startswith`` in /29, a max
that skips the first element in /35, ``common()`` keeping duplicates in /58, rounding instead
of ceiling in /133), and two correct alternatives to the canonical solutions (sort-then-scan
for /20, bisection over a wide bracket for /32). Used by the tests and by
bench/bench_humaneval_import.py."""

from __future__ import annotations

WRONG = {
    "HumanEval/0": """
def has_close_elements(numbers, threshold):
    for idx, elem in enumerate(numbers):
        for idx2, elem2 in enumerate(numbers):
            if idx != idx2:
                distance = abs(elem - elem2)
                if distance <= threshold:
                    return True
    return False
""",
    "HumanEval/29": """
def filter_by_prefix(strings, prefix):
    return [x for x in strings if prefix in x]
""",
    "HumanEval/35": """
def max_element(l):
    m = l[1] if len(l) > 1 else l[0]
    for e in l[1:]:
        if e > m:
            m = e
    return m
""",
    "HumanEval/58": """
def common(l1, l2):
    ret = []
    for e1 in l1:
        for e2 in l2:
            if e1 == e2:
                ret.append(e1)
    return sorted(ret)
""",
    "HumanEval/133": """
def sum_squares(lst):
    squared = 0
    for i in lst:
        squared += round(i)**2
    return squared
""",
}
RIGHT = {
    "HumanEval/20": """
def find_closest_elements(numbers):
    s = sorted(numbers)
    best = None
    for a, b in zip(s, s[1:]):
        if best is None or b - a < best[1] - best[0]:
            best = (a, b)
    return best
""",
    "HumanEval/32": """
import math
def poly(xs, x):
    return sum([coeff * math.pow(x, i) for i, coeff in enumerate(xs)])
def find_zero(xs):
    lo, hi = -1000.0, 1000.0
    flo = poly(xs, lo)
    for _ in range(200):
        mid = (lo + hi) / 2
        fm = poly(xs, mid)
        if (fm < 0) == (flo < 0):
            lo, flo = mid, fm
        else:
            hi = mid
    return (lo + hi) / 2
""",
}
