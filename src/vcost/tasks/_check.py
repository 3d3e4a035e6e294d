"""`vcost tasks check`: refuse a bank whose tasks could give wrong ground truth.

Every refusal names the task and the file (docs/task-format.md lists them). References are
the bank author's own trusted code, so they run in-process (code tasks) or in a subprocess
(data scripts, which read data.csv from the task folder).
"""

from __future__ import annotations

import ast
import copy
import json
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcost._ast import locked_parse as _parse
from vcost.checkers import check_value
from vcost.errors import InputError
from vcost.grading import values_equal
from vcost.sandbox._runner import class_name
from vcost.tasks._bank import MIN_TESTS_FLOOR as MIN_TESTS
from vcost.tasks._bank import BankLimits, bank_limits
from vcost.tasks._model import CHECKLIST, CodeTask, DataTask, Task, load_task

__all__ = ["BankCheck", "Problem", "check_bank", "check_task", "parse_examples", "run_reference"]

REFERENCE_LINES = (15, 40)
CSV_ROWS = (50, 200)
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_ROUNDING = re.compile(
    r"round(?:ed)? to (?P<n>\d+) decimal places?|give a whole number|round(?:ed)? to the nearest"
    r" (?:whole number|integer)",
    re.IGNORECASE,
)
_COMMON = {"id", "kind", "title", "difficulty", "do_minutes", "skill", "role", "checklist"}
_KNOWN = {
    "code": _COMMON | {"entry_point", "float_tolerance"},
    "data": _COMMON | {"answer", "decimals"},
}


@dataclass(frozen=True)
class Problem:
    """One reason a task is refused."""

    task_id: str
    file: str
    message: str

    def __str__(self) -> str:
        return f"{self.task_id}/{self.file}: {self.message}"


@dataclass(frozen=True)
class BankCheck:
    """The result of checking a bank: the tasks that loaded and every problem found."""

    tasks: list[Task]
    problems: list[Problem]

    @property
    def ok(self) -> bool:
        """True when the bank has no problem."""
        return not self.problems


def _section(text: str, title: str) -> list[str]:
    """The lines of a ``## title`` section of a Markdown text."""
    lines, inside = [], False
    for line in text.splitlines():
        if line.startswith("## "):
            inside = line[3:].strip().lower() == title.lower()
            continue
        if inside:
            lines.append(line)
    return lines


def edge_items(text: str) -> set[str]:
    """Checklist items stated as ``- item: ...`` bullets under ``## Edge cases``."""
    found = set()
    for line in _section(text, "Edge cases"):
        m = re.match(r"^\s*[-*]\s*`?([a-z]+)`?\s*:", line)
        if m:
            found.add(m.group(1))
    return found


def parse_examples(text: str, entry_point: str) -> list[tuple[list[Any], Any]]:
    """Worked examples (``>>> f(args)`` then the expected literal) under ``## Examples``."""
    examples: list[tuple[list[Any], Any]] = []
    call: str | None = None
    result: list[str] = []

    def flush() -> None:
        if call is None:
            return
        node = _parse(call, mode="eval").body
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == entry_point
            and not node.keywords
        ):
            raise ValueError(
                f"example '{call}' must call {entry_point}(...) with positional literal arguments"
            )
        args = [ast.literal_eval(a) for a in node.args]
        examples.append((args, ast.literal_eval("\n".join(result).strip())))

    for line in _section(text, "Examples"):
        stripped = line.strip()
        if stripped.startswith(">>> "):
            flush()
            call, result = stripped[4:], []
        elif stripped.startswith("```"):
            flush()
            call, result = None, []
        elif call is not None and stripped:
            result.append(stripped)
    flush()
    return examples


def run_reference(code: str, entry_point: str) -> Callable[[list[Any]], dict[str, Any]]:
    """Compile trusted reference code; return a caller giving ``{"value"}`` or ``{"raises"}``."""
    namespace: dict[str, Any] = {"__name__": "reference"}
    exec(compile(code, "reference.py", "exec"), namespace)
    function = namespace[entry_point]

    def call(args: list[Any]) -> dict[str, Any]:
        try:
            value = function(*copy.deepcopy(args))
        except Exception as error:  # the reference's declared exceptions are data here
            return {"raises": [class_name(c) for c in type(error).__mro__]}
        return {"value": json.loads(json.dumps(value))}

    return call


def _code_problems(task: CodeTask, limits: BankLimits) -> Iterator[tuple[str, str]]:
    lines = [x for x in task.reference.splitlines() if x.strip()]
    lo, hi = limits.reference_lines or REFERENCE_LINES
    min_tests = limits.min_tests or MIN_TESTS
    if not lo <= len(lines) <= hi:
        yield "reference.py", f"reference has {len(lines)} non-blank lines; expected {lo}-{hi}"
    if len(task.tests) < min_tests:
        if task.id not in limits.below_min_tests:
            yield "tests.json", f"{len(task.tests)} hidden tests; at least {min_tests} are required"
        elif task.role != "spare":
            yield "task.toml", "a task flagged below_min_tests in bank.toml must be a spare"
    tags = {t for test in task.tests for t in test.tags}
    if "typical" not in tags:
        yield "tests.json", "no test is tagged 'typical'"
    for tag in sorted(tags - {"typical"}):
        item = tag.removeprefix("edge:")
        if not tag.startswith("edge:") or item not in CHECKLIST:
            yield "tests.json", f"unknown tag '{tag}'; use 'typical' or edge:<checklist item>"
        elif item not in task.checklist:
            yield "tests.json", f"tag '{tag}' names an item not in task.toml's checklist"
    stated = edge_items(task.spec_text)
    for item in task.checklist:
        if f"edge:{item}" not in tags:
            yield "tests.json", f"checklist item '{item}' applies but no test is tagged edge:{item}"
        if item not in stated:
            yield (
                "spec.md",
                f"checklist item '{item}' applies but is not stated under ## Edge cases",
            )
    for item in sorted(stated - set(task.checklist)):
        yield "spec.md", f"edge case '{item}' is stated but not in task.toml's checklist"
    try:
        call = run_reference(task.reference, task.entry_point)
    except Exception as error:
        yield "reference.py", f"does not define {task.entry_point}: {type(error).__name__}: {error}"
        return
    for i, test in enumerate(task.tests):
        got = call(test.args)
        if test.raises is not None:
            if test.raises not in got.get("raises", []):
                yield "tests.json", f"test {i}: reference does not raise {test.raises} ({got})"
        elif "raises" in got:
            yield "tests.json", f"test {i}: reference raises {got['raises'][0]}"
        elif test.check is not None and (why := check_value(test.check, test.args, got["value"])):
            yield "tests.json", f"test {i}: the reference's value fails its checker: {why}"
        elif test.check is None and not values_equal(
            got["value"], test.expected, float_tolerance=task.float_tolerance
        ):
            yield (
                "tests.json",
                (f"test {i}: reference returns {got['value']!r}, test expects {test.expected!r}"),
            )
    try:
        examples = parse_examples(task.spec_text, task.entry_point)
    except (SyntaxError, ValueError) as error:
        yield "spec.md", f"cannot read the worked examples: {error}"
        return
    if len(examples) != 2:
        yield "spec.md", f"{len(examples)} worked examples under ## Examples; exactly 2 required"
    for args, expected in examples:
        got = call(args)
        value = got.get("value", got.get("raises"))
        if "raises" in got or not values_equal(
            value, json.loads(json.dumps(expected)), float_tolerance=task.float_tolerance
        ):
            yield (
                "spec.md",
                (
                    f"worked example {task.entry_point}{tuple(args)!r} shows "
                    f"{expected!r} but the reference gives {value!r}"
                ),
            )


_DATA_RUNNER = (
    "import json, runpy, warnings\n"
    "warnings.simplefilter('ignore')\n"
    "ns = runpy.run_path('reference.py')\n"
    "print(json.dumps(float(ns['answer'])))\n"
)


def _data_problems(task: DataTask) -> Iterator[tuple[str, str]]:
    question = task.spec_text
    m = _ROUNDING.search(question)
    if m is None:
        yield (
            "question.md",
            (
                "the question does not state its rounding; write 'Round to N "
                "decimal places.' or 'Give a whole number.'"
            ),
        )
    else:
        stated = int(m.group("n")) if m.group("n") else 0
        if stated != task.decimals:
            yield "question.md", f"states {stated} decimals but task.toml has {task.decimals}"
    stated_items = edge_items(question)
    for item in task.checklist:
        if item not in stated_items:
            yield "question.md", f"checklist item '{item}' applies but is not stated"
    rows = max(0, len(task.csv.decode("utf-8").strip().splitlines()) - 1)
    lo, hi = CSV_ROWS
    if not lo <= rows <= hi:
        yield "data.csv", f"{rows} rows; expected {lo}-{hi}"
    run = subprocess.run(
        [sys.executable, "-c", _DATA_RUNNER],
        cwd=task.path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if run.returncode != 0:
        tail = run.stderr.strip().splitlines()[-1:] or ["no output"]
        yield "reference.py", f"the script fails: {tail[0]}"
        return
    value = round(float(run.stdout.strip().splitlines()[-1]), task.decimals)
    if value != round(task.answer, task.decimals):
        yield "reference.py", f"the script gives {value}, task.toml's answer is {task.answer}"


def check_task(
    path: str | Path, *, limits: BankLimits | None = None
) -> tuple[Task | None, list[Problem]]:
    """Load and check one task folder (``limits``: its bank's bank.toml, see bank_limits)."""
    folder = Path(path)
    name = folder.name
    try:
        meta = tomllib.loads((folder / "task.toml").read_text(encoding="utf-8-sig"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        return None, [Problem(name, "task.toml", str(error))]
    problems = []
    kind = meta.get("kind")
    unknown = set(meta) - _KNOWN.get(str(kind), set())
    if kind in _KNOWN and unknown:
        problems.append(
            Problem(name, "task.toml", f"unknown field(s) {', '.join(sorted(unknown))}")
        )
    if meta.get("id") != name or not _ID.match(name):
        problems.append(
            Problem(
                name,
                "task.toml",
                f"id {meta.get('id')!r} must equal the folder "
                "name, in lowercase letters, digits and dashes",
            )
        )
    for item in meta.get("checklist", []):
        if item not in CHECKLIST:
            problems.append(
                Problem(
                    name,
                    "task.toml",
                    f"unknown checklist item '{item}'; expected one of {', '.join(CHECKLIST)}",
                )
            )
    try:
        task = load_task(folder)
    except KeyError as error:
        return None, [*problems, Problem(name, "task.toml", f"missing field {error}")]
    except (OSError, ValueError, json.JSONDecodeError) as error:
        file = "tests.json" if "test" in str(error) else "task.toml"
        if isinstance(error, OSError):
            file = Path(str(error.filename)).name if error.filename else file
        return None, [*problems, Problem(name, file, str(error))]
    found = (
        _code_problems(task, limits or BankLimits())
        if isinstance(task, CodeTask)
        else _data_problems(task)
    )
    problems += [Problem(name, file, message) for file, message in found]
    return task, problems


def check_bank(path: str | Path, *, progress: Callable[[str], None] | None = None) -> BankCheck:
    """Check every task folder in a bank."""
    root = Path(path)
    if not root.is_dir():
        return BankCheck([], [Problem(root.name, ".", "not a folder")])
    try:
        limits = bank_limits(root)
    except InputError as error:
        return BankCheck([], [Problem(root.name, "bank.toml", str(error))])
    tasks, problems = [], []
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    for folder in folders:
        if progress:
            progress(folder.name)
        task, found = check_task(folder, limits=limits)
        problems += found
        if task is not None:
            tasks.append(task)
    return BankCheck(tasks, problems)
