"""Produce src/vcost/examples/audit-checkers/results.csv.gz: a per-item log vcost makes itself.

Every code task of the bundled bank is mutated with vcost's own operators (``vcost.plant``);
the reference and every mutant run in the sandbox against all of the task's hidden tests
(``vcost.grading.grade_code``). The full hidden suite is the ground truth. Six *checkers*, each a
fixed rule that runs a subset of the hidden tests, then give a verdict on every answer; the log
records, per checker ("model") and answer ("item"), whether the verdict agrees with the ground
truth and the checker's stated confidence in its verdict:

* a failing test is a counterexample: verdict "incorrect", confidence 1;
* all k run tests pass: verdict "correct", confidence (k + 1) / (k + 2), Laplace's rule of
  succession for "the next hidden test passes", declared before any result was seen.

The checkers are rules, not language models; the numbers are real sandbox outcomes. Run from
the repository root (takes a few minutes on two cores)::

    .venv/bin/python scripts/make_audit_example.py [--workers 2]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from vcost import __version__
from vcost.grading import CodeGrade, grade_code, time_limits
from vcost.plant import mutants
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, TestCase, load_bank

ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "src" / "vcost" / "bank"
OUT = ROOT / "src" / "vcost" / "examples" / "audit-checkers" / "results.csv.gz"
BENCHMARK = "vcost-bank-code"

Selector = Callable[[str, Sequence[TestCase]], list[int]]


def _tagged(prefix: str) -> Selector:
    def select(task_id: str, tests: Sequence[TestCase]) -> list[int]:
        return [i for i, t in enumerate(tests) if any(g.startswith(prefix) for g in t.tags)]

    return select


def _first(k: int) -> Selector:
    def select(task_id: str, tests: Sequence[TestCase]) -> list[int]:
        return list(range(min(k, len(tests))))

    return select


def _random(name: str, k: int | None) -> Selector:
    def select(task_id: str, tests: Sequence[TestCase]) -> list[int]:
        rng = random.Random(f"{name}:{task_id}")  # str seeds are hashed with SHA-512: stable
        size = len(tests) // 2 if k is None else min(k, len(tests))
        return sorted(rng.sample(range(len(tests)), size))

    return select


CHECKERS: dict[str, Selector] = {
    "typical-tests": _tagged("typical"),
    "edge-tests": _tagged("edge:"),
    "first-3-tests": _first(3),
    "random-1-test": _random("random-1-test", 1),
    "random-5-tests": _random("random-5-tests", 5),
    "random-half": _random("random-half", None),
}


def _grade(task: CodeTask, source: str, sandbox: Sandbox, limits: list[float]) -> CodeGrade:
    return grade_code(
        source,
        task.entry_point,
        [t.to_json() for t in task.tests],
        sandbox=sandbox,
        float_tolerance=task.float_tolerance,
        call_seconds=limits,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    start = time.perf_counter()
    sandbox = Sandbox()
    tasks = [t for t in load_bank(BANK) if isinstance(t, CodeTask)]
    jobs: list[tuple[CodeTask, str, str, str]] = []  # task, item, subject, source
    limits: dict[str, list[float]] = {}
    for task in tasks:
        runs = sandbox.call(task.reference, task.entry_point, [t.args for t in task.tests])
        limits[task.id] = time_limits([r.elapsed_ms for r in runs])
        jobs.append((task, f"{task.id}/reference", "reference", task.reference))
        for i, mutant in enumerate(mutants(task.reference, kind="code")):
            jobs.append((task, f"{task.id}/m{i:03d}", mutant.error_type, mutant.source))

    def run(job: tuple[CodeTask, str, str, str]) -> CodeGrade:
        task, _, _, source = job
        return _grade(task, source, sandbox, limits[task.id])

    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        grades = list(pool.map(run, jobs))

    rows: list[dict[str, object]] = []
    for name, select in CHECKERS.items():
        for (task, item, subject, _), grade in zip(jobs, grades, strict=True):
            chosen = select(task.id, task.tests)
            passed = all(grade.outcomes[i].status == "passed" for i in chosen)
            truth = grade.ground_truth == "correct"
            confidence = (len(chosen) + 1) / (len(chosen) + 2) if passed else 1.0
            rows.append(
                {
                    "model": name,
                    "benchmark": BENCHMARK,
                    "item": item,
                    "subject": subject,
                    "correct": int(passed == truth),
                    "confidence": round(confidence, 6),
                }
            )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    with OUT.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write(text.getvalue().encode("utf-8"))  # mtime 0: byte-identical reruns
    incorrect = sum(g.ground_truth == "incorrect" for g in grades)
    print(
        f"{len(jobs)} answers ({incorrect} incorrect by the full hidden suite) x "
        f"{len(CHECKERS)} checkers -> {OUT.relative_to(ROOT)}; isolation "
        f"{sandbox.isolation.value}; vcost {__version__}; "
        f"{datetime.now(UTC).date().isoformat()}; {time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main()
