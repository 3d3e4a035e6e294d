"""``allocate``: who does which task and checks which answer, in which session.

The two designs of the study (seed 003) share pairing (:mod:`._pairing`) and the session step
(:mod:`._sessions`); they differ in how visits (participant x pair) are made:

**core** (a balanced Latin square). Every participant meets every pair of a domain once: 24
tasks, each exactly once, 12 done and 12 checked. A pair (A, B) has four conditions::

    0: do A, check B's correct answer      2: do A, check B's wrong answer
    1: do B, check A's wrong answer        3: do B, check A's correct answer

Participant row r (the panel in a seeded random order) meets the pair whose column carries
residue c in condition (r + c) mod 4: a cyclic Latin square of order 4, replicated down the panel
in blocks of 4 rows, each block with its own random assignment of residues to the pairs of each
difficulty group (:func:`_residues`). So every pair meets each condition equally
often (4 people: once each, so each task is done by 2 and checked by 2, one seeing its correct
answer and one its wrong one; 3 people: three of the four, the missing one rotating across
pairs, so tasks are done by 1-2 and checked by 1-2, balanced; 20 people: 5 each), and every
participant meets each condition equally often (12 pairs: 3 each, so 6 correct and 6 wrong
checks). A participant's pairs are then dealt into sessions of ``pairs_per_session`` with the
difficulty groups spread over the sessions, and swapped until every session has its minimum of
correct and wrong answers.

**full** (check slots). Every answer gets ``verdicts_per_answer`` slots (3), and
``subset_verdicts`` (6) for ``subset_size`` (12) wrong answers per domain, drawn at random in
turn from each (source, level) stratum. A slot means: check that answer, do the partner task.
Slots are dealt pair by pair into ``ceil(slots / pairs_per_session)`` sessions, so a session
never has a pair twice; slots of a pair are swapped between sessions until every session has
its minimums; each session goes to the participant with the fewest sessions who may take one
more in that domain (``max_sessions_per_domain``: 1 in ``FULL``) and whose sessions there share
no pair with it (nobody sees a task twice).

Every random choice comes from its own seeded stream (:func:`~._model.stream`): the same inputs
and seed give the same allocation, and changing the pairs per session (the pre-registered
2-pair contingency) regroups the core study's sessions without changing who does and checks what.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from vcost.allocation._check import check_allocation
from vcost.allocation._model import (
    CORE,
    Allocation,
    AnswerTarget,
    Design,
    Pair,
    Violation,
    allocation_id_for,
    design_named,
    stream,
)
from vcost.allocation._pairing import DIFFICULTY_ORDER, TaskInfo, pair_tasks
from vcost.allocation._sessions import Budgets, Session, Visit, repair_mix
from vcost.allocation._sessions import emit as emit_sessions
from vcost.answers import Selection
from vcost.errors import InputError
from vcost.tasks import Task

__all__ = ["allocate", "panel_ids", "task_info"]


def task_info(task: Task) -> TaskInfo:
    """A bank task as pairing sees it: domain, written difficulty label, estimated do time."""
    return TaskInfo(task.id, task.kind, str(task.difficulty), task.do_minutes, task.skill)


def panel_ids(participants: int | Sequence[str]) -> tuple[str, ...]:
    """``P01``, ``P02``, ... for a count; a given list checked for blanks and duplicates."""
    if isinstance(participants, int):
        if participants < 1:
            raise InputError("the panel needs at least 1 participant", field="participants")
        width = max(2, len(str(participants)))
        return tuple(f"P{i:0{width}d}" for i in range(1, participants + 1))
    ids = tuple(str(p).strip() for p in participants)
    if not ids:
        raise InputError("the panel needs at least 1 participant", field="participants")
    if any(not p for p in ids):
        raise InputError("a participant id is blank", field="participants")
    twice = sorted(p for p, n in Counter(ids).items() if n > 1)
    if twice:
        raise InputError(
            f"participant id(s) listed twice: {', '.join(twice)}", field="participants"
        )
    return ids


def _targets(selection: Selection, tasks: Mapping[str, TaskInfo]) -> list[AnswerTarget]:
    out: list[AnswerTarget] = []
    seen: set[str] = set()
    for i, answer in enumerate(selection.answers):
        if answer.task_id not in tasks:
            raise InputError(
                f"task {answer.task_id!r} is not in the task bank",
                field=f"answers[{i}].task_id",
                hint="pass the bank the selection was made from (--bank)",
            )
        if answer.answer_id in seen:
            raise InputError(
                f"answer {answer.answer_id!r} is listed twice", field=f"answers[{i}].answer_id"
            )
        seen.add(answer.answer_id)
        out.append(
            AnswerTarget(
                answer_id=answer.answer_id,
                task_id=answer.task_id,
                domain=tasks[answer.task_id].domain,
                ground_truth=answer.ground_truth,
                source=answer.source,
                model=answer.model,
                error_type=answer.error_type,
                error_level=answer.error_level,
            )
        )
    return sorted(out, key=lambda a: a.answer_id)


def _check_pairs(pairs: Sequence[Pair], tasks: Mapping[str, TaskInfo]) -> None:
    used: dict[str, str] = {}
    for i, pair in enumerate(pairs):
        for task_id in pair.tasks:
            if task_id not in tasks:
                raise InputError(
                    f"task {task_id!r} has no answers in the selection",
                    field=f"pairs[{i}]",
                    hint="pair only the selection's tasks (dropped tasks never break a pair)",
                )
            if task_id in used:
                raise InputError(
                    f"task {task_id!r} is in two pairs ({used[task_id]} and {pair.pair_id})",
                    field=f"pairs[{i}]",
                )
            used[task_id] = pair.pair_id
        if pair.first == pair.second:
            raise InputError(f"pair {pair.pair_id} pairs a task with itself", field=f"pairs[{i}]")
        domains = {tasks[t].domain for t in pair.tasks}
        if len(domains) > 1:
            raise InputError(
                f"pair {pair.pair_id} mixes domains ({', '.join(sorted(domains))})",
                field=f"pairs[{i}]",
                hint="pairs stay within a domain",
            )


# -- core: the Latin square ---------------------------------------------------------------------


class _Answers:
    """Hands out a task's answers of one ground truth in turn, so verdicts spread evenly."""

    def __init__(self, answers: Iterable[AnswerTarget], seed: int) -> None:
        self._lists: dict[tuple[str, bool], list[AnswerTarget]] = defaultdict(list)
        for a in sorted(answers, key=lambda a: a.answer_id):
            self._lists[(a.task_id, a.wrong)].append(a)
        for (task_id, wrong), items in self._lists.items():
            stream(seed, "answer-turns", task_id, wrong).shuffle(items)
        self._turn: Counter[tuple[str, bool]] = Counter()
        self.fallbacks: Counter[tuple[str, bool]] = Counter()

    def take(self, task_id: str, wrong: bool) -> AnswerTarget | None:
        key = (task_id, wrong)
        if not self._lists.get(key):
            other = (task_id, not wrong)
            if not self._lists.get(other):
                return None
            self.fallbacks[key] += 1
            key = other
        items = self._lists[key]
        chosen = items[self._turn[key] % len(items)]
        self._turn[key] += 1
        return chosen


def _group_rank(group: str) -> int:
    first = group.split("+")[0]
    return DIFFICULTY_ORDER.index(first) if first in DIFFICULTY_ORDER else len(DIFFICULTY_ORDER)


_SINGLES = (0, 2, 1, 3)


def _residues(count: int, turns: tuple[int, int]) -> tuple[list[int], tuple[int, int]]:
    """Column residues for a group of ``count`` pairs, so every row stays balanced.

    Whole blocks of 0, 1, 2, 3; two more columns as x and x + 2 (which always fall on one
    correct and one wrong condition, whatever the row); a last single one from 0, 2, 1, 3 in
    turn across groups (consecutive singles again differ by 2). ``turns`` (of the x's and of
    the singles) carry over from group to group.
    """
    doubles, singles = turns
    out = [0, 1, 2, 3] * (count // 4)
    rest = count % 4
    if rest >= 2:
        out += [doubles % 2, doubles % 2 + 2]
        doubles += 1
    if rest % 2:
        out.append(_SINGLES[singles % 4])
        singles += 1
    return out, (doubles, singles)


def _core_visits(
    domain: str,
    pairs: Sequence[Pair],
    answers: _Answers,
    rows: Sequence[str],
    seed: int,
) -> dict[str, list[Visit]]:
    orient = stream(seed, "orientation", domain)
    oriented = [(p, *(p.tasks if orient.random() < 0.5 else p.tasks[::-1])) for p in pairs]
    groups: dict[str, list[int]] = defaultdict(list)
    for j, (pair, _, _) in enumerate(oriented):
        groups[pair.group].append(j)
    ordered_groups = sorted(groups, key=lambda g: (_group_rank(g), g))
    columns: dict[int, dict[int, int]] = {}
    visits: dict[str, list[Visit]] = {}
    for r, person in enumerate(rows):
        block = r // 4
        if block not in columns:  # each block of 4 rows deals the columns anew
            shuffle = stream(seed, "square", domain, block)
            column: dict[int, int] = {}
            turns = (0, 0)
            for g in ordered_groups:
                members = list(groups[g])
                shuffle.shuffle(members)
                residues, turns = _residues(len(members), turns)
                column.update(zip(members, residues, strict=True))
            columns[block] = column
        mine: list[Visit] = []
        for j, (pair, a, b) in enumerate(oriented):
            condition = (r % 4 + columns[block][j]) % 4
            do_task, checked = (a, b) if condition in (0, 2) else (b, a)
            wrong = condition in (1, 2)
            mine.append(Visit(pair, do_task, answers.take(checked, wrong)))
        visits[person] = mine
    return visits


def _group_sessions(
    visits: Sequence[Visit], design: Design, rng_seed: int, person: str, domain: str
) -> list[list[Visit]]:
    """Deal one participant's visits into sessions, groups spread, then repair the mix."""
    k = design.pairs_per_session
    count = max(1, math.ceil(len(visits) / k))
    rng = stream(rng_seed, "sessions", person, domain, k)
    by_group: dict[str, list[Visit]] = defaultdict(list)
    for v in visits:
        by_group[v.pair.group].append(v)
    dealt: list[Visit] = []
    for g in sorted(by_group, key=lambda g: (_group_rank(g), g)):
        members = by_group[g]
        rng.shuffle(members)
        dealt.extend(members)
    start = rng.randrange(count)
    sessions: list[list[Visit]] = [[] for _ in range(count)]
    for i, v in enumerate(dealt):
        sessions[(start + i) % count].append(v)
    repair_mix(
        sessions,
        min_correct=design.min_correct,
        min_wrong=design.min_wrong,
        rng=rng,
        can_join=lambda _s, _v: True,
        prefer=lambda x, y: x.pair.group == y.pair.group,
    )
    return sessions


# -- full: check slots --------------------------------------------------------------------------


def _subset(wrong: Sequence[AnswerTarget], size: int, seed: int, domain: str) -> set[str]:
    """``size`` wrong answers drawn in turn from each (source, level) stratum, at random."""
    strata: dict[tuple[str, str], list[AnswerTarget]] = defaultdict(list)
    for a in sorted(wrong, key=lambda a: a.answer_id):
        strata[(a.source, a.error_level or "")].append(a)
    rng = stream(seed, "subset", domain)
    keys = sorted(strata)
    for key in keys:
        rng.shuffle(strata[key])
    rng.shuffle(keys)
    chosen: list[str] = []
    while len(chosen) < size and any(strata[k] for k in keys):
        for key in keys:
            if strata[key] and len(chosen) < size:
                chosen.append(strata[key].pop().answer_id)
    return set(chosen)


def _full_sessions(
    domain: str,
    pairs: Sequence[Pair],
    answers: Sequence[AnswerTarget],
    design: Design,
    seed: int,
) -> tuple[list[list[Visit]], list[Violation]]:
    """The domain's check slots dealt into sessions of distinct pairs, mix repaired."""
    k = design.pairs_per_session
    pair_of = {t: p for p in pairs for t in p.tasks}
    by_pair: dict[str, list[Visit]] = defaultdict(list)
    for a in answers:
        pair = pair_of.get(a.task_id)
        if pair is None or a.target is None:
            continue
        for _ in range(a.target):
            by_pair[pair.pair_id].append(Visit(pair, pair.partner(a.task_id), a))
    total = sum(len(v) for v in by_pair.values())
    if not total:
        return [], []
    count = max(math.ceil(total / k), max(len(v) for v in by_pair.values()))
    rng = stream(seed, "slots", domain, k)
    order = sorted(by_pair)
    rng.shuffle(order)
    sessions: list[list[Visit]] = [[] for _ in range(count)]
    i = 0
    for pair_id in order:
        slots = by_pair[pair_id]
        rng.shuffle(slots)
        for visit in slots:
            sessions[i % count].append(visit)
            i += 1
    violations: list[Violation] = []
    correct = sum(v.correct for slots in by_pair.values() for v in slots)
    wrong = total - correct
    for kind, have, least in (
        ("correct", correct, design.min_correct),
        ("wrong", wrong, design.min_wrong),
    ):
        if have < count * least:
            violations.append(
                Violation(
                    "session-mix",
                    f"{domain}: {count} sessions need at least {count * least} {kind} answers "
                    f"to check ({least} each) but the domain has {have} {kind} check slots: "
                    f"with {len(by_pair)} pairs the design cannot give every session its "
                    f"{least} {kind} answers (more tasks, or fewer pairs per session)",
                )
            )
    if count * k > total and total % k:
        violations.append(
            Violation(
                "session-size",
                f"{domain}: {total} check slots do not fill {count} sessions of {k}; "
                f"{count * k - total} session place(s) stay empty",
                "warning",
            )
        )

    def can_join(session: Sequence[Visit], visit: Visit) -> bool:
        return all(v.pair.pair_id != visit.pair.pair_id for v in session)

    repair_mix(
        sessions,
        min_correct=design.min_correct,
        min_wrong=design.min_wrong,
        rng=rng,
        can_join=can_join,
        prefer=lambda x, y: x.pair.pair_id == y.pair.pair_id,
    )
    return sessions, violations


def _share_out(
    by_domain: Mapping[str, list[list[Visit]]],
    participants: Sequence[str],
    design: Design,
    pairs_in: Mapping[str, int],
    seed: int,
) -> tuple[dict[str, list[Session]], list[Violation], list[str]]:
    """Give each session to the least-loaded participant who has met none of its pairs."""
    rng = stream(seed, "share-out")
    load: Counter[str] = Counter()
    domain_load: dict[str, Counter[str]] = {d: Counter() for d in by_domain}
    seen: dict[tuple[str, str], set[str]] = defaultdict(set)
    out: dict[str, list[Session]] = defaultdict(list)
    queue: list[tuple[str, list[Visit]]] = []
    domains = sorted(by_domain)
    longest = max((len(s) for s in by_domain.values()), default=0)
    for i in range(longest):  # interleave the domains, so loads grow evenly
        for d in domains:
            if i < len(by_domain[d]):
                queue.append((d, by_domain[d][i]))
    tiebreak = {p: rng.random() for p in participants}
    missing: Counter[str] = Counter()
    missing_slots: Counter[str] = Counter()
    for domain, visits in queue:
        cap = _capacity(design, pairs_in[domain])
        needed = {v.pair.pair_id for v in visits}
        eligible = [
            p
            for p in participants
            if domain_load[domain][p] < cap and not (seen[(p, domain)] & needed)
        ]
        if not eligible:
            missing[domain] += 1
            missing_slots[domain] += len(visits)
            continue
        person = min(eligible, key=lambda p: (load[p], domain_load[domain][p], tiebreak[p]))
        load[person] += 1
        domain_load[domain][person] += 1
        seen[(person, domain)] |= needed
        out[person].append(Session(domain, visits))
    violations: list[Violation] = []
    for domain in domains:
        if not missing[domain]:
            continue
        total = len(by_domain[domain])
        cap = _capacity(design, pairs_in[domain])
        least = math.ceil(total / cap)
        if len(participants) < least:
            why = (
                f"Each participant takes at most {cap} {domain} session(s), so the {total} "
                f"sessions need at least {least} participants; the panel has "
                f"{len(participants)}."
            )
        else:
            why = (
                f"The panel of {len(participants)} could hold {len(participants) * cap} at "
                f"{cap} each, but these share a pair with the {domain} sessions of everyone "
                "who has room, and nobody may see a task twice: add participants."
            )
        violations.append(
            Violation(
                "panel-size",
                f"{domain}: {missing[domain]} of {total} sessions ({missing_slots[domain]} check "
                f"slots) have no participant. {why} The design's fallback: first drop the extra "
                "RQ3 answers and the 6-verdict subset, then use fewer tasks per domain, and only "
                "then one domain",
            )
        )
    idle = [p for p in participants if not load[p]]
    notes = [f"{len(idle)} participant(s) have no session: {', '.join(idle)}"] if idle else []
    return out, violations, notes


def _capacity(design: Design, pairs: int) -> int:
    return design.max_sessions_per_domain or max(1, pairs // design.pairs_per_session)


# -- the whole allocation -----------------------------------------------------------------------


def _practice(
    practice_tasks: Sequence[TaskInfo],
    design: Design,
    targets: Sequence[AnswerTarget],
    participants: Sequence[str],
) -> tuple[tuple[Pair, ...], dict[str, Session], list[Violation], list[str]]:
    if design.practice_tasks == 0:
        return (), {}, [], []
    chosen = sorted(practice_tasks, key=lambda t: t.task_id)[: design.practice_tasks]
    violations: list[Violation] = []
    if len(chosen) < design.practice_tasks:
        violations.append(
            Violation(
                "practice",
                f"the design has a practice session on {design.practice_tasks} practice tasks; "
                f"the bank has {len(chosen)}",
                "warning",
            )
        )
    pairs, left = pair_tasks([replace(t, group="practice") for t in chosen], tolerance=math.inf)
    if left:
        violations.append(
            Violation("practice", f"practice task {', '.join(left)} has no partner", "warning")
        )
    if not pairs:
        return (), {}, violations, []
    answers = [a for a in targets if a.task_id in {t.task_id for t in chosen}]
    notes: list[str] = []
    sessions: dict[str, Session] = {}
    for index, person in enumerate(participants):
        visits: list[Visit] = []
        for pair in pairs:
            do_task = pair.tasks[index % 2]
            checked = pair.partner(do_task)
            options = sorted(
                (a for a in answers if a.task_id == checked),
                key=lambda a: (a.wrong != bool((index // 2) % 2), a.answer_id),
            )
            visits.append(Visit(pair, do_task, options[0] if options else None))
        sessions[person] = Session(pairs[0].domain, visits, 0)
    if not answers:
        notes.append(
            "the practice checks have no selected answer (answer_id empty): the harness shows "
            "a practice answer of its own; practice data is never analysed"
        )
    return tuple(pairs), sessions, violations, notes


def allocate(
    selection: Selection,
    tasks: Iterable[Task | TaskInfo],
    *,
    participants: int | Sequence[str],
    design: Design | str = CORE,
    seed: int = 0,
    pairs: Sequence[Pair] | None = None,
    reserves: Sequence[str] = (),
    practice: Sequence[TaskInfo] | None = None,
    budget: Budgets | None = None,
    spec_hash: str | None = None,
) -> Allocation:
    """Allocate the selection's answers and tasks to a panel (the scheme: module docstring).

    ``tasks``: the bank (or :class:`TaskInfo` records) the selection's tasks come from; its
    practice tasks (role ``practice``) make the practice session unless ``practice`` is given.
    ``pairs``: fixed pairs (e.g. from the pilot, :func:`~vcost.allocation.derive_pilot`);
    by default the selection's tasks are paired by :func:`~vcost.allocation.pair_tasks`.
    ``budget(task_id, block)``: minutes to record on each assignment. What the design asks
    and this allocation cannot give is in ``Allocation.violations``, never silently dropped.
    """
    chosen = design_named(design) if isinstance(design, str) else design
    if chosen.name == "core" and chosen.subset_size:
        raise InputError(
            "the core design has no larger-verdict subset: everyone meets every pair once, so "
            "each answer gets about panel / 4 verdicts",
            field="subset",
            hint="use the full design for a 6-verdict subset",
        )
    people = panel_ids(participants)
    spare = panel_ids(list(reserves)) if reserves else ()
    clash = sorted(set(people) & set(spare))
    if clash:
        raise InputError(f"reserve(s) also on the panel: {', '.join(clash)}", field="reserves")
    infos: dict[str, TaskInfo] = {}
    practice_found: list[TaskInfo] = []
    for task in tasks:
        info = task if isinstance(task, TaskInfo) else task_info(task)
        infos[info.task_id] = info
        if not isinstance(task, TaskInfo) and task.role == "practice":
            practice_found.append(info)
    practice_infos = list(practice) if practice is not None else practice_found
    practice_ids = {t.task_id for t in practice_infos}
    if not selection.answers:
        raise InputError(
            "the selection holds no answers", field="answers", hint="select them first"
        )
    targets = _targets(selection, infos)
    study_ids = sorted({a.task_id for a in targets} - practice_ids)
    study = {t: infos[t] for t in study_ids}
    violations: list[Violation] = []
    notes: list[str] = []
    if pairs is None:
        made, unpaired = pair_tasks(study.values(), tolerance=chosen.time_tolerance)
        the_pairs = tuple(made)
    else:
        _check_pairs(pairs, study)
        the_pairs = tuple(pairs)
        paired = {t for p in the_pairs for t in p.tasks}
        unpaired = [t for t in study_ids if t not in paired]
    if unpaired:
        violations.append(
            Violation(
                "pairing",
                f"task(s) {', '.join(unpaired)} have no partner and are not allocated "
                "(each domain needs an even number of tasks)",
            )
        )
    for pair in the_pairs:
        if pair.cross_group:
            violations.append(
                Violation(
                    "pairing",
                    f"{pair.pair_id} pairs tasks across difficulty groups ({pair.group}): "
                    "a group has an odd number of tasks",
                    "warning",
                )
            )
        if not pair.within(chosen.time_tolerance):
            violations.append(
                Violation(
                    "pairing",
                    f"{pair.pair_id}: do times {pair.first_minutes:g} and "
                    f"{pair.second_minutes:g} min differ by more than "
                    f"{chosen.time_tolerance:.0%} (ratio {pair.ratio:.2f})",
                    "warning",
                )
            )
    allocated = {t for p in the_pairs for t in p.tasks}
    kept = [a for a in targets if a.task_id in allocated or a.task_id in practice_ids]
    left_out = sorted({a.task_id for a in targets} - allocated - practice_ids)
    if left_out:
        notes.append(f"answers to unpaired task(s) {', '.join(left_out)} are not allocated")
    domains = sorted({p.domain for p in the_pairs})
    pairs_in = {d: sum(p.domain == d for p in the_pairs) for d in domains}
    if chosen.name == "full":
        kept, subset_notes = _set_targets(kept, allocated, chosen, seed, domains)
        notes += subset_notes
    sessions: dict[str, list[Session]] = defaultdict(list)
    if chosen.name == "core":
        rows = list(people)
        stream(seed, "rows").shuffle(rows)
        turns = _Answers([a for a in kept if a.task_id in allocated], seed)
        for domain in domains:
            dpairs = [p for p in the_pairs if p.domain == domain]
            for person, visits in _core_visits(domain, dpairs, turns, rows, seed).items():
                for group in _group_sessions(visits, chosen, seed, person, domain):
                    sessions[person].append(Session(domain, group))
            count = math.ceil(len(dpairs) / chosen.pairs_per_session)
            if chosen.sessions is not None and count != chosen.sessions:
                notes.append(
                    f"{domain}: {len(dpairs)} pairs make {count} session(s) of up to "
                    f"{chosen.pairs_per_session} pairs per participant (the design has "
                    f"{chosen.sessions})"
                )
        for (task_id, wrong), n in sorted(turns.fallbacks.items()):
            missing = "wrong" if wrong else "correct"
            other = "correct" if wrong else "wrong"
            violations.append(
                Violation(
                    "answers",
                    f"task {task_id} has no {missing} answer: {n} check(s) of it show its "
                    f"{other} answer instead, so the mix is off",
                )
            )
    else:
        by_domain: dict[str, list[list[Visit]]] = {}
        for domain in domains:
            dpairs = [p for p in the_pairs if p.domain == domain]
            groups, found = _full_sessions(
                domain, dpairs, [a for a in kept if a.domain == domain], chosen, seed
            )
            by_domain[domain] = groups
            violations += found
        shared, found, more = _share_out(by_domain, people, chosen, pairs_in, seed)
        sessions.update(shared)
        violations += found
        notes += more
    busy = [p for p in people if sessions.get(p)] if sessions else list(people)
    practice_pairs, practice_sessions, found, more = _practice(practice_infos, chosen, kept, busy)
    violations += found
    notes += more
    allocation_id = allocation_id_for(
        [
            chosen.to_dict(),
            seed,
            people,
            sorted(a.answer_id for a in kept),
            [p.pair_id for p in the_pairs],
            [p.pair_id for p in practice_pairs],
        ]
    )
    rows_out = emit_sessions(
        allocation_id=allocation_id,
        seed=seed,
        participants=people,
        sessions=sessions,
        practice=practice_sessions,
        budget=budget,
    )
    allocation = Allocation(
        allocation_id=allocation_id,
        design=chosen,
        seed=seed,
        participants=people,
        reserves=spare,
        pairs=the_pairs,
        practice_pairs=practice_pairs,
        answers=tuple(kept),
        assignments=tuple(rows_out),
        unpaired=tuple(unpaired),
        violations=tuple(violations),
        notes=tuple(notes),
        spec_hash=spec_hash,
        meta={"selection_variant": selection.variant, "selection_seed": selection.seed},
    )
    found_now = check_allocation(allocation)
    known = {(v.rule, v.message) for v in violations}
    extra = tuple(v for v in found_now if (v.rule, v.message) not in known)
    return replace(allocation, violations=allocation.violations + extra)


def _set_targets(
    answers: Sequence[AnswerTarget],
    allocated: set[str],
    design: Design,
    seed: int,
    domains: Sequence[str],
) -> tuple[list[AnswerTarget], list[str]]:
    """full: each allocated answer's slots, the subset's wrong answers with more."""
    assert design.verdicts_per_answer is not None
    notes: list[str] = []
    subset: set[str] = set()
    if design.subset_size:
        for domain in domains:
            wrong = [
                a for a in answers if a.domain == domain and a.wrong and a.task_id in allocated
            ]
            if len(wrong) < design.subset_size:
                notes.append(
                    f"{domain}: only {len(wrong)} wrong answer(s) for a subset of "
                    f"{design.subset_size}; all get {design.subset_verdicts} verdicts"
                )
            subset |= _subset(wrong, design.subset_size, seed, domain)
    out = [
        replace(
            a,
            target=(design.subset_verdicts if a.answer_id in subset else design.verdicts_per_answer)
            if a.task_id in allocated
            else None,
            subset=a.answer_id in subset,
        )
        for a in answers
    ]
    return out, notes
