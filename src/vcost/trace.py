"""The verification trace: the records every stage of vcost writes and reads.

The *episode* is the spine (DESIGN.md): one verifier x one item x one attempt, in a do block
(the verifier solves the task) or a check block (the verifier judges an answer). The trace is
four tables, each a pandas DataFrame with the columns declared here:

- ``answers``: the outputs under verification, with ground truth fixed before any episode;
- ``verifiers``: people or models, with metadata for stratification;
- ``episodes``: the verification trace proper;
- ``events``: the activity log inside episodes.

An episode records how it *ended* (``termination``). The protocol's four outcomes
(Crescitelli et al. 2026, Sec. 6 Step 3) need ground truth as well, so they are derived, never
stored: see :func:`outcome_of`. The column contract is documented for users in
docs/trace-format.md; this module is its single source in code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import pandas as pd

__all__ = [
    "ANSWER_COLUMNS",
    "EPISODE_COLUMNS",
    "EVENT_COLUMNS",
    "HUMAN_CONFIDENCE_LEVELS",
    "VERIFIER_COLUMNS",
    "Block",
    "Column",
    "GroundTruth",
    "Outcome",
    "Role",
    "Termination",
    "Trace",
    "Verdict",
    "VerifierKind",
    "outcome_of",
    "wrong_verdict_kind",
]


class Block(StrEnum):
    """Which kind of block an episode belongs to."""

    DO = "do"
    CHECK = "check"


class Termination(StrEnum):
    """How an episode ended, as recorded (ground truth not yet applied).

    Check episodes end with ``verdict``, ``budget_exhausted`` or ``unverifiable``; do episodes
    end with ``submitted`` or ``budget_exhausted`` (the do-time cap).
    """

    VERDICT = "verdict"
    BUDGET_EXHAUSTED = "budget_exhausted"
    UNVERIFIABLE = "unverifiable"
    SUBMITTED = "submitted"


CHECK_TERMINATIONS = frozenset(
    {Termination.VERDICT, Termination.BUDGET_EXHAUSTED, Termination.UNVERIFIABLE}
)
DO_TERMINATIONS = frozenset({Termination.SUBMITTED, Termination.BUDGET_EXHAUSTED})


class Verdict(StrEnum):
    """A verifier's verdict on an answer: accept (judged correct) or reject (judged incorrect)."""

    ACCEPT = "accept"
    REJECT = "reject"


class GroundTruth(StrEnum):
    """Ground truth of an answer, fixed by hidden tests before any verification."""

    CORRECT = "correct"
    INCORRECT = "incorrect"
    INDETERMINATE = "indeterminate"


class Role(StrEnum):
    """Why an answer is in the study: a model's output, or a held-out known-correct baseline."""

    MODEL = "model"
    BASELINE = "baseline"


class VerifierKind(StrEnum):
    """A verifier is a person or a model; both write the same kind of episode."""

    PERSON = "person"
    MODEL = "model"


class Outcome(StrEnum):
    """The protocol's four mutually exclusive episode outcomes (Sec. 6, Step 3).

    A wrong verdict is further split into false accept / false reject by
    :func:`wrong_verdict_kind`. Episodes on answers whose ground truth is unresolved have no
    outcome: they form the indeterminate category.
    """

    CORRECT_VERDICT = "correct_verdict"
    WRONG_VERDICT = "wrong_verdict"
    BUDGET_EXHAUSTED = "budget_exhausted"
    UNVERIFIABLE = "unverifiable"


HUMAN_CONFIDENCE_LEVELS: tuple[float, ...] = (0.5, 0.75, 1.0)
"""Confidence levels a person may report (study design: 50/75/100 %); models give a probability."""


def outcome_of(
    termination: Termination, verdict: Verdict | None, ground_truth: GroundTruth
) -> Outcome | None:
    """The protocol outcome of one check episode, or ``None`` when ground truth is unresolved."""
    if ground_truth is GroundTruth.INDETERMINATE:
        return None
    if termination is Termination.BUDGET_EXHAUSTED:
        return Outcome.BUDGET_EXHAUSTED
    if termination is Termination.UNVERIFIABLE:
        return Outcome.UNVERIFIABLE
    if termination is not Termination.VERDICT or verdict is None:
        raise ValueError(f"a check episode cannot end with {termination!s} and verdict {verdict}")
    right = (verdict is Verdict.ACCEPT) == (ground_truth is GroundTruth.CORRECT)
    return Outcome.CORRECT_VERDICT if right else Outcome.WRONG_VERDICT


def wrong_verdict_kind(ground_truth: GroundTruth) -> str:
    """Name a wrong verdict: ``false_accept`` on an incorrect answer, else ``false_reject``."""
    return "false_accept" if ground_truth is GroundTruth.INCORRECT else "false_reject"


@dataclass(frozen=True)
class Column:
    """One column of the trace contract."""

    name: str
    dtype: str  # "str", "int", "float", "bool", "datetime", "json"
    required: bool
    doc: str
    choices: tuple[str, ...] = ()


ANSWER_COLUMNS: tuple[Column, ...] = (
    Column("answer_id", "str", True, "unique id of the output under verification"),
    Column("task_id", "str", True, "the task (input x) the answer responds to"),
    Column("model_id", "str", True, "generative configuration that produced it"),
    Column(
        "ground_truth",
        "str",
        True,
        "fixed by hidden tests before any verification",
        tuple(GroundTruth),
    ),
    Column("role", "str", False, "model output or known-correct baseline", tuple(Role)),
    Column("source", "str", False, "natural, planted, reference, ..."),
    Column("error_level", "str", False, "obvious, subtle, intermediate (wrong answers)"),
    Column("error_type", "str", False, "kind of error (wrong answers)"),
)

VERIFIER_COLUMNS: tuple[Column, ...] = (
    Column("verifier_id", "str", True, "unique id of a person or a model"),
    Column("kind", "str", True, "person or model", tuple(VerifierKind)),
    Column("experience", "str", False, "experience stratum (people)"),
    Column("model_family", "str", False, "model family (models)"),
    Column("extra", "json", False, "other metadata as a JSON object (screening, model version)"),
)

EPISODE_COLUMNS: tuple[Column, ...] = (
    Column("episode_id", "str", True, "unique id of the episode"),
    Column("verifier_id", "str", True, "who verified (a verifiers row)"),
    Column("block", "str", True, "do or check", tuple(Block)),
    Column("task_id", "str", False, "task of a do episode (check episodes take the answer's)"),
    Column("answer_id", "str", False, "answer judged (required in check episodes)"),
    Column("attempt", "int", False, "attempt number, from 1"),
    Column("started_at", "datetime", False, "UTC start"),
    Column("ended_at", "datetime", False, "UTC end"),
    Column("effort", "float", True, "effort spent until termination, in the spec's cost unit"),
    Column("budget", "float", True, "budget B (check) or cap (do) in the spec's cost unit"),
    Column("termination", "str", True, "how the episode ended", tuple(Termination)),
    Column("verdict", "str", False, "accept or reject, iff termination is verdict", tuple(Verdict)),
    Column("confidence", "float", False, "50/75/100 % for people, a probability for models"),
    Column("reason", "str", False, "one-line reason or counterexample"),
    Column("passed", "bool", False, "do episodes: the submission passed the hidden tests"),
    Column("spec_hash", "str", False, "hash of the locked spec the episode ran under"),
)

EVENT_COLUMNS: tuple[Column, ...] = (
    Column("event_id", "str", True, "unique id of the event"),
    Column("episode_id", "str", True, "the episode it happened in"),
    Column("at", "datetime", True, "UTC wall-clock time"),
    Column("offset_ms", "int", False, "monotonic milliseconds since the episode started"),
    Column("kind", "str", True, "focus, blur, keypress, run, submit, verdict, ..."),
    Column("payload", "json", False, "event details as a JSON object"),
)


def _empty(columns: tuple[Column, ...]) -> pd.DataFrame:
    return pd.DataFrame({c.name: pd.Series(dtype=object) for c in columns})


@dataclass(frozen=True)
class Trace:
    """A validated verification trace: answers, verifiers, episodes and events.

    Build one with :func:`vcost.trace_io.read_trace` (files) or the store; both validate.
    """

    answers: pd.DataFrame
    episodes: pd.DataFrame
    verifiers: pd.DataFrame = field(default_factory=lambda: _empty(VERIFIER_COLUMNS))
    events: pd.DataFrame = field(default_factory=lambda: _empty(EVENT_COLUMNS))
