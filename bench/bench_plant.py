"""Benchmark: plant errors across the whole bank; classification throughput against a baseline.

1. The full run: :func:`vcost.plant.plant_bank` on every task of the bank (code and data), with
   differential testing. Prints the counts by error type and level, the coverage by error type
   (tasks with an obvious and a subtle candidate / tasks some operator of the type applies to /
   all tasks), per task whether each error type has an obvious and a subtle candidate, and the
   mutants classified per second.
2. The comparison, in the same run, on the same sample of code mutants (every k-th mutant of
   every code task), differential testing off so only classification is timed:

   - vcost: ``classify`` — each mutant graded as one answer in a warm bubblewrap sandbox (all
     tests and both worked examples in one ``sandbox.call``: a process per call);
   - baseline "plain unisolated fork per mutant": the same rules, but each mutant run in one
     ``os.fork()`` of this process with no isolation, every test called in that process with
     a timer (what a mutation-testing loop without a sandbox does).

   Both must give the same level for every mutant; the ratio of their rates is reported.

Appends a JSON line to bench/results/plant.jsonl.

    python bench/bench_plant.py [--bank src/vcost/bank] [--workers 2] [--sample 80]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import signal
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from vcost import __version__
from vcost.cli.plant_cmd import summary_tables
from vcost.grading import CodeGrade, TestOutcome, grade_outcome
from vcost.plant import (
    Mutant,
    TaskContext,
    classify,
    mutants,
    plant_bank,
    prepare,
)
from vcost.plant._classify import _check_target, _target, code_level
from vcost.sandbox import CallResult, Sandbox
from vcost.sandbox._runner import class_name
from vcost.tasks import CodeTask, load_bank

ROOT = Path(__file__).resolve().parents[1]


class _Alarm(BaseException):
    """A test of the unisolated baseline ran out of time."""


def _alarm(signum: int, frame: object) -> None:
    raise _Alarm


def _run_in_child(source: str, entry_point: str, ctx: TaskContext) -> list[dict[str, Any]]:
    """In the forked child: define the mutant, call it on every test with a timer each."""
    signal.signal(signal.SIGALRM, _alarm)
    results: list[dict[str, Any]] = []
    signal.setitimer(signal.ITIMER_REAL, sum(ctx.limits))
    try:
        namespace: dict[str, Any] = {"__name__": "answer"}
        exec(compile(source, "answer.py", "exec"), namespace)
        function = namespace[entry_point]
    except BaseException as exc:
        signal.setitimer(signal.ITIMER_REAL, 0)
        kind = type(exc)
        error = {"status": "raised", "error": f"{kind.__name__}: {exc}", "mro": []}
        return [error for _ in ctx.tests]
    signal.setitimer(signal.ITIMER_REAL, 0)
    for test, limit in zip(ctx.tests, ctx.limits, strict=True):
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            value = function(*copy.deepcopy(test["args"]))
            signal.setitimer(signal.ITIMER_REAL, 0)
            results.append({"status": "ok", "value": json.loads(json.dumps(value))})
        except _Alarm:
            results.append({"status": "timeout"})
        except BaseException as exc:
            signal.setitimer(signal.ITIMER_REAL, 0)
            names = [class_name(c) for c in type(exc).__mro__ if c is not object]
            results.append({"status": "raised", "error": f"{type(exc).__name__}", "mro": names})
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return results


def fork_baseline(ctx: TaskContext, mutant: Mutant) -> str:
    """The level by the same rules, from a plain unisolated loop: one fork per mutant (no
    sandbox, no namespaces), every test called in that process with a timer, the results sent
    back as JSON on a pipe."""
    task = ctx.task
    assert isinstance(task, CodeTask)
    try:
        compile(mutant.source, "answer.py", "exec")
    except (SyntaxError, ValueError):
        return "discarded"
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.close(read_fd)
            data = json.dumps(_run_in_child(mutant.source, task.entry_point, ctx)).encode()
            view = memoryview(data)
            while view:
                view = view[os.write(write_fd, view) :]
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks = []
    while chunk := os.read(read_fd, 1 << 16):
        chunks.append(chunk)
    os.close(read_fd)
    os.waitpid(pid, 0)
    try:
        raw = json.loads(b"".join(chunks))
    except ValueError:
        raw = [{"status": "crashed"} for _ in ctx.tests]
    outcomes: list[TestOutcome] = []
    for i, (test, item) in enumerate(zip(ctx.tests, raw, strict=True)):
        status = item["status"]
        result = CallResult(
            status,
            item.get("value"),
            item.get("error", status if status != "ok" else None),
            0.0,
            tuple(item.get("mro", ())),
        )
        outcomes.append(grade_outcome(i, test, result, task.float_tolerance))
    passed = sum(o.status == "passed" for o in outcomes)
    timeouts = sum(o.status == "timeout" for o in outcomes)
    grade = CodeGrade(
        passed=passed,
        failed=len(outcomes) - passed - timeouts,
        timeouts=timeouts,
        total=len(outcomes),
        failed_tags=tuple(sorted({t for o in outcomes if o.status != "passed" for t in o.tags})),
        outcomes=tuple(outcomes),
        ground_truth="correct" if passed == len(outcomes) else "incorrect",
    )
    level, reason, _ = code_level(grade, ctx.tests)
    checked = level != "discarded" or reason.startswith("between-levels")
    if checked and _check_target(task, mutant, _target(task, mutant, grade)) is not None:
        return "discarded"
    return level


def compare(bank: Path, sandbox: Sandbox, sample: int) -> dict[str, Any]:
    tasks = [t for t in load_bank(bank) if isinstance(t, CodeTask)]
    pool: list[tuple[CodeTask, Mutant]] = [
        (t, m) for t in tasks for m in mutants(t.reference, kind="code")
    ]
    step = max(1, len(pool) // sample)
    chosen = pool[::step][:sample]
    contexts = {t.id: prepare(t, sandbox=sandbox) for t in {t.id: t for t, _ in chosen}.values()}
    start = time.perf_counter()
    ours = [
        classify(t, m, sandbox=sandbox, distinguish=False, context=contexts[t.id]).level
        for t, m in chosen
    ]
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    base = [fork_baseline(contexts[t.id], m) for t, m in chosen]
    base_s = time.perf_counter() - start
    tests = sum(len(contexts[t.id].tests) for t, _ in chosen)
    return {
        "mutants": len(chosen),
        "tests_run": tests,
        "vcost_seconds": round(ours_s, 3),
        "baseline_seconds": round(base_s, 3),
        "vcost_mutants_per_s": round(len(chosen) / ours_s, 3),
        "baseline_mutants_per_s": round(len(chosen) / base_s, 3),
        "ratio": round(base_s / ours_s, 2),
        "baseline": "unisolated fork per mutant",
        "levels_agree": ours == base,
        "disagreements": sum(a != b for a, b in zip(ours, base, strict=True)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bank", type=Path, default=ROOT / "src" / "vcost" / "bank")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sample", type=int, default=80, help="code mutants in the comparison")
    parser.add_argument("--out", type=Path, default=None, help="write every candidate here")
    parser.add_argument("--skip-full", action="store_true", help="only the comparison")
    args = parser.parse_args()
    sandbox = Sandbox()
    console = Console(width=120)
    record: dict[str, Any] = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "vcost": __version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "isolation": sandbox.isolation.value,
        "workers": args.workers,
    }
    if not args.skip_full:
        done = {"n": 0}

        def progress(task_id: str, finished: int, total: int) -> None:
            if finished == total:
                done["n"] += total
                console.print(f"  {task_id}: {total} mutants ({done['n']} so far)")

        start = time.perf_counter()
        report = plant_bank(args.bank, sandbox=sandbox, workers=args.workers, progress=progress)
        seconds = time.perf_counter() - start
        for table in summary_tables(report):
            console.print(table)
        code = [
            c
            for c in report.candidates
            if c.error_type in ("boundary", "wrong-condition", "missed-edge-case")
        ]
        record["full"] = {
            "mutants": len(report.candidates),
            "code_mutants": len(code),
            "seconds": round(seconds, 1),
            "mutants_per_s": round(len(report.candidates) / seconds, 3),
            "found_tests": sum(len(c.new_tests) for c in report.candidates),
            "totals": report.totals(),
            "coverage": report.coverage_summary(),
            "discard_reasons": report.reasons(),
        }
        console.print(
            f"full bank: {len(report.candidates)} mutants in {seconds:.0f} s = "
            f"{len(report.candidates) / seconds:.2f} mutants/s ({args.workers} workers, "
            f"differential testing on); {record['full']['found_tests']} inputs found"
        )
        if args.out is not None:
            args.out.write_text(json.dumps(report.to_dict(), indent=2), encoding="utf-8")
    result = compare(args.bank, sandbox, args.sample)
    record["comparison"] = result
    console.print(
        f"classification, same {result['mutants']} code mutants, 1 worker, no differential "
        f"testing: vcost (warm sandbox, a process per call) {result['vcost_mutants_per_s']:.2f} "
        f"mutants/s; baseline (unisolated fork per mutant) "
        f"{result['baseline_mutants_per_s']:.2f} mutants/s; ratio {result['ratio']:.1f}x; "
        f"levels agree: {result['levels_agree']}"
    )
    out = ROOT / "bench" / "results" / "plant.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
