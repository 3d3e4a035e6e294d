"""A grader card for vcost's own hidden-test verifier on the whole bundled bank, end to end.

Gold set to card in one command (issue 7, "what it must show"), every step timed:

1. **plant**: every mutant of every code task's reference, classified in the sandbox WITH
   differential testing (:mod:`vcost.plant`).
2. **gold**: the sealed gold set. References are clear successes; obvious and subtle mutants
   near misses; equivalent mutants that differential testing distinguished near misses the
   hidden tests miss (failures); equivalent mutants never distinguished unusual-but-valid
   successes; discarded mutants are left out and counted (:func:`gold_from_candidates`).
3. **labels**: two labellers per item, both programs, named for what they are (never people):

   - ``construction``: what the item was built to be (a reference, a mutant and its level);
   - ``differential``: an oracle independent of the hidden tests' verdicts: the candidate and
     the reference on the specification's worked examples and on a batch of generated inputs
     (:class:`vcost.plant.DifferentialSearch`, a larger batch than planting drew); failure if
     any output differs;
   - ``witness-rerun`` (adjudicator, disagreements only): the candidate and the reference on
     the worked examples, the written tests' inputs and the differential witness, one process
     per input; failure if any output differs. It compares with the reference's outputs and
     never sees a verdict.

4. **adjudicate**, 5. **verifier**: :class:`HiddenTestVerifier` on every item in the sandbox,
   6. **rates** (false accepts / false rejects per stratum and category, Clopper-Pearson,
   Korn-Graubard and a cluster bootstrap clustered by task), 7. **audit**: the scripted
   test-suite exploits and a frozen drift anchor, 8. **card** (JSON, Markdown, HTML) under
   ``bench/card-policy.toml``.

The files written (gold.jsonl, labels-*.jsonl, run.jsonl, audit.json, anchor.json) are what
``vcost card`` reads, so the card's numbers can be recomputed with one command (printed at the
end). Appends the key figures to bench/results/card.jsonl. Data tasks are left out: the only
check of a data script is its number on the task's one CSV, which is the hidden test itself,
so there is no oracle independent of the verifier (docs/planted-errors.md: no differential
testing for data scripts).

    python bench/bench_card.py [--tasks N] [--workers 2] [--out out/card-bank]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from vcost import __version__
from vcost.grading import grade_code, values_equal
from vcost.plant import Candidate, DifferentialSearch, Mutant, TaskContext, classify, mutants
from vcost.plant import prepare as prepare_task
from vcost.reliability import (
    TEST_SUITE_STRATEGIES,
    Adjudication,
    GoldItem,
    GoldSet,
    GraderCard,
    HiddenTestVerifier,
    LabelRow,
    ReliabilityEstimate,
    ScriptedAttacker,
    Stratum,
    Verdict,
    Verifier,
    VerifierIdentity,
    VerifierRun,
    adjudicate,
    build_card,
    error_rates,
    exploit_audit,
    freeze_anchor,
    gold_from_candidates,
    gold_from_references,
    load_policy,
    run_verifier,
    write_card,
    write_gold,
)
from vcost.sandbox import CallResult, Sandbox
from vcost.tasks import BUNDLED_BANK, CodeTask, load_bank, parse_examples

ROOT = Path(__file__).resolve().parents[1]
POLICY = ROOT / "bench" / "card-policy.toml"
RESULTS = ROOT / "bench" / "results" / "card.jsonl"
TASK_CLASS = "python-functions"
GOLD_NAME = "bundled-bank-code-machine-labels"  # no spaces: the name goes into the canary

#: The labellers: programs, named for what they are. None of them is a person.
LABELLERS: dict[str, dict[str, str]] = {
    "construction": {
        "role": "primary",
        "kind": "program",
        "what": "the item's construction: a task reference is a success; an obvious, subtle "
        "or differentially distinguished mutant a failure; an equivalent mutant that "
        "differential testing never distinguished a success",
    },
    "differential": {
        "role": "primary",
        "kind": "program",
        "what": "differential testing against the reference: the candidate and the reference "
        "on the specification's worked examples and on generated inputs (vcost.plant."
        "DifferentialSearch); failure if any output differs",
    },
    "witness-rerun": {
        "role": "adjudicator",
        "kind": "program",
        "what": "disagreements only: the candidate and the reference rerun one process per "
        "input on the worked examples, the written tests' inputs and the differential "
        "witness; failure if any output differs from the reference's",
    },
}
LABEL_SOURCE = (
    "LABELS ARE NOT FROM PEOPLE: every gold label comes from programs, the items' "
    "construction (labeller 'construction') and differential testing against the task's "
    "reference (labeller 'differential'), with disagreements settled by rerunning the "
    "candidate and the reference on the witness inputs (adjudicator 'witness-rerun'). No "
    "person labelled any item; the reference solutions are taken as correct."
)

Advance = Callable[[int], None]


def _noop(_: int) -> None:
    return None


class Steps:
    """Progress bars (rich) for steps with a known total and wall-clock timings for every
    step; quiet when ``console`` is None."""

    def __init__(self, console: Console | None) -> None:
        self.console = console
        self.seconds: dict[str, float] = {}

    @contextmanager
    def step(self, name: str, total: int | None = None) -> Iterator[Advance]:
        start = time.perf_counter()
        if self.console is None or total is None:
            yield _noop
        else:
            with Progress(
                TextColumn(f"[bold]{name:<10}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=self.console,
                transient=False,
            ) as bar:
                task = bar.add_task(name, total=total)
                lock = threading.Lock()

                def advance(n: int = 1) -> None:
                    with lock:
                        bar.advance(task, n)

                yield advance
        self.seconds[name] = round(time.perf_counter() - start, 2)
        if self.console is not None:
            self.console.print(f"  {name}: {self.seconds[name]:.1f} s")


# ---------------------------------------------------------------------------- 1. plant


Select = Callable[[CodeTask, list[Mutant]], list[Mutant]]


def code_tasks(
    bank: Path = BUNDLED_BANK, *, limit: int | None = None, ids: Sequence[str] = ()
) -> list[CodeTask]:
    """The bank's code tasks (those named in ``ids``, else the first ``limit``, else all)."""
    tasks = [t for t in load_bank(bank) if isinstance(t, CodeTask)]
    if ids:
        known = {t.id: t for t in tasks}
        missing = [i for i in ids if i not in known]
        if missing:
            raise SystemExit(f"no code task {', '.join(missing)} in {bank}")
        return [known[i] for i in ids]
    return tasks[:limit] if limit else tasks


def plant_tasks(
    tasks: Sequence[CodeTask],
    *,
    sandbox: Sandbox,
    workers: int,
    select: Select | None = None,
    steps: Steps | None = None,
) -> dict[str, list[Candidate]]:
    """Every mutant (or those ``select`` keeps) of every task, classified with differential
    testing; one pool of ``workers`` threads over all mutants of all tasks."""
    steps = steps or Steps(None)
    found = {t.id: mutants(t.reference, kind="code") for t in tasks}
    if select is not None:
        found = {t.id: select(t, found[t.id]) for t in tasks}
    contexts: dict[str, TaskContext] = {}
    jobs = [(t, m) for t in tasks for m in found[t.id]]
    with steps.step("plant", total=len(jobs)) as advance:
        for t in tasks:
            contexts[t.id] = prepare_task(t, sandbox=sandbox)

        def one(job: tuple[CodeTask, Mutant]) -> Candidate:
            task, mutant = job
            out = classify(
                task, mutant, sandbox=sandbox, distinguish=True, context=contexts[task.id]
            )
            advance(1)
            return out

        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(one, jobs))
    planted: dict[str, list[Candidate]] = {t.id: [] for t in tasks}
    for (task, _), candidate in zip(jobs, results, strict=True):
        planted[task.id].append(candidate)
    return planted


# ---------------------------------------------------------------------------- 2. gold


@dataclasses.dataclass(frozen=True)
class GoldBuild:
    """The sealed gold set and what was left out of it."""

    gold: GoldSet
    discarded: int
    discard_reasons: Mapping[str, int]
    distinguished: tuple[str, ...]  # item ids of near misses found only by differential testing
    distinguished_discarded: int  # distinguished, then discarded by the level rules
    found_inputs: Mapping[str, tuple[list[Any], ...]]  # item id -> inputs planting found


def build_gold(tasks: Sequence[CodeTask], planted: Mapping[str, Sequence[Candidate]]) -> GoldBuild:
    """References (clear successes) and the planted candidates, sealed with one canary.

    A mutant differential testing distinguished keeps its near-miss stratum; its category
    becomes ``planted/<type>/distinguished`` so the card shows the hidden tests' blind spot."""
    items: list[GoldItem] = list(gold_from_references(tasks))
    discarded = 0
    reasons: Counter[str] = Counter()
    distinguished: list[str] = []
    found: dict[str, tuple[list[Any], ...]] = {}
    late = 0
    for task in tasks:
        candidates = list(planted.get(task.id, ()))
        made, dropped = gold_from_candidates(task.id, candidates)
        discarded += dropped
        by_id = {f"{task.id}/planted/{n}": c for n, c in enumerate(candidates)}
        for c in candidates:
            if c.level == "discarded":
                reasons[c.reason.split(":", 1)[0]] += 1
                late += bool(c.new_tests)
        for item in made:
            c = by_id[item.item_id]
            if c.new_tests:
                item = dataclasses.replace(item, category=f"planted/{c.error_type}/distinguished")
                distinguished.append(item.item_id)
                found[item.item_id] = tuple(list(t.args) for t in c.new_tests)
            items.append(item)
    notes = [
        LABEL_SOURCE,
        f"Built from {len(tasks)} code tasks of the bundled bank: references (clear-success), "
        "obvious and subtle planted mutants (near-miss), equivalent mutants that differential "
        "testing distinguished (near-miss, category planted/<type>/distinguished), equivalent "
        f"mutants never distinguished (unusual-valid). {discarded} discarded mutants left out "
        f"({', '.join(f'{k}: {n}' for k, n in sorted(reasons.items())) or 'none'}).",
    ]
    if late:
        notes.append(
            f"{late} of the discarded mutants were distinguished by differential testing and "
            "then discarded by the study's level rules: failures the hidden tests miss that "
            "are in no rate."
        )
    gold = GoldSet.sealed(GOLD_NAME, TASK_CLASS, items, notes=notes)
    return GoldBuild(gold, discarded, dict(reasons), tuple(distinguished), late, found)


# ---------------------------------------------------------------------------- 3. labels


def construction_labels(build: GoldBuild) -> list[LabelRow]:
    """Labeller ``construction``: the item's construction (its ``expected``) at the task level;
    the note names the category and any input planting's differential testing found."""
    rows = []
    for item in build.gold.items:
        found = build.found_inputs.get(item.item_id, ())
        note = item.category + (f"; differs on {_short(found[0])}" if found else "")
        value = "yes" if item.expected == "success" else "no"
        rows.append(
            LabelRow(item.item_id, "construction", "primary", task=value, note=note, kind="program")
        )
    return rows


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 160 else text[:157] + "..."


@dataclasses.dataclass(frozen=True)
class Witness:
    """An input on which a candidate and the reference were seen to differ."""

    args: list[Any]
    what: str


class DifferentialOracle:
    """Labeller ``differential`` for one task: worked examples, then a generated batch.

    The batch comes from :class:`vcost.plant.DifferentialSearch` (shapes of the task's own
    inputs, a fixed seed) with ``examples`` inputs, by default twice what planting draws, so
    it can also find differences planting missed. The reference is the oracle: no verdict and
    no expected value of a hidden test is read."""

    def __init__(self, task: CodeTask, *, sandbox: Sandbox, examples: int) -> None:
        self.task = task
        self.sandbox = sandbox
        worked = parse_examples(task.spec_text, task.entry_point)
        self.worked = [
            {"args": list(args), "expected": json.loads(json.dumps(out)), "tags": ["example"]}
            for args, out in worked
        ]
        self.search = DifferentialSearch(
            task.reference,
            task.entry_point,
            [t["args"] for t in self.worked] + [t.args for t in task.tests],
            sandbox=sandbox,
            checklist=task.checklist,
            raises={t.raises for t in task.tests if t.raises is not None},
            max_examples=examples,
            float_tolerance=task.float_tolerance,
        )

    def check(self, source: str) -> Witness | None:
        """A witness input if ``source`` differs from the reference, else None."""
        if self.worked:
            grade = grade_code(
                source,
                self.task.entry_point,
                self.worked,
                sandbox=self.sandbox,
                float_tolerance=self.task.float_tolerance,
            )
            for outcome in grade.outcomes:
                if outcome.status != "passed":
                    args = self.worked[outcome.index]["args"]
                    return Witness(args, f"worked example {outcome.index + 1}: {outcome.detail}")
        found = self.search.search(source)
        if found is None:
            return None
        return Witness(
            found.args, f"generated input {_short(found.args)}: the candidate {found.got}"
        )


def differential_labels(
    gold: GoldSet,
    tasks: Mapping[str, CodeTask],
    *,
    sandbox: Sandbox,
    workers: int,
    examples: int = 600,
    steps: Steps | None = None,
) -> tuple[list[LabelRow], dict[str, Witness]]:
    """Labeller ``differential`` on every item (the oracle: module docstring)."""
    steps = steps or Steps(None)
    oracles: dict[str, DifferentialOracle] = {}
    lock = threading.Lock()

    def oracle(task_id: str) -> DifferentialOracle:
        with lock:
            if task_id not in oracles:
                oracles[task_id] = DifferentialOracle(
                    tasks[task_id], sandbox=sandbox, examples=examples
                )
            return oracles[task_id]

    with steps.step("differ", total=len(gold.items)) as advance:

        def one(item: GoldItem) -> Witness | None:
            out = oracle(item.task_id).check(item.output)
            advance(1)
            return out

        with ThreadPoolExecutor(max_workers=workers) as pool:
            found = list(pool.map(one, gold.items))
    rows = [
        LabelRow(
            item.item_id,
            "differential",
            "primary",
            task="no" if w is not None else "yes",
            note=w.what if w is not None else "agrees with the reference on every input tried",
            kind="program",
        )
        for item, w in zip(gold.items, found, strict=True)
    ]
    witnesses = {i.item_id: w for i, w in zip(gold.items, found, strict=True) if w is not None}
    return rows, witnesses


def _same(ref: CallResult, got: CallResult, tolerance: float) -> bool:
    if ref.status == "ok":
        return got.status == "ok" and values_equal(got.value, ref.value, float_tolerance=tolerance)
    if ref.status == "raised":
        names = set(ref.exception_types[:1])
        return got.status == "raised" and bool(names & set(got.exception_types))
    return got.status == ref.status  # the reference timed out or crashed: same fate


def witness_labels(
    gold: GoldSet,
    tasks: Mapping[str, CodeTask],
    disputed: Iterable[str],
    witnesses: Mapping[str, Sequence[list[Any]]],
    *,
    sandbox: Sandbox,
) -> list[LabelRow]:
    """Adjudicator ``witness-rerun`` on the disputed items: the worked examples, the written
    tests' inputs and every witness input either labeller gave (``witnesses``)."""
    by_id = gold.by_id()
    rows: list[LabelRow] = []
    for item_id in disputed:
        item = by_id[item_id]
        task = tasks[item.task_id]
        inputs = [list(a) for a, _ in parse_examples(task.spec_text, task.entry_point)]
        inputs += [list(t.args) for t in task.tests]
        inputs += [list(a) for a in witnesses.get(item_id, ())]
        ref = sandbox.call(task.reference, task.entry_point, inputs)
        got = sandbox.call(item.output, task.entry_point, inputs)
        bad = [
            i
            for i, (r, g) in enumerate(zip(ref, got, strict=True))
            if not _same(r, g, task.float_tolerance)
        ]
        note = (
            f"differs from the reference on {len(bad)} of {len(inputs)} inputs, first "
            f"{_short(inputs[bad[0]])}"
            if bad
            else f"agrees with the reference on all {len(inputs)} inputs"
        )
        rows.append(
            LabelRow(
                item_id,
                "witness-rerun",
                "adjudicator",
                task="no" if bad else "yes",
                note=note,
                kind="program",
            )
        )
    return rows


def disagreements(rows: Iterable[LabelRow]) -> list[str]:
    """Item ids whose primary labels differ at the task level (in first-seen order)."""
    seen: dict[str, set[str]] = {}
    for r in rows:
        if r.role == "primary":
            seen.setdefault(r.item_id, set()).add(r.task)
    return [i for i, values in seen.items() if len(values) > 1]


def write_labels(rows: Iterable[LabelRow], folder: Path) -> list[Path]:
    """One JSONL file per labeller (what ``read_labels`` and ``vcost card --labels`` read)."""
    by_labeller: dict[str, list[LabelRow]] = {}
    for r in rows:
        by_labeller.setdefault(r.labeller, []).append(r)
    paths = []
    for name, mine in by_labeller.items():
        path = folder / f"labels-{name}.jsonl"
        lines = [
            json.dumps(
                {
                    "item_id": r.item_id,
                    "labeller": r.labeller,
                    "role": r.role,
                    "execution_success": r.execution,
                    "task_success": r.task,
                    "business_success": r.business,
                    "note": r.note,
                    "labeller_kind": r.kind,
                },
                sort_keys=True,
            )
            for r in mine
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


# ---------------------------------------------------------------------------- 5. verifier


class ParallelVerifier:
    """Any verifier run item by item on a pool of threads (same identity, same verdicts)."""

    def __init__(self, inner: Verifier, *, workers: int, advance: Advance = _noop) -> None:
        self.inner = inner
        self.workers = workers
        self.advance = advance

    @property
    def identity(self) -> VerifierIdentity:
        return self.inner.identity

    def run(self, items: Sequence[GoldItem]) -> list[Verdict]:
        def one(item: GoldItem) -> Verdict:
            (verdict,) = self.inner.run([item])
            self.advance(1)
            return verdict

        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(one, items))


# ---------------------------------------------------------------------------- the pipeline


@dataclasses.dataclass(frozen=True)
class BankCard:
    """Everything one run made, and where it wrote it."""

    build: GoldBuild
    labels: tuple[LabelRow, ...]
    disputed: tuple[str, ...]
    adjudication: Adjudication
    run: VerifierRun
    estimate: ReliabilityEstimate
    card: GraderCard
    paths: Mapping[str, Path]
    seconds: Mapping[str, float]
    planted: int

    def false_accepts(self) -> list[dict[str, Any]]:
        """Gold failures the hidden tests accepted, with how each was found."""
        labels = self.adjudication.labels()
        by_id = self.build.gold.by_id()
        notes = {r.item_id: r.note for r in self.labels if r.labeller == "differential"}
        return [
            {
                "item_id": v.item_id,
                "category": by_id[v.item_id].category,
                "source": by_id[v.item_id].source,
                "witness": notes.get(v.item_id, ""),
            }
            for v in self.run.verdicts
            if v.verdict == "accept" and labels.get(v.item_id) == "failure"
        ]


def card_notes(build: GoldBuild, disputed: Sequence[str]) -> tuple[str, ...]:
    """What the card must say about its labels (rendered in every format)."""
    who = "; ".join(
        f"{name} ({d['role']}, a {d['kind']}): {d['what']}" for name, d in LABELLERS.items()
    )
    notes = [LABEL_SOURCE, f"Labellers: {who}."]
    notes.append(
        f"{len(disputed)} item(s) where construction and differential testing disagreed went to "
        "the witness-rerun adjudicator."
    )
    notes.append(
        f"{len(build.distinguished)} near miss(es) were found only by differential testing "
        "(category planted/<type>/distinguished): the hidden tests pass them by construction."
    )
    if build.distinguished_discarded:
        notes.append(build.gold.notes[-1])
    return tuple(notes)


def run_pipeline(
    tasks: Sequence[CodeTask],
    *,
    sandbox: Sandbox,
    out: Path,
    policy_path: Path = POLICY,
    workers: int = 2,
    oracle_examples: int = 600,
    exploit_budget: int = 40,
    select: Select | None = None,
    console: Console | None = None,
) -> BankCard:
    """Plant, build the gold set, label, adjudicate, run the verifier, rate, audit, card."""
    steps = Steps(console)
    out.mkdir(parents=True, exist_ok=True)
    policy = load_policy(policy_path)
    by_id = {t.id: t for t in tasks}
    planted = plant_tasks(tasks, sandbox=sandbox, workers=workers, select=select, steps=steps)
    with steps.step("gold"):
        build = build_gold(tasks, planted)
        gold = build.gold
        gold_path = write_gold(gold, out / "gold.jsonl")
    rows = construction_labels(build)
    differential, witnesses = differential_labels(
        gold, by_id, sandbox=sandbox, workers=workers, examples=oracle_examples, steps=steps
    )
    rows += differential
    disputed = disagreements(rows)
    with steps.step("adjudicate", total=len(disputed)) as advance:
        evidence = {
            i: [*build.found_inputs.get(i, ()), *([witnesses[i].args] if i in witnesses else [])]
            for i in disputed
        }
        for item_id in disputed:
            rows += witness_labels(gold, by_id, [item_id], evidence, sandbox=sandbox)
            advance(1)
        label_paths = write_labels(rows, out)
        log = out / "adjudication.jsonl"
        log.unlink(missing_ok=True)
        adjudication = adjudicate(gold, rows, level=policy.label_level, log=log)
    with steps.step("verifier", total=len(gold.items)) as advance:
        verifier = HiddenTestVerifier(
            by_id, sandbox=sandbox, workers=workers, progress=lambda: advance(1)
        )
        run = run_verifier(verifier, gold.items, gold_digest=gold.digest())
        run.write(out / "run.jsonl")
    with steps.step("rates"):
        estimate = error_rates(
            gold, adjudication, run, alpha=policy.alpha, target_bound=policy.target_bound
        )
    with steps.step("audit", total=exploit_budget) as advance:
        audit = exploit_audit(
            ParallelVerifier(
                HiddenTestVerifier(by_id, sandbox=sandbox), workers=workers, advance=advance
            ),
            gold,
            ScriptedAttacker(TEST_SUITE_STRATEGIES),
            budget=exploit_budget,
            tasks=by_id,
            adjudication=adjudication,
        )
        audit.write(out / "audit.json")
        anchor = freeze_anchor(
            gold,
            adjudication,
            size=min(policy.anchor_items or 20, len(adjudication.labels())),
        )
        anchor.write(out / "anchor.json")
    with steps.step("card"):
        card = build_card(
            gold=gold,
            adjudication=adjudication,
            run=run,
            estimate=estimate,
            policy=policy,
            exploit_audit=audit.to_dict(),
            anchor=anchor,
        )
        card = dataclasses.replace(
            card,
            notes=(*card_notes(build, disputed), *card.notes),
            labelling={
                **card.labelling,
                "label_source": "programs (construction and differential testing), not people",
                "labellers": [{"name": n, **d} for n, d in LABELLERS.items()],
            },
        )
        paths = dict(write_card(card, out))
    paths.update(
        {
            "gold": gold_path,
            "run": out / "run.jsonl",
            "audit": out / "audit.json",
            "anchor": out / "anchor.json",
            "adjudication_log": log,
        }
    )
    for p in label_paths:
        paths[p.stem] = p
    return BankCard(
        build=build,
        labels=tuple(rows),
        disputed=tuple(disputed),
        adjudication=adjudication,
        run=run,
        estimate=estimate,
        card=card,
        paths=paths,
        seconds=dict(steps.seconds),
        planted=sum(len(v) for v in planted.values()),
    )


# ---------------------------------------------------------------------------- reporting


def _rate(r: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: r[k]
        for k in (
            "errors",
            "n",
            "rate",
            "clusters",
            "clopper_pearson",
            "korn_graubard",
            "cluster_bootstrap",
            "design_effect",
            "rule_of_three",
            "items_for_target",
        )
    }


def summary(result: BankCard) -> dict[str, Any]:
    """The run's key figures (what bench/results/card.jsonl records)."""
    gold = result.build.gold
    est = result.card.estimate
    rates = {f"{r['kind']} {r['group']}": _rate(r) for r in est["rates"]}
    fa = rates["false-accept all"]
    width = (
        (fa["korn_graubard"][1] - fa["korn_graubard"][0])
        / (fa["clopper_pearson"][1] - fa["clopper_pearson"][0])
        if fa["n"] and fa["korn_graubard"] and fa["clopper_pearson"]
        else None
    )
    primary: dict[str, dict[str, str]] = {}
    for r in result.labels:
        if r.role == "primary":
            primary.setdefault(r.item_id, {})[r.labeller] = r.task
    labels = result.adjudication.labels()
    disputes: Counter[str] = Counter()
    for item_id in result.disputed:
        seen = primary[item_id]
        disputes[
            f"construction {seen['construction']}, differential {seen['differential']} "
            f"-> {labels.get(item_id)}"
        ] += 1
    accepted = [v.item_id for v in result.run.verdicts if v.verdict == "accept"]
    return {
        "tasks": len({i.task_id for i in gold.items}),
        "mutants_planted": result.planted,
        "items": len(gold.items),
        "items_by_stratum": dict(Counter(str(i.stratum) for i in gold.items)),
        "items_by_level": dict(Counter(i.category.rsplit("/", 1)[-1] for i in gold.items)),
        "discarded": result.build.discarded,
        "discard_reasons": dict(result.build.discard_reasons),
        "distinguished": len(result.build.distinguished),
        "distinguished_discarded": result.build.distinguished_discarded,
        "labelling": {
            "counts": result.adjudication.counts(),
            "kappa": result.card.labelling["kappa"],
            "percent_agreement": result.card.labelling["percent_agreement"],
            "disputed_sent_to_adjudicator": len(result.disputed),
            "expected_mismatches": len(result.adjudication.expected_mismatches),
            "disputes": dict(disputes),
        },
        "accepted": len(accepted),
        "accepted_but_failure": sum(labels.get(i) == "failure" for i in accepted),
        "kg_over_cp_width_false_accept_all": None if width is None else round(width, 3),
        "false_accepts": result.false_accepts(),
        "rates": rates,
        "abstention": est["abstention"],
        "tiers": {
            d.tier: {"granted": d.granted, "reasons": list(d.reasons)}
            for d in result.card.eligibility
        },
        "exploit_audit": {
            k: result.card.exploit_audit[k]
            for k in ("passed", "spent", "successes", "success_rate")
        }
        if result.card.exploit_audit
        else None,
        "seconds": dict(result.seconds),
        "card": str(result.paths["html"]),
    }


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}%"


def _iv(pair: Sequence[float] | None) -> str:
    return "n/a" if not pair else f"[{_pct(pair[0])}, {_pct(pair[1])}]"


def print_summary(console: Console, result: BankCard, figures: Mapping[str, Any]) -> None:
    """Items per stratum, the rates with their intervals, the tiers, where the card is."""
    table = Table(title="gold items per stratum")
    table.add_column("stratum")
    table.add_column("items", justify="right")
    table.add_column("labelled", justify="right")
    labels = result.adjudication.labels()
    for stratum in Stratum:
        ids = [i.item_id for i in result.build.gold.items if i.stratum == stratum]
        if ids:
            table.add_row(str(stratum), str(len(ids)), str(sum(i in labels for i in ids)))
    console.print(table)
    console.print(
        f"discarded mutants (left out): {figures['discarded']} {figures['discard_reasons']}; "
        f"distinguished by differential testing: {figures['distinguished']} in the gold set, "
        f"{figures['distinguished_discarded']} discarded"
    )
    lab = figures["labelling"]
    console.print(
        f"labels: {lab['counts']}; kappa(construction, differential) = {lab['kappa']}; "
        f"{lab['disputed_sent_to_adjudicator']} sent to the witness-rerun adjudicator "
        f"{lab['disputes']}"
    )
    console.print(
        f"accepted by the hidden tests: {figures['accepted']}, of which gold failures: "
        f"{figures['accepted_but_failure']}; Korn-Graubard / Clopper-Pearson width (false "
        f"accepts, all): {figures['kg_over_cp_width_false_accept_all']}"
    )
    rates = Table(title="error rates of vcost-hidden-tests (95% intervals)")
    for head in (
        "rate",
        "group",
        "errors/n",
        "estimate",
        "Clopper-Pearson",
        "Korn-Graubard",
        "cluster bootstrap",
        "deff",
    ):
        rates.add_column(head)
    for r in result.card.estimate["rates"]:
        if r["group"] == "all" or r["group"].startswith("stratum:") or r["errors"]:
            rates.add_row(
                r["kind"],
                r["group"],
                f"{r['errors']}/{r['n']}",
                _pct(r["rate"]),
                _iv(r["clopper_pearson"]),
                _iv(r["korn_graubard"]),
                _iv(r["cluster_bootstrap"]),
                "n/a" if r["design_effect"] is None else f"{r['design_effect']:.2f}",
            )
    console.print(rates)
    console.print(f"false accepts ({len(figures['false_accepts'])}):")
    for fa in figures["false_accepts"]:
        console.print(f"  {fa['item_id']} [{fa['category']}, {fa['source']}]: {fa['witness']}")
    for d in result.card.eligibility:
        mark = "[green]granted[/]" if d.granted else "[red]refused[/]"
        console.print(f"tier {d.tier}: {mark}" + ("" if d.granted else ": " + "; ".join(d.reasons)))
    console.print("timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in result.seconds.items()))
    p = result.paths
    labels_args = " ".join(f"--labels {v}" for k, v in sorted(p.items()) if k.startswith("labels-"))
    console.print(f"card: {p['html']} ({p['json']}, {p['markdown']})")
    console.print(
        f"recompute: vcost card --gold {p['gold']} {labels_args} --run {p['run']} "
        f"--policy {POLICY.relative_to(ROOT)} --exploit-audit {p['audit']} --anchor {p['anchor']} "
        "--out <folder>"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=None, help="only the first N code tasks")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "card-bank")
    parser.add_argument("--policy", type=Path, default=POLICY)
    parser.add_argument(
        "--oracle-examples", type=int, default=600, help="generated inputs per task (differential)"
    )
    parser.add_argument("--exploit-budget", type=int, default=40)
    args = parser.parse_args()
    console = Console(width=140)
    start = time.perf_counter()
    tasks = code_tasks(limit=args.tasks)
    with Sandbox() as sandbox:
        console.print(
            f"{len(tasks)} code tasks, {args.workers} workers, sandbox {sandbox.isolation.value}"
        )
        result = run_pipeline(
            tasks,
            sandbox=sandbox,
            out=args.out,
            policy_path=args.policy,
            workers=args.workers,
            oracle_examples=args.oracle_examples,
            exploit_budget=args.exploit_budget,
            console=console,
        )
        isolation = sandbox.isolation.value
    total = time.perf_counter() - start
    figures = summary(result)
    print_summary(console, result, figures)
    console.print(f"total: {total:.0f} s")
    record = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "vcost": __version__,
        "python": platform.python_version(),
        "isolation": isolation,
        "workers": args.workers,
        "oracle_examples": args.oracle_examples,
        "exploit_budget": args.exploit_budget,
        "total_seconds": round(total, 1),
        **figures,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with RESULTS.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
