"""AI checkers: judge selected answers, perturbed configurations, consistency, pairwise order.

::

    log = vcost.judges.JudgmentLog("run/judgments.jsonl")
    vcost.judges.judge(selection, tasks, checkers, client=client, log=log, k=5)
    trace = vcost.judges.judgments_trace(log.judgments("standard"), selection)

See docs/judges.md.
"""

from __future__ import annotations

from vcost.judges._consistency import Consistency, consistency
from vcost.judges._inspect import InspectImport, inspect_answer_id, inspect_answers, inspect_trace
from vcost.judges._judge import JudgeResult, JudgmentLog, judge, judgment_key, judgments_trace
from vcost.judges._pairwise import OrderSwap, PairwiseLog, judge_pairs, order_swap
from vcost.judges._perturb import PERTURBATIONS, FlipRate, Perturbation, flip_rate, perturb
from vcost.judges._prompt import (
    JUDGE_INSTRUCTIONS,
    JUDGE_PROMPT_VERSION,
    ParsedReply,
    judge_messages,
    parse_reply,
)

__all__ = [
    "JUDGE_INSTRUCTIONS",
    "JUDGE_PROMPT_VERSION",
    "PERTURBATIONS",
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
]
