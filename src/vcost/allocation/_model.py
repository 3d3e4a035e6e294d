"""Allocation records: the design, pairs, assignments, answers' verdict targets, violations.

Everything here is a frozen dataclass with a ``to_dict``/``from_dict`` pair, so an allocation
round-trips through JSON exactly (:mod:`._io`).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal

__all__ = [
    "CORE",
    "FULL",
    "Allocation",
    "AnswerTarget",
    "Assignment",
    "Block",
    "Design",
    "DesignName",
    "Order",
    "Pair",
    "Replacement",
    "Severity",
    "Violation",
    "design_named",
    "stream",
]

Block = Literal["do", "check"]
Order = Literal["do-first", "check-first"]
DesignName = Literal["core", "full"]
Severity = Literal["error", "warning"]


def stream(seed: int, *labels: object) -> random.Random:
    """An independent random stream for one stage of the allocation.

    Each stage (pair orientation, the Latin square, session grouping, order, ...) draws from
    its own stream, derived from the seed and the stage's labels. So changing one setting
    changes only the stages that depend on it: the 2-pair contingency (fewer pairs per
    session, same seed) regroups sessions but keeps who does and checks what.
    """
    text = json.dumps([seed, *[str(label) for label in labels]])
    return random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))


@dataclass(frozen=True)
class Design:
    """The allocation rules of one design of the study (seed 003).

    ``core`` (the core study): every participant meets every pair of a domain once, in
    ``ceil(pairs / pairs_per_session)`` sessions of ``pairs_per_session`` pairs (3, so 4
    sessions for 12 pairs), and the panel size sets the verdicts per answer (1 with 4 people).
    ``full`` (the full study): every answer gets ``verdicts_per_answer`` check slots (3;
    ``subset_verdicts`` = 6 for ``subset_size`` = 12 wrong answers per domain), the slots make
    the sessions, and the sessions are shared out over the panel.
    """

    name: DesignName
    pairs_per_session: int
    sessions: int | None
    """core: the sessions per participant and domain the design expects (4); full: ``None``."""
    min_correct: int
    min_wrong: int
    verdicts_per_answer: int | None
    """full: check slots per answer (3); core: ``None`` (the panel size decides)."""
    subset_size: int = 0
    """full: wrong answers per domain that get ``subset_verdicts`` verdicts (12)."""
    subset_verdicts: int = 6
    practice_tasks: int = 2
    time_tolerance: float = 0.2
    """Paired tasks' estimated do times within this fraction: longer <= (1 + t) x shorter."""
    max_sessions_per_domain: int | None = None
    """full: most sessions one participant takes in a domain (``FULL``: 1; ``None``: up to
    ``pairs // pairs_per_session``, and never two sessions that share a pair)."""

    def __post_init__(self) -> None:
        if self.pairs_per_session < 1:
            raise ValueError("pairs_per_session must be >= 1")
        if self.min_correct < 0 or self.min_wrong < 0:
            raise ValueError("session minimums must be >= 0")
        if self.verdicts_per_answer is not None and self.verdicts_per_answer < 1:
            raise ValueError("verdicts_per_answer must be >= 1")
        if self.subset_size < 0 or self.subset_verdicts < 1:
            raise ValueError("subset_size must be >= 0 and subset_verdicts >= 1")
        if self.practice_tasks < 0 or self.time_tolerance < 0:
            raise ValueError("practice_tasks and time_tolerance must be >= 0")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Design:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def with_(self, **changes: Any) -> Design:
        """A copy with some settings changed (``None`` values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


CORE = Design("core", pairs_per_session=3, sessions=4, min_correct=1, min_wrong=1,
              verdicts_per_answer=None)  # fmt: skip
"""The core study: 3 pairs a session, 4 sessions + practice, >= 1 correct and 1 wrong a session."""

FULL = Design("full", pairs_per_session=6, sessions=None, min_correct=2, min_wrong=2,
              verdicts_per_answer=3, subset_size=12, subset_verdicts=6,
              max_sessions_per_domain=1)  # fmt: skip
"""The full study: 6 pairs a session, 3 verdicts per answer (6 for 12 wrong answers per domain),
>= 2 correct and 2 wrong a session, one session per participant and domain ("a participant may
come back for the other domain in a separate session")."""


def design_named(name: str) -> Design:
    """``CORE`` or ``FULL`` by name."""
    if name == "core":
        return CORE
    if name == "full":
        return FULL
    raise ValueError(f"design must be core or full, not {name!r}")


@dataclass(frozen=True)
class Pair:
    """Two tasks of one domain: whoever does one checks an AI answer to the other."""

    pair_id: str
    domain: str
    group: str
    """The difficulty label both tasks share (``easy+medium`` for a pair across labels)."""
    first: str
    second: str
    first_minutes: float
    second_minutes: float
    first_skill: str = ""
    second_skill: str = ""
    skill_match: float = 0.0
    """Overlap of the two skills' words (Jaccard), 1.0 for the same skill."""

    @property
    def tasks(self) -> tuple[str, str]:
        return (self.first, self.second)

    @property
    def ratio(self) -> float:
        """Longer estimated do time over the shorter one (1.0 = equal)."""
        low, high = sorted((self.first_minutes, self.second_minutes))
        return high / low if low > 0 else float("inf")

    def within(self, tolerance: float) -> bool:
        """Whether the do times are within ``tolerance`` of each other."""
        return self.ratio <= 1 + tolerance + 1e-9

    @property
    def cross_group(self) -> bool:
        return "+" in self.group

    def partner(self, task_id: str) -> str:
        if task_id == self.first:
            return self.second
        if task_id == self.second:
            return self.first
        raise KeyError(task_id)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Pair:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class AnswerTarget:
    """An answer checkers may see, with its ground truth and its target number of verdicts."""

    answer_id: str
    task_id: str
    domain: str
    ground_truth: Literal["correct", "incorrect"]
    source: str
    model: str
    error_type: str | None = None
    error_level: str | None = None
    target: int | None = None
    """full: the check slots it gets (3, or 6 in the subset); core: ``None`` (the square
    decides, about panel / 4)."""
    subset: bool = False

    @property
    def wrong(self) -> bool:
        return self.ground_truth == "incorrect"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnswerTarget:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Assignment:
    """One item a participant meets: do a task, or check an AI answer to its pair partner.

    ``session`` 0 is the practice session; ``position`` counts from 1 through the session
    (the first block, then the second); ``order`` says which block comes first. ``budget`` is in
    minutes: the check budget B for a check, the do-time cap for a do (``None``: not declared).
    ``replaces`` names the assignment this one takes over (the reserve rule; a session moved at
    the hard stop), since stored assignments are never rewritten.
    """

    assignment_id: str
    allocation_id: str
    participant: str
    session: int
    session_id: str
    domain: str
    order: Order
    position: int
    block: Block
    pair_id: str
    task_id: str
    answer_id: str | None = None
    budget: float | None = None
    replaces: str | None = None

    @property
    def practice(self) -> bool:
        return self.session == 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Assignment:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Violation:
    """A rule the allocation does not meet, said plainly; ``error`` breaks the design."""

    rule: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"[{self.severity}] {self.rule}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Violation:
        return cls(data["rule"], data["message"], data.get("severity", "error"))


@dataclass(frozen=True)
class Replacement:
    """The reserve rule applied: ``reserve`` took ``dropped``'s place before their first session."""

    dropped: str
    reserve: str
    assignments: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Replacement:
        return cls(data["dropped"], data["reserve"], int(data["assignments"]))


@dataclass(frozen=True)
class Allocation:
    """Who does and checks what, in which session and order; with what could not be met.

    ``participants`` are panel places in allocation order; ``reserves`` the people who may take
    a place under the reserve rule (:func:`~vcost.allocation.apply_reserve`). ``answers`` holds
    every answer of the selection with its verdict target; ``unpaired`` the tasks left out of
    every pair; ``violations`` what could not be met when the allocation was built (the report
    adds what :func:`~vcost.allocation.check_allocation` finds).
    """

    allocation_id: str
    design: Design
    seed: int
    participants: tuple[str, ...]
    pairs: tuple[Pair, ...]
    answers: tuple[AnswerTarget, ...]
    assignments: tuple[Assignment, ...]
    reserves: tuple[str, ...] = ()
    practice_pairs: tuple[Pair, ...] = ()
    unpaired: tuple[str, ...] = ()
    violations: tuple[Violation, ...] = ()
    notes: tuple[str, ...] = ()
    replacements: tuple[Replacement, ...] = ()
    spec_hash: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def errors(self) -> tuple[Violation, ...]:
        return tuple(v for v in self.violations if v.severity == "error")

    def of(self, participant: str) -> tuple[Assignment, ...]:
        """One participant's assignments in session and position order."""
        mine = [a for a in self.assignments if a.participant == participant]
        return tuple(sorted(mine, key=lambda a: (a.session, a.position)))

    def answer(self, answer_id: str) -> AnswerTarget:
        for a in self.answers:
            if a.answer_id == answer_id:
                return a
        raise KeyError(answer_id)

    def pair(self, pair_id: str) -> Pair:
        for p in (*self.pairs, *self.practice_pairs):
            if p.pair_id == pair_id:
                return p
        raise KeyError(pair_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": 1,
            "allocation_id": self.allocation_id,
            "design": self.design.to_dict(),
            "seed": self.seed,
            "spec_hash": self.spec_hash,
            "participants": list(self.participants),
            "reserves": list(self.reserves),
            "pairs": [p.to_dict() for p in self.pairs],
            "practice_pairs": [p.to_dict() for p in self.practice_pairs],
            "unpaired": list(self.unpaired),
            "answers": [a.to_dict() for a in self.answers],
            "violations": [v.to_dict() for v in self.violations],
            "notes": list(self.notes),
            "replacements": [r.to_dict() for r in self.replacements],
            "meta": dict(self.meta),
            "assignments": [a.to_dict() for a in self.assignments],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Allocation:
        return cls(
            allocation_id=str(data["allocation_id"]),
            design=Design.from_dict(data["design"]),
            seed=int(data["seed"]),
            spec_hash=data.get("spec_hash"),
            participants=tuple(str(p) for p in data["participants"]),
            reserves=tuple(str(p) for p in data.get("reserves", ())),
            pairs=tuple(Pair.from_dict(p) for p in data["pairs"]),
            practice_pairs=tuple(Pair.from_dict(p) for p in data.get("practice_pairs", ())),
            unpaired=tuple(data.get("unpaired", ())),
            answers=tuple(AnswerTarget.from_dict(a) for a in data["answers"]),
            violations=tuple(Violation.from_dict(v) for v in data.get("violations", ())),
            notes=tuple(data.get("notes", ())),
            replacements=tuple(Replacement.from_dict(r) for r in data.get("replacements", ())),
            meta=dict(data.get("meta", {})),
            assignments=tuple(Assignment.from_dict(a) for a in data["assignments"]),
        )


def allocation_id_for(parts: Sequence[object]) -> str:
    """A short content hash of an allocation's inputs: equal inputs, equal id."""
    text = json.dumps(list(parts), sort_keys=True, default=str, separators=(",", ":"))
    return "al-" + hashlib.sha256(text.encode()).hexdigest()[:10]
