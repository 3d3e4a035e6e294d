"""Tiny hand-made tasks shared by the planting tests (imported by name: tests/ has no packages)."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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


def write_code_task(
    folder: Path,
    *,
    entry_point: str,
    reference: str,
    signature: str,
    description: str,
    checklist: Sequence[str],
    examples: Sequence[Sequence[Any]],
    tests: Sequence[tuple[Sequence[Any], str]],
) -> Path:
    """A tiny code task folder (not bank-valid: few tests). Expected values come from running
    the hand-written reference here, outside the sandbox (it is trusted); ``examples`` are the
    two worked examples' arguments, ``tests`` the hidden tests' (arguments, tag)."""
    namespace: dict[str, Any] = {}
    exec(compile(reference, "reference.py", "exec"), namespace)
    function = namespace[entry_point]

    def call(args: Sequence[Any]) -> Any:
        return function(*copy.deepcopy(list(args)))

    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(
        f'id = "{folder.name}"\nkind = "code"\ntitle = "{folder.name}"\ndifficulty = "easy"\n'
        'do_minutes = 5\nskill = "loops"\nrole = "practice"\n'
        f'entry_point = "{entry_point}"\nchecklist = {json.dumps(list(checklist))}\n'
    )
    shown = "\n".join(
        f">>> {entry_point}({', '.join(repr(a) for a in args)})\n{call(args)!r}"
        for args in examples
    )
    edges = "\n".join(f"- {item}: see above." for item in checklist)
    (folder / "spec.md").write_text(
        f"# {folder.name}\n\n```python\n{signature}\n```\n\n{description}\n\n"
        f"## Edge cases\n\n{edges}\n\n## Examples\n\n```\n{shown}\n```\n"
    )
    (folder / "reference.py").write_text(reference)
    rows = [{"args": list(args), "expected": call(args), "tags": [tag]} for args, tag in tests]
    (folder / "tests.json").write_text(json.dumps(rows, indent=2) + "\n")
    return folder
