"""Pilot 1 (timing): do-only sessions, and what they set before the spec is locked.

"Pilot 1 (timing): about 18 people, do only, aiming for 3 do attempts per task ... It sets
difficulty, pairs and check budgets" (seed 003, full study). From a CSV of attempts
(``participant, task_id, seconds, finished``) :func:`derive_pilot` computes per task:

- the **median do time**. Attempts that did not finish are right-censored (the true time is
  at least the recorded one), so the median is the Kaplan-Meier median: the first time at which
  the share still working falls to one half or below; when it is exactly one half, the midpoint
  to the next finish (which is the ordinary median when every attempt finished). When more
  than half did not finish the median is not reached: the largest recorded time is reported as
  a lower bound and flagged as a problem.
- the **check budget** = median x ``budget_factor`` (1.0: "each task's median pilot 1 do time")
  and the **do-time cap** = median x ``cap_factor`` (2.0: "twice the task's median").
- the **difficulty group**: terciles of the medians within a domain (easy = shortest third),
  with group sizes made even where the count allows (8/8/8 of 24; 8/10/8 of 26) so that pairs
  stay within a group, reported against the written labels.
- the **pairs**: within a domain and difficulty group, by median do time (within 20 %) and
  skill (:func:`~vcost.allocation.pair_tasks`); a pair outside the tolerance is noted.

``problems`` are what keeps a value from being set well: fewer than ``min_attempts`` attempts,
a median not reached, a median of 0, a task without a partner.

:func:`spec_fragment` writes the values as TOML for the spec's ``[pilot]``, ``[budget]`` and
``[do_time_cap]`` tables, to paste in before ``vcost spec lock``. :func:`plan_timing_pilot`
makes the do-only pilot sessions themselves: each task done by ``attempts`` different people,
loads as even as possible, one domain per session, order random.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vcost.allocation._allocate import panel_ids, task_info
from vcost.allocation._io import _rows
from vcost.allocation._model import Assignment, Pair, allocation_id_for, stream
from vcost.allocation._pairing import DIFFICULTY_ORDER, TaskInfo, pair_tasks
from vcost.errors import InputError
from vcost.tasks import Task

__all__ = [
    "MedianTime",
    "PilotAttempt",
    "PilotDerivation",
    "PilotTask",
    "derive_pilot",
    "km_median",
    "plan_timing_pilot",
    "read_pilot",
    "spec_fragment",
]

_TRUE = {"true", "1", "yes", "y", "t"}
_FALSE = {"false", "0", "no", "n", "f"}


@dataclass(frozen=True)
class PilotAttempt:
    """One do-only pilot attempt: who, which task, how long, whether it was submitted."""

    participant: str
    task_id: str
    seconds: float
    finished: bool


@dataclass(frozen=True)
class MedianTime:
    """A median do time in seconds; ``reached`` is false when it is only a lower bound."""

    seconds: float
    attempts: int
    finished: int
    reached: bool


@dataclass(frozen=True)
class PilotTask:
    """One task's pilot values (minutes)."""

    task_id: str
    domain: str
    label: str
    """The difficulty label written with the task."""
    group: str
    """The pilot's tercile group."""
    attempts: int
    finished: int
    median_minutes: float
    reached: bool
    budget_minutes: float
    cap_minutes: float

    @property
    def agrees(self) -> bool:
        return self.label == self.group


@dataclass(frozen=True)
class PilotDerivation:
    """Everything pilot 1 sets, and what it could not set."""

    tasks: tuple[PilotTask, ...]
    pairs: tuple[Pair, ...]
    unpaired: tuple[str, ...]
    problems: tuple[str, ...]
    notes: tuple[str, ...]
    participants: int
    attempts: int
    budget_factor: float = 1.0
    cap_factor: float = 2.0
    labels: dict[str, dict[str, int]] = field(default_factory=dict)
    """Written label -> pilot group -> number of tasks (the agreement table)."""

    @property
    def medians(self) -> dict[str, float]:
        """Task id -> median do time in minutes (``[pilot.median_do_time]``)."""
        return {t.task_id: t.median_minutes for t in self.tasks}

    def to_dict(self) -> dict[str, Any]:
        return {
            "participants": self.participants,
            "attempts": self.attempts,
            "budget_factor": self.budget_factor,
            "cap_factor": self.cap_factor,
            "tasks": [asdict(t) | {"agrees": t.agrees} for t in self.tasks],
            "labels": self.labels,
            "pairs": [p.to_dict() for p in self.pairs],
            "unpaired": list(self.unpaired),
            "problems": list(self.problems),
            "notes": list(self.notes),
        }


def read_pilot(path: str | Path) -> list[PilotAttempt]:
    """Attempts from a pilot CSV: ``participant, task_id, seconds, finished``.

    ``seconds`` is a number >= 0; ``finished`` is true/false (also 1/0, yes/no). A person
    attempts a task once. Errors name the file, line and field.
    """
    source = Path(path)
    out: list[PilotAttempt] = []
    seen: dict[tuple[str, str], int] = {}
    for line, row in _rows(source, ("participant", "task_id", "seconds", "finished")):
        for name in ("participant", "task_id", "seconds", "finished"):
            if not row[name]:
                raise InputError("empty value", source=source, line=line, field=name)
        try:
            seconds = float(row["seconds"])
        except ValueError:
            raise InputError(
                f"not a number: {row['seconds']!r}", source=source, line=line, field="seconds"
            ) from None
        if not math.isfinite(seconds) or seconds < 0:
            raise InputError(
                f"must be a finite number >= 0, not {row['seconds']}",
                source=source, line=line, field="seconds",
            )  # fmt: skip
        flag = row["finished"].lower()
        if flag not in _TRUE | _FALSE:
            raise InputError(
                f"must be true or false, not {row['finished']!r}",
                source=source, line=line, field="finished",
            )  # fmt: skip
        key = (row["participant"], row["task_id"])
        if key in seen:
            raise InputError(
                f"{key[0]} already attempted {key[1]} on line {seen[key]}",
                source=source, line=line, field="task_id",
                hint="a do-only pilot has one attempt per person and task",
            )  # fmt: skip
        seen[key] = line
        out.append(PilotAttempt(key[0], key[1], seconds, flag in _TRUE))
    if not out:
        raise InputError("no attempts in the file", source=source)
    return out


def km_median(seconds: Sequence[float], finished: Sequence[bool]) -> MedianTime:
    """The Kaplan-Meier median of do times, unfinished attempts right-censored.

    Equal to the ordinary median when every attempt finished (exactly one half surviving
    takes the midpoint to the next finish). Not reached when more than half never finished:
    then the largest time is returned with ``reached=False``.
    """
    if len(seconds) != len(finished) or not seconds:
        raise ValueError("need one finished flag per time, and at least one time")
    times = sorted(zip(seconds, finished, strict=True), key=lambda x: (x[0], not x[1]))
    at_risk = len(times)
    survival = 1.0
    events = sorted({t for t, f in times if f})
    n_finished = sum(f for _, f in times)
    for k, t in enumerate(events):
        while times and times[0][0] < t:  # censored before t leave the risk set
            times.pop(0)
            at_risk -= 1
        deaths = sum(1 for s, f in times if s == t and f)
        survival *= 1 - deaths / at_risk
        while times and times[0][0] == t:
            times.pop(0)
            at_risk -= 1
        if survival <= 0.5 + 1e-12:
            if abs(survival - 0.5) <= 1e-12 and k + 1 < len(events):
                return MedianTime((t + events[k + 1]) / 2, len(seconds), n_finished, True)
            return MedianTime(t, len(seconds), n_finished, True)
    return MedianTime(max(seconds), len(seconds), n_finished, False)


def _group_sizes(count: int) -> tuple[int, int, int]:
    """Tercile sizes (easy, medium, hard). With an even count every group is even, so pairs
    stay within a group: the outer two the even number nearest a third, the middle the rest
    (24: 8/8/8; 26: 8/10/8; 16: 6/4/6). With an odd count, plain thirds, the extra in the middle
    (one task is left over whatever the groups)."""
    outer = count // 3 if count % 2 else 2 * math.floor(count / 6 + 0.5)
    return outer, count - 2 * outer, outer


def derive_pilot(
    attempts: Iterable[PilotAttempt],
    tasks: Iterable[Task | TaskInfo],
    *,
    tolerance: float = 0.2,
    budget_factor: float = 1.0,
    cap_factor: float = 2.0,
    min_attempts: int = 3,
) -> PilotDerivation:
    """Medians, budgets, caps, tercile groups and pairs from pilot attempts (module docstring).

    ``tasks``: the bank, for each task's domain, written label and skill. A task in the pilot
    but not in the bank is an :class:`~vcost.errors.InputError`; fewer than ``min_attempts``
    attempts, or a median not reached, is reported in ``problems``.
    """
    infos = {
        (t.task_id if isinstance(t, TaskInfo) else t.id): (
            t if isinstance(t, TaskInfo) else task_info(t)
        )
        for t in tasks
    }
    by_task: dict[str, list[PilotAttempt]] = defaultdict(list)
    people: set[str] = set()
    total = 0
    for attempt in attempts:
        if attempt.task_id not in infos:
            raise InputError(
                f"task {attempt.task_id!r} is not in the task bank",
                field="task_id",
                hint="pass the bank the pilot used (--bank)",
            )
        by_task[attempt.task_id].append(attempt)
        people.add(attempt.participant)
        total += 1
    problems: list[str] = []
    notes: list[str] = []
    medians: dict[str, MedianTime] = {}
    for task_id in sorted(by_task):
        rows = by_task[task_id]
        median = km_median([r.seconds for r in rows], [r.finished for r in rows])
        medians[task_id] = median
        if len(rows) < min_attempts:
            problems.append(
                f"{task_id}: {len(rows)} attempt(s), fewer than {min_attempts}: its median is noisy"
            )
        if not median.reached:
            problems.append(
                f"{task_id}: {len(rows) - median.finished} of {len(rows)} attempts did not finish, "
                f"so the median is not reached; {median.seconds / 60:.2f} min is a lower bound"
            )
        elif median.finished < len(rows):
            notes.append(
                f"{task_id}: {len(rows) - median.finished} unfinished attempt(s) counted as "
                "at least their time (Kaplan-Meier median)"
            )
    groups: dict[str, str] = {}
    for domain in sorted({infos[t].domain for t in medians}):
        ranked = sorted(
            (t for t in medians if infos[t].domain == domain),
            key=lambda t: (medians[t].seconds, t),
        )
        sizes = _group_sizes(len(ranked))
        start = 0
        for name, size in zip(DIFFICULTY_ORDER, sizes, strict=True):
            for t in ranked[start : start + size]:
                groups[t] = name
            if 0 < start + size < len(ranked):
                before, after = ranked[start + size - 1], ranked[start + size]
                if medians[before].seconds == medians[after].seconds:
                    notes.append(
                        f"{domain}: {before} and {after} have the same median but fall in "
                        "different groups (split by task id)"
                    )
            start += size
    rows_out: list[PilotTask] = []
    for task_id, median in medians.items():
        minutes = round(median.seconds / 60, 2)
        if minutes <= 0:
            problems.append(f"{task_id}: a median do time of 0 cannot set a budget")
        rows_out.append(
            PilotTask(
                task_id=task_id,
                domain=infos[task_id].domain,
                label=infos[task_id].group,
                group=groups[task_id],
                attempts=median.attempts,
                finished=median.finished,
                median_minutes=minutes,
                reached=median.reached,
                budget_minutes=round(minutes * budget_factor, 2),
                cap_minutes=round(minutes * cap_factor, 2),
            )
        )
    labels: dict[str, dict[str, int]] = {}
    for row in rows_out:
        labels.setdefault(row.label, {})
        labels[row.label][row.group] = labels[row.label].get(row.group, 0) + 1
    pairs, unpaired = pair_tasks(
        [
            TaskInfo(r.task_id, r.domain, r.group, max(r.median_minutes, 1e-9),
                     infos[r.task_id].skill)
            for r in rows_out
        ],
        tolerance=tolerance,
    )  # fmt: skip
    for pair in pairs:
        if not pair.within(tolerance):  # reported; the best the medians allow
            notes.append(
                f"pair {pair.pair_id}: medians {pair.first_minutes:g} and "
                f"{pair.second_minutes:g} min differ by more than {tolerance:.0%}"
            )
    if unpaired:
        problems.append(f"task(s) {', '.join(unpaired)} have no partner (an odd count)")
    return PilotDerivation(
        tasks=tuple(sorted(rows_out, key=lambda r: (r.domain, r.median_minutes, r.task_id))),
        pairs=tuple(pairs),
        unpaired=tuple(unpaired),
        problems=tuple(problems),
        notes=tuple(notes),
        participants=len(people),
        attempts=total,
        budget_factor=budget_factor,
        cap_factor=cap_factor,
        labels=labels,
    )


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def spec_fragment(derivation: PilotDerivation, *, description: str | None = None) -> str:
    """TOML for the spec's ``[pilot]``, ``[budget]`` and ``[do_time_cap]`` tables."""
    text = description or (
        f"pilot 1 (timing): {derivation.attempts} do-only attempts by "
        f"{derivation.participants} people; median do time per task in minutes (Kaplan-Meier, "
        "unfinished attempts counted as at least their time)"
    )
    lines = [
        "# Written by `vcost allocate pilot`: paste into study.toml before `vcost spec lock`.",
        "",
        "[pilot]",
        f"description = {_toml_string(text)}",
        "",
        "[pilot.median_do_time]",
    ]
    for row in sorted(derivation.tasks, key=lambda r: r.task_id):
        if row.median_minutes > 0:
            lines.append(f"{_toml_string(row.task_id)} = {row.median_minutes:g}")
    lines += [
        "",
        "[budget]",
        'mode = "per-task"',
        f"factor = {derivation.budget_factor:g}             # x the task's pilot median",
        "",
        "[do_time_cap]",
        'mode = "per-task"',
        f"factor = {derivation.cap_factor:g}             # x the task's pilot median",
        "",
    ]
    return "\n".join(lines)


def plan_timing_pilot(
    tasks: Iterable[Task | TaskInfo],
    *,
    participants: int | Sequence[str],
    attempts: int = 3,
    seed: int = 0,
    cap_minutes: float | None = None,
) -> tuple[list[Assignment], list[str]]:
    """Do-only pilot sessions: each task done by ``attempts`` different people.

    Tasks are dealt so everyone gets about the same number (48 tasks x 3 / 18 people = 8);
    each person's tasks form one session per domain, in random order. Returns the assignments
    (block ``do``, no pair) and problems (e.g. fewer people than attempts per task).
    """
    people = panel_ids(participants)
    infos = sorted(
        (t if isinstance(t, TaskInfo) else task_info(t) for t in tasks), key=lambda t: t.task_id
    )
    problems: list[str] = []
    if attempts > len(people):
        problems.append(
            f"{attempts} attempts per task need {attempts} different people; the pilot has "
            f"{len(people)}, so each task gets {len(people)}"
        )
    rng = stream(seed, "timing-pilot")
    order = list(infos)
    rng.shuffle(order)
    order.sort(key=lambda t: t.domain)  # stable: one domain's tasks together
    slots = [t for t in order for _ in range(min(attempts, len(people)))]
    mine: dict[str, list[TaskInfo]] = defaultdict(list)
    for i, task in enumerate(slots):  # consecutive copies of a task go to different people
        mine[people[i % len(people)]].append(task)
    allocation_id = allocation_id_for(
        ["timing", seed, people, [t.task_id for t in infos], attempts]
    )
    rows: list[Assignment] = []
    for person in people:
        domains = sorted({t.domain for t in mine[person]})
        for number, domain in enumerate(domains, start=1):
            items = [t for t in mine[person] if t.domain == domain]
            stream(seed, "timing-order", person, domain).shuffle(items)
            session_id = f"{allocation_id}-{person}-s{number:02d}"
            for position, task in enumerate(items, start=1):
                rows.append(
                    Assignment(
                        assignment_id=f"{session_id}-{position:02d}",
                        allocation_id=allocation_id,
                        participant=person,
                        session=number,
                        session_id=session_id,
                        domain=domain,
                        order="do-first",
                        position=position,
                        block="do",
                        pair_id="",
                        task_id=task.task_id,
                        budget=cap_minutes,
                    )
                )
    loads = Counter(len(v) for v in mine.values())
    if len(loads) > 2 or (len(loads) == 2 and max(loads) - min(loads) > 1):
        problems.append(f"uneven loads: {dict(loads)}")
    return rows, problems
