"""Mutation-guided hidden tests for imported HumanEval problems.

HumanEval's own tests (and inputs generated around them) miss wrong variants that real models
write: ``<=`` for ``<`` in HumanEval/0, a max that skips the first element (/35), rounding
instead of ceiling (/133). vcost's mutation engine (:func:`vcost.plant.mutants`) writes such
variants of the canonical solution; differential testing
(:class:`vcost.plant._distinguish.DifferentialSearch`) looks for an input on which each one
disagrees with the canonical solution. Each mutant that the tests made so far do not kill gets
the smallest such input added as a hidden test (its expected value is the canonical
solution's), so the tests end up killing every mutant that any searched input can tell apart.

Two slips real models make that the planting operators do not write are added here: an
iteration that skips the first element (``for e in xs`` -> ``for e in xs[1:]``, also in
comprehensions) and a substring test for a prefix or suffix (``x.startswith(p)`` -> ``p in
x``). And since two mutants that are each equivalent can be wrong together (``m = l[1]`` and
``for e in l[1:]`` each still find the max of ``l``; both at once skip ``l[0]``), pairs of
surviving mutants on different lines are tried as second-order mutants.

Only inputs inside the problem's envelope (:class:`~vcost.tasks.humaneval.InputProfile`: what
every original input shares) are searched, so an added test never leaves the domain the
problem describes. Only lines of the canonical solution are mutated (not the prompt's helpers
or docstring). A mutant that no searched input tells apart is counted as surviving (possibly
equivalent: the search cannot prove it). The mutation score is killed / mutants.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vcost._ast import AST_LOCK
from vcost.grading import RERUN_FACTOR, time_limits, values_equal
from vcost.plant import mutants
from vcost.plant._distinguish import DifferentialSearch
from vcost.sandbox import CallResult, Sandbox

__all__ = ["AST_LOCK", "MutationReport", "kill_mutants"]

MAX_MUTANTS = 120
MAX_ADDED = 40
SEARCH_EXAMPLES = 400
MUTANT_SECONDS = 0.25
MAX_PAIRS = 60
CANDIDATE_SECONDS = 0.5
CANDIDATE_MAX_MS = 250.0
_FOR = re.compile(r"(\bfor\s+[\w, ()]+?\s+in\s+)([A-Za-z_][\w.]*)(\s*(?::|\bif\b|\]|\)|$))")
_AFFIX = re.compile(r"([A-Za-z_][\w.]*)\.(startswith|endswith)\(([^()]+)\)")


@dataclass(frozen=True)
class _Variant:
    """A mutant of the program: its source, the changed line and what changed."""

    source: str
    line: int
    description: str


def _slips(program: str, first_line: int) -> list[_Variant]:
    """The two slips this module adds to the planting operators (module docstring)."""
    lines = program.split("\n")
    found: list[_Variant] = []
    for number, text in enumerate(lines, start=1):
        if number < first_line or text.lstrip().startswith("#"):
            continue
        edits = [
            (_FOR.sub(lambda m: f"{m[1]}{m[2]}[1:]{m[3]}", text, count=1), "skips the first"),
            (_AFFIX.sub(lambda m: f"({m[3]} in {m[1]})", text, count=1), "substring for affix"),
        ]
        for changed, description in edits:
            if changed != text:
                source = "\n".join([*lines[: number - 1], changed, *lines[number:]])
                found.append(_Variant(source, number, f"line {number}: {description}"))
    return found


def _combine(program: str, a: _Variant, b: _Variant) -> _Variant | None:
    """``a`` and ``b`` at once, when each changes one line and not the same one."""
    base, one, two = (x.split("\n") for x in (program, a.source, b.source))
    if not len(base) == len(one) == len(two):
        return None
    changed_a = [i for i, (x, y) in enumerate(zip(base, one, strict=True)) if x != y]
    changed_b = [i for i, (x, y) in enumerate(zip(base, two, strict=True)) if x != y]
    if len(changed_a) != 1 or len(changed_b) != 1 or changed_a == changed_b:
        return None
    merged = list(one)
    merged[changed_b[0]] = two[changed_b[0]]
    return _Variant("\n".join(merged), min(a.line, b.line), f"{a.description} + {b.description}")


@dataclass(frozen=True)
class MutationReport:
    """What the mutation pass did for one problem (recorded in provenance.json)."""

    mutants: int
    killed_by_earlier_tests: int
    killed_by_added_tests: int
    surviving: tuple[str, ...]
    added: list[dict[str, Any]] = field(repr=False)

    @property
    def killed(self) -> int:
        return self.killed_by_earlier_tests + self.killed_by_added_tests

    @property
    def score(self) -> float | None:
        """Killed / mutants (None when the solution has no mutant)."""
        return self.killed / self.mutants if self.mutants else None

    def to_json(self) -> dict[str, Any]:
        return {
            "mutants": self.mutants,
            "killed_by_earlier_tests": self.killed_by_earlier_tests,
            "killed_by_added_tests": self.killed_by_added_tests,
            "surviving": list(self.surviving),
            "score": None if self.score is None else round(self.score, 4),
            "added_tests": len(self.added),
            "note": (
                "mutants of the canonical solution's lines (vcost.plant operators); a test was "
                "added for each mutant the earlier tests did not kill, from a differential "
                "search over inputs inside the originals' envelope; surviving mutants were "
                "told apart by no searched input (possibly equivalent)"
            ),
        }


def _plain(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def _quick(run: CallResult) -> bool:
    return run.status == "ok" and run.elapsed_ms <= CANDIDATE_MAX_MS


def _key(args: Sequence[Any]) -> str:
    return json.dumps(list(args), sort_keys=True)


def _fails(test: dict[str, Any], run: CallResult, tolerance: float) -> bool:
    if "raises" in test:
        return not (run.status == "raised" and test["raises"] in run.exception_types)
    return run.status != "ok" or not values_equal(
        run.value, test["expected"], float_tolerance=tolerance
    )


def _killed(
    tests: Sequence[dict[str, Any]],
    runs: Sequence[CallResult],
    tolerance: float,
    rerun: Callable[[int], CallResult],
) -> bool:
    """True when a test tells the mutant apart. A test it only timed out on counts after
    ``rerun(index)`` (a larger limit) times out or fails too: on a loaded machine an
    equivalent mutant can miss a 0.25 s limit, and a kill must not depend on the load."""
    late: list[int] = []
    for i, (test, run) in enumerate(zip(tests, runs, strict=True)):
        if run.status == "timeout":
            late.append(i)
        elif _fails(test, run, tolerance):
            return True
    return any(_fails(tests[i], rerun(i), tolerance) for i in late)


def kill_mutants(
    program: str,
    entry_point: str,
    first_line: int,
    tests: Sequence[dict[str, Any]],
    originals: Sequence[Sequence[Any]],
    conforms: Callable[[Sequence[Any]], bool],
    *,
    sandbox: Sandbox,
    tolerance: float,
    tags: Callable[[Sequence[Any]], list[str]],
    candidates: Sequence[Sequence[Any]] = (),
) -> MutationReport:
    """Add tests to ``tests`` (not changed; the additions are returned) until every mutant
    of ``program``'s lines from ``first_line`` on that the search can tell apart is killed.

    The search runs over the differential search's inputs that ``conforms`` accepts and over
    ``candidates`` (inputs the problem's own envelope generated, by mutating the originals).
    """
    with AST_LOCK:  # CPython's ast module is not safe here from several threads at once
        made = mutants(program, kind="code")
    found = [
        _Variant(m.source, m.line, f"line {m.line}: {m.description}")
        for m in made
        if m.line >= first_line
    ][:MAX_MUTANTS]
    found += _slips(program, first_line)
    if not found:
        return MutationReport(0, 0, 0, (), [])
    search = DifferentialSearch(
        program,
        entry_point,
        originals,
        sandbox=sandbox,
        raises=set(),
        max_examples=SEARCH_EXAMPLES,
        float_tolerance=tolerance,
    )
    search._prepare()
    have = {_key(t["args"]) for t in tests}
    keep = [
        i
        for i, args in enumerate(search.inputs)
        if search.expected_raise[i] is None and _key(args) not in have and conforms(args)
    ]
    search.inputs = [search.inputs[i] for i in keep]
    search.results = [search.results[i] for i in keep]
    search.expected_raise = [None] * len(keep)
    search.limits = [search.limits[i] for i in keep]
    seen = have | {_key(a) for a in search.inputs}
    extra = [list(a) for a in candidates if _key(a) not in seen]
    if extra:
        runs = sandbox.call(program, entry_point, extra, call_seconds=CANDIDATE_SECONDS)
        slow = [i for i, run in enumerate(runs) if not _quick(run)]
        if slow:  # once more: a busy machine, not the input, may have made the run slow
            again = sandbox.call(
                program, entry_point, [extra[i] for i in slow], call_seconds=CANDIDATE_SECONDS
            )
            for i, run in zip(slow, again, strict=True):
                runs[i] = run
        good = [
            (args, run)
            for args, run in zip(extra, runs, strict=True)
            if _quick(run) and _plain(run.value)
        ]
        search.inputs += [args for args, _ in good]
        search.results += [run for _, run in good]
        search.expected_raise += [None] * len(good)
        search.limits += time_limits([r.elapsed_ms for _, r in good], floor_s=0.5, ceiling_s=5.0)

    current = list(tests)
    added: list[dict[str, Any]] = []
    counts = {"tests": 0, "added": 0}
    survivors: list[_Variant] = []

    def attack(mutant: _Variant) -> bool:
        """Kill ``mutant`` (adding a test if needed); False if no searched input can."""
        inputs = [t["args"] for t in current]
        runs = sandbox.call(mutant.source, entry_point, inputs, call_seconds=MUTANT_SECONDS)
        again: dict[int, CallResult] = {}

        def rerun(i: int) -> CallResult:
            if i not in again:
                seconds = RERUN_FACTOR * MUTANT_SECONDS
                again[i] = sandbox.call(
                    mutant.source, entry_point, [inputs[i]], call_seconds=seconds
                )[0]
            return again[i]

        if _killed(current, runs, tolerance, rerun):
            # killed by the earlier tests alone, or only thanks to an added one?
            early = _killed(tests, runs[: len(tests)], tolerance, rerun)
            counts["tests" if early else "added"] += 1
            return True
        difference = search.search(mutant.source) if len(added) < MAX_ADDED else None
        if difference is None or difference.raises is not None:
            return False
        args = difference.args
        test = {"args": args, "expected": difference.expected, "tags": tags(args)}
        added.append(test)
        current.append(test)
        counts["added"] += 1
        return True

    for mutant in found:
        if not attack(mutant):
            survivors.append(mutant)
    pairs = [
        combined
        for i, a in enumerate(survivors)
        for b in survivors[i + 1 :]
        if (combined := _combine(program, a, b)) is not None
    ][:MAX_PAIRS]
    surviving = [m.description for m in survivors]
    surviving += [pair.description for pair in pairs if not attack(pair)]
    total = len(found) + len(pairs)
    return MutationReport(total, counts["tests"], counts["added"], tuple(surviving), added)
