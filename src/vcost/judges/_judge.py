"""``vcost judge``: AI checkers judge every selected answer k times; each judgment is an episode.

Each checker model judges each answer ``k`` times (repeat 0..k-1, each a separate request so a
cassette holds each), never an answer from its own model family (the ``same-family``
perturbation does exactly that, on purpose). Every judgment is one line of an append-only log
as soon as it is done; a failed call is logged with its error and retried on the next run.

Durability without a disk wait per call (group commit): a worker thread hands its finished
record to one committer thread and goes on to its next call. The committer takes whatever has
queued up, fsyncs the client's cassette (when the client has a ``sync()``: a
:class:`~vcost.models.CassetteClient` made with ``sync_each_call=False`` leaves it to this
step), then appends the records to the judgments log and fsyncs it once. Only then are they
counted (progress, :class:`JudgeResult`): nothing reported as done can be lost, and a judgment
in the log always has its calls in the cassette, even after a power cut.

On an executor (``executor=``, ``vcost judge run --executor dask``) each judgment (its
conversation: model calls, and with ``max_runs`` the sandbox runs) is one job on a cluster
worker. The judgments log and the cassette stay on the submitting machine, written by the same
committer: a job carries the cassette's recordings it may replay (those whose request begins
with its first prompt, so the later turns of a code-running conversation replay too) and
brings back the calls it made; the committer adds those to the cassette, syncs it, then
appends the judgment, exactly as above. A worker that dies takes only calls not yet brought
back (made again when the scheduler re-runs its job); nothing committed is lost. Cost cap: each
job starts from the run's spend when it was submitted, and at most ``concurrency`` jobs are out
at once (docs/executor.md).

The log becomes a verification trace (:func:`judgments_trace`): one check episode per judgment
with verifier kind ``model``. A model's cost unit is output tokens: ``effort`` is the tokens it
spent, ``budget`` its token limit (``max_tokens`` per call); seconds and USD are in the
episode's ``model_call`` events. All protocol statistics then apply unchanged.
"""

from __future__ import annotations

import hashlib
import json
import queue
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from vcost.answers import SelectedAnswer, Selection, render_answer
from vcost.errors import InputError
from vcost.executor import Executor
from vcost.jsonl_log import JsonlLog
from vcost.judges._perturb import PERTURBATIONS, Perturbation, perturb
from vcost.judges._prompt import JUDGE_PROMPT_VERSION, judge_messages, parse_reply, run_blocks
from vcost.models import (
    BatchRunner,
    BudgetStopError,
    Cassette,
    CassetteClient,
    Completion,
    CostMeter,
    CostProjection,
    Messages,
    MeteredClient,
    ModelClient,
    ModelConfig,
    ModelError,
    Request,
    RoutingClient,
    ShippedCassette,
    ShippedCassetteClient,
    canonical_request,
    check_projection,
    config_fingerprint,
    project_cost,
    recorded_in,
)
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, Task

if TYPE_CHECKING:  # pandas and the trace modules: only when a trace is built (see TRACE_MODULES)
    import pandas as pd

    from vcost.trace import Trace

__all__ = [
    "TRACE_MODULES",
    "JudgeResult",
    "JudgmentLog",
    "judge",
    "judgment_key",
    "judgments_trace",
    "write_judgments_trace",
]

#: What building a trace imports (pandas, pyarrow; about half a second): not needed to judge,
#: so ``vcost judge run`` imports them while the calls are in flight.
TRACE_MODULES = ("vcost.trace_io",)

Progress = Callable[[int, int], None]
_VERSION = 1
_LENGTH_STOPS = frozenset({"length", "max_tokens"})
_RUN_OUTPUT_LIMIT = 2000


def judgment_key(
    checker: str, answer_id: str, repeat: int, perturbation: Perturbation = "standard"
) -> str:
    """The log key of one judgment."""
    return f"{checker}/{answer_id}/{repeat}/{perturbation}"


def _fingerprint(record: Mapping[str, Any]) -> str:
    config = record.get("config")
    return config_fingerprint(config) if isinstance(config, dict) else ""


def _key_of(record: dict[str, Any]) -> str:
    """The log's key: the judgment key and the checker's full configuration (its fingerprint),
    so a changed model id, snapshot or temperature under the same alias is judged anew."""
    if record.get("v") != _VERSION or record.get("status") not in ("ok", "error"):
        raise ValueError("not a judgment record")
    key = record["key"]
    if not isinstance(key, str):
        raise TypeError("key is not a string")
    return f"{key}#{_fingerprint(record)}"


class JudgmentLog(JsonlLog):
    """The judgments log: one record per (checker, answer, repeat, perturbation)."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(
            path,
            key_of=_key_of,
            kind="judgments log",
            hint="the judgments log is append-only JSONL written by `vcost judge`",
        )

    def judgments(
        self,
        perturbation: Perturbation | None = None,
        *,
        checkers: Mapping[str, ModelConfig] | None = None,
    ) -> list[dict[str, Any]]:
        """Finished judgments (failed calls left out), optionally of one perturbation and only
        of ``checkers`` as configured now (a record of the same alias under another
        configuration is left out, never mixed in)."""
        wanted = None if checkers is None else {c.name: c.fingerprint for c in checkers.values()}
        return [
            r
            for r in self
            if r["status"] == "ok"
            and perturbation in (None, r["perturbation"])
            and (wanted is None or wanted.get(r["checker"]) == _fingerprint(r))
        ]

    def find(self, config: ModelConfig, key: str) -> dict[str, Any] | None:
        """The record of judgment ``key`` by ``config`` exactly as configured, if any."""
        return self.get(f"{key}#{config.fingerprint}")


@dataclass
class JudgeResult:
    """What one run did."""

    written: int = 0
    skipped: int = 0
    failed: int = 0
    excluded_own_family: int = 0
    errors: list[str] = field(default_factory=list)
    stopped: int = 0
    cost_usd: float = 0.0


_Call = tuple[dict[str, Any], dict[str, Any]]
"""A call made on a worker: its Completion and canonical request, as plain data."""
_Item = tuple[dict[str, Any] | None, str | None, Sequence[_Call]]


@runtime_checkable
class _Syncable(Protocol):
    def sync(self) -> None: ...


class _Committer:
    """One thread that makes finished judgments durable in groups, then counts them (module
    docstring). ``put`` never waits for the disk; ``close`` waits for everything put so far and
    raises the committer's error, if it had one."""

    def __init__(
        self,
        log: JudgmentLog,
        client: ModelClient,
        result: JudgeResult,
        total: int,
        progress: Progress | None,
        cassette: Cassette | None = None,
    ) -> None:
        self._log = log
        self._client = client
        self._cassette = cassette  # where calls made elsewhere (on workers) are added
        self._result = result
        self._total = total
        self._progress = progress
        self._handled = 0
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="vcost-judge-commit", daemon=True)
        self._thread.start()

    def put(
        self, record: dict[str, Any] | None, error: str | None, calls: Sequence[_Call] = ()
    ) -> None:
        """Queue a judgment (None: one stopped at the cap, only its ``calls`` to keep) and the
        calls it made elsewhere, for the cassette."""
        if self.error is not None:
            raise self.error
        self._queue.put((record, error, calls))

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        stop = False
        while not stop:
            batch: list[_Item] = []
            item = self._queue.get()
            while item is not None:
                batch.append(item)
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            stop = item is None
            if batch and self.error is None:
                try:
                    self._commit(batch)
                except BaseException as exc:  # re-raised by close() and put()
                    self.error = exc

    def _commit(self, batch: list[_Item]) -> None:
        for _, _, calls in batch:
            for completion, request in calls:
                assert self._cassette is not None  # calls come back only from an executor
                self._cassette.add(Completion.from_dict(completion), request, durable=False)
        if isinstance(self._client, _Syncable):
            self._client.sync()  # the calls first: a judgment never outlives its recording
        for record, _, _ in batch:
            if record is not None:
                self._log.append(record, durable=False)
        self._log.sync()
        for record, error, _ in batch:
            if record is None:
                continue
            self._handled += 1
            if error is None:
                self._result.written += 1
            else:
                self._result.failed += 1
                self._result.errors.append(f"{record['key']}: {error}")
            if self._progress is not None:
                self._progress(self._handled, self._total)


@dataclass(frozen=True)
class _Job:
    checker: ModelConfig
    answer: SelectedAnswer
    repeat: int


def _call_record(completion: Completion) -> dict[str, Any]:
    return {
        "request_hash": completion.request_hash,
        "text": completion.text,
        "finish_reason": completion.finish_reason,
        "input_tokens": completion.usage.input_tokens,
        "output_tokens": completion.usage.output_tokens,
        "latency_ms": completion.latency_ms,
        "cost_usd": completion.cost_usd,
        "created_at": completion.created_at.isoformat(),
    }


def _run_code(
    sandbox: Sandbox, task: Task, answer: SelectedAnswer, statements: str
) -> dict[str, Any]:
    """Run a checker's test statements against the answer in the sandbox; capture the output."""
    script = (
        "import contextlib as _c, io as _io\n_out = _io.StringIO()\n"
        "with _c.redirect_stdout(_out), _c.redirect_stderr(_out):\n"
        f"    exec(compile({answer.code!r}, 'answer.py', 'exec'), globals())\n"
        f"    exec(compile({statements!r}, 'checker.py', 'exec'), globals())\n"
        "result = _out.getvalue()\n"
    )
    files = {} if isinstance(task, CodeTask) else {"data.csv": task.csv}
    run = sandbox.run_script(script, files=files, result_name="result")
    output = run.value if run.status == "ok" and isinstance(run.value, str) else ""
    if run.status != "ok":
        output = f"{output}\n[{run.status}] {run.error or ''}".strip()
    return {"code": statements, "status": run.status, "output": output[:_RUN_OUTPUT_LIMIT]}


def _conversation(
    job: _Job,
    task: Task,
    prompt: Messages,
    *,
    client: ModelClient,
    perturbation: Perturbation,
    max_runs: int,
    sandbox: Sandbox | None,
) -> dict[str, Any]:
    messages: list[dict[str, str]] = [dict(m) for m in prompt]
    calls: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    while True:
        completion = client.complete(messages, config=job.checker, repeat=job.repeat)
        calls.append(_call_record(completion))
        blocks = run_blocks(completion.text)
        if not blocks or len(runs) >= max_runs or sandbox is None:
            break
        run = _run_code(sandbox, task, job.answer, blocks[0])
        runs.append(run)
        messages += [
            {"role": "assistant", "content": completion.text},
            {"role": "user", "content": f"Output:\n```\n{run['output']}\n```"},
        ]
    parsed = parse_reply(completion.text)
    if parsed.verdict == "unverifiable":
        termination = "unverifiable"
    elif parsed.verdict is not None:
        termination = "verdict"
    elif completion.finish_reason in _LENGTH_STOPS:
        termination = "budget_exhausted"
    else:
        termination = "unverifiable"
    return {
        "v": _VERSION,
        "status": "ok",
        "key": judgment_key(job.checker.name, job.answer.answer_id, job.repeat, perturbation),
        "checker": job.checker.name,
        "family": job.checker.family or job.checker.name,
        "answer_id": job.answer.answer_id,
        "repeat": job.repeat,
        "perturbation": perturbation,
        "prompt": JUDGE_PROMPT_VERSION,
        "termination": termination,
        "verdict": parsed.verdict,
        "confidence": parsed.confidence,
        "reason": parsed.reason if parsed.problem is None else f"unparseable: {parsed.problem}",
        "max_tokens": job.checker.max_tokens,
        "config": job.checker.record(),
        "calls": calls,
        "runs": runs,
    }


def _judge_one(
    job: _Job,
    task: Task,
    prompt: Messages,
    *,
    client: ModelClient,
    perturbation: Perturbation,
    max_runs: int,
    sandbox: Sandbox | None,
) -> tuple[dict[str, Any] | None, str | None]:
    """One judgment: its record and error (a failed call), or ``(None, None)`` when the cost
    cap stopped it (not logged)."""
    try:
        record = _conversation(
            job,
            task,
            prompt,
            client=client,
            perturbation=perturbation,
            max_runs=max_runs,
            sandbox=sandbox,
        )
    except BudgetStopError:
        return None, None
    except ModelError as exc:
        key = judgment_key(job.checker.name, job.answer.answer_id, job.repeat, perturbation)
        failed = {
            "v": _VERSION,
            "status": "error",
            "key": key,
            "checker": job.checker.name,
            "answer_id": job.answer.answer_id,
            "repeat": job.repeat,
            "perturbation": perturbation,
            "config": job.checker.record(),
            "error_kind": type(exc).__name__,
            "error": str(exc),
        }
        return failed, str(exc)
    return record, None


@dataclass(frozen=True)
class _ClusterJob:
    """One judgment shipped to a worker: all it needs, and the recordings it may replay."""

    job: _Job
    task: Task
    prompt: Messages
    perturbation: Perturbation
    max_runs: int
    sandbox: Sandbox | None
    cassette: ShippedCassette
    max_usd: float | None
    spent_usd: float


@dataclass(frozen=True)
class _ClusterOutcome:
    record: dict[str, Any] | None
    error: str | None
    calls: list[_Call]


_process_client: RoutingClient | None = None
_process_lock = threading.Lock()


def _worker_client() -> RoutingClient:
    """This process's client for calls made in jobs (one per worker process, kept)."""
    global _process_client
    with _process_lock:
        if _process_client is None:
            _process_client = RoutingClient()
        return _process_client


def _cluster_judgment(shipped: _ClusterJob) -> _ClusterOutcome:
    """The job function on a worker: one judgment, and the calls it made."""
    inner = None if shipped.cassette.mode == "replay" else _worker_client()
    recording = ShippedCassetteClient(inner, shipped.cassette)
    client: ModelClient = recording
    if shipped.max_usd is not None:
        meter = CostMeter(shipped.max_usd, spent_usd=shipped.spent_usd)
        client = MeteredClient(recording, meter)
    record, error = _judge_one(
        shipped.job,
        shipped.task,
        shipped.prompt,
        client=client,
        perturbation=shipped.perturbation,
        max_runs=shipped.max_runs,
        sandbox=shipped.sandbox,
    )
    return _ClusterOutcome(record, error, recording.recorded)


def _opening(request: Mapping[str, Any], turns: int) -> str:
    """A conversation's identity: its request settings and first ``turns`` messages (every
    later call of the conversation has the same)."""
    head = {k: v for k, v in request.items() if k != "messages"}
    head["messages"] = list(request["messages"])[:turns]
    return json.dumps(head, sort_keys=True, ensure_ascii=False)


def _recordings_by_opening(cassette: Cassette, turns: set[int]) -> dict[str, list[str]]:
    """The cassette's request hashes, by each conversation opening of ``turns`` messages."""
    found: dict[str, list[str]] = {}
    for key, request in cassette.requests():
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            continue
        for n in turns:
            if len(request["messages"]) >= n:
                found.setdefault(_opening(request, n), []).append(key)
    return found


def _eligible(checker: ModelConfig, answer: SelectedAnswer, perturbation: Perturbation) -> bool:
    same = (checker.family or checker.name) == answer.family
    return same if perturbation == "same-family" else not same


def judge(
    selection: Selection,
    tasks: Mapping[str, Task],
    checkers: Mapping[str, ModelConfig],
    *,
    client: ModelClient,
    log: JudgmentLog,
    k: int = 5,
    perturbation: Perturbation = "standard",
    max_runs: int = 0,
    sandbox: Sandbox | None = None,
    concurrency: int = 8,
    progress: Progress | None = None,
    meter: CostMeter | None = None,
    on_projection: Callable[[CostProjection], None] | None = None,
    batch: BatchRunner | None = None,
    executor: Executor | None = None,
) -> JudgeResult:
    """Each checker judges each selected answer ``k`` times (module docstring); resumable.

    Cost control as in :func:`vcost.answers.generate_answers` (``meter``, ``on_projection``);
    a checker that runs code is projected at ``max_runs + 1`` calls per judgment. A judgment
    whose conversation is cut by the cap is not logged (its calls made so far are in the
    cassette, so a rerun replays them for free). With ``batch`` the calls go through the
    providers' batch APIs first (vcost.models._batch), projected at the batch price.

    With ``executor`` each judgment is a job on it (module docstring); ``client`` must then be
    a :class:`~vcost.models.CassetteClient` over a :class:`~vcost.models.RoutingClient` (or
    none, to replay): the workers call through their own RoutingClient."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, not {k!r}", field="k")
    if perturbation not in PERTURBATIONS:
        raise InputError(
            f"unknown perturbation {perturbation!r}",
            field="perturbation",
            hint=f"one of {', '.join(PERTURBATIONS)}",
        )
    if max_runs and sandbox is None:
        raise InputError("a checker that runs code needs a sandbox", field="max_runs")
    if max_runs and batch is not None:
        raise InputError(
            "a checker that runs code holds a conversation, which a provider batch cannot",
            field="batch",
            hint="leave out --batch or --run-code",
        )
    if executor is not None:
        if batch is not None:
            raise InputError(
                "--batch cannot run on an executor: a provider batch is answered by the "
                "provider, with no per-judgment work to send to workers",
                field="batch",
                hint="leave out --batch or --executor dask",
            )
        if not isinstance(client, CassetteClient) or not isinstance(
            client.inner, RoutingClient | None
        ):
            raise InputError(
                "judging on an executor needs a CassetteClient over a RoutingClient (or none, "
                "to replay): the workers call through their own RoutingClient",
                field="client",
            )
    missing = sorted({a.task_id for a in selection.answers} - set(tasks))
    if missing:
        raise InputError(
            f"the selection names tasks not in the bank: {', '.join(missing[:5])}",
            hint="judge with the bank the answers were selected from",
        )
    result = JudgeResult()
    jobs: list[_Job] = []
    for checker in checkers.values():
        for answer in selection.answers:
            if not _eligible(checker, answer, perturbation):
                result.excluded_own_family += perturbation != "same-family"
                continue
            for repeat in range(k):
                key = judgment_key(checker.name, answer.answer_id, repeat, perturbation)
                done = log.find(checker, key)
                if done is not None and done["status"] == "ok":
                    result.skipped += 1
                else:
                    jobs.append(_Job(checker, answer, repeat))
    total = len(jobs)
    if progress is not None:
        progress(0, total)

    first: dict[str, Messages] = {}  # each answer's prompt in this configuration, built once
    for answer in selection.answers:
        shown = answer.shown
        if perturbation not in ("standard", "same-family"):
            shown = render_answer(perturb(answer.code, perturbation), number=answer.reported)
        first[answer.answer_id] = judge_messages(tasks[answer.task_id], shown, max_runs=max_runs)
    if jobs and (meter is not None or on_projection is not None):
        requests = [Request(first[j.answer.answer_id], j.checker, j.repeat) for j in jobs]
        projection = project_cost(
            requests,
            recorded=recorded_in(client) if batch is None else batch.cassette.__contains__,
            price_factor=1.0 if batch is None else batch.price_factor,
            rounds=max_runs + 1 if sandbox is not None else 1,
            extra_input_tokens=_RUN_OUTPUT_LIMIT // 4 + 16,
        )
        if on_projection is not None:
            on_projection(projection)
        check_projection(projection, None if meter is None else meter.max_usd)
    recording = client  # the cassette the committer syncs, whatever wraps it below
    stopped = threading.Lock()
    if batch is not None and jobs:  # answered through provider batches, then replayed
        batch.run(
            [Request(first[j.answer.answer_id], j.checker, j.repeat) for j in jobs], meter=meter
        )
        client = batch.client(meter)
    elif meter is not None:
        client = MeteredClient(client, meter)

    def one(job: _Job) -> None:
        record, error = _judge_one(
            job,
            tasks[job.answer.task_id],
            first[job.answer.answer_id],
            client=client,
            perturbation=perturbation,
            max_runs=max_runs,
            sandbox=sandbox,
        )
        if record is None:
            with stopped:
                result.stopped += 1
            return
        committer.put(record, error)

    if jobs and executor is not None:
        assert isinstance(recording, CassetteClient)  # checked on entry
        _judge_on(
            executor,
            jobs,
            first,
            tasks,
            cassette=recording.cassette,
            committer=_Committer(log, recording, result, total, progress, recording.cassette),
            result=result,
            meter=meter,
            perturbation=perturbation,
            max_runs=max_runs,
            sandbox=sandbox,
            window=max(1, min(concurrency, len(jobs))),
        )
    elif jobs:
        committer = _Committer(log, recording, result, total, progress)
        try:
            with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(jobs)))) as pool:
                for future in [pool.submit(one, job) for job in jobs]:
                    future.result()
        finally:
            committer.close()
    if meter is not None:
        result.cost_usd = meter.spent_usd
    return result


def _judge_on(
    executor: Executor,
    jobs: list[_Job],
    first: Mapping[str, Messages],
    tasks: Mapping[str, Task],
    *,
    cassette: Cassette,
    committer: _Committer,
    result: JudgeResult,
    meter: CostMeter | None,
    perturbation: Perturbation,
    max_runs: int,
    sandbox: Sandbox | None,
    window: int,
) -> None:
    """Run ``jobs`` on ``executor``, one judgment per job (module docstring)."""
    turns = {len(first[j.answer.answer_id]) for j in jobs}
    recordings = _recordings_by_opening(cassette, turns)

    def shipped() -> Iterator[_ClusterJob]:
        for job in jobs:  # taken one by one as the window frees: the spend is current
            prompt = first[job.answer.answer_id]
            opening = _opening(canonical_request(prompt, job.checker, job.repeat), len(prompt))
            yield _ClusterJob(
                job,
                tasks[job.answer.task_id],
                prompt,
                perturbation,
                max_runs,
                sandbox,
                cassette.shipped(recordings.get(opening, [])),
                None if meter is None else meter.max_usd,
                0.0 if meter is None else meter.spent_usd,
            )

    def arrived(_index: int, outcome: _ClusterOutcome) -> None:
        if meter is not None:
            for completion, _ in outcome.calls:
                meter.add(Completion.from_dict(completion))
        if outcome.record is None:
            result.stopped += 1
        committer.put(outcome.record, outcome.error, outcome.calls)

    try:
        executor.run(_cluster_judgment, shipped(), progress=arrived, window=window)
    finally:
        committer.close()


# ---------------------------------------------------------------- the trace


def _id(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:16]


def _answers_frame(selection: Selection) -> pd.DataFrame:
    import pandas as pd

    from vcost.trace import ANSWER_COLUMNS

    rows = [a.trace_row() for a in selection.answers]
    return pd.DataFrame(rows, columns=[c.name for c in ANSWER_COLUMNS])


def judgments_trace(records: Sequence[Mapping[str, Any]], selection: Selection) -> Trace:
    """The verification trace of finished judgments: answers, verifiers, episodes, events.

    Deterministic: the same records give the same trace (ids are hashes of the log keys), so a
    run replayed from its cassette gives identical episodes.
    """
    from vcost.trace_io import validate_trace

    return validate_trace(_raw_trace(records, selection), confidence_levels=None)


def write_judgments_trace(
    records: Sequence[Mapping[str, Any]], selection: Selection, path: Path
) -> Trace:
    """:func:`judgments_trace` written to the folder ``path`` (its trace files replaced), as
    :func:`vcost.trace_io.write_trace` writes it; returns the trace. Validated once: the
    validated trace is written as it is (``write_trace`` of ``judgments_trace``'s result
    would validate it a second time: about 0.1 s of CPU at 1,000 judgments)."""
    from vcost.trace_io import _write_valid_trace, validate_trace

    trace = validate_trace(_raw_trace(records, selection), confidence_levels=None)
    _write_valid_trace(trace, path, format="csv", overwrite=True)
    return trace


def _raw_trace(records: Sequence[Mapping[str, Any]], selection: Selection) -> Trace:
    """The four tables of the trace, not yet validated."""
    import pandas as pd

    from vcost.trace import EPISODE_COLUMNS, EVENT_COLUMNS, Trace

    episodes: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    configs: dict[str, dict[str, Any]] = {}
    for record in sorted(records, key=lambda r: r["key"]):
        episode_id = "j-" + _id(record["key"])
        calls = record["calls"]
        first = datetime.fromisoformat(calls[0]["created_at"])
        started = first - timedelta(milliseconds=float(calls[0]["latency_ms"]))
        ended = datetime.fromisoformat(calls[-1]["created_at"])
        output_tokens = sum(int(c["output_tokens"] or 0) for c in calls)
        verdict = {"correct": "accept", "incorrect": "reject"}.get(record["verdict"] or "")
        given = record["termination"] == "verdict"  # a confidence belongs to a verdict only
        episodes.append(
            {
                "episode_id": episode_id,
                "verifier_id": record["checker"],
                "block": "check",
                "task_id": None,
                "answer_id": record["answer_id"],
                "attempt": int(record["repeat"]) + 1,
                "started_at": started,
                "ended_at": ended,
                "effort": float(output_tokens),
                "budget": float(record["max_tokens"] * len(calls)),
                "termination": record["termination"],
                "verdict": verdict if given else None,
                "confidence": record["confidence"] if given else None,
                "reason": record["reason"] or None,
                "passed": None,
                "spec_hash": None,
            }
        )
        at = started
        for i, call in enumerate(calls):
            at = datetime.fromisoformat(call["created_at"])
            payload = {k: v for k, v in call.items() if k != "created_at"}
            events.append(_event(episode_id, f"call{i}", at, started, "model_call", payload))
            if i < len(record["runs"]):
                events.append(_event(episode_id, f"run{i}", at, started, "run", record["runs"][i]))
        events.append(
            _event(
                episode_id,
                "end",
                ended,
                started,
                record["termination"],
                {
                    "verdict": record["verdict"],
                    "confidence": record["confidence"],
                    "perturbation": record["perturbation"],
                },
            )
        )
        configs[record["checker"]] = {"family": record["family"], **record["config"]}
    verifiers = pd.DataFrame(
        [
            {
                "verifier_id": name,
                "kind": "model",
                "experience": None,
                "model_family": configs[name].pop("family"),
                "extra": configs[name],
            }
            for name in sorted(configs)
        ],
        columns=["verifier_id", "kind", "experience", "model_family", "extra"],
    )
    return Trace(
        answers=_answers_frame(selection),
        episodes=pd.DataFrame(episodes, columns=[c.name for c in EPISODE_COLUMNS]),
        verifiers=verifiers,
        events=pd.DataFrame(events, columns=[c.name for c in EVENT_COLUMNS]),
    )


def _event(
    episode_id: str, name: str, at: datetime, started: datetime, kind: str, payload: Any
) -> dict[str, Any]:
    return {
        "event_id": f"{episode_id}-{name}",
        "episode_id": episode_id,
        "at": at,
        "offset_ms": max(0, round((at - started).total_seconds() * 1000)),
        "kind": kind,
        "payload": payload,
    }
