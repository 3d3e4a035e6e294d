"""Benchmark: import all 164 HumanEval problems with the mutation pass; the bench summary.

Imports HumanEval into a temporary bank (``--limit N`` for a seeded sample), with and without
the mutation pass (``--no-baseline`` skips the plain import), and reports per problem the
mutation score (killed / mutants of the canonical solution, from provenance.json), the tests
added, the problems flagged below the minimum test count, the time, and how many of issue 14's
wrong HumanEval variants (tests/tasks/humaneval_variants.py) each bank catches and how many
correct alternatives it accepts. Appends a JSON line to bench/results/humaneval_import.jsonl.

    python bench/bench_humaneval_import.py [--limit N] [--workers 2] [--no-baseline]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vcost import __version__
from vcost.grading import grade_code
from vcost.sandbox import Isolation, Limits, Sandbox
from vcost.tasks import CodeTask, load_task
from vcost.tasks.humaneval import import_humaneval, load_problems, summary

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "tasks"))
from humaneval_variants import RIGHT, WRONG


def verdicts(bank: Path, sandbox: Sandbox) -> dict[str, str]:
    out: dict[str, str] = {}
    for source_id, code in {**WRONG, **RIGHT}.items():
        folder = bank / f"humaneval-{int(source_id.split('/')[1]):03d}"
        if not folder.is_dir():
            continue
        task = load_task(folder)
        assert isinstance(task, CodeTask)
        grade = grade_code(
            code,
            task.entry_point,
            [t.to_json() for t in task.tests],
            sandbox=sandbox,
            float_tolerance=task.float_tolerance,
        )
        out[source_id] = grade.ground_truth
    return out


def build(out: Path, only: list[str] | None, workers: int, mutate: bool) -> tuple[Any, float]:
    import vcost.tasks.humaneval as he

    original = he.convert_problem
    if not mutate:
        he.convert_problem = lambda *a, **k: original(*a, **{**k, "mutate": False})  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        report = import_humaneval(out, only=only, workers=workers, seed=0)
        return report, time.perf_counter() - start
    finally:
        he.convert_problem = original


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--limit", type=int)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args()
    problems = load_problems()
    only = None
    if args.limit:
        import random

        chosen = random.Random("bench").sample([p.task_id for p in problems], args.limit)
        only = sorted({*chosen, *WRONG, *RIGHT})
    work = Path(tempfile.mkdtemp(prefix="vcost-bench-he-"))
    sandbox = Sandbox(Isolation.BUBBLEWRAP, limits=Limits(wall_seconds=120.0))
    row: dict[str, Any] = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "vcost": __version__,
        "machine": platform.node(),
        "load_average": os.getloadavg(),
        "workers": args.workers,
        "problems": len(only) if only else len(problems),
    }
    try:
        for name, mutate in (("mutation", True), ("plain", False)):
            if name == "plain" and args.no_baseline:
                continue
            report, took = build(work / name, only, args.workers, mutate)
            counts = summary(report)
            found = verdicts(work / name, sandbox)
            caught = sum(found.get(k) == "incorrect" for k in WRONG)
            accepted = sum(found.get(k) == "correct" for k in RIGHT)
            scores = [s for s in counts["mutation_scores"].values() if s is not None]
            row[name] = {
                "seconds": round(took, 1),
                "imported": counts["imported"],
                "skipped": counts["skipped"],
                "flagged_below_min_tests": counts["flagged_below_min_tests"],
                "tests_median": counts["tests_median"],
                "wrong_variants_caught": f"{caught}/{len(WRONG)}",
                "correct_alternatives_accepted": f"{accepted}/{len(RIGHT)}",
                "verdicts": found,
                "mutation_score_median": statistics.median(scores) if scores else None,
                "mutation_score_min": min(scores) if scores else None,
                "mutation_scores": counts["mutation_scores"] if mutate else None,
            }
            print(
                f"{name}: {counts['imported']} imported ({counts['skipped']} skipped, "
                f"flagged {counts['flagged_below_min_tests']}) in {took:.0f} s; wrong variants "
                f"caught {caught}/{len(WRONG)}, correct alternatives accepted "
                f"{accepted}/{len(RIGHT)}"
                + (f"; mutation score median {statistics.median(scores):.3f}" if scores else "")
            )
    finally:
        sandbox.close()
        shutil.rmtree(work, ignore_errors=True)
    out = Path(__file__).parent / "results" / "humaneval_import.jsonl"
    out.parent.mkdir(exist_ok=True)
    with out.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
