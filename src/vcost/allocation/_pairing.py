"""Pairing: tasks of one domain and one difficulty group, matched by do time and skill.

The study design pairs tasks "within the same difficulty label, matched by my estimated do time"
(core) and "by pilot 1 do time (within about 20% of each other) and by the kind of skill they
test" (full). Rules, in order of priority (vcost's reading where the design is silent):

1. Pairs stay within a domain and a difficulty group (the written label, or the pilot's
   tercile group). A group with an odd count leaves one task over; the leftovers of a domain
   are paired with each other across groups, nearest do times first, and each such pair is
   reported (a design with odd label counts breaks "pairs stay within a label").
2. Within a group, the matching is the best over all perfect matchings (exactly, for groups
   of up to 14 tasks; larger groups start from neighbours in do-time order and improve by
   exchanging partners): first as few pairs as possible outside the time tolerance (the
   longer do time more than 1.2 x the shorter), then the most similar skills (word overlap of
   the skill names, 1.0 for the same skill), then the smallest do-time gaps.
3. Pairing has no randomness: the same tasks always give the same pairs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from vcost.allocation._model import Pair

__all__ = ["DIFFICULTY_ORDER", "TaskInfo", "pair_tasks", "skill_match"]

DIFFICULTY_ORDER = ("easy", "medium", "hard")
_EXACT_LIMIT = 14

Cost = tuple[int, float, float]


@dataclass(frozen=True)
class TaskInfo:
    """What pairing and allocation need to know about a task."""

    task_id: str
    domain: str
    group: str
    """Difficulty label (written, or the pilot's tercile group)."""
    minutes: float
    """Estimated (or pilot median) do time in minutes."""
    skill: str = ""


def _words(skill: str) -> frozenset[str]:
    return frozenset(w for w in re.split(r"[^a-z0-9]+", skill.lower()) if w)


def skill_match(one: str, other: str) -> float:
    """Similarity of two skill names: 1.0 if equal, else the Jaccard overlap of their words."""
    if one.strip().lower() == other.strip().lower() and one.strip():
        return 1.0
    a, b = _words(one), _words(other)
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def _ratio(a: TaskInfo, b: TaskInfo) -> float:
    low, high = sorted((a.minutes, b.minutes))
    return high / low if low > 0 else float("inf")


def _cost(a: TaskInfo, b: TaskInfo, tolerance: float) -> Cost:
    ratio = _ratio(a, b)
    outside = int(ratio > 1 + tolerance + 1e-9)
    return (outside, round(1.0 - skill_match(a.skill, b.skill), 9), round(ratio - 1.0, 9))


def _add(x: Cost, y: Cost) -> Cost:
    return (x[0] + y[0], round(x[1] + y[1], 9), round(x[2] + y[2], 9))


def _exact(tasks: Sequence[TaskInfo], tolerance: float) -> list[tuple[int, int]]:
    """The best perfect matching (index pairs); with an odd count, one index pairs with -1."""
    n = len(tasks)
    odd = n % 2 == 1
    size = n + 1 if odd else n
    zero: Cost = (0, 0.0, 0.0)

    def cost(i: int, j: int) -> Cost:
        if i >= n or j >= n:  # the dummy: whoever is left over costs nothing
            return zero
        return _cost(tasks[i], tasks[j], tolerance)

    @cache
    def best(mask: int) -> tuple[Cost, tuple[tuple[int, int], ...]]:
        if mask == (1 << size) - 1:
            return zero, ()
        i = next(k for k in range(size) if not mask & (1 << k))
        found: tuple[Cost, tuple[tuple[int, int], ...]] | None = None
        for j in range(i + 1, size):
            if mask & (1 << j):
                continue
            rest_cost, rest = best(mask | (1 << i) | (1 << j))
            total = _add(cost(i, j), rest_cost)
            if found is None or total < found[0]:
                found = (total, ((i, j), *rest))
        assert found is not None
        return found

    _, matching = best(0)
    return [(i, -1 if j >= n else j) for i, j in matching]


def _heuristic(tasks: Sequence[TaskInfo], tolerance: float) -> list[tuple[int, int]]:
    """Neighbours in do-time order, improved by exchanging partners until nothing improves."""
    order = sorted(range(len(tasks)), key=lambda k: (tasks[k].minutes, tasks[k].task_id))
    left = order.pop() if len(order) % 2 else None
    pairs = [(order[k], order[k + 1]) for k in range(0, len(order), 2)]

    def cost(pair: tuple[int, int]) -> Cost:
        return _cost(tasks[pair[0]], tasks[pair[1]], tolerance)

    improved = True
    while improved:
        improved = False
        for x in range(len(pairs)):
            for y in range(x + 1, len(pairs)):
                (a, b), (c, d) = pairs[x], pairs[y]
                now = _add(cost((a, b)), cost((c, d)))
                for one, two in (((a, c), (b, d)), ((a, d), (b, c))):
                    if _add(cost(one), cost(two)) < now:
                        pairs[x], pairs[y] = one, two
                        improved = True
                        break
    out = list(pairs)
    if left is not None:
        out.append((left, -1))
    return out


def _make_pair(a: TaskInfo, b: TaskInfo, group: str) -> Pair:
    first, second = sorted((a, b), key=lambda t: t.task_id)
    return Pair(
        pair_id=f"{first.task_id}~{second.task_id}",
        domain=first.domain,
        group=group,
        first=first.task_id,
        second=second.task_id,
        first_minutes=first.minutes,
        second_minutes=second.minutes,
        first_skill=first.skill,
        second_skill=second.skill,
        skill_match=round(skill_match(a.skill, b.skill), 4),
    )


def _group_key(group: str) -> tuple[int, str]:
    return (DIFFICULTY_ORDER.index(group) if group in DIFFICULTY_ORDER else 99, group)


def pair_tasks(
    tasks: Iterable[TaskInfo], *, tolerance: float = 0.2
) -> tuple[list[Pair], list[str]]:
    """Pair the tasks (rules in the module docstring); return the pairs and the unpaired ids.

    Pairs come out by domain, then group (easy, medium, hard, others), then first task id.
    """
    by_domain: dict[str, dict[str, list[TaskInfo]]] = {}
    seen: set[str] = set()
    for task in sorted(tasks, key=lambda t: t.task_id):
        if task.task_id in seen:
            raise ValueError(f"task {task.task_id!r} is listed twice")
        seen.add(task.task_id)
        by_domain.setdefault(task.domain, {}).setdefault(task.group, []).append(task)
    pairs: list[Pair] = []
    unpaired: list[str] = []
    for domain in sorted(by_domain):
        leftovers: list[TaskInfo] = []
        for group in sorted(by_domain[domain], key=_group_key):
            members = by_domain[domain][group]
            match = _exact if len(members) <= _EXACT_LIMIT else _heuristic
            for i, j in match(members, tolerance):
                if j < 0:
                    leftovers.append(members[i])
                else:
                    pairs.append(_make_pair(members[i], members[j], group))
        leftovers.sort(key=lambda t: (t.minutes, t.task_id))
        while len(leftovers) >= 2:
            a, b = leftovers.pop(0), leftovers.pop(0)
            groups = sorted({a.group, b.group}, key=_group_key)
            pairs.append(_make_pair(a, b, "+".join(groups)))
        unpaired.extend(t.task_id for t in leftovers)
    pairs.sort(key=lambda p: (p.domain, _group_key(p.group.split("+")[0]), p.group, p.first))
    return pairs, unpaired
