"""Sessions: grouping visits so every session has its correct and wrong answers, then ordering.

A *visit* is one pair met by one participant: do one task, check an AI answer to its partner.
Both designs end the same way: visits grouped into sessions (one domain each, distinct pairs),
each session's blocks ordered (do-first and check-first alternate across a participant's
sessions, and across participants for the first session), items in random order within each
block, numbered from 1 through the session.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from vcost.allocation._model import AnswerTarget, Assignment, Order, Pair, stream

__all__ = ["Budgets", "Session", "Visit", "deficit", "emit", "repair_mix"]

Budgets = Callable[[str, str], float | None]
"""``budget(task_id, block)``: minutes (check budget or do-time cap), or ``None``."""


@dataclass(frozen=True)
class Visit:
    """One participant meets one pair: does ``do_task``, checks ``answer`` (to the partner)."""

    pair: Pair
    do_task: str
    answer: AnswerTarget | None

    @property
    def check_task(self) -> str:
        """The task whose answer is checked: the partner of the task done."""
        return self.pair.partner(self.do_task)

    @property
    def wrong(self) -> bool:
        return self.answer is not None and self.answer.wrong

    @property
    def correct(self) -> bool:
        return self.answer is not None and not self.answer.wrong


@dataclass
class Session:
    """A participant's session in one domain (``number`` 0 = practice)."""

    domain: str
    visits: list[Visit]
    number: int = 0


def deficit(visits: Sequence[Visit], min_correct: int, min_wrong: int) -> int:
    """How many correct and wrong checks a session lacks to meet its minimums."""
    correct = sum(v.correct for v in visits)
    wrong = sum(v.wrong for v in visits)
    return max(0, min_correct - correct) + max(0, min_wrong - wrong)


def repair_mix(
    sessions: list[list[Visit]],
    *,
    min_correct: int,
    min_wrong: int,
    rng: random.Random,
    can_join: Callable[[Sequence[Visit], Visit], bool],
    prefer: Callable[[Visit, Visit], bool],
    max_rounds: int = 2000,
) -> int:
    """Swap visits between sessions until each meets its minimums; return the deficit left.

    A swap moves a visit of the missing kind into a session and one of the other kind out,
    only if both sessions' total deficit falls and ``can_join`` allows both moves. Swaps that
    ``prefer`` (same difficulty group, same pair) are tried first.
    """

    def lack(visits: Sequence[Visit]) -> int:
        return deficit(visits, min_correct, min_wrong)

    for _ in range(max_rounds):
        bad = [i for i, s in enumerate(sessions) if lack(s)]
        if not bad:
            return 0
        rng.shuffle(bad)
        done = False
        for strict in (True, False):
            for i in bad:
                here = sessions[i]
                others = [j for j in range(len(sessions)) if j != i]
                rng.shuffle(others)
                for j in others:
                    there = sessions[j]
                    before = lack(here) + lack(there)
                    for x in rng.sample(here, len(here)):
                        for y in rng.sample(there, len(there)):
                            if x.wrong == y.wrong or (strict and not prefer(x, y)):
                                continue
                            new_here = [v for v in here if v is not x]
                            new_there = [v for v in there if v is not y]
                            if not (can_join(new_here, y) and can_join(new_there, x)):
                                continue
                            if lack([*new_here, y]) + lack([*new_there, x]) < before:
                                here[here.index(x)] = y
                                there[there.index(y)] = x
                                done = True
                                break
                        if done:
                            break
                    if done:
                        break
                if done:
                    break
            if done:
                break
        if not done:
            break
    return sum(lack(s) for s in sessions)


def _order(index: int, number: int) -> Order:
    """Session ``number`` (0 = practice) of the participant at ``index`` in the panel."""
    return "do-first" if (number - 1 + index) % 2 == 0 else "check-first"


def emit(
    *,
    allocation_id: str,
    seed: int,
    participants: Sequence[str],
    sessions: Mapping[str, Sequence[Session]],
    practice: Mapping[str, Session],
    budget: Budgets | None,
) -> list[Assignment]:
    """Number, order and write out every participant's sessions as assignments.

    Per participant: the practice session is 0; main sessions are numbered from 1 with each
    domain's sessions together (domain order rotates across participants) and in random order
    within a domain. Blocks alternate do-first/check-first from session to session; the first
    main session is do-first for every other participant who has main sessions
    (counterbalancing). Within each block
    the items are in random order, drawn separately for the two blocks.
    """
    out: list[Assignment] = []
    active = 0  # counterbalance over the people who have main sessions
    for person in participants:
        mine = list(sessions.get(person, ()))
        index = active
        active += 1 if mine else 0
        domains = sorted({s.domain for s in mine})
        if domains:
            shift = index % len(domains)
            domains = domains[shift:] + domains[:shift]
        shuffler = stream(seed, "session-order", person)
        ordered: list[Session] = []
        for domain in domains:
            chunk = [s for s in mine if s.domain == domain]
            shuffler.shuffle(chunk)
            ordered.extend(chunk)
        numbered = [Session(s.domain, s.visits, n) for n, s in enumerate(ordered, start=1)]
        if person in practice:
            first = practice[person]
            numbered.insert(0, Session(first.domain, first.visits, 0))
        for session in numbered:
            out.extend(_session_rows(allocation_id, seed, person, index, session, budget))
    return out


def _session_rows(
    allocation_id: str,
    seed: int,
    person: str,
    index: int,
    session: Session,
    budget: Budgets | None,
) -> list[Assignment]:
    order = _order(index, session.number)
    rng = stream(seed, "item-order", person, session.number)
    do_items = list(session.visits)
    check_items = list(session.visits)
    rng.shuffle(do_items)
    rng.shuffle(check_items)
    session_id = f"{allocation_id}-{person}-s{session.number:02d}"
    rows: list[Assignment] = []
    blocks: list[tuple[str, list[Visit]]] = [("do", do_items), ("check", check_items)]
    if order == "check-first":
        blocks.reverse()
    position = 0
    for block, items in blocks:
        for visit in items:
            position += 1
            if block == "do":
                task_id, answer_id = visit.do_task, None
            else:  # a practice check may have no selected answer (answer_id None)
                task_id = visit.check_task
                answer_id = visit.answer.answer_id if visit.answer is not None else None
            rows.append(
                Assignment(
                    assignment_id=f"{session_id}-{position:02d}",
                    allocation_id=allocation_id,
                    participant=person,
                    session=session.number,
                    session_id=session_id,
                    domain=session.domain,
                    order=order,
                    position=position,
                    block="do" if block == "do" else "check",
                    pair_id=visit.pair.pair_id,
                    task_id=task_id,
                    answer_id=answer_id,
                    budget=budget(task_id, block) if budget is not None else None,
                )
            )
    return rows
