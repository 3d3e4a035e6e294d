"""Code and number extraction from model replies (rules: vcost.answers._extract)."""

from __future__ import annotations

import pytest

from vcost.answers import extract_code, extract_number

FUNC = "def add(a, b):\n    return a + b\n"


def test_one_fenced_block_with_prose() -> None:
    got = extract_code(f"Here you go:\n```python\n{FUNC}```\nThis adds.", entry_point="add")
    assert got.code == FUNC
    assert got.how == "fenced 1/1"


def test_three_blocks_take_the_last_that_defines_the_entry_point() -> None:
    draft = "def add(a, b):\n    return a - b\n"
    usage = "print(add(1, 2))\n"
    text = f"Draft:\n```python\n{draft}```\nFinal:\n```python\n{FUNC}```\nUse:\n```\n{usage}```"
    got = extract_code(text, entry_point="add")
    assert got.code == FUNC
    assert (got.how, got.blocks) == ("fenced 2/3", 3)


def test_non_python_fences_are_ignored_when_a_python_block_exists() -> None:
    text = f"```bash\npip install x\n```\n```py\n{FUNC}```"
    assert extract_code(text, entry_point="add").code == FUNC


def test_unclosed_last_fence_counts_as_a_block() -> None:
    got = extract_code(f"```python\n{FUNC}", entry_point="add")
    assert got.code == FUNC


def test_bare_code_and_code_after_prose() -> None:
    assert extract_code(FUNC, entry_point="add").how == "bare"
    got = extract_code(f"Sure, here it is:\n\n{FUNC}\nHope this helps!", entry_point="add")
    assert (got.code, got.how) == (FUNC.rstrip("\n") + "\n", "trimmed")


@pytest.mark.parametrize("text", ["", "I cannot help with that.", "```python\ndef (:\n```"])
def test_no_code(text: str) -> None:
    got = extract_code(text, entry_point="add")
    assert not got.found
    assert got.code == ""


def test_data_answer_takes_the_block_that_sets_answer() -> None:
    script = "import pandas as pd\ndf = pd.read_csv('data.csv')\nanswer = df['x'].sum()\n"
    text = f"```python\nprint('hi')\n```\n```python\n{script}```\nFinal answer: 1,234.5"
    assert extract_code(text).code == script
    assert extract_number(text) == 1234.5


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("The answer is 12.5.", 12.5),
        ("**Final answer:** -3", -3.0),
        ("answer = 7e-3", 0.007),
        ("```python\nx = 99\n```\nSo we get 41.", 41.0),
        ("no number here", None),
    ],
)
def test_stated_number(text: str, number: float | None) -> None:
    assert extract_number(text) == number


def test_helpers_from_earlier_blocks_only_for_names_the_answer_needs() -> None:
    """A helper and an import defined in earlier blocks are put before the entry point; an
    unrelated earlier definition and a local variable's namesake are not."""
    text = (
        "```python\nimport math\ntotal = 99\ndef unused():\n    return 1\n```\n"
        "```python\ndef scale(x):\n    return math.sqrt(x)\n```\n"
        "```python\ndef f(xs):\n    total = 0\n    for x in xs:\n        total += scale(x)\n"
        "    return total\n```\n"
    )
    extraction = extract_code(text, entry_point="f")
    assert extraction.how == "fenced 3/3"
    assert "def scale" in extraction.code
    assert "import math" in extraction.code
    assert "unused" not in extraction.code
    assert "total = 99" not in extraction.code
    namespace: dict[str, object] = {}
    exec(compile(extraction.code, "answer.py", "exec"), namespace)
    assert namespace["f"]([4, 9]) == 5.0  # type: ignore[operator]
