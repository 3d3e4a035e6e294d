"""Readers for pairwise judges' outputs: JudgeBench, MT-Bench judgments, RewardBench scores.

Every reader returns :class:`PairVerdict` rows: one labelled pair (which response is better, by
the file's label), the judge's decision in the order it was shown (``first``) and, when the
judge also saw the responses swapped, that decision mapped back to the original order
(``second``). Decisions are ``A>B``, ``B>A``, ``A=B`` (a tie) or None (no usable decision).
Bad input is an :class:`~vcost.errors.InputError` naming the file, line and field.

``judgebench``
    JudgeBench's judge outputs (``outputs/*.jsonl``): the pair's ``pair_id``, ``original_id``
    (the source question: pairs sharing it are one cluster), ``source`` (``mmlu-pro-law``,
    ``livebench-reasoning``, ``livebench-math``, ``livecodebench``, ...), ``label``
    (``A>B``/``B>A``), ``judge_name`` and ``judgments``: one or two entries (null when the
    judge failed), each with a ``decision``; the second was made with the responses swapped,
    so its decision is flipped back here, as JudgeBench's ``flip_judgment`` does. A reward
    model's entries carry ``judgment.scores`` [score of the first shown, of the second].
    Categories follow the JudgeBench paper: mmlu-pro → knowledge, livebench-reasoning →
    reasoning, livebench-math → math, livecodebench → coding.
``mt-bench``
    FastChat's pairwise judgments (``model_judgment/gpt-4_pair.jsonl``): ``question_id``,
    ``model_1``, ``model_2``, ``g1_winner`` (model_1 shown first) and ``g2_winner`` (model_2
    shown first), each already named by model (``model_1``, ``model_2``, ``tie``, ``error``),
    ``judge`` and ``turn``. Labels come from a second file in the MT-Bench human-judgment
    format (``question_id``, ``model_a``, ``model_b``, ``winner`` ``model_a``/``model_b``/
    ``tie``, ``tie (bothbad)`` being a tie too, ``turn``, ``judge``): the majority of the
    human votes on the pair; a tie or a split vote gives no strict label and the pair is set
    aside. Categories from the question
    number (MT-Bench's 80 questions, ten per category: 81-90 writing, roleplay, reasoning,
    math, coding, extraction, stem, 151-160 humanities).
``rewardbench``
    Per-prompt reward-model scores: ``id`` (or ``prompt_id``, the cluster), ``subset`` (the
    category) and the scores of the chosen and the rejected response (``score_chosen``/
    ``score_rejected`` or RewardBench's ``scores_chosen``/``scores_rejected``, a number or a
    one-element list). The chosen response is A: the label is ``A>B`` and the decision is the
    order of the two scores (equal scores: a tie). A reward model scores each response
    alone, so there is no swapped order.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from vcost.errors import InputError
from vcost.jsonl_log import json_objects

__all__ = [
    "PAIRWISE_FORMATS",
    "Decision",
    "PairVerdict",
    "PairwiseFormat",
    "category_of",
    "flip",
    "read_judgebench",
    "read_mtbench",
    "read_pairwise",
    "read_rewardbench",
]

Decision = Literal["A>B", "B>A", "A=B"]
Label = Literal["A>B", "B>A"]
PairwiseFormat = Literal["judgebench", "mt-bench", "rewardbench"]
PAIRWISE_FORMATS: tuple[str, ...] = ("judgebench", "mt-bench", "rewardbench")
_DECISIONS = ("A>B", "B>A", "A=B")
_MT_CATEGORIES = ("writing", "roleplay", "reasoning", "math", "coding", "extraction", "stem",
                  "humanities")  # fmt: skip


@dataclass(frozen=True)
class PairVerdict:
    """One labelled pair and the judge's decisions on it (both in the original order).

    ``swapped`` says whether the judge also saw the responses swapped; ``second`` is that
    decision mapped back (None: no usable decision, or not swapped). ``scores`` are the
    judge's scores of A and B where it gives them (first order), ``scores_swapped`` those of
    the swapped run, mapped back to (A, B)."""

    pair_id: str
    question_id: str
    source: str
    category: str
    label: Label
    first: Decision | None
    second: Decision | None
    swapped: bool
    judge: str
    line: int
    judge_model: str = ""
    scores: tuple[float, float] | None = None
    scores_swapped: tuple[float, float] | None = None


def flip(decision: Decision | None) -> Decision | None:
    """The same preference seen from the swapped order (``A>B`` <-> ``B>A``; ties stay)."""
    if decision == "A>B":
        return "B>A"
    if decision == "B>A":
        return "A>B"
    return decision


def category_of(source: str) -> str:
    """JudgeBench's category of a source: knowledge, reasoning, math, coding (else the source)."""
    if source.startswith("mmlu-pro"):
        return "knowledge"
    if source.startswith("livebench-reasoning"):
        return "reasoning"
    if source.startswith("livebench-math"):
        return "math"
    if source.startswith("livecodebench"):
        return "coding"
    return source


def _need_str(record: Mapping[str, Any], key: str, path: Path, line: int) -> str:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise InputError(f"missing or not a string: {value!r}", source=path, line=line, field=key)
    return str(value)


def _label(value: Any, path: Path, line: int, key: str = "label") -> Label:
    if value == "A>B":
        return "A>B"
    if value == "B>A":
        return "B>A"
    raise InputError(
        f"a label is 'A>B' or 'B>A', not {value!r}",
        source=path,
        line=line,
        field=key,
        hint="JudgeBench labels name the objectively better response",
    )


def _decision(value: Any, path: Path, line: int, key: str) -> Decision | None:
    if value is None:
        return None
    if value in _DECISIONS:
        return value  # type: ignore[no-any-return]
    raise InputError(
        f"a decision is 'A>B', 'B>A', 'A=B' or null, not {value!r}",
        source=path,
        line=line,
        field=key,
    )


def _scores(
    judgment: Mapping[str, Any], path: Path, line: int, key: str
) -> tuple[float, float] | None:
    inner = judgment.get("judgment")
    if not isinstance(inner, dict) or inner.get("scores") is None:
        return None
    scores = inner["scores"]
    ok = (
        isinstance(scores, list)
        and len(scores) == 2
        and all(isinstance(s, int | float) and not isinstance(s, bool) for s in scores)
        and all(math.isfinite(float(s)) for s in scores)
    )
    if not ok:
        raise InputError(
            f"scores must be two finite numbers, not {scores!r}",
            source=path,
            line=line,
            field=f"{key}.judgment.scores",
        )
    return float(scores[0]), float(scores[1])


def read_judgebench(path: str | Path) -> list[PairVerdict]:
    """A JudgeBench judge-outputs file (module docstring)."""
    source = Path(path)
    rows: list[PairVerdict] = []
    for line, record in json_objects(source, not_object="a pair must be a JSON object"):
        pair_id = _need_str(record, "pair_id", source, line)
        original = _need_str(record, "original_id", source, line)
        where = _need_str(record, "source", source, line)
        label = _label(record.get("label"), source, line)
        judgments = record.get("judgments")
        if judgments is None:
            raise InputError(
                "the pair has no 'judgments': this is a pairs file, not a judge's outputs",
                source=source,
                line=line,
                field="judgments",
                hint="give the file run_judge.py wrote under outputs/",
            )
        if not isinstance(judgments, list) or not 1 <= len(judgments) <= 2:
            raise InputError(
                "'judgments' must be a list of one or two judgments",
                source=source,
                line=line,
                field="judgments",
            )
        decisions: list[Decision | None] = []
        scores: list[tuple[float, float] | None] = []
        model = ""
        for i, judgment in enumerate(judgments):
            key = f"judgments[{i}]"
            if judgment is None:
                decisions.append(None)
                scores.append(None)
                continue
            if not isinstance(judgment, dict):
                raise InputError(
                    "a judgment must be an object or null", source=source, line=line, field=key
                )
            decisions.append(_decision(judgment.get("decision"), source, line, f"{key}.decision"))
            scores.append(_scores(judgment, source, line, key))
            inner = judgment.get("judgment")
            if not model and isinstance(inner, dict) and isinstance(inner.get("judge_model"), str):
                model = inner["judge_model"]
        second = flip(decisions[1]) if len(decisions) == 2 else None
        back = scores[1] if len(scores) == 2 else None
        rows.append(
            PairVerdict(
                pair_id=pair_id,
                question_id=original,
                source=where,
                category=category_of(where),
                label=label,
                first=decisions[0],
                second=second,
                swapped=len(decisions) == 2,
                judge=str(record.get("judge_name") or "judge"),
                line=line,
                judge_model=model,
                scores=scores[0],
                scores_swapped=None if back is None else (back[1], back[0]),
            )
        )
    _unique(rows, source)
    return rows


def _unique(rows: list[PairVerdict], source: Path) -> None:
    seen: dict[str, int] = {}
    for row in rows:
        if row.pair_id in seen:
            raise InputError(
                f"pair {row.pair_id!r} appears twice (first on line {seen[row.pair_id]})",
                source=source,
                line=row.line,
                field="pair_id",
            )
        seen[row.pair_id] = row.line
    if not rows:
        raise InputError("the file holds no pairs", source=source)


def _mt_category(question_id: str) -> str:
    try:
        number = int(question_id)
    except ValueError:
        return "mt-bench"
    if 81 <= number <= 160:
        return _MT_CATEGORIES[(number - 81) // 10]
    return "mt-bench"


def _winner(value: Any, path: Path, line: int, key: str) -> Decision | None:
    table: dict[str, Decision | None] = {
        "model_1": "A>B", "model_2": "B>A", "tie": "A=B", "error": None,
    }  # fmt: skip
    if not isinstance(value, str) or value not in table:
        raise InputError(
            f"a winner is model_1, model_2, tie or error, not {value!r}",
            source=path,
            line=line,
            field=key,
        )
    return table[value]


def _human_labels(path: Path) -> dict[tuple[str, int, str, str], Counter[str]]:
    votes: dict[tuple[str, int, str, str], Counter[str]] = defaultdict(Counter)
    for line, record in json_objects(path, not_object="a human judgment must be an object"):
        qid = _need_str(record, "question_id", path, line)
        a = _need_str(record, "model_a", path, line)
        b = _need_str(record, "model_b", path, line)
        turn = record.get("turn", 1)
        if not isinstance(turn, int) or isinstance(turn, bool):
            raise InputError("turn must be an integer", source=path, line=line, field="turn")
        winner = record.get("winner")
        if isinstance(winner, str) and winner.startswith("tie"):
            winner = "tie"  # 'tie (bothbad)' too, as FastChat's compute_agreement.py counts it
        if winner not in ("model_a", "model_b", "tie"):
            raise InputError(
                f"winner is model_a, model_b or tie (also 'tie (bothbad)'), not {winner!r}",
                source=path,
                line=line,
                field="winner",
            )
        better = a if winner == "model_a" else b if winner == "model_b" else "tie"
        votes[(qid, turn, *sorted((a, b)))][better] += 1  # type: ignore[index]
    return votes


def read_mtbench(path: str | Path, labels: str | Path) -> tuple[list[PairVerdict], list[str]]:
    """FastChat pairwise judgments and MT-Bench human labels (module docstring).

    Returns the labelled pairs and the ids of pairs set aside (no strict majority label)."""
    source = Path(path)
    votes = _human_labels(Path(labels))
    rows: list[PairVerdict] = []
    set_aside: list[str] = []
    for line, record in json_objects(source, not_object="a judgment must be a JSON object"):
        qid = _need_str(record, "question_id", source, line)
        m1 = _need_str(record, "model_1", source, line)
        m2 = _need_str(record, "model_2", source, line)
        turn = record.get("turn", 1)
        if not isinstance(turn, int) or isinstance(turn, bool):
            raise InputError("turn must be an integer", source=source, line=line, field="turn")
        first = _winner(record.get("g1_winner"), source, line, "g1_winner")
        has_second = "g2_winner" in record
        second = _winner(record.get("g2_winner"), source, line, "g2_winner") if has_second else None
        judge = record.get("judge")
        name = str(judge[0]) if isinstance(judge, list) and judge else str(judge or "judge")
        pair_id = f"{qid}/{m1}/{m2}/turn{turn}"
        counts = votes.get((qid, turn, *sorted((m1, m2))))  # type: ignore[arg-type]
        if not counts:
            set_aside.append(pair_id)
            continue
        ranked = counts.most_common()
        top, n_top = ranked[0]
        if top == "tie" or (len(ranked) > 1 and ranked[1][1] == n_top):
            set_aside.append(pair_id)
            continue
        rows.append(
            PairVerdict(
                pair_id=pair_id,
                question_id=qid,
                source=f"mt-bench-{_mt_category(qid)}",
                category=_mt_category(qid),
                label="A>B" if top == m1 else "B>A",
                first=first,
                second=second,
                swapped=has_second,
                judge=name,
                line=line,
            )
        )
    if not rows:
        raise InputError(
            "no judged pair has a strict human label",
            source=source,
            hint="the labels file must hold MT-Bench human judgments of the same pairs",
        )
    _unique(rows, source)
    return rows, set_aside


def _score(record: Mapping[str, Any], names: tuple[str, str], path: Path, line: int) -> float:
    for key in names:
        if key in record:
            value = record[key]
            if isinstance(value, list) and len(value) == 1:
                value = value[0]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputError(
                    f"a score must be a number, not {value!r}", source=path, line=line, field=key
                )
            if not math.isfinite(float(value)):
                raise InputError("a score must be finite", source=path, line=line, field=key)
            return float(value)
    raise InputError(f"no {names[0]}", source=path, line=line, field=names[0])


def read_rewardbench(path: str | Path, *, judge: str = "reward-model") -> list[PairVerdict]:
    """Per-prompt chosen/rejected scores (module docstring)."""
    source = Path(path)
    rows: list[PairVerdict] = []
    for line, record in json_objects(source, not_object="a scored prompt must be an object"):
        key = "prompt_id" if "prompt_id" in record else "id"
        pid = _need_str(record, key, source, line)
        item = str(record.get("id", pid))
        subset = record.get("subset")
        if not isinstance(subset, str) or not subset:
            raise InputError("no subset", source=source, line=line, field="subset")
        chosen = _score(record, ("score_chosen", "scores_chosen"), source, line)
        rejected = _score(record, ("score_rejected", "scores_rejected"), source, line)
        decision: Decision = "A>B" if chosen > rejected else "B>A" if chosen < rejected else "A=B"
        rows.append(
            PairVerdict(
                pair_id=item if key == "id" else f"{pid}/{line}",
                question_id=pid,
                source=subset,
                category=subset,
                label="A>B",
                first=decision,
                second=None,
                swapped=False,
                judge=str(record.get("model") or judge),
                line=line,
                scores=(chosen, rejected),
            )
        )
    _unique(rows, source)
    return rows


def read_pairwise(
    path: str | Path, fmt: PairwiseFormat, *, labels: str | Path | None = None
) -> tuple[list[PairVerdict], list[str]]:
    """The pairs of one file in ``fmt``, and the ids of pairs set aside (MT-Bench)."""
    if fmt == "judgebench":
        return read_judgebench(path), []
    if fmt == "rewardbench":
        return read_rewardbench(path), []
    if fmt == "mt-bench":
        if labels is None:
            raise InputError(
                "MT-Bench judgments carry no label",
                field="--labels",
                hint="give the MT-Bench human judgments of the same pairs with --labels",
            )
        return read_mtbench(path, labels)
    raise InputError(f"unknown format {fmt!r}", hint=f"one of: {', '.join(PAIRWISE_FORMATS)}")
