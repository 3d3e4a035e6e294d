"""Pairwise judging and the order-swap perturbation (the reliability protocol, seed 004).

For each task with a correct and a wrong selected answer, a checker is shown both, labelled A
and B, and asked which one is correct. Each pair is judged in the standard order (the answers
sorted by id) and swapped, ``k`` times each. A flip is a pick of a different underlying answer
after the swap; a position-biased checker flips often and picks "A" far from half the time.
Never a checker's own family's answers, as in single-answer judging.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vcost.answers import SelectedAnswer, Selection
from vcost.jsonl_log import JsonlLog
from vcost.judges._prompt import JUDGE_INSTRUCTIONS, _objects
from vcost.models import ModelClient, ModelConfig, ModelError
from vcost.tasks import Task

if TYPE_CHECKING:  # scipy loads when a rate is computed, not with `vcost judge run`
    from vcost.stats import Interval

__all__ = ["OrderSwap", "PairwiseLog", "judge_pairs", "order_swap"]

Order = Literal["standard", "swapped"]
_VERSION = 1


class _Pick(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    correct: Literal["A", "B"]
    confidence: float = Field(ge=0.0, le=1.0)


def _key_of(record: dict[str, Any]) -> str:
    if record.get("v") != _VERSION or record.get("status") not in ("ok", "error"):
        raise ValueError("not a pairwise record")
    return str(record["key"])


class PairwiseLog(JsonlLog):
    """Pairwise judgments, one per (checker, pair, repeat, order)."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, key_of=_key_of, kind="pairwise log")


def _pairs(selection: Selection) -> list[tuple[SelectedAnswer, SelectedAnswer]]:
    by_task: dict[str, list[SelectedAnswer]] = {}
    for answer in sorted(selection.answers, key=lambda a: a.answer_id):
        by_task.setdefault(answer.task_id, []).append(answer)
    pairs = []
    for answers in by_task.values():
        right = [a for a in answers if a.ground_truth == "correct"]
        wrong = [a for a in answers if a.ground_truth == "incorrect"]
        if right and wrong:
            pairs.append(
                (right[0], wrong[0])
                if right[0].answer_id < wrong[0].answer_id
                else (wrong[0], right[0])
            )
    return pairs


def _messages(task: Task, first: SelectedAnswer, second: SelectedAnswer) -> list[dict[str, str]]:
    content = (
        f"{JUDGE_INSTRUCTIONS}\n\nHere there are two answers to the same task; exactly one of "
        f"them is correct.\n\n# The task\n\n{task.spec_text.strip()}\n\n# Answer A\n\n"
        f"{first.shown}\n# Answer B\n\n{second.shown}\n\nReply with one JSON object and nothing "
        'else: {"correct": "A" or "B", "confidence": a number from 0.5 to 1.0}'
    )
    return [{"role": "user", "content": content}]


def _pick(text: str) -> str | None:
    for data in _objects(text):  # the first object that fits, as for verdicts
        try:
            if isinstance(data, dict) and isinstance(data.get("confidence"), int):
                data["confidence"] = float(data["confidence"])
            return _Pick.model_validate(data).correct
        except (ValueError, ValidationError):
            continue
    return None


def judge_pairs(
    selection: Selection,
    tasks: Mapping[str, Task],
    checkers: Mapping[str, ModelConfig],
    *,
    client: ModelClient,
    log: PairwiseLog,
    k: int = 5,
    concurrency: int = 8,
) -> int:
    """Judge every pair in both orders ``k`` times; returns the number of calls that failed."""
    jobs = []
    for checker in checkers.values():
        family = checker.family or checker.name
        for a, b in _pairs(selection):
            if family in (a.family, b.family):
                continue
            for repeat in range(k):
                for order in ("standard", "swapped"):
                    key = f"{checker.name}/{a.answer_id}|{b.answer_id}/{repeat}/{order}"
                    done = log.get(key)
                    if done is None or done["status"] != "ok":
                        jobs.append((key, checker, a, b, repeat, order))

    def one(job: tuple[str, ModelConfig, SelectedAnswer, SelectedAnswer, int, str]) -> bool:
        key, checker, a, b, repeat, order = job
        first, second = (a, b) if order == "standard" else (b, a)
        base = {"v": _VERSION, "key": key, "checker": checker.name, "repeat": repeat}
        try:
            completion = client.complete(
                _messages(tasks[a.task_id], first, second), config=checker, repeat=repeat
            )
        except ModelError as error:
            log.append({**base, "status": "error", "error": str(error)})
            return False
        pick = _pick(completion.text)
        picked = {"A": first.answer_id, "B": second.answer_id}.get(pick or "")
        log.append(
            {
                **base,
                "status": "ok",
                "pair": f"{a.answer_id}|{b.answer_id}",
                "order": order,
                "position": pick,
                "picked": picked,
                "picked_correct": None
                if picked is None
                else picked in (x.answer_id for x in (a, b) if x.ground_truth == "correct"),
                "text": completion.text,
                "request_hash": completion.request_hash,
            }
        )
        return True

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        return sum(not ok for ok in pool.map(one, jobs))


@dataclass(frozen=True)
class OrderSwap:
    """A checker's flip rate under order swap, and how often it picks position A."""

    checker: str
    pairs: int
    flips: int
    rate: float
    interval: Interval
    picks_a: int
    picks: int


def order_swap(records: Iterable[Mapping[str, Any]], *, alpha: float = 0.05) -> list[OrderSwap]:
    """Flip rate per checker: same pair and repeat, a different answer picked after the swap.

    An unparseable pick counts as its own outcome (so a pick against no pick is a flip).
    """
    seen: dict[tuple[str, str, int], dict[str, str | None]] = {}
    positions: dict[str, list[str]] = {}
    for r in records:
        if r["status"] != "ok":
            continue
        seen.setdefault((r["checker"], r["pair"], r["repeat"]), {})[r["order"]] = r["picked"]
        if r["position"] is not None:
            positions.setdefault(r["checker"], []).append(r["position"])
    flips: dict[str, list[bool]] = {}
    for (checker, _, _), orders in seen.items():
        if len(orders) == 2:
            flips.setdefault(checker, []).append(orders["standard"] != orders["swapped"])
    from vcost.stats import clopper_pearson

    rows: list[OrderSwap] = []
    for checker, values in sorted(flips.items()):
        picks: Sequence[str] = positions.get(checker, [])
        rows.append(
            OrderSwap(
                checker,
                len(values),
                sum(values),
                sum(values) / len(values),
                clopper_pearson(sum(values), len(values), alpha=alpha),
                sum(p == "A" for p in picks),
                len(picks),
            )
        )
    return rows
