"""Inspect AI eval logs as a source of model answers and of verifier verdicts.

Read without inspect_ai (:mod:`vcost.inspect_log`). Two uses:

- **Answers** (:func:`inspect_answers`): each sample whose id (or ``metadata.task_id``) names a
  task of the bank, directly or through the source id its ``provenance.json`` records
  (``HumanEval/23`` is ``humaneval-023``), becomes an answer record, exactly as ``vcost answers
  generate`` writes one: the model's final text, code extracted, graded in the sandbox, natural
  errors labelled. A sample that carries its problem as inspect_evals' HumanEval task does
  (``metadata.prompt`` and ``metadata.entry_point``) is graded as that task's ``verify`` scorer
  assembles it: the prompt, then the reply's first fenced code block (the whole reply when it
  has none), as-is; a reply that is only a function body is so graded with its header. The
  model is the log's ``eval.model``; its family is the provider prefix (``openai/gpt-4o`` →
  ``openai``) unless ``family`` is given. Samples that name no bank task are skipped and counted.
- **Verdicts** (:func:`inspect_trace`): each scorer is a verifier. One scorer, ``truth`` (a test
  suite, say), fixes ground truth; every other scorer's value on a sample and epoch becomes a
  check episode: ``C``/``1``/true → accept, ``I``/``0``/false → reject, anything else (``P``,
  ``N``, a dict) → declared unverifiable. Inspect scorers report no confidence and no cost, so a
  verdict's confidence is the score's ``metadata.confidence`` if present, else 1.0, and effort
  and budget are placeholders (0 of 1): cost statistics are meaningless for these episodes.
  Scorers appear as verifiers of kind ``model``, with the scorer's name in ``extra``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from vcost.answers import AnswerLog, Labeller, answer_key, answer_record, task_index
from vcost.errors import InputError
from vcost.inspect_log import read_inspect_log, sample_completion, sample_key
from vcost.models import Completion, Usage
from vcost.sandbox import Sandbox
from vcost.tasks import Task
from vcost.trace import ANSWER_COLUMNS, EPISODE_COLUMNS, Trace
from vcost.trace_io import validate_trace

__all__ = ["InspectImport", "inspect_answer_id", "inspect_answers", "inspect_trace"]

_ACCEPT = ("C", 1, 1.0, True)
_REJECT = ("I", 0, 0.0, False)
_FENCE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\r?\n(.*?)```", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class InspectImport:
    """What an import did: records written, already there, and samples skipped (why)."""

    written: int
    skipped: int
    unmatched: tuple[str, ...]


def _model(header: Mapping[str, Any], source: Path) -> str:
    spec = header.get("eval")
    model = spec.get("model") if isinstance(spec, dict) else None
    if not isinstance(model, str) or not model:
        raise InputError("the log names no model", source=source, field="eval.model")
    return model


def inspect_answer_id(
    model: str, sample: dict[str, Any], task_ids: Mapping[str, str] | None = None
) -> str:
    """The answer id of a sample, the same in both imports: ``answer_key(model, task, epoch-1)``
    (the id ``vcost answers import-inspect`` writes, so a selection of imported answers and the
    scorers' trace name one sample alike). ``task_ids`` maps a source id to the bank's task id
    (``HumanEval/23`` → ``humaneval-023``), as the answers import matches it."""
    task_id, epoch = sample_key(sample)
    if task_ids is not None:
        task_id = task_ids.get(task_id, task_id)
    return answer_key(model, task_id, epoch - 1)


def inspect_answers(
    path: str | Path,
    tasks: Mapping[str, Task],
    *,
    log: AnswerLog,
    sandbox: Sandbox,
    family: str | None = None,
) -> InspectImport:
    """Grade the answers of an Inspect log against ``tasks`` and append them to ``log``."""
    source = Path(path)
    header, samples = read_inspect_log(source)
    model = _model(header, source)
    family = family or model.split("/", 1)[0]
    labeller = Labeller(sandbox)
    written = skipped = 0
    unmatched: list[str] = []
    by_source = task_index(list(tasks.values()))
    for _, sample in samples:
        task_id, epoch = sample_key(sample)
        task = tasks.get(task_id) or by_source.get(task_id)
        if task is None:
            unmatched.append(task_id)
            continue
        repeat = epoch - 1
        if log.get(answer_key(model, task.id, repeat)) is not None:
            skipped += 1
            continue
        output = _dict(sample.get("output"))
        usage = _dict(output.get("usage"))
        completion = Completion(
            text=sample_completion(sample),
            config={"model": model, "source": f"inspect:{source.name}"},
            request_hash=f"inspect:{source.name}:{sample.get('id')}:{repeat + 1}",
            usage=Usage(usage.get("input_tokens"), usage.get("output_tokens")),
            latency_ms=float(output.get("time") or 0.0) * 1000.0,
            cost_usd=None,
            created_at=datetime.fromtimestamp(0, UTC),
            finish_reason=None,
            raw={},
        )
        record = answer_record(
            task, model, family, repeat, completion, labeller, prompt=f"inspect:{source.name}",
            code=_humaneval_program(sample, completion.text),
        )  # fmt: skip
        log.append(record)
        written += 1
    return InspectImport(written, skipped, tuple(unmatched))


def _humaneval_program(sample: Mapping[str, Any], text: str) -> str | None:
    """The program inspect_evals' HumanEval scorer runs for a sample that carries its problem
    (``metadata.prompt``, ``metadata.entry_point``): the prompt, then the first fenced code
    block of the reply, or the whole reply when it has none. None for any other sample (its
    code is extracted as for a generated answer)."""
    meta = _dict(sample.get("metadata"))
    prompt = meta.get("prompt")
    if not isinstance(prompt, str) or not isinstance(meta.get("entry_point"), str):
        return None
    block = _FENCE.search(text)
    return prompt + (block.group(1) if block else text)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _value(score: Any) -> Any:
    return score.get("value") if isinstance(score, dict) else None


def _truth(value: Any) -> str:
    if value in _ACCEPT:
        return "correct"
    if value in _REJECT:
        return "incorrect"
    return "indeterminate"


def inspect_trace(
    path: str | Path, *, truth: str, task_ids: Mapping[str, str] | None = None
) -> Trace:
    """The verification trace of an Inspect log's scorers, with ``truth`` as ground truth.

    ``task_ids`` (source id → bank task id, e.g. from the bank's provenance files) names the
    answers as :func:`inspect_answers` does against that bank."""
    source = Path(path)
    header, samples = read_inspect_log(source)
    model = _model(header, source)
    answers: list[dict[str, Any]] = []
    episodes: list[dict[str, Any]] = []
    scorers: set[str] = set()
    for where, sample in samples:
        scores = sample.get("scores")
        if not isinstance(scores, dict) or truth not in scores:
            known = ", ".join(map(str, scores)) if isinstance(scores, dict) else "none"
            raise InputError(
                f"no '{truth}' score (the sample has: {known})",
                source=source,
                field=f"{where}.scores",
                hint="name the scorer that fixes ground truth with --truth",
            )
        answer_id = inspect_answer_id(model, sample, task_ids)
        task_id = sample_key(sample)[0]
        answers.append(
            {
                "answer_id": answer_id,
                "task_id": (task_ids or {}).get(task_id, task_id),
                "model_id": model,
                "ground_truth": _truth(_value(scores[truth])),
                "role": "model",
                "source": "inspect",
            }
        )
        for name, score in sorted(scores.items()):
            if name == truth:
                continue
            scorers.add(name)
            value = _value(score)
            verdict = "accept" if value in _ACCEPT else "reject" if value in _REJECT else None
            meta = score.get("metadata") if isinstance(score, dict) else None
            confidence = meta.get("confidence") if isinstance(meta, dict) else None
            explanation = score.get("explanation") if isinstance(score, dict) else None
            episodes.append(
                {
                    "episode_id": f"inspect-{name}-{answer_id}",
                    "verifier_id": f"inspect:{name}",
                    "block": "check",
                    "answer_id": answer_id,
                    "attempt": 1,
                    "effort": 0.0,
                    "budget": 1.0,
                    "termination": "verdict" if verdict else "unverifiable",
                    "verdict": verdict,
                    "confidence": (float(confidence) if confidence is not None else 1.0)
                    if verdict
                    else None,
                    "reason": " ".join(str(explanation).split())[:300] if explanation else None,
                }
            )
    if not scorers:
        raise InputError(
            f"the log has no scorer besides '{truth}': nothing to treat as a verifier",
            source=source,
        )
    verifiers = pd.DataFrame(
        [
            {"verifier_id": f"inspect:{n}", "kind": "model", "extra": {"scorer": n}}
            for n in sorted(scorers)
        ]
    )
    trace = Trace(
        answers=pd.DataFrame(answers, columns=[c.name for c in ANSWER_COLUMNS]),
        episodes=pd.DataFrame(episodes).reindex(columns=[c.name for c in EPISODE_COLUMNS]),
        verifiers=verifiers,
    )
    return validate_trace(trace, confidence_levels=None)
