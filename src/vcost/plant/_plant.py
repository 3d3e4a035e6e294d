"""Plant errors across a task or a bank, and write found tests back (only when asked)."""

from __future__ import annotations

import functools
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

from vcost.errors import InputError
from vcost.executor import Executor
from vcost.plant._classify import TaskContext, classify, prepare
from vcost.plant._model import Candidate, Mutant, PlantReport, TaskSummary
from vcost.plant._mutants import mutants
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, Task, TestCase, load_bank, load_task

__all__ = ["add_found_tests", "plant", "plant_bank"]

Progress = Callable[[int, int], None]
BankProgress = Callable[[str, int, int], None]


def _workers(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"workers must be a positive integer, not {value!r}", field="workers")
    return value


def _classify_job(job: tuple[Task, Mutant, bool, TaskContext], sandbox: Sandbox) -> Candidate:
    """One mutant classified (on whichever worker runs it; ``sandbox`` is that process's)."""
    task, mutant, distinguish, context = job
    return classify(task, mutant, sandbox=sandbox, distinguish=distinguish, context=context)


def plant(
    task: Task,
    *,
    sandbox: Sandbox,
    distinguish: bool = True,
    progress: Progress | None = None,
    source: str | None = None,
    workers: int = 1,
    max_examples: int = 300,
    executor: Executor | None = None,
) -> list[Candidate]:
    """Every mutant of a task's reference (or of ``source``, another answer), classified.

    Each mutant runs in one sandbox call (code: all hidden tests and both worked examples;
    data: the script on the task's CSV). ``progress(done, total)`` is called after each
    mutant. ``workers`` > 1 classifies that many mutants at once (each in its own sandbox
    run). Candidates come back in the order of :func:`vcost.plant.mutants`.

    ``executor`` (:mod:`vcost.executor`): classify the mutants there instead, each worker in
    its own sandbox of ``sandbox``'s settings. The reference runs here first (its tests, and
    the differential search's inputs when ``distinguish``), so the workers share its results.
    """
    count = _workers(workers)
    kind: Literal["code", "data"] = "code" if isinstance(task, CodeTask) else "data"
    found = mutants(task.reference if source is None else source, kind=kind)
    context: TaskContext = prepare(task, sandbox=sandbox, max_examples=max_examples)
    total = len(found)
    if progress is not None:
        progress(0, total)
    if executor is not None:
        if distinguish and context.search is not None:
            context.search.prepare()
        done = 0

        def arrived(_index: int, _candidate: Candidate) -> None:
            nonlocal done
            done += 1
            if progress is not None:
                progress(done, total)

        return executor.run(
            functools.partial(_classify_job, sandbox=sandbox),
            [(task, m, distinguish, context) for m in found],
            progress=arrived,
        )
    results: list[Candidate] = []
    if count == 1:
        for i, mutant in enumerate(found, start=1):
            results.append(
                classify(task, mutant, sandbox=sandbox, distinguish=distinguish, context=context)
            )
            if progress is not None:
                progress(i, total)
        return results
    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = [
            pool.submit(
                classify, task, m, sandbox=sandbox, distinguish=distinguish, context=context
            )
            for m in found
        ]
        for i, future in enumerate(futures, start=1):
            results.append(future.result())
            if progress is not None:
                progress(i, total)
    return results


def plant_bank(
    bank_path: str | Path,
    *,
    task_ids: Iterable[str] | None = None,
    sandbox: Sandbox,
    distinguish: bool = True,
    kinds: Sequence[str] = ("code", "data"),
    progress: BankProgress | None = None,
    workers: int = 1,
    max_examples: int = 300,
    executor: Executor | None = None,
) -> PlantReport:
    """Plant errors in every task of a bank (or the ``task_ids`` given) and count them.

    ``progress(task_id, done, total)`` reports mutants classified per task. ``executor``:
    where the mutants are classified (:func:`plant`).
    """
    root = Path(bank_path)
    if not root.is_dir():
        raise InputError("the bank is not a folder", source=root)
    tasks = load_bank(root)
    if task_ids is not None:
        wanted = list(dict.fromkeys(task_ids))
        known = {t.id for t in tasks}
        missing = [t for t in wanted if t not in known]
        if missing:
            raise InputError(
                f"no task {', '.join(repr(m) for m in missing)} in the bank",
                source=root,
                hint="`vcost tasks list` shows the task ids",
            )
        tasks = [t for t in tasks if t.id in wanted]
    tasks = [t for t in tasks if t.kind in kinds]
    start = time.monotonic()
    summaries: list[TaskSummary] = []
    candidates: list[Candidate] = []
    for task in tasks:

        def report(done: int, total: int, task_id: str = task.id) -> None:
            if progress is not None:
                progress(task_id, done, total)

        planted = plant(
            task,
            sandbox=sandbox,
            distinguish=distinguish,
            progress=report,
            workers=workers,
            max_examples=max_examples,
            executor=executor,
        )
        kind: Literal["code", "data"] = "code" if isinstance(task, CodeTask) else "data"
        summaries.append(TaskSummary(task.id, kind, task.checklist, len(planted)))
        candidates.extend(planted)
    return PlantReport(tuple(summaries), tuple(candidates), seconds=time.monotonic() - start)


def add_found_tests(task: CodeTask, tests: Iterable[TestCase]) -> int:
    """Append distinguishing inputs to the task's tests.json; returns how many were added.

    Tests whose arguments are already in the file are skipped (reruns add nothing). The
    file keeps its layout: when it is exactly ``json.dumps(..., indent=N)`` output it is
    rewritten that way, otherwise each new test goes on its own line before the closing
    ``]``. The new file is checked to load before it atomically replaces the old one, so
    ``vcost tasks check`` keeps accepting the task (a found test carries ``typical`` or an
    ``edge:<item>`` tag of the task's checklist, and the reference's own output).
    """
    if not isinstance(task, CodeTask):
        raise InputError("found tests belong to code tasks only", field="task")
    path = task.path / "tests.json"
    text = path.read_text(encoding="utf-8")
    raw = json.loads(text)
    if not isinstance(raw, list):
        raise InputError("tests.json must hold a JSON list", source=path)
    seen = {json.dumps(t.get("args"), sort_keys=True) for t in raw if isinstance(t, dict)}
    new: list[dict[str, object]] = []
    for test in tests:
        tags = set(test.tags)
        allowed = {"typical"} | {f"edge:{item}" for item in task.checklist}
        if not tags or not tags <= allowed:
            raise InputError(
                f"a found test is tagged {sorted(tags)}; only 'typical' and the task's "
                "edge:<item> tags keep tests.json valid",
                source=path,
            )
        key = json.dumps(test.args, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        new.append(test.to_json())
    if not new:
        return 0
    updated = _append(text, raw, new)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=".tests-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(updated)
        check = json.loads(Path(name).read_text(encoding="utf-8"))
        if len(check) != len(raw) + len(new):
            raise InputError("writing the found tests went wrong; tests.json was kept", source=path)
        os.chmod(name, path.stat().st_mode & 0o777)
        os.replace(name, path)
    finally:
        if os.path.exists(name):
            os.unlink(name)
    load_task(task.path)  # the task still loads (raises if not)
    return len(new)


def _append(text: str, raw: list[object], new: list[dict[str, object]]) -> str:
    for indent in (1, 2, 4):
        if json.dumps(raw, indent=indent) == text.rstrip("\n"):
            return json.dumps([*raw, *new], indent=indent) + "\n"
    end = text.rstrip().rfind("]")
    if end < 0:
        raise InputError("tests.json does not end with ']'")
    body = text[:end].rstrip()
    lines = ",\n".join("  " + json.dumps(t) for t in new)
    separator = ",\n" if raw else "\n"
    return body + separator + lines + "\n" + text[end:].lstrip("\n").rstrip() + "\n"
