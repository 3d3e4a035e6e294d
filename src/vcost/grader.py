"""Grade answers against a task bank, in the sandbox, in parallel.

Ground truth is fixed here, before any verification: a code answer is correct iff it passes
every hidden test; a data answer iff the number its code computes equals the task's answer
under the task's rounding. Per-test time limits are scaled from the reference solution's own
time in the same sandbox. Answers are read from JSONL or CSV with the fields
``answer_id, task_id, code`` and optionally ``model_id`` and ``reported`` (the number a data
answer states).
"""

from __future__ import annotations

import contextlib
import csv
import functools
import hashlib
import io
import json
import os
import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vcost._files import read_utf8
from vcost.errors import InputError
from vcost.executor import Executor, LocalExecutor
from vcost.grading import (
    _ANSWER_FAULTS,
    CodeGrade,
    CodeJob,
    DataGrade,
    grade_code,
    grade_data,
    grade_outcome,
    time_limits,
    ungradable,
)
from vcost.jsonl_log import json_objects
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, DataTask, Task

__all__ = [
    "Answer",
    "AnswerGrade",
    "cached_reference_limits",
    "check_data_reference",
    "check_task_ids",
    "default_cache_dir",
    "grade_answers",
    "read_answers",
    "reference_limits",
]

_FIELDS = ("answer_id", "task_id", "code")


@dataclass(frozen=True)
class Answer:
    """One answer to grade (``line``: where it starts in the file it was read from)."""

    answer_id: str
    task_id: str
    code: str
    model_id: str = ""
    reported: float | None = None
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class AnswerGrade:
    """The grade of one answer: counts for code, the computed number for data (and the
    number the answer states, ``reported``, when it gives one: a data answer is correct only
    if that number is right too)."""

    answer_id: str
    task_id: str
    model_id: str
    kind: str
    ground_truth: str
    passed: int
    failed: int
    timeouts: int
    total: int
    failed_tags: tuple[str, ...]
    value: float | None = None
    expected: float | None = None
    status: str = "ok"
    error: str | None = None
    reruns: tuple[int, ...] = ()
    reported: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        body = asdict(self)
        body["failed_tags"] = list(self.failed_tags)
        body["reruns"] = list(self.reruns)
        return body


def _answer(row: Mapping[str, Any], source: Path, line: int) -> Answer:
    for name in _FIELDS:
        if not isinstance(row.get(name), str) or not row[name].strip():
            raise InputError(
                "missing or empty value",
                source=source,
                line=line,
                field=name,
                hint="every answer needs answer_id, task_id and code",
            )
    reported = row.get("reported")
    if reported in (None, ""):
        value = None
    else:
        try:
            value = float(reported)
        except (TypeError, ValueError):
            raise InputError(
                f"not a number: {reported!r}", source=source, line=line, field="reported"
            ) from None
    return Answer(
        str(row["answer_id"]),
        str(row["task_id"]),
        str(row["code"]),
        str(row.get("model_id") or ""),
        value,
        line,
    )


def read_answers(path: str | Path) -> list[Answer]:
    """Answers from a ``.jsonl`` or ``.csv`` file; errors name the file, line and field."""
    source = Path(path)
    answers: list[Answer] = []
    if source.suffix == ".csv":
        reader = csv.DictReader(io.StringIO(read_utf8(source), newline=""))
        end = 1  # the header's line: a record starts on the line after the last one's end
        for row in reader:
            answers.append(_answer(row, source, end + 1))
            end = reader.line_num
    else:
        for number, row in json_objects(source, not_object="each line must be a JSON object"):
            answers.append(_answer(row, source, number))
    if not answers:
        raise InputError(
            "no answers in the file", source=source, hint="one answer a line (JSONL) or row (CSV)"
        )
    first: dict[str, int] = {}
    for a in answers:
        if a.answer_id in first:
            raise InputError(
                f"duplicate answer_id '{a.answer_id}' (first on line {first[a.answer_id]})",
                source=source,
                line=a.line,
                field="answer_id",
            )
        first[a.answer_id] = a.line
    return answers


def check_task_ids(
    answers: Sequence[Answer], tasks: Iterable[Task], source: Path | None = None
) -> None:
    """Every answer names a task of the bank; else an error naming the answer (and, given the
    answers' ``source`` file, the file and line)."""
    known = {t.id for t in tasks}
    for a in answers:
        if a.task_id not in known:
            raise InputError(
                f"answer '{a.answer_id}' names unknown task '{a.task_id}'"
                + ("" if known else " (the bank holds no task at all)"),
                source=source,
                line=a.line or None,
                field="task_id",
                hint="grade against the bank it was written for",
            )


_REFERENCE_SECONDS = 10.0  # a reference's own run: the ceiling of the scaled limits


def default_cache_dir() -> Path:
    """Where `vcost grade` keeps reference timings: ``$VCOST_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/vcost`` (``~/.cache/vcost``)."""
    if os.environ.get("VCOST_CACHE_DIR"):
        return Path(os.environ["VCOST_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vcost"


def _cache_key(task: Task, sandbox: Sandbox) -> str:
    """The task's content (code: reference, tests, tolerance, entry point; data: reference,
    data and answer), the sandbox and the machine."""
    if isinstance(task, CodeTask):
        content: tuple[str, ...] = (
            task.reference,
            json.dumps([t.to_json() for t in task.tests], sort_keys=True),
            repr(task.float_tolerance),
            task.entry_point,
        )
    else:
        content = (
            "data",
            task.reference,
            hashlib.sha256(task.csv).hexdigest(),
            repr(task.answer),
            str(task.decimals),
        )
    digest = hashlib.sha256()
    for part in (
        *content,
        str(sandbox.isolation),
        repr(sandbox.limits),
        platform.node(),
        str(os.cpu_count()),
    ):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


def _cached_limits(task: Task, sandbox: Sandbox, cache: Path | None) -> list[float] | None:
    """The limits kept for ``task`` (a data task's are ``[]``: its reference was checked)."""
    if cache is None:
        return None
    path = cache / "reference-limits" / f"{_cache_key(task, sandbox)}.json"
    tests = len(task.tests) if isinstance(task, CodeTask) else 0
    try:
        limits = json.loads(path.read_text(encoding="utf-8"))
        if (
            isinstance(limits, list)
            and len(limits) == tests
            and all(isinstance(x, int | float) and 0 < x < 3600 for x in limits)
        ):
            return [float(x) for x in limits]
    except (OSError, ValueError):
        pass
    return None


def _store_limits(task: Task, sandbox: Sandbox, cache: Path | None, limits: list[float]) -> None:
    if cache is None:
        return
    path = cache / "reference-limits" / f"{_cache_key(task, sandbox)}.json"
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(limits), encoding="utf-8")
        partial.replace(path)


def cached_reference_limits(task: CodeTask, sandbox: Sandbox, cache: Path | None) -> list[float]:
    """:func:`reference_limits`, kept in ``cache`` by the task's content hash (and the
    sandbox's and machine's): a later run of the same bank skips the reference pass. Only a
    reference that passed its own tests is cached."""
    found = _cached_limits(task, sandbox, cache)
    if found is not None:
        return found
    limits = reference_limits(task, sandbox)
    _store_limits(task, sandbox, cache, limits)
    return limits


def reference_limits(task: CodeTask, sandbox: Sandbox) -> list[float]:
    """Per-test time limits for ``task``, scaled from its reference's own run in ``sandbox``.

    The same run checks the reference against its own tests: a bank whose reference fails
    one is refused (InputError naming the task's tests.json), since it would grade answers
    against wrong expected values.
    """
    tests = [t.to_json() for t in task.tests]
    runs = sandbox.call(
        task.reference,
        task.entry_point,
        [t.args for t in task.tests],
        call_seconds=_REFERENCE_SECONDS,
    )
    for index, (test, run) in enumerate(zip(tests, runs, strict=True)):
        outcome = grade_outcome(index, test, run, task.float_tolerance)
        if outcome.status != "passed":
            raise InputError(
                f"task {task.id}: the reference fails its own test {index} "
                f"({outcome.status}: {outcome.detail})",
                source=task.path / "tests.json",
                hint="fix the task (`vcost tasks check BANK` lists every problem); "
                "answers graded against it would get wrong ground truth",
            )
    return time_limits([r.elapsed_ms for r in runs])


def check_data_reference(task: DataTask, sandbox: Sandbox) -> list[float]:
    """Run a data task's reference script in ``sandbox``: it must give the task's answer
    (both rounded to the task's decimals), else the bank is refused (InputError naming the
    task's task.toml), since answers would be graded against a wrong number. Returns ``[]``
    (a data script's time limit is the sandbox's)."""
    g = grade_data(
        task.reference, csv=task.csv, expected=task.answer, decimals=task.decimals, sandbox=sandbox
    )
    if not g.correct:
        got = (g.error or g.status) if g.value is None else f"{g.value:.{task.decimals}f}"
        raise InputError(
            f"task {task.id}: the reference script gives {got}, task.toml's answer is "
            f"{task.answer:g}",
            source=task.path / "task.toml",
            hint="fix the task (`vcost tasks check BANK` lists every problem); "
            "answers graded against it would get wrong ground truth",
        )
    return []


def _reference_pass(task: Task, sandbox: Sandbox) -> list[float]:
    """A task's reference run once before its answers: limits for code, a check for data."""
    if isinstance(task, CodeTask):
        return reference_limits(task, sandbox)
    assert isinstance(task, DataTask)
    return check_data_reference(task, sandbox)


def _data_grade(answer: Answer, task_id: str, g: DataGrade) -> AnswerGrade:
    """Correct iff the code computes the answer and the number the answer states, if any,
    is that number too (as the labeller of generated answers decides)."""
    correct = g.correct and g.reported_matches is not False
    error = g.error
    if g.correct and not correct:
        error = f"the code computes {g.value:.{g.decimals}f} but the answer states {g.reported:g}"
    return AnswerGrade(
        answer.answer_id,
        task_id,
        answer.model_id,
        "data",
        "correct" if correct else "incorrect",
        int(correct),
        int(not correct),
        int(g.status == "timeout"),
        1,
        (),
        g.value,
        g.expected,
        g.status,
        error,
        (0,) if g.rerun else (),
        g.reported,
    )


def _code_grade(answer: Answer, task_id: str, c: CodeGrade) -> AnswerGrade:
    """``error`` says why a code answer failed: its first failing test and what happened."""
    first = next((o for o in c.outcomes if o.status != "passed"), None)
    error = None if first is None else f"test {first.index} {first.status}: {first.detail}"
    return AnswerGrade(
        answer.answer_id,
        task_id,
        answer.model_id,
        "code",
        c.ground_truth,
        c.passed,
        c.failed,
        c.timeouts,
        c.total,
        c.failed_tags,
        error=error,
        reruns=c.reruns,
    )


@dataclass(frozen=True)
class _Job:
    """One answer to grade, with what its task contributes (picklable, for any executor).

    ``code``: the code job with its time limits; ``data``: the task's CSV, answer, decimals."""

    answer: Answer
    code: CodeJob | None = None
    data: tuple[bytes, float, int] | None = None


def _grade_job(job: _Job, sandbox: Sandbox) -> AnswerGrade:
    """Grade one answer (on whichever worker runs it; ``sandbox`` is that process's own)."""
    answer = job.answer
    if job.code is not None:
        c = job.code
        try:
            code_grade = grade_code(
                answer.code,
                c.entry_point,
                c.tests,
                sandbox=sandbox,
                float_tolerance=c.float_tolerance,
                call_seconds=c.call_seconds,
            )
        except _ANSWER_FAULTS as error:  # one answer never ends a grading run
            code_grade = ungradable(c.tests, error)
        return _code_grade(answer, answer.task_id, code_grade)
    assert job.data is not None
    csv_bytes, expected, decimals = job.data
    try:
        data_grade = grade_data(
            answer.code,
            csv=csv_bytes,
            expected=expected,
            decimals=decimals,
            sandbox=sandbox,
            reported=answer.reported,
        )
    except _ANSWER_FAULTS as error:  # one answer never ends a grading run
        detail = f"the grader could not compare this answer's result: {error!r:.200}"
        data_grade = DataGrade(None, expected, decimals, False, "grader-error", (), detail)
    return _data_grade(answer, answer.task_id, data_grade)


def grade_answers(
    tasks: Iterable[Task],
    answers: Sequence[Answer],
    *,
    sandbox: Sandbox,
    workers: int | None = None,
    progress: Callable[[AnswerGrade], None] | None = None,
    cache: Path | None = None,
    executor: Executor | None = None,
) -> list[AnswerGrade]:
    """Grade every answer against its task, ``workers`` at a time (default: the cores).

    ``cache``: a folder for the references' time limits by content hash
    (:func:`cached_reference_limits`; `vcost grade` uses :func:`default_cache_dir`).
    ``executor``: where the references and answers run (:mod:`vcost.executor`; default a
    local pool of ``workers`` threads sharing ``sandbox``'s warm sandboxes). On a cluster each
    worker process grades in its own sandbox of ``sandbox``'s isolation and limits; the
    grades, their order and ``progress`` are the same as locally. ``progress`` is called in
    the calling thread as each grade arrives.
    """
    by_id = {t.id: t for t in tasks}
    check_task_ids(answers, by_id.values())
    with contextlib.ExitStack() as stack:
        if executor is None:
            executor = stack.enter_context(LocalExecutor(workers))
        return _grade_on(executor, by_id, answers, sandbox, progress, cache)


def _grade_on(
    executor: Executor,
    by_id: Mapping[str, Task],
    answers: Sequence[Answer],
    sandbox: Sandbox,
    progress: Callable[[AnswerGrade], None] | None,
    cache: Path | None,
) -> list[AnswerGrade]:
    # Each task's reference first (code: its time limits; data: it must give the answer;
    # cached ones are read here, the others run as jobs and are cached here), then every
    # answer as one job.
    needed = list({a.task_id: by_id[a.task_id] for a in answers}.values())
    limits: dict[str, list[float]] = {}
    missing: list[Task] = []
    for task in needed:
        found = _cached_limits(task, sandbox, cache)
        if found is None:
            missing.append(task)
        else:
            limits[task.id] = found
    measured = executor.run(functools.partial(_reference_pass, sandbox=sandbox), missing)
    for task, values in zip(missing, measured, strict=True):
        _store_limits(task, sandbox, cache, values)
        limits[task.id] = values
    jobs: list[_Job] = []
    for a in answers:
        t = by_id[a.task_id]
        if isinstance(t, CodeTask):
            tests = [x.to_json() for x in t.tests]
            jobs.append(
                _Job(a, code=CodeJob(a.code, t.entry_point, tests, t.float_tolerance, limits[t.id]))
            )
        else:
            assert isinstance(t, DataTask)
            jobs.append(_Job(a, data=(t.csv, t.answer, t.decimals)))

    def arrived(_index: int, grade: AnswerGrade) -> None:
        if progress is not None:
            progress(grade)

    return executor.run(functools.partial(_grade_job, sandbox=sandbox), jobs, progress=arrived)
