"""A Run's test script runs as a call in a warm sandbox (issue 13: a sandbox started for every
Run's script was most of the CPU a crowd's Runs cost). The participant must see exactly what
the script run in a sandbox of its own shows: output, error text, ``__name__``, exits."""

from __future__ import annotations

import pytest

from vcost.harness._runs import RUN_LIMITS, _test_output, output_as_call, output_as_script
from vcost.sandbox import Sandbox

CASES = [
    ("x = 1\nprint('top', x)\n", "print(x + 1)"),  # the code's own output comes first
    ("def f(a):\n    return a * 2\n", "assert f(2) == 5, 'no'"),
    ("x = 1\n", "assert x == 2"),
    ("x = 1\n", "print('before')\nprint(1 / 0)"),
    ("x = 1\n", "print(__name__)"),
    ("x = 1\n", "import sys\nprint('a')\nsys.exit(3)"),
    ("x = 1\n", "print(y)"),
    ("x = 1\n", "print('a'\nprint(2)"),  # a syntax error in the tests
    ("def f(:\n    pass\n", "print(1)"),  # one in the code
    ("x = 1\n", "raise ValueError()"),
    ("x = 1\n", "import os\nprint(os.getcwd())"),
    ("x = 1\n", "print('z' * 20000)"),  # longer than what a Run shows
]


@pytest.fixture(scope="module")
def box() -> Sandbox:
    return Sandbox("auto", limits=RUN_LIMITS)


@pytest.mark.parametrize(("code", "tests"), CASES)
def test_tests_run_as_a_call_show_what_a_script_of_their_own_shows(
    box: Sandbox, code: str, tests: str
) -> None:
    as_call = output_as_call(box, code, tests)
    assert as_call is not None
    assert as_call == output_as_script(box, code, tests)


def test_a_call_that_times_out_is_run_again_as_a_script_to_keep_its_output(
    box: Sandbox,
) -> None:
    tests = "print('got this far')\nwhile True:\n    pass\n"
    assert output_as_call(box, "x = 1\n", tests) is None
    shown = _test_output(box, "x = 1\n", tests)
    assert shown["status"] == "timeout"
    assert "got this far" in shown["stdout"]
