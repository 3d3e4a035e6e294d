"""``vcost answers generate``: each model answers each task n times; every answer is graded.

Every answer is one line of an append-only JSONL log (:class:`~vcost.jsonl_log.JsonlLog`),
written as soon as it is graded, keyed ``model/task/repeat``. A call that fails (after the
client's retries) is written too, with its error, and called again on the next run; a run that
stops for any reason resumes where it stopped, and nothing collected is lost. Replaying a run
from its cassette with the models' servers gone gives the same log, line for line (apart from
``from_cassette``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vcost.answers._extract import Extraction, extract_code, extract_number
from vcost.answers._label import Labeller
from vcost.answers._prompt import PROMPT_VERSION, answer_messages
from vcost.errors import InputError
from vcost.jsonl_log import JsonlLog
from vcost.models import (
    OUTPUT_FIELDS,
    BatchRunner,
    BudgetStopError,
    Completion,
    CostMeter,
    CostProjection,
    MeteredClient,
    ModelClient,
    ModelConfig,
    ModelError,
    Request,
    check_projection,
    complete_many,
    config_fingerprint,
    project_cost,
    recorded_in,
)
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, Task

__all__ = ["AnswerLog", "GenerateResult", "answer_key", "answer_record", "generate_answers"]

Progress = Callable[[int, int], None]
_VERSION = 1


def answer_key(model: str, task_id: str, repeat: int) -> str:
    """The log key (and answer id) of one answer: ``model/task/repeat``."""
    return f"{model}/{task_id}/{repeat}"


def _key_of(record: dict[str, Any]) -> str:
    if record.get("v") != _VERSION or record.get("status") not in ("ok", "error"):
        raise ValueError("not an answer record")
    key = record["answer_id"]
    if not isinstance(key, str):
        raise TypeError("answer_id is not a string")
    return key


class AnswerLog(JsonlLog):
    """The answers log: one record per (model, task, repeat); failed calls have status error."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(
            path,
            key_of=_key_of,
            kind="answers log",
            hint="the answers log is append-only JSONL written by `vcost answers generate`",
        )

    def answers(self) -> list[dict[str, Any]]:
        """The graded answers (failed calls left out), in the order first written."""
        return [r for r in self if r["status"] == "ok"]

    def failures(self) -> list[dict[str, Any]]:
        return [r for r in self if r["status"] == "error"]


@dataclass
class GenerateResult:
    """What one run did: answers written now, already there, calls that failed, calls not
    started because the run's spend passed its cap (``stopped``), and this run's spend."""

    written: int = 0
    skipped: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    stopped: int = 0
    cost_usd: float = 0.0


def answer_record(
    task: Task,
    model: str,
    family: str,
    repeat: int,
    completion: Completion,
    labeller: Labeller,
    *,
    prompt: str = PROMPT_VERSION,
    code: str | None = None,
) -> dict[str, Any]:
    """One graded answer as the answers log stores it (also for answers made elsewhere).

    ``code``, when given, is graded exactly as it is (extraction ``as-is``): a program another
    harness already assembled (``vcost answers import``), never trimmed or re-extracted."""
    code_task = isinstance(task, CodeTask)
    entry_point = task.entry_point if isinstance(task, CodeTask) else None
    if code is not None:
        extraction = Extraction(code, "as-is" if code.strip() else "none")
    else:
        extraction = extract_code(completion.text, entry_point=entry_point)
    reported = None if code_task else extract_number(completion.text)
    label = labeller.label(task, extraction.code, reported=reported)
    return {
        "v": _VERSION,
        "status": "ok",
        "answer_id": answer_key(model, task.id, repeat),
        "task_id": task.id,
        "kind": "code" if code_task else "data",
        "model": model,
        "family": family,
        "repeat": repeat,
        "prompt": prompt,
        "request_hash": completion.request_hash,
        "text": completion.text,
        "finish_reason": completion.finish_reason,
        "extraction": extraction.how,
        "code": extraction.code,
        "reported": reported,
        "ground_truth": label.ground_truth,
        "passed": label.passed,
        "total": label.total,
        "failed_tags": list(label.failed_tags),
        "value": label.value,
        "error_type": label.error_type,
        "error_level": label.error_level,
        "reason": label.reason,
        "config": completion.config,
        "usage": asdict(completion.usage),
        "latency_ms": completion.latency_ms,
        "cost_usd": completion.cost_usd,
        "created_at": completion.created_at.isoformat(),
    }


def _refuse_changed_configs(log: AnswerLog, models: Mapping[str, ModelConfig]) -> None:
    """Answer ids are ``alias/task/repeat``: one answers log holds one configuration per
    alias, so answers of a changed id, snapshot, temperature ... are refused, never mixed."""
    for record in log:
        config = models.get(str(record.get("model")))
        stored = record.get("config")
        if record.get("status") != "ok" or config is None or not isinstance(stored, dict):
            continue
        if config_fingerprint(stored) != config.fingerprint:
            changed = [
                f"{name} {stored.get(name)!r} -> {config.record().get(name)!r}"
                for name in OUTPUT_FIELDS
                if stored.get(name) != config.record().get(name)
            ]
            raise InputError(
                f"the answers log holds answers of model {config.name!r} under another "
                f"configuration ({', '.join(changed)})",
                source=log.path,
                field=f"models.{config.name}",
                hint="give the new configuration its own name, or write to a new --out folder",
            )


def _error_record(
    task: Task, config: ModelConfig, repeat: int, error: ModelError
) -> dict[str, Any]:
    return {
        "v": _VERSION,
        "status": "error",
        "answer_id": answer_key(config.name, task.id, repeat),
        "task_id": task.id,
        "model": config.name,
        "repeat": repeat,
        "error_kind": type(error).__name__,
        "error": str(error),
    }


def generate_answers(
    tasks: Sequence[Task],
    models: Mapping[str, ModelConfig],
    *,
    client: ModelClient,
    log: AnswerLog,
    sandbox: Sandbox,
    n: int = 5,
    concurrency: int | None = None,
    grade_workers: int = 2,
    progress: Progress | None = None,
    meter: CostMeter | None = None,
    on_projection: Callable[[CostProjection], None] | None = None,
    batch: BatchRunner | None = None,
) -> GenerateResult:
    """Each model answers each task ``n`` times; each answer is graded and logged when done.

    Answers already in ``log`` are skipped (a rerun resumes); failed calls are retried.
    ``progress(done, total)`` counts answers handled in this run. Before any call the projected
    cost goes to ``on_projection``; with a ``meter`` every call's cost is counted on it, a
    projection past its ``max_usd`` raises :class:`~vcost.models.CostLimitError`, and once
    the spend passes it the remaining calls are not made (``result.stopped``; not logged, so a
    rerun resumes them). See vcost.models._cost. With ``batch`` the calls go through the
    providers' batch APIs first (vcost.models._batch), projected at the batch price.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"n must be a positive integer, not {n!r}", field="n")
    if not tasks or not models:
        raise InputError("nothing to do: no tasks or no models", hint="check the bank and models")
    result = GenerateResult()
    todo: list[tuple[Task, ModelConfig, int]] = []
    _refuse_changed_configs(log, models)
    for config in models.values():
        for task in tasks:
            for repeat in range(n):
                done = log.get(answer_key(config.name, task.id, repeat))
                if done is not None and done["status"] == "ok":
                    result.skipped += 1
                else:
                    todo.append((task, config, repeat))
    total = len(todo)
    requests = [Request(answer_messages(t), c, r) for t, c, r in todo]
    if todo and (meter is not None or on_projection is not None):
        projection = project_cost(
            requests,
            recorded=recorded_in(client) if batch is None else batch.cassette.__contains__,
            price_factor=1.0 if batch is None else batch.price_factor,
        )
        if on_projection is not None:
            on_projection(projection)
        check_projection(projection, None if meter is None else meter.max_usd)
    if batch is not None:  # answered through provider batches, then replayed
        batch.run(requests, meter=meter)
        client = batch.client(meter)
    elif meter is not None:
        client = MeteredClient(client, meter)
    if progress is not None:
        progress(0, total)
    if not todo:
        return result
    labeller = Labeller(sandbox)
    lock = threading.Lock()
    handled = 0

    def handle(i: int, outcome: Completion | ModelError) -> None:
        nonlocal handled
        task, config, repeat = todo[i]
        if isinstance(outcome, BudgetStopError):
            with lock:
                result.stopped += 1
            return
        if isinstance(outcome, ModelError):
            log.append(_error_record(task, config, repeat, outcome))
        else:
            family = config.family or config.name
            log.append(answer_record(task, config.name, family, repeat, outcome, labeller))
        with lock:
            handled += 1
            if isinstance(outcome, ModelError):
                result.failed += 1
                result.errors.append(f"{answer_key(config.name, task.id, repeat)}: {outcome}")
            else:
                result.written += 1
            if progress is not None:
                progress(handled, total)

    with ThreadPoolExecutor(max_workers=grade_workers) as graders:
        futures: list[Future[None]] = []
        complete_many(
            client,
            requests,
            concurrency=concurrency,
            on_done=lambda i, out: futures.append(graders.submit(handle, i, out)),
        )
        for future in futures:
            future.result()
    if meter is not None:
        result.cost_usd = meter.spent_usd
    return result
