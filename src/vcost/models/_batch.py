"""Provider batch APIs: OpenAI Batch and Anthropic Message Batches, about half the price.

:class:`BatchRunner` takes the requests a stage is about to make, and instead of calling the
models one by one:

1. **collects** the requests not yet in the cassette, one batch per model, each request under
   its request hash as ``custom_id`` (64 hex digits: within Anthropic's 64-character limit);
2. **submits** them with the official SDKs: OpenAI ``files.create(purpose="batch")`` with a JSONL
   file of ``/v1/chat/completions`` lines, then ``batches.create``; Anthropic
   ``messages.batches.create``; and writes the batch id to the **batch log**
   (``batches.jsonl``, append-only, fsync'ed) at once;
3. **polls** ``batches.retrieve`` / ``messages.batches.retrieve`` every ``poll_s`` seconds until
   the batch ends;
4. **maps results back** by ``custom_id`` (OpenAI output and error files; Anthropic results
   JSONL): each answered request becomes a :class:`~vcost.models.Completion` in the cassette,
   priced at half the listed prices (both providers' batch discount), and the batch's end with
   its failures goes to the batch log;
5. **retries** requests that expired or errored in a new batch, up to ``rounds`` batches per
   request in one run (a rerun starts the count again).

The stage then runs as usual against the cassette (every answered request replays), with
:meth:`BatchRunner.client` raising, for a request no batch answered, a
:class:`BatchRequestError` with the provider's reason (logged like any failed call, and batched
again on the next run).

A run killed while a batch is in flight finds the batch id in the batch log on the next run and
resumes polling it: nothing is submitted twice. (A kill between the provider accepting a batch
and the id reaching the log — one HTTP reply — would submit it again.)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from vcost.jsonl_log import JsonlLog
from vcost.models._anthropic import parse_message
from vcost.models._cassette import Cassette
from vcost.models._client import (
    Completion,
    Messages,
    Reply,
    Request,
    Usage,
    canonical_request,
    check_messages,
    request_hash,
)
from vcost.models._config import ModelConfig
from vcost.models._cost import CostMeter
from vcost.models._errors import ModelError
from vcost.models._openai import parse_chat_completion
from vcost.models._retry import Failure
from vcost.models._routing import RoutingClient
from vcost.models._sdk import sdk_failure

__all__ = ["BATCH_PRICE_FACTOR", "BatchLog", "BatchRequestError", "BatchRunner"]

#: batch requests cost this fraction of the listed prices (OpenAI Batch and Anthropic Message
#: Batches both charge half)
BATCH_PRICE_FACTOR = 0.5
_VERSION = 1
_OPENAI_ENDED = frozenset({"completed", "expired", "failed", "cancelled"})


class BatchRequestError(ModelError):
    """A request that no batch answered (expired or errored on every round)."""


def _log_key(record: dict[str, Any]) -> str:
    if record.get("v") != _VERSION or record.get("event") not in ("submitted", "ended"):
        raise ValueError("not a batch log record")
    return f"{record['event']}/{record['batch_id']}"


class BatchLog(JsonlLog):
    """``batches.jsonl``: one ``submitted`` line per batch (its id, provider, model and
    custom_ids) and one ``ended`` line when its results are in the cassette."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(
            path,
            key_of=_log_key,
            kind="batch log",
            hint="the batch log is append-only JSONL written by --batch runs",
        )

    def submitted(self) -> list[dict[str, Any]]:
        return [r for r in self if r["event"] == "submitted"]

    def pending(self) -> list[dict[str, Any]]:
        """Batches submitted whose end is not logged: a killed run resumes polling these."""
        return [r for r in self.submitted() if f"ended/{r['batch_id']}" not in self]


@dataclass(frozen=True)
class _Item:
    custom_id: str
    messages: list[dict[str, str]]
    config: ModelConfig
    repeat: int


@dataclass
class BatchReport:
    """What the batch phase did."""

    submitted: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    answered: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    not_submitted: set[str] = field(default_factory=set)


class BatchRunner:
    """Fills a cassette through the providers' batch APIs (module docstring)."""

    price_factor = BATCH_PRICE_FACTOR

    def __init__(
        self,
        cassette: Cassette,
        log: BatchLog,
        *,
        client: RoutingClient | None = None,
        poll_s: float = 30.0,
        rounds: int = 3,
        on_event: Callable[[str], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if rounds < 1:
            raise ValueError("rounds must be at least 1")
        self.cassette = cassette
        self.log = log
        self.routing = client or RoutingClient()
        self._own_routing = client is None
        self.poll_s = poll_s
        self.rounds = rounds
        self.on_event = on_event or (lambda _text: None)
        self.sleep = sleep
        self.report = BatchReport()

    # -- the phase -------------------------------------------------------------------------

    def run(self, requests: Sequence[Request], *, meter: CostMeter | None = None) -> BatchReport:
        """Answer ``requests`` through batches into the cassette; see the module docstring.
        With a ``meter``, batch costs are counted on it and no new batch is submitted once it
        is exhausted (those requests are ``not_submitted``)."""
        items: dict[str, _Item] = {}
        for r in requests:
            checked = check_messages(r.messages, r.config)
            key = request_hash(checked, r.config, r.repeat)
            if key not in self.cassette:
                items[key] = _Item(key, checked, r.config, r.repeat)
        pending = [r for r in self.log.pending() if set(r["custom_ids"]) & set(items)]
        # rounds are counted per run (a resumed batch counts): a request that failed every
        # round of an earlier run is logged as failed, and a rerun batches it afresh
        rounds_used: dict[str, int] = {}
        for record in pending:
            for cid in record["custom_ids"]:
                rounds_used[cid] = rounds_used.get(cid, 0) + 1
        self.report.resumed = [r["batch_id"] for r in pending]
        for record in pending:
            self.on_event(f"resuming batch {record['batch_id']} ({len(record['custom_ids'])} req)")
        while True:
            if pending:
                self._wait(pending, items, meter)
            todo = [
                i
                for cid, i in items.items()
                if cid not in self.cassette and rounds_used.get(cid, 0) < self.rounds
            ]
            if not todo:
                break
            if meter is not None and meter.exhausted:
                self.report.not_submitted |= {i.custom_id for i in todo}
                break
            pending = []
            by_model: dict[str, list[_Item]] = {}
            for item in todo:
                by_model.setdefault(item.config.name, []).append(item)
                rounds_used[item.custom_id] = rounds_used.get(item.custom_id, 0) + 1
            for group in by_model.values():
                pending.append(self._submit(group, rounds_used[group[0].custom_id]))
        for cid in items:
            if cid in self.cassette:
                self.report.failed.pop(cid, None)
        return self.report

    def client(self, meter: CostMeter | None = None) -> _BatchReplayClient:
        """The client the stage runs with: every answered request replays from the cassette."""
        return _BatchReplayClient(self.cassette, self.report, meter)

    def close(self) -> None:
        """Close the SDK clients of the routing client this made (one passed in is the
        caller's to close) and the cassette's and the batch log's files (writing again
        reopens them)."""
        try:
            if self._own_routing:
                self.routing.close()
        finally:
            self.cassette.close()
            self.log.close()

    # -- submit, poll, collect ----------------------------------------------------------------

    def _submit(self, group: list[_Item], round_: int) -> dict[str, Any]:
        config = group[0].config
        if config.provider == "openai":
            batch_id = self._control(config, lambda: self._submit_openai(group))
        else:
            batch_id = self._control(config, lambda: self._submit_anthropic(group))
        record = {
            "v": _VERSION,
            "event": "submitted",
            "batch_id": batch_id,
            "provider": config.provider,
            "model_name": config.name,
            "round": round_,
            "custom_ids": [i.custom_id for i in group],
            "at": datetime.now(UTC).isoformat(),
        }
        self.log.append(record)
        self.report.submitted.append(batch_id)
        self.on_event(f"submitted batch {batch_id}: {len(group)} request(s) to {config.name}")
        return record

    def _submit_openai(self, group: list[_Item]) -> str:
        sdk = self.routing.openai._sdk(group[0].config)
        lines = [
            {
                "custom_id": item.custom_id,
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": self.routing.openai.params(item.messages, item.config),
            }
            for item in group
        ]
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        upload = sdk.files.create(file=("batch.jsonl", data, "application/jsonl"), purpose="batch")
        batch = sdk.batches.create(
            input_file_id=upload.id,
            endpoint="/v1/chat/completions",
            completion_window="24h",
            metadata={"made_by": "vcost"},
        )
        return batch.id

    def _submit_anthropic(self, group: list[_Item]) -> str:
        sdk = self.routing.anthropic._sdk(group[0].config)
        requests: list[Any] = []
        for item in group:
            params = self.routing.anthropic.params(item.messages, item.config)
            params.update(params.pop("extra_body", {}))  # a batch request's params are plain JSON
            requests.append({"custom_id": item.custom_id, "params": params})
        return sdk.messages.batches.create(requests=requests).id

    def _wait(
        self, pending: list[dict[str, Any]], items: dict[str, _Item], meter: CostMeter | None
    ) -> None:
        left = list(pending)
        while left:
            still = []
            for record in left:
                config = self._config_of(record, items)
                if config is None:  # a model no longer asked for: its batch is left alone
                    continue
                results = self._control(config, partial(self._poll, record, config))
                if results is None:
                    still.append(record)
                    continue
                self._collect(record, results, items, meter)
            left = still
            if left:
                self.sleep(self.poll_s)

    def _config_of(self, record: dict[str, Any], items: dict[str, _Item]) -> ModelConfig | None:
        for cid in record["custom_ids"]:
            if cid in items:
                return items[cid].config
        return None

    def _poll(
        self, record: dict[str, Any], config: ModelConfig
    ) -> dict[str, tuple[Reply | None, str]] | None:
        """None while the batch runs; once it ended, {custom_id: (reply or None, reason)}."""
        batch_id = record["batch_id"]
        out: dict[str, tuple[Reply | None, str]] = {}
        if config.provider == "openai":
            sdk = self.routing.openai._sdk(config)
            batch = sdk.batches.retrieve(batch_id)
            if batch.status not in _OPENAI_ENDED:
                return None
            for file_id in (batch.output_file_id, batch.error_file_id):
                if not file_id:
                    continue
                for line in sdk.files.content(file_id).text.splitlines():
                    if line.strip():
                        row = json.loads(line)
                        out[row["custom_id"]] = _openai_line(row)
            why = f"batch {batch_id} ended {batch.status} without this request"
            problems = [e.message for e in (batch.errors.data or [])] if batch.errors else []
            if problems:  # a batch that failed validation says why
                why += f": {'; '.join(str(p) for p in problems[:3])}"
        else:
            sdk_a = self.routing.anthropic._sdk(config)
            if sdk_a.messages.batches.retrieve(batch_id).processing_status != "ended":
                return None
            for row in sdk_a.messages.batches.results(batch_id):
                out[row.custom_id] = _anthropic_line(row.to_dict())
            why = f"batch {batch_id} ended without this request"
        for cid in record["custom_ids"]:
            out.setdefault(cid, (None, why))
        return out

    def _collect(
        self,
        record: dict[str, Any],
        results: dict[str, tuple[Reply | None, str]],
        items: dict[str, _Item],
        meter: CostMeter | None,
    ) -> None:
        failed: dict[str, str] = {}
        answered = 0
        for cid, (reply, reason) in results.items():
            item = items.get(cid)
            if item is None:
                continue
            if reply is None:
                failed[cid] = reason
                self.report.failed[cid] = reason
                continue
            completion = self._completion(item, reply, int(record.get("round", 1)))
            self.cassette.add(
                completion, canonical_request(item.messages, item.config, item.repeat)
            )
            if meter is not None:
                meter.add_usd(completion.cost_usd or 0.0)
            answered += 1
        self.report.answered += answered
        self.log.append(
            {
                "v": _VERSION,
                "event": "ended",
                "batch_id": record["batch_id"],
                "answered": answered,
                "failed": failed,
                "at": datetime.now(UTC).isoformat(),
            }
        )
        self.on_event(
            f"batch {record['batch_id']} ended: {answered} answered, {len(failed)} failed"
        )

    def _completion(self, item: _Item, reply: Reply, round_: int) -> Completion:
        cost = item.config.cost_usd(reply.input_tokens, reply.output_tokens)
        return Completion(
            text=reply.text,
            config=item.config.record(),
            request_hash=item.custom_id,
            usage=Usage(reply.input_tokens, reply.output_tokens),
            latency_ms=0.0,
            cost_usd=None if cost is None else cost * self.price_factor,
            created_at=datetime.now(UTC),
            finish_reason=reply.finish_reason,
            raw=reply.raw,
            attempts=round_,
            repeat=item.repeat,
            served_model=reply.served_model,
        )

    def _control(self, config: ModelConfig, call: Callable[[], Any]) -> Any:
        """One control call (upload, create, retrieve, results) with the model's retries."""
        sdk_module = self._module(config)

        def attempt() -> Any:
            try:
                return call()
            except sdk_module.APIError as exc:
                raise sdk_failure(exc, sdk_module) from None

        return self.routing.openai.retry.run(attempt, config=config)[0]

    @staticmethod
    def _module(config: ModelConfig) -> Any:
        if config.provider == "openai":
            import openai

            return openai
        import anthropic

        return anthropic


def _openai_line(row: dict[str, Any]) -> tuple[Reply | None, str]:
    response = row.get("response") or {}
    error = row.get("error") or {}
    if response.get("status_code") == 200:
        try:
            return parse_chat_completion(json.dumps(response.get("body")).encode()), ""
        except Failure as failure:
            return None, f"malformed batch result: {failure}"
    if error:
        return None, f"{error.get('code')}: {error.get('message')}"
    body = response.get("body") or {}
    message = (body.get("error") or {}).get("message") if isinstance(body, dict) else None
    return None, f"HTTP {response.get('status_code')}: {message}"


def _anthropic_line(row: dict[str, Any]) -> tuple[Reply | None, str]:
    result = row.get("result") or {}
    kind = result.get("type")
    if kind == "succeeded":
        try:
            return parse_message(json.dumps(result.get("message")).encode()), ""
        except Failure as failure:
            return None, f"malformed batch result: {failure}"
    if kind == "errored":
        error = (result.get("error") or {}).get("error") or {}
        return None, f"errored: {error.get('type')}: {error.get('message')}"
    return None, str(kind)


class _BatchReplayClient:
    """Replays batch answers from the cassette; a request no batch answered raises its reason."""

    def __init__(self, cassette: Cassette, report: BatchReport, meter: CostMeter | None) -> None:
        self.cassette = cassette
        self.report = report
        self.meter = meter

    def complete(self, messages: Messages, *, config: ModelConfig, repeat: int = 0) -> Completion:
        key = request_hash(check_messages(messages, config), config, repeat)
        found = self.cassette.get(key)
        if found is not None:
            return found
        if key in self.report.not_submitted and self.meter is not None:
            raise self.meter.stop(config)
        raise BatchRequestError(
            self.report.failed.get(key, "no batch answered this request"),
            model_name=config.name,
            provider=config.provider,
            model=config.model_id,
            hint="rerun with --batch to batch it again, or without --batch to call it at once",
        )
