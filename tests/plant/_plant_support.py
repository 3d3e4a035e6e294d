"""Tiny hand-made tasks shared by the planting tests (imported by name: tests/ has no packages)."""

from __future__ import annotations

SCORE_REFERENCE = """\
def score(values, threshold):
    if not values:
        return 0
    total = 0
    for v in values:
        if v >= threshold:
            total += v * 2
    return total
"""

SCORE_SPEC = """\
# Score

```python
def score(values: list[int], threshold: int) -> int:
```

Twice the sum of the values at or above `threshold`.

## Edge cases

- empty: an empty list scores 0.
- boundary: a value equal to `threshold` counts.

## Examples

```
>>> score([1, 5, 7], 4)
24
>>> score([2, 9], 3)
18
```
"""

# typical tests never put a value on the threshold; the edge tests do
SCORE_TESTS = [
    {"args": [[1, 5, 7], 4], "expected": 24, "tags": ["typical"]},
    {"args": [[2, 9], 3], "expected": 18, "tags": ["typical"]},
    {"args": [[8, 1, 2], 5], "expected": 16, "tags": ["typical"]},
    {"args": [[6, 7], 1], "expected": 26, "tags": ["typical"]},
    {"args": [[3], 9], "expected": 0, "tags": ["typical"]},
    {"args": [[], 1], "expected": 0, "tags": ["edge:empty"]},
    {"args": [[4, 2], 4], "expected": 8, "tags": ["edge:boundary"]},
]

DATA_REFERENCE = """\
import pandas as pd

df = pd.read_csv("data.csv")

# Orders with no amount are left out.
df = df.dropna(subset=["amount_cents"])
answer = float(df[df["kind"] == "a"]["amount_cents"].mean() / 100)
"""

# kind a: 1000, 1100, 1200, 1300, 1900 (mean 1300 = 13.00 EUR, median 1200), one blank;
# kind b: 1500, 1500
DATA_CSV = "kind,amount_cents\na,1000\na,1100\na,1200\na,1300\na,1900\na,\nb,1500\nb,1500\n"
