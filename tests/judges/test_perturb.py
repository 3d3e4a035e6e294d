"""Perturbations change how an answer looks, never what it does."""

from __future__ import annotations

import ast

import pytest

from vcost.judges import perturb
from vcost.tasks import BUNDLED_BANK, CodeTask, load_bank

BANK = load_bank(BUNDLED_BANK)
CODE = """\
def count_pairs(xs, target):
    \"\"\"Count pairs.\"\"\"
    # a comment
    seen = {}
    total = 0
    for x in xs:
        total += seen.get(target - x, 0)
        seen[x] = seen.get(x, 0) + 1
    return total
"""


def _run(code: str, *args: object) -> object:
    space: dict[str, object] = {}
    exec(compile(code, "answer.py", "exec"), space)  # our own fixed code, not untrusted
    return space["count_pairs"](*args)  # type: ignore[operator]


def test_length_long_doubles_lines_and_keeps_the_tree() -> None:
    long = perturb(CODE, "length-long")
    assert len(long.splitlines()) == 2 * len(CODE.splitlines())
    assert ast.dump(ast.parse(long)) == ast.dump(ast.parse(CODE))


def test_length_short_drops_comments_and_docstrings() -> None:
    short = perturb(CODE, "length-short")
    assert "comment" not in short
    assert "Count pairs" not in short
    assert len(short) < len(CODE)
    assert _run(short, [1, 2, 3, 2], 4) == _run(CODE, [1, 2, 3, 2], 4) == 2


def test_paraphrase_renames_locals_not_parameters_or_the_function() -> None:
    para = perturb(CODE, "paraphrase")
    assert "the_seen" in para
    assert "the_total" in para
    assert "the_x" in para
    assert "def count_pairs(xs, target)" in para
    assert _run(para, [1, 2, 3, 2, 2], 4) == _run(CODE, [1, 2, 3, 2, 2], 4)


def test_data_scripts_keep_answer_and_imports() -> None:
    script = "import pandas as pd\ndf = pd.read_csv('data.csv')\nrows = len(df)\nanswer = rows\n"
    para = perturb(script, "paraphrase")
    assert "answer = the_rows" in para
    assert "import pandas as pd" in para


@pytest.mark.parametrize("task", [t for t in BANK if isinstance(t, CodeTask)], ids=lambda t: t.id)
def test_every_bundled_reference_keeps_its_structure(task: CodeTask) -> None:
    """Across the bundled bank: the long form is the same tree; the paraphrase is the same tree
    once names are mapped back."""
    code = task.reference
    assert ast.dump(ast.parse(perturb(code, "length-long"))) == ast.dump(ast.parse(code))
    para = perturb(code, "paraphrase")
    back = para.replace("the_", "")
    assert ast.dump(ast.parse(back)) == ast.dump(ast.parse(ast.unparse(ast.parse(code))))
