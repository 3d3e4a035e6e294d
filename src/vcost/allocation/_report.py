"""The allocation report: the counts the study design asks to report, and what was not met.

"The script reports the do count per task, the verdict count per answer, how many wrong
answers each session has" (seed 003, full study, Allocation step 5), and "report the actual
allocation" (core study). Practice sessions are left out of every count.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from vcost.allocation._model import Allocation, Replacement, Violation

__all__ = [
    "AllocationReport",
    "AnswerLoad",
    "ParticipantLoad",
    "SessionMix",
    "TaskLoad",
    "allocation_report",
    "report_markdown",
]


@dataclass(frozen=True)
class TaskLoad:
    """How often a task is done, and how often its correct and wrong answers are checked."""

    task_id: str
    domain: str
    group: str
    pair_id: str
    done: int
    checked_correct: int
    checked_wrong: int


@dataclass(frozen=True)
class AnswerLoad:
    """Verdicts an answer will get (and its target, in the full design)."""

    answer_id: str
    task_id: str
    ground_truth: str
    source: str
    subset: bool
    target: int | None
    verdicts: int


@dataclass(frozen=True)
class SessionMix:
    """One main session: its pairs and how many correct and wrong answers it checks."""

    participant: str
    session: int
    domain: str
    order: str
    pairs: int
    correct: int
    wrong: int


@dataclass(frozen=True)
class ParticipantLoad:
    """One participant's main sessions, do attempts and checks."""

    participant: str
    sessions: int
    done: int
    checked_correct: int
    checked_wrong: int
    first_order: str | None


@dataclass(frozen=True)
class AllocationReport:
    """Everything the allocation report shows (:func:`allocation_report`)."""

    allocation_id: str
    design: str
    seed: int
    participants: tuple[str, ...]
    reserves: tuple[str, ...]
    pairs: int
    tasks: tuple[TaskLoad, ...]
    answers: tuple[AnswerLoad, ...]
    sessions: tuple[SessionMix, ...]
    people: tuple[ParticipantLoad, ...]
    checks: int
    wrong_checks: int
    wrong_per_session: Mapping[int, int]
    """How many sessions check 0, 1, 2, ... wrong answers."""
    violations: tuple[Violation, ...]
    notes: tuple[str, ...]
    replacements: tuple[Replacement, ...]

    @property
    def wrong_fraction(self) -> float:
        """The actual share of wrong answers among the checks (the design's mix: 0.5)."""
        return self.wrong_checks / self.checks if self.checks else 0.0

    @property
    def ok(self) -> bool:
        """No error-level violation."""
        return not any(v.severity == "error" for v in self.violations)

    def to_dict(self) -> dict[str, Any]:
        body = asdict(self)
        body["wrong_per_session"] = {str(k): v for k, v in self.wrong_per_session.items()}
        body["wrong_fraction"] = round(self.wrong_fraction, 4)
        body["ok"] = self.ok
        return body


def allocation_report(allocation: Allocation) -> AllocationReport:
    """Counts per task, answer, session and participant; the mix; the violations."""
    answers = {a.answer_id: a for a in allocation.answers}
    main = [a for a in allocation.assignments if a.session > 0]
    done = Counter(a.task_id for a in main if a.block == "do")
    verdicts = Counter(a.answer_id for a in main if a.block == "check")
    tasks: list[TaskLoad] = []
    for pair in allocation.pairs:
        for task_id in pair.tasks:
            mine = [a for a in allocation.answers if a.task_id == task_id]
            tasks.append(
                TaskLoad(
                    task_id=task_id,
                    domain=pair.domain,
                    group=pair.group,
                    pair_id=pair.pair_id,
                    done=done[task_id],
                    checked_correct=sum(verdicts[a.answer_id] for a in mine if not a.wrong),
                    checked_wrong=sum(verdicts[a.answer_id] for a in mine if a.wrong),
                )
            )
    paired = {t for p in allocation.pairs for t in p.tasks}
    answer_rows = tuple(
        AnswerLoad(
            answer_id=a.answer_id,
            task_id=a.task_id,
            ground_truth=a.ground_truth,
            source=a.source,
            subset=a.subset,
            target=a.target,
            verdicts=verdicts[a.answer_id],
        )
        for a in allocation.answers
        if a.task_id in paired
    )
    grouped: dict[tuple[str, int], list[Any]] = defaultdict(list)
    for row in main:
        grouped[(row.participant, row.session)].append(row)
    sessions: list[SessionMix] = []
    for (person, number), rows in grouped.items():
        checked = [answers[r.answer_id] for r in rows if r.block == "check" and r.answer_id]
        sessions.append(
            SessionMix(
                participant=person,
                session=number,
                domain=rows[0].domain,
                order=rows[0].order,
                pairs=len({r.pair_id for r in rows}),
                correct=sum(not a.wrong for a in checked),
                wrong=sum(a.wrong for a in checked),
            )
        )
    rank = {p: i for i, p in enumerate(allocation.participants)}
    sessions.sort(key=lambda s: (rank.get(s.participant, len(rank)), s.session))
    people: list[ParticipantLoad] = []
    for person in allocation.participants:
        mine_s = [s for s in sessions if s.participant == person]
        people.append(
            ParticipantLoad(
                participant=person,
                sessions=len(mine_s),
                done=sum(s.pairs for s in mine_s),
                checked_correct=sum(s.correct for s in mine_s),
                checked_wrong=sum(s.wrong for s in mine_s),
                first_order=mine_s[0].order if mine_s else None,
            )
        )
    checks = sum(s.correct + s.wrong for s in sessions)
    wrong = sum(s.wrong for s in sessions)
    distribution = Counter(s.wrong for s in sessions)
    return AllocationReport(
        allocation_id=allocation.allocation_id,
        design=allocation.design.name,
        seed=allocation.seed,
        participants=allocation.participants,
        reserves=allocation.reserves,
        pairs=len(allocation.pairs),
        tasks=tuple(tasks),
        answers=answer_rows,
        sessions=tuple(sessions),
        people=tuple(people),
        checks=checks,
        wrong_checks=wrong,
        wrong_per_session=dict(sorted(distribution.items())),
        violations=allocation.violations,
        notes=allocation.notes,
        replacements=allocation.replacements,
    )


def _table(header: list[str], rows: list[list[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def report_markdown(report: AllocationReport, allocation: Allocation) -> str:
    """The report as Markdown (written beside the assignments as report.md)."""
    d = allocation.design
    lines = [
        f"# Allocation {report.allocation_id}",
        "",
        f"Design **{report.design}** (seed {report.seed}): {d.pairs_per_session} pairs per "
        f"session, at least {d.min_correct} correct and {d.min_wrong} wrong answers per session. "
        f"Panel of {len(report.participants)}: {', '.join(report.participants)}"
        + (f"; reserves: {', '.join(report.reserves)}" if report.reserves else "")
        + ".",
        "",
        f"Checks: {report.checks}, of them wrong answers: {report.wrong_checks} "
        f"({report.wrong_fraction:.1%}). Sessions by wrong answers checked: "
        + ", ".join(f"{k} wrong: {v}" for k, v in report.wrong_per_session.items())
        + ".",
        "",
        "## Constraints",
        "",
    ]
    if report.ok:
        lines.append(
            "Every rule of the design holds" + (" (warnings below)." if report.violations else ".")
        )
    if report.violations:
        lines += [""] + [f"- **{v.severity}** `{v.rule}`: {v.message}" for v in report.violations]
    if report.notes:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in report.notes]
    if report.replacements:
        lines += ["", "Reserve rule applied:", ""]
        lines += [
            f"- {r.reserve} took {r.dropped}'s place ({r.assignments} assignments)"
            for r in report.replacements
        ]
    lines += ["", "## Pairs", ""]
    lines += _table(
        ["pair", "domain", "group", "do times (min)", "ratio", "skills", "skill match"],
        [
            [p.pair_id, p.domain, p.group, f"{p.first_minutes:g} / {p.second_minutes:g}",
             f"{p.ratio:.2f}", f"{p.first_skill} / {p.second_skill}", f"{p.skill_match:.2f}"]
            for p in allocation.pairs
        ],
    )  # fmt: skip
    lines += ["", "## Do attempts and checks per task", ""]
    lines += _table(
        ["task", "group", "done", "correct answer checked", "wrong answer checked"],
        [[t.task_id, t.group, t.done, t.checked_correct, t.checked_wrong] for t in report.tasks],
    )
    lines += ["", "## Verdicts per answer", ""]
    lines += _table(
        ["answer", "task", "ground truth", "source", "subset", "target", "verdicts"],
        [
            [a.answer_id, a.task_id, a.ground_truth, a.source, "yes" if a.subset else "",
             "" if a.target is None else a.target, a.verdicts]
            for a in report.answers
        ],
    )  # fmt: skip
    lines += ["", "## Sessions", ""]
    lines += _table(
        ["participant", "session", "domain", "order", "pairs", "correct", "wrong"],
        [
            [s.participant, s.session, s.domain, s.order, s.pairs, s.correct, s.wrong]
            for s in report.sessions
        ],
    )
    lines += ["", "## Participants", ""]
    lines += _table(
        ["participant", "sessions", "done", "checked correct", "checked wrong", "first session"],
        [
            [p.participant, p.sessions, p.done, p.checked_correct, p.checked_wrong,
             p.first_order or ""]
            for p in report.people
        ],
    )  # fmt: skip
    return "\n".join(lines) + "\n"
