"""``check_allocation``: every rule of the design, checked on the assignments themselves.

The checks read only the assignment rows, the pairs and the answers' ground truth, not how the
allocation was built, so they also catch an allocation file edited by hand or a reserve swap
gone wrong. Each broken rule is one :class:`~._model.Violation` naming a few examples.

Rules (``error`` unless marked):

- ``no-repeat``: nobody meets a task twice, in either block (the practice tasks included).
- ``pair``: in every session each pair is met once, as one do and one check, the check on an
  answer to the partner of the task done; check rows name a known answer of that task.
- ``session``: one domain per session; at most ``pairs_per_session`` pairs; positions
  1..n; one block order per session, and every item of the first block comes before the second.
- ``session-mix``: every main session has at least ``min_correct`` correct and ``min_wrong``
  wrong answers to check.
- ``order``: a participant's sessions alternate do-first and check-first (practice included);
  the first main session is do-first for half the panel (within 1).
- ``practice``: everyone has the practice session when the allocation has practice pairs.
- core only: ``coverage`` (everyone meets every pair of a domain once), ``balance`` (each task
  done by half the panel and checked by the other half, within 1; its correct and wrong answers
  checked equally often, within 1; answers of the same task and ground truth equally often,
  within 1), ``participant-mix`` (each participant's correct and wrong checks per domain
  differ by at most 1).
- full only: ``verdicts`` (each answer checked exactly its target number of times) and
  ``sessions-per-domain`` (nobody over the cap).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from vcost.allocation._model import Allocation, AnswerTarget, Assignment, Pair, Violation

__all__ = ["check_allocation"]

_SHOWN = 5


def _listed(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")


def _near_half(count: int, total: int) -> bool:
    return total // 2 <= count <= (total + 1) // 2


def check_allocation(allocation: Allocation) -> list[Violation]:
    """Every broken rule of the allocation's design (rules in the module docstring)."""
    design = allocation.design
    answers = {a.answer_id: a for a in allocation.answers}
    pairs = {p.pair_id: p for p in (*allocation.pairs, *allocation.practice_pairs)}
    out: list[Violation] = []
    by_person: dict[str, list[Assignment]] = defaultdict(list)
    for row in allocation.assignments:
        by_person[row.participant].append(row)
    unknown = sorted(set(by_person) - set(allocation.participants))
    if unknown:
        out.append(
            Violation("panel", f"assignments for people not on the panel: {_listed(unknown)}")
        )

    repeats: list[str] = []
    pair_problems: list[str] = []
    session_problems: list[str] = []
    mix_problems: list[str] = []
    order_problems: list[str] = []
    no_practice: list[str] = []
    first_orders: Counter[str] = Counter()
    for person in allocation.participants:
        rows = sorted(by_person.get(person, []), key=lambda a: (a.session, a.position))
        seen = Counter(a.task_id for a in rows)
        repeats += [f"{person} meets {t} {n} times" for t, n in sorted(seen.items()) if n > 1]
        sessions: dict[int, list[Assignment]] = defaultdict(list)
        for row in rows:
            sessions[row.session].append(row)
        if allocation.practice_pairs and rows and 0 not in sessions:
            no_practice.append(person)
        previous: str | None = None
        for number in sorted(sessions):
            items = sessions[number]
            where = f"{person} session {number}"
            pair_problems += _pairs_ok(items, where, pairs, answers, practice=number == 0)
            session_problems += _session_ok(items, where, design.pairs_per_session)
            order = items[0].order
            if previous is not None and order == previous:
                order_problems.append(f"{where} is {order} like the session before")
            previous = order
            if number == 0:
                continue
            checks = [answers.get(a.answer_id or "") for a in items if a.block == "check"]
            correct = sum(1 for a in checks if a is not None and not a.wrong)
            wrong = sum(1 for a in checks if a is not None and a.wrong)
            if correct < design.min_correct or wrong < design.min_wrong:
                mix_problems.append(f"{where} ({correct} correct, {wrong} wrong)")
        mains = [n for n in sessions if n > 0]
        if mains:
            first_orders[sessions[min(mains)][0].order] += 1
    if repeats:
        out.append(Violation("no-repeat", f"{len(repeats)} repeat(s): {_listed(repeats)}"))
    if pair_problems:
        out.append(Violation("pair", f"{len(pair_problems)} problem(s): {_listed(pair_problems)}"))
    if session_problems:
        out.append(
            Violation("session", f"{len(session_problems)} problem(s): {_listed(session_problems)}")
        )
    if mix_problems:
        out.append(
            Violation(
                "session-mix",
                f"{len(mix_problems)} session(s) lack the minimum of {design.min_correct} "
                f"correct and {design.min_wrong} wrong answers: {_listed(mix_problems)}",
            )
        )
    if order_problems:
        out.append(Violation("order", f"blocks do not alternate: {_listed(order_problems)}"))
    if abs(first_orders["do-first"] - first_orders["check-first"]) > 1:
        out.append(
            Violation(
                "order",
                f"the first main session is do-first for {first_orders['do-first']} and "
                f"check-first for {first_orders['check-first']} participants (not half)",
            )
        )
    if no_practice:
        out.append(Violation("practice", f"no practice session for {_listed(no_practice)}"))
    if design.name == "core":
        out += _core_rules(allocation, by_person)
    else:
        out += _full_rules(allocation, by_person)
    return out


def _pairs_ok(
    items: Sequence[Assignment],
    where: str,
    pairs: dict[str, Pair],
    answers: dict[str, AnswerTarget],
    *,
    practice: bool,
) -> list[str]:
    problems: list[str] = []
    by_pair: dict[str, list[Assignment]] = defaultdict(list)
    for row in items:
        by_pair[row.pair_id].append(row)
    for pair_id, rows in by_pair.items():
        pair = pairs.get(pair_id)
        blocks = sorted(r.block for r in rows)
        if pair is None:
            problems.append(f"{where}: unknown pair {pair_id}")
            continue
        if blocks != ["check", "do"]:
            problems.append(f"{where}: pair {pair_id} has blocks {blocks}, not one do + one check")
            continue
        do = next(r for r in rows if r.block == "do")
        check = next(r for r in rows if r.block == "check")
        if do.task_id not in pair.tasks or check.task_id != pair.partner(do.task_id):
            problems.append(f"{where}: pair {pair_id} does {do.task_id}, checks {check.task_id}")
            continue
        if check.answer_id is None:
            if not practice:
                problems.append(f"{where}: the check of {check.task_id} names no answer")
            continue
        answer = answers.get(check.answer_id)
        if answer is None or answer.task_id != check.task_id:
            problems.append(
                f"{where}: answer {check.answer_id} is not an answer to {check.task_id}"
            )
    return problems


def _session_ok(items: Sequence[Assignment], where: str, k: int) -> list[str]:
    problems: list[str] = []
    domains = {a.domain for a in items}
    if len(domains) > 1:
        problems.append(f"{where} mixes domains {sorted(domains)}")
    count = len({a.pair_id for a in items})
    if items[0].session > 0 and count > k:
        problems.append(f"{where} has {count} pairs, more than {k}")
    positions = sorted(a.position for a in items)
    if positions != list(range(1, len(items) + 1)):
        problems.append(f"{where} has positions {positions}")
    orders = {a.order for a in items}
    if len(orders) > 1:
        problems.append(f"{where} has two block orders")
        return problems
    first = "do" if items[0].order == "do-first" else "check"
    ranked = sorted(items, key=lambda a: a.position)
    blocks = [a.block for a in ranked]
    expected = sorted(blocks, key=lambda b: b != first)
    if blocks != expected:
        problems.append(f"{where} is {items[0].order} but its blocks run {blocks}")
    return problems


def _core_rules(allocation: Allocation, by_person: dict[str, list[Assignment]]) -> list[Violation]:
    out: list[Violation] = []
    answers = {a.answer_id: a for a in allocation.answers}
    size = len(allocation.participants)
    missing: list[str] = []
    person_mix: list[str] = []
    for person in allocation.participants:
        rows = [a for a in by_person.get(person, []) if a.session > 0]
        met = Counter(a.pair_id for a in rows if a.block == "do")
        for pair in allocation.pairs:
            if met[pair.pair_id] != 1:
                missing.append(f"{person} meets {pair.pair_id} {met[pair.pair_id]} times")
        for domain in sorted({p.domain for p in allocation.pairs}):
            checked = [
                answers[a.answer_id]
                for a in rows
                if a.block == "check" and a.domain == domain and a.answer_id in answers
            ]
            wrong = sum(a.wrong for a in checked)
            if abs(wrong - (len(checked) - wrong)) > 1:
                person_mix.append(
                    f"{person} {domain}: {len(checked) - wrong} correct, {wrong} wrong"
                )
    if missing:
        out.append(Violation("coverage", f"not every pair met once: {_listed(missing)}"))
    if person_mix:
        out.append(
            Violation(
                "participant-mix",
                f"correct and wrong checks differ by more than 1: {_listed(person_mix)}",
            )
        )
    main = [a for a in allocation.assignments if a.session > 0]
    done = Counter(a.task_id for a in main if a.block == "do")
    checked_answers = Counter(a.answer_id for a in main if a.block == "check")
    unbalanced: list[str] = []
    for pair in allocation.pairs:
        for task_id in pair.tasks:
            if not _near_half(done[task_id], size):
                unbalanced.append(f"{task_id} done by {done[task_id]} of {size}")
            mine = [a for a in allocation.answers if a.task_id == task_id]
            right = sum(checked_answers[a.answer_id] for a in mine if not a.wrong)
            wrong = sum(checked_answers[a.answer_id] for a in mine if a.wrong)
            if (
                abs(right - wrong) > 1
                and any(a.wrong for a in mine)
                and any(not a.wrong for a in mine)
            ):
                unbalanced.append(f"{task_id} checked {right} x correct, {wrong} x wrong")
            for truth in (True, False):
                counts = [checked_answers[a.answer_id] for a in mine if a.wrong == truth]
                if counts and max(counts) - min(counts) > 1:
                    unbalanced.append(f"{task_id}: its {'wrong' if truth else 'correct'} "
                                      f"answers are checked {sorted(counts)} times")  # fmt: skip
    if unbalanced:
        out.append(Violation("balance", f"not balanced: {_listed(unbalanced)}"))
    return out


def _full_rules(allocation: Allocation, by_person: dict[str, list[Assignment]]) -> list[Violation]:
    out: list[Violation] = []
    design = allocation.design
    main = [a for a in allocation.assignments if a.session > 0]
    checked = Counter(a.answer_id for a in main if a.block == "check")
    short: list[str] = []
    over: list[str] = []
    for answer in allocation.answers:
        if answer.target is None:
            continue
        got = checked[answer.answer_id]
        if got < answer.target:
            short.append(f"{answer.answer_id} {got}/{answer.target}")
        elif got > answer.target:
            over.append(f"{answer.answer_id} {got}/{answer.target}")
    if short:
        out.append(
            Violation(
                "verdicts",
                f"{len(short)} answer(s) get fewer verdicts than their target: {_listed(short)}",
            )
        )
    if over:
        out.append(Violation("verdicts", f"answers checked too often: {_listed(over)}"))
    pairs_in = Counter(p.domain for p in allocation.pairs)
    capped: list[str] = []
    for person, rows in by_person.items():
        per_domain: dict[str, set[int]] = defaultdict(set)
        for a in rows:
            if a.session > 0:
                per_domain[a.domain].add(a.session)
        for domain, numbers in per_domain.items():
            cap = design.max_sessions_per_domain or max(
                1, pairs_in[domain] // design.pairs_per_session
            )
            if len(numbers) > cap:
                capped.append(f"{person} has {len(numbers)} {domain} sessions (cap {cap})")
    if capped:
        out.append(Violation("sessions-per-domain", _listed(capped)))
    return out
