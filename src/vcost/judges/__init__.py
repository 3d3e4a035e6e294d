"""AI checkers: judge selected answers, perturbed configurations, consistency, pairwise order.

::

    log = vcost.judges.JudgmentLog("run/judgments.jsonl")
    vcost.judges.judge(selection, tasks, checkers, client=client, log=log, k=5)
    trace = vcost.judges.judgments_trace(log.judgments("standard"), selection)

See docs/judges.md.

The Inspect import (which needs pandas) is loaded on first use, so judging itself does not
import pandas: ``vcost judge run`` imports it while its calls are in flight.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from vcost.judges._consistency import Consistency, consistency
from vcost.judges._judge import (
    TRACE_MODULES,
    JudgeResult,
    JudgmentLog,
    judge,
    judgment_key,
    judgments_trace,
    write_judgments_trace,
)
from vcost.judges._pairwise import OrderSwap, PairwiseLog, judge_pairs, order_swap
from vcost.judges._perturb import PERTURBATIONS, FlipRate, Perturbation, flip_rate, perturb
from vcost.judges._prompt import (
    JUDGE_INSTRUCTIONS,
    JUDGE_PROMPT_VERSION,
    ParsedReply,
    judge_messages,
    parse_reply,
)

if TYPE_CHECKING:
    from vcost.judges._inspect import (
        InspectImport,
        inspect_answer_id,
        inspect_answers,
        inspect_trace,
    )

_LAZY = {"InspectImport", "inspect_answer_id", "inspect_answers", "inspect_trace"}

__all__ = [
    "JUDGE_INSTRUCTIONS",
    "JUDGE_PROMPT_VERSION",
    "PERTURBATIONS",
    "TRACE_MODULES",
    "Consistency",
    "FlipRate",
    "InspectImport",
    "JudgeResult",
    "JudgmentLog",
    "OrderSwap",
    "PairwiseLog",
    "ParsedReply",
    "Perturbation",
    "consistency",
    "flip_rate",
    "inspect_answer_id",
    "inspect_answers",
    "inspect_trace",
    "judge",
    "judge_messages",
    "judge_pairs",
    "judgment_key",
    "judgments_trace",
    "order_swap",
    "parse_reply",
    "perturb",
    "write_judgments_trace",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("vcost.judges._inspect"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
