"""Hand-made selections and independent checks of allocations (imported by name: tests/ has
no packages). The checks here re-derive every rule from the assignment rows with their own
code, so a bug in ``vcost.allocation.check_allocation`` cannot hide a broken allocation."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from vcost.allocation import Allocation, Assignment
from vcost.answers import SelectedAnswer, Selection
from vcost.tasks import Task


def answer(task: Task, truth: str, n: int = 0, *, source: str | None = None,
           level: str | None = None) -> SelectedAnswer:  # fmt: skip
    wrong = truth == "incorrect"
    return SelectedAnswer(
        answer_id=f"{task.id}/{truth}/{n}",
        task_id=task.id,
        kind=task.kind,
        source=source or ("planted" if wrong else "model"),  # type: ignore[arg-type]
        model=f"model-{n % 2}",
        family=f"fam-{n % 2}",
        ground_truth="incorrect" if wrong else "correct",
        code="def f(): ...",
        shown="```python\ndef f(): ...\n```",
        error_type="boundary" if wrong else None,
        error_level=level or (("subtle", "obvious")[n % 2] if wrong else None),
    )


def core_selection(tasks: Sequence[Task]) -> Selection:
    """1 correct + 1 wrong answer per task (the core study's selection)."""
    return Selection(
        "core", 0, tuple(a for t in tasks for a in (answer(t, "correct"), answer(t, "incorrect")))
    )


def full_selection(tasks: Sequence[Task]) -> Selection:
    """The full study's selection: every other task has a natural error, so 2 or 4 answers."""
    out: list[SelectedAnswer] = []
    for i, t in enumerate(tasks):
        out += [answer(t, "correct", 0), answer(t, "incorrect", 0, source="planted")]
        if i % 2:
            out += [answer(t, "correct", 1), answer(t, "incorrect", 1, source="natural")]
    return Selection("full", 0, tuple(out))


def sessions_of(allocation: Allocation) -> dict[tuple[str, int], list[Assignment]]:
    out: dict[tuple[str, int], list[Assignment]] = defaultdict(list)
    for row in allocation.assignments:
        out[(row.participant, row.session)].append(row)
    return out


def independent_problems(allocation: Allocation) -> list[str]:
    """Every rule of seed 003 that both designs share, checked from the rows alone."""
    truth = {a.answer_id: a.ground_truth for a in allocation.answers}
    task_of = {a.answer_id: a.task_id for a in allocation.answers}
    partner = {}
    for p in (*allocation.pairs, *allocation.practice_pairs):
        partner[p.first], partner[p.second] = p.second, p.first
    design = allocation.design
    problems: list[str] = []
    per_person: dict[str, list[Assignment]] = defaultdict(list)
    for row in allocation.assignments:
        per_person[row.participant].append(row)
    for person, rows in per_person.items():
        tasks = Counter(r.task_id for r in rows)
        problems += [f"{person} sees {t} twice" for t, n in tasks.items() if n > 1]
        numbers = sorted({r.session for r in rows})
        orders = [next(r.order for r in rows if r.session == n) for n in numbers]
        problems += [
            f"{person}: sessions {numbers[i]} and {numbers[i + 1]} are both {orders[i]}"
            for i in range(len(orders) - 1)
            if orders[i] == orders[i + 1]
        ]
    for (person, number), rows in sessions_of(allocation).items():
        rows = sorted(rows, key=lambda r: r.position)
        if [r.position for r in rows] != list(range(1, len(rows) + 1)):
            problems.append(f"{person} s{number}: positions not 1..n")
        first = "do" if rows[0].order == "do-first" else "check"
        blocks = [r.block for r in rows]
        if blocks != sorted(blocks, key=lambda b: b != first):
            problems.append(f"{person} s{number}: blocks {blocks} not {rows[0].order}")
        if len({r.domain for r in rows}) != 1:
            problems.append(f"{person} s{number}: more than one domain")
        dos = [r for r in rows if r.block == "do"]
        checks = [r for r in rows if r.block == "check"]
        if sorted(r.pair_id for r in dos) != sorted(r.pair_id for r in checks):
            problems.append(f"{person} s{number}: do and check blocks cover different pairs")
        if len({r.pair_id for r in dos}) != len(dos):
            problems.append(f"{person} s{number}: a pair twice")
        by_pair = {r.pair_id: r for r in dos}
        for c in checks:
            d = by_pair.get(c.pair_id)
            if d is None or partner.get(d.task_id) != c.task_id:
                problems.append(f"{person} s{number}: check of {c.task_id} is not the partner")
            if c.answer_id is not None and task_of.get(c.answer_id) != c.task_id:
                problems.append(
                    f"{person} s{number}: {c.answer_id} is not an answer to {c.task_id}"
                )
        if number == 0:
            continue
        if len(dos) > design.pairs_per_session:
            problems.append(f"{person} s{number}: {len(dos)} pairs")
        wrong = sum(truth[c.answer_id or ""] == "incorrect" for c in checks)
        correct = len(checks) - wrong
        if correct < design.min_correct or wrong < design.min_wrong:
            problems.append(f"{person} s{number}: {correct} correct, {wrong} wrong")
    return problems


def visits(allocation: Allocation) -> set[tuple[str, str, str]]:
    """(participant, task done, answer checked) of every main-session pair."""
    out = set()
    for (_person, number), rows in sessions_of(allocation).items():
        if number == 0:
            continue
        checks = {r.pair_id: r.answer_id for r in rows if r.block == "check"}
        for r in rows:
            if r.block == "do":
                out.add((r.participant, r.task_id, checks[r.pair_id] or ""))
    return out


def errors(allocation: Allocation) -> list[str]:
    return [str(v) for v in allocation.violations if v.severity == "error"]
