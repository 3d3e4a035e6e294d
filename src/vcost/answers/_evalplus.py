"""EvalPlus's verdicts (``eval_results.json``) beside vcost's own grades of the same samples.

EvalPlus writes, per task, one verdict per sample in the samples file's order. Two layouts
are in use, both read here:

- older releases: ``{"date", "hash", "eval": {task_id: {"nfiles": n, "base": [[status,
  [per-test bool, ...]], ...], "plus": [[status, [...]], ...]}}}``, status ``success``,
  ``failed`` or ``timeout``;
- current releases: ``{"date", "hash", "eval": {task_id: [{"task_id", "solution",
  "base_status", "plus_status", "base_fail_tests", "plus_fail_tests"}, ...]}}``, status
  ``pass``, ``fail`` or ``timeout`` (``plus_status`` null with ``--base-only``).

A sample passes HumanEval+ ("base + plus") only when it passes both, as EvalPlus's own pass@k
counts it. EvalPlus writes the file as one JSON line, so a bad entry is named by its path in
the document (``eval["HumanEval/3"].base[2]``) rather than a line number; a syntax error has
its line.

The comparison matches EvalPlus's sample ``i`` of a task with vcost's answer
``model/task/i`` (``vcost answers import`` keeps the index) and counts, per test set, samples
both pass, both fail, and those only one of them passes, with Cohen's kappa; every disagreement
is listed with vcost's reason. A disagreement is where a reader looks first: a sample vcost's
hidden tests fail and EvalPlus's pass (or the reverse) shows what one test suite misses.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vcost.errors import InputError
from vcost.stats import cohen_kappa

__all__ = [
    "EvalPlusComparison",
    "EvalPlusDisagreement",
    "EvalPlusRow",
    "EvalPlusSample",
    "compare_evalplus",
    "read_evalplus_results",
]

_PASS = frozenset({"success", "pass"})
_STATUSES = frozenset({"success", "failed", "timeout", "pass", "fail"})
_HINT = "EvalPlus's eval_results.json: {'eval': {task_id: [...per sample...]}}"


@dataclass(frozen=True)
class EvalPlusSample:
    """EvalPlus's verdicts on one sample: base (HumanEval) and plus (HumanEval+) status."""

    task_id: str
    index: int
    base_status: str
    plus_status: str | None
    solution: str | None = None

    @property
    def base_pass(self) -> bool:
        return self.base_status in _PASS

    @property
    def plus_pass(self) -> bool | None:
        """Passes base and plus (None when EvalPlus ran the base tests only)."""
        if self.plus_status is None:
            return None
        return self.base_pass and self.plus_status in _PASS


def _bad(message: str, path: Path, where: str) -> InputError:
    return InputError(message, source=path, field=where, hint=_HINT)


def _status(value: Any, path: Path, where: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or value not in _STATUSES:
        raise _bad(
            f"not an EvalPlus status: {value!r} (expected one of {', '.join(sorted(_STATUSES))})",
            path,
            where,
        )
    return value


def _old_entry(value: Any, path: Path, where: str) -> str:
    if not isinstance(value, list) or not value:
        raise _bad("a verdict must be [status, [per-test results]]", path, where)
    status = _status(value[0], path, f"{where}[0]")
    assert status is not None
    return status


def _task(task_id: str, value: Any, path: Path) -> list[EvalPlusSample]:
    where = f'eval["{task_id}"]'
    if isinstance(value, list):  # current layout: one object per sample
        samples = []
        for i, entry in enumerate(value):
            at = f"{where}[{i}]"
            if not isinstance(entry, dict):
                raise _bad("a sample's verdict must be an object", path, at)
            base = _status(entry.get("base_status"), path, f"{at}.base_status")
            plus = _status(entry.get("plus_status"), path, f"{at}.plus_status", optional=True)
            solution = entry.get("solution")
            assert base is not None
            samples.append(
                EvalPlusSample(
                    task_id, i, base, plus, solution if isinstance(solution, str) else None
                )
            )
        return samples
    if not isinstance(value, dict):
        raise _bad("a task's verdicts must be a list or an object", path, where)
    base_list = value.get("base")
    if not isinstance(base_list, list):
        raise _bad("no 'base' list of verdicts", path, f"{where}.base")
    plus_list = value.get("plus") or []
    if not isinstance(plus_list, list):
        raise _bad("'plus' must be a list of verdicts", path, f"{where}.plus")
    if plus_list and len(plus_list) != len(base_list):
        raise _bad(
            f"{len(base_list)} base verdicts but {len(plus_list)} plus verdicts",
            path,
            f"{where}.plus",
        )
    nfiles = value.get("nfiles")
    if nfiles is not None and nfiles != len(base_list):
        raise _bad(f"nfiles is {nfiles} but there are {len(base_list)} verdicts", path, where)
    return [
        EvalPlusSample(
            task_id,
            i,
            _old_entry(b, path, f"{where}.base[{i}]"),
            _old_entry(plus_list[i], path, f"{where}.plus[{i}]") if plus_list else None,
        )
        for i, b in enumerate(base_list)
    ]


def read_evalplus_results(path: str | Path) -> list[EvalPlusSample]:
    """Every sample's EvalPlus verdicts, task by task in the file's order."""
    source = Path(path)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(f"not JSON: {error.msg}", source=source, line=error.lineno) from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read the file: {error}", source=source) from None
    if not isinstance(data, dict) or not isinstance(data.get("eval"), dict):
        raise _bad("no 'eval' object of per-task verdicts", source, "eval")
    samples: list[EvalPlusSample] = []
    for task_id, value in data["eval"].items():
        samples += _task(str(task_id), value, source)
    if not samples:
        raise _bad("the file holds no verdicts", source, "eval")
    return samples


@dataclass(frozen=True)
class EvalPlusRow:
    """Agreement for one model on one EvalPlus test set (``base`` or ``base+plus``)."""

    model: str
    evalplus_set: str
    samples: int
    both_pass: int
    both_fail: int
    evalplus_only: int
    vcost_only: int
    kappa: float | None

    @property
    def agreement(self) -> float:
        return (self.both_pass + self.both_fail) / self.samples if self.samples else math.nan


@dataclass(frozen=True)
class EvalPlusDisagreement:
    """One sample the two graders disagree on."""

    answer_id: str
    task_id: str
    index: int
    evalplus_set: str
    evalplus_status: str
    vcost_ground_truth: str
    vcost_reason: str
    failed_tags: tuple[str, ...]


@dataclass(frozen=True)
class EvalPlusComparison:
    rows: tuple[EvalPlusRow, ...]
    disagreements: tuple[EvalPlusDisagreement, ...]
    unmatched: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": [{**asdict(r), "agreement": r.agreement} for r in self.rows],
            "disagreements": [asdict(d) for d in self.disagreements],
            "unmatched": list(self.unmatched),
        }


def _row(model: str, name: str, pairs: Sequence[tuple[bool, bool]]) -> EvalPlusRow:
    both_pass = sum(e and v for e, v in pairs)
    both_fail = sum(not e and not v for e, v in pairs)
    evalplus_only = sum(e and not v for e, v in pairs)
    vcost_only = sum(v and not e for e, v in pairs)
    kappa: float | None = None
    if pairs:
        value = cohen_kappa([float(e) for e, _ in pairs], [float(v) for _, v in pairs])
        kappa = None if math.isnan(value) else float(value)
    return EvalPlusRow(
        model, name, len(pairs), both_pass, both_fail, evalplus_only, vcost_only, kappa
    )


def compare_evalplus(
    results: Sequence[EvalPlusSample],
    records: Sequence[Mapping[str, Any]],
    *,
    model: str,
    task_ids: Mapping[str, str] | None = None,
) -> EvalPlusComparison:
    """Agreement of EvalPlus's verdicts with vcost's grades of one model's samples.

    ``task_ids`` maps EvalPlus's task id to the bank task's id (``HumanEval/3`` →
    ``humaneval-003``); without it, the ids must match, or follow that naming."""
    graded = {(str(r["task_id"]), int(r["repeat"])): r for r in records if r.get("model") == model}
    sets: dict[str, list[tuple[bool, bool]]] = {"base": [], "base+plus": []}
    disagreements: list[EvalPlusDisagreement] = []
    unmatched: list[str] = []
    for sample in results:
        bank_id = _bank_id(sample.task_id, task_ids)
        record = graded.get((bank_id, sample.index))
        if record is None:
            unmatched.append(f"{sample.task_id}#{sample.index}")
            continue
        vcost_pass = record["ground_truth"] == "correct"
        verdicts: list[tuple[str, bool, str]] = [("base", sample.base_pass, sample.base_status)]
        if sample.plus_pass is not None:
            shown = f"base {sample.base_status}, plus {sample.plus_status}"
            verdicts.append(("base+plus", sample.plus_pass, shown))
        for name, evalplus_pass, status in verdicts:
            sets[name].append((evalplus_pass, vcost_pass))
            if evalplus_pass != vcost_pass:
                disagreements.append(
                    EvalPlusDisagreement(
                        answer_id=str(record["answer_id"]),
                        task_id=sample.task_id,
                        index=sample.index,
                        evalplus_set=name,
                        evalplus_status=status,
                        vcost_ground_truth=str(record["ground_truth"]),
                        vcost_reason=str(record.get("reason") or ""),
                        failed_tags=tuple(record.get("failed_tags") or ()),
                    )
                )
    rows = tuple(_row(model, name, pairs) for name, pairs in sets.items() if pairs)
    return EvalPlusComparison(rows, tuple(disagreements), tuple(unmatched))


def _bank_id(task_id: str, task_ids: Mapping[str, str] | None) -> str:
    if task_ids is not None and task_id in task_ids:
        return task_ids[task_id]
    prefix, _, number = task_id.rpartition("/")
    if prefix == "HumanEval" and number.isdigit():
        return f"humaneval-{int(number):03d}"
    return task_id
