"""Verifiers behind one interface: run on gold items, return accept / reject / abstain.

A :class:`Verifier` has an :class:`VerifierIdentity` (what the grader card names: model, prompt
hash, decoding, parser, version) and ``run(items)``, one :class:`Verdict` per item, in order.
Nothing is dropped: an item a verifier cannot judge gets ``abstain`` with the reason.

- :class:`HiddenTestVerifier`: vcost's own hidden tests, run in the sandbox (code tasks with
  :func:`vcost.grading.grade_code`, data tasks with :func:`vcost.grading.grade_data`). It is
  deterministic and reports no confidence.
- :class:`JudgeVerifier`: an LLM checker from :mod:`vcost.judges`, through any
  :class:`~vcost.models.ModelClient` (a cassette replays it offline). ``correct`` is accept,
  ``incorrect`` reject, ``unverifiable`` / no verdict / an own-family answer (which the standard
  configuration never judges) abstain. Its verdicts carry the judge's and the answer's model
  family, for the same-family vs cross-family comparison (:mod:`vcost.reliability._families`).
- Any other verifier (a program check, a team's own grader) can be brought as a file of
  verdicts: :meth:`VerifierRun.read`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from vcost.errors import InputError, VcostError
from vcost.grader import reference_limits
from vcost.grading import CodeGrade, CodeJob, grade_batch, grade_data
from vcost.reliability._gold import GoldItem
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, Task

__all__ = [
    "HiddenTestVerifier",
    "JudgeVerifier",
    "Verdict",
    "Verifier",
    "VerifierIdentity",
    "VerifierRun",
    "read_verdicts",
    "run_verifier",
]

VerifierKind = Literal["test-suite", "program", "model-judge"]
VerdictValue = Literal["accept", "reject", "abstain"]
FamilyConfiguration = Literal["cross", "same", "both"]
_FAMILY_PERTURBATIONS: dict[str, tuple[str, ...]] = {
    "cross": ("standard",),
    "same": ("same-family",),
    "both": ("standard", "same-family"),
}


@dataclass(frozen=True)
class VerifierIdentity:
    """What a grader card names a verifier by. ``synthetic`` marks a stand-in (no real model)."""

    name: str
    kind: VerifierKind
    version: str
    model: str = ""
    prompt_hash: str = ""
    decoding: str = ""
    parser: str = ""
    synthetic: bool = False
    notes: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VerifierIdentity:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Verdict:
    """One verifier's verdict on one gold item; ``confidence`` in [0, 1] when it reports one.

    ``judge_family`` and ``answer_family`` tag a model judge's verdict with the judge's model
    family and the family of the model that wrote the judged output (empty: not known); with
    both set the verdict is a same-family or a cross-family judgment (:attr:`family_relation`).
    """

    item_id: str
    verdict: VerdictValue
    confidence: float | None = None
    detail: str = ""
    judge_family: str = ""
    answer_family: str = ""

    @property
    def family_relation(self) -> Literal["same", "cross", ""]:
        """``same`` (judge and answer from one family), ``cross``, or ``""`` (not tagged)."""
        if not (self.judge_family and self.answer_family):
            return ""
        return "same" if self.judge_family == self.answer_family else "cross"

    def to_dict(self) -> dict[str, Any]:
        """A verdict line of a run file (the family tags only when set)."""
        data = asdict(self)
        for key in ("judge_family", "answer_family"):
            if not data[key]:
                del data[key]
        return data


class Verifier(Protocol):
    """Anything that judges gold items."""

    @property
    def identity(self) -> VerifierIdentity: ...

    def run(self, items: Sequence[GoldItem]) -> list[Verdict]: ...


@dataclass(frozen=True)
class VerifierRun:
    """A verifier's verdicts on a gold set (or its anchor subset), and when it ran."""

    identity: VerifierIdentity
    verdicts: tuple[Verdict, ...]
    run_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    gold_digest: str = ""

    def by_item(self) -> dict[str, Verdict]:
        return {v.item_id: v for v in self.verdicts}

    def write(self, path: str | Path) -> Path:
        """JSONL: a header line (identity, run_at, gold digest), then one verdict per line."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        header = {
            "verifier": self.identity.to_dict(),
            "run_at": self.run_at,
            "gold_digest": self.gold_digest,
        }
        lines = [json.dumps(header, sort_keys=True)]
        lines += [json.dumps(v.to_dict(), sort_keys=True) for v in self.verdicts]
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return p

    @classmethod
    def read(cls, path: str | Path, *, items: Collection[str] | None = None) -> VerifierRun:
        """Read a run written by :meth:`write` (or by a team's own tool in the same format).

        Two verdicts for one item are refused (the message names both lines), and so, when the
        gold set's ``items`` are given, is a verdict for an item not in it."""
        p = Path(path)
        lines = _lines(p, "verifier run file")
        if not lines:
            raise InputError("empty verifier run file", source=p, hint="it needs a header line")
        header = _header(p, *lines[0])
        if header is None:
            raise InputError(
                "the first line is not a verifier header",
                source=p,
                line=lines[0][0],
                field="verifier",
                hint='{"verifier": {"name": ..., "kind": ..., "version": ...}, "run_at": ...}',
            )
        verdicts: list[Verdict] = []
        seen: dict[str, int] = {}
        for number, text in lines[1:]:
            verdict = _verdict(p, number, text)
            if verdict.item_id in seen:
                raise InputError(
                    f"item {verdict.item_id!r} has a verdict on line {seen[verdict.item_id]} "
                    "already",
                    source=p,
                    line=number,
                    field="item_id",
                    hint="one verdict per gold item: remove the duplicate line",
                )
            if items is not None and verdict.item_id not in items:
                raise InputError(
                    f"item {verdict.item_id!r} is not in the gold set",
                    source=p,
                    line=number,
                    field="item_id",
                    hint="the run must be of this gold set: check the item ids or the --gold file",
                )
            seen[verdict.item_id] = number
            verdicts.append(verdict)
        return cls(
            identity=VerifierIdentity.from_dict(header["verifier"]),
            verdicts=tuple(verdicts),
            run_at=str(header.get("run_at") or ""),
            gold_digest=str(header.get("gold_digest") or ""),
        )


def _lines(p: Path, what: str) -> list[tuple[int, str]]:
    if not p.is_file():
        raise InputError(f"{what} not found", source=p, hint="check the path")
    return [(n, t) for n, t in enumerate(p.read_text("utf-8").splitlines(), 1) if t.strip()]


def _header(p: Path, number: int, text: str) -> dict[str, Any] | None:
    """The header line's record, or None when the line is not a header (an error when it is
    one but broken)."""
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"not JSON: {error.msg}", source=p, line=number) from None
    if not isinstance(record, dict) or "verifier" not in record:
        return None
    identity = record["verifier"]
    if not isinstance(identity, dict) or not all(
        isinstance(identity.get(k), str) for k in ("name", "kind", "version")
    ):
        raise InputError(
            "the verifier header needs the verifier's name, kind and version (text)",
            source=p,
            line=number,
            field="verifier",
            hint='{"verifier": {"name": ..., "kind": ..., "version": ...}, "run_at": ...}',
        )
    return record


def _verdict(p: Path, number: int, text: str) -> Verdict:
    """One verdict line, checked field by field."""
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"not JSON: {error.msg}", source=p, line=number) from None
    if not isinstance(record, dict):
        raise InputError("a verdict line is a JSON object", source=p, line=number)
    value = record.get("verdict")
    if value not in ("accept", "reject", "abstain"):
        raise InputError(
            f"verdict must be accept, reject or abstain, not {value!r}",
            source=p,
            line=number,
            field="verdict",
        )
    confidence = record.get("confidence")
    if confidence is not None and not (
        isinstance(confidence, int | float)
        and not isinstance(confidence, bool)
        and 0.0 <= confidence <= 1.0
    ):
        raise InputError(
            f"confidence must be in [0, 1] or null, not {confidence!r}",
            source=p,
            line=number,
            field="confidence",
        )
    if not str(record.get("item_id") or ""):
        raise InputError("missing item_id", source=p, line=number, field="item_id")
    families: dict[str, str] = {}
    for key in ("judge_family", "answer_family"):
        tag = record.get(key) or ""
        if not isinstance(tag, str):
            raise InputError(
                f"{key} must be a model family name (text), not {tag!r}",
                source=p,
                line=number,
                field=key,
            )
        families[key] = tag
    return Verdict(
        item_id=str(record["item_id"]),
        verdict=value,
        confidence=None if confidence is None else float(confidence),
        detail=str(record.get("detail") or ""),
        **families,
    )


def read_verdicts(
    path: str | Path,
    *,
    identity: VerifierIdentity | None = None,
    exclude: Collection[str] = (),
) -> tuple[Verdict, ...]:
    """Verdicts from a JSONL file: one verdict per line, after an optional header line (a run
    file of :meth:`VerifierRun.write` is one). For verdicts on outputs outside the gold set
    (the downstream pass rate): item ids must be unique and not in ``exclude`` (the gold
    items); with ``identity`` given, a header that names another verifier (name or version)
    is refused."""
    p = Path(path)
    lines = _lines(p, "verdicts file")
    if not lines:
        raise InputError("empty verdicts file", source=p, hint="one verdict per line")
    first = lines[0][0]
    header = _header(p, *lines[0])
    if header is not None:
        lines = lines[1:]
        if identity is not None:
            theirs = header["verifier"]
            for key in ("name", "version"):
                if theirs[key] != getattr(identity, key):
                    raise InputError(
                        f"these verdicts are from verifier {key} {theirs[key]!r}, the gold-set "
                        f"run's is {getattr(identity, key)!r}",
                        source=p,
                        line=first,
                        field=f"verifier.{key}",
                        hint="the verdicts must come from the verifier the card certifies",
                    )
    verdicts: list[Verdict] = []
    seen: dict[str, int] = {}
    for number, text in lines:
        verdict = _verdict(p, number, text)
        if verdict.item_id in seen:
            raise InputError(
                f"item {verdict.item_id!r} has a verdict on line {seen[verdict.item_id]} already",
                source=p,
                line=number,
                field="item_id",
                hint="one verdict per output",
            )
        if verdict.item_id in exclude:
            raise InputError(
                f"item {verdict.item_id!r} is a gold item",
                source=p,
                line=number,
                field="item_id",
                hint="these verdicts are on outputs without gold labels; the gold items' "
                "verdicts come from the run (--run)",
            )
        seen[verdict.item_id] = number
        verdicts.append(verdict)
    if not verdicts:
        raise InputError("no verdicts in the file", source=p, hint="one verdict per line")
    return tuple(verdicts)


def run_verifier(
    verifier: Verifier, items: Sequence[GoldItem], *, gold_digest: str = ""
) -> VerifierRun:
    """Run ``verifier`` on ``items``; one verdict per item, in order (checked)."""
    verdicts = verifier.run(items)
    if [v.item_id for v in verdicts] != [i.item_id for i in items]:
        raise VcostError(
            f"verifier {verifier.identity.name!r} returned verdicts for other items than asked",
            hint="a Verifier.run must return one verdict per item, in order",
        )
    return VerifierRun(verifier.identity, tuple(verdicts), gold_digest=gold_digest)


# ---------------------------------------------------------------------------- hidden tests


def _tests_hash(tasks: Mapping[str, Task]) -> str:
    digest = hashlib.sha256()
    for task_id in sorted(tasks):
        task = tasks[task_id]
        body = (
            [t.to_json() for t in task.tests]
            if isinstance(task, CodeTask)
            else [task.answer, task.decimals]
        )
        digest.update(json.dumps([task_id, body], sort_keys=True, default=str).encode())
    return digest.hexdigest()


class HiddenTestVerifier:
    """vcost's hidden-test verifier: accept iff every hidden test passes (in the sandbox).

    Code answers are graded as `vcost grade` grades them: per-test time limits scaled from the
    task's reference (measured once per task), ``workers`` warm sandboxes at a time;
    ``progress()`` is called once per item graded.
    """

    def __init__(
        self,
        tasks: Mapping[str, Task],
        *,
        sandbox: Sandbox,
        version: str = "",
        workers: int | None = None,
        progress: Callable[[], None] | None = None,
    ) -> None:
        self.tasks = dict(tasks)
        self.sandbox = sandbox
        self.workers = workers
        self.progress = progress or (lambda: None)
        self._limits: dict[str, list[float]] = {}
        self._identity = VerifierIdentity(
            name="vcost-hidden-tests",
            kind="test-suite",
            version=version or f"tests-{_tests_hash(self.tasks)[:12]}",
            parser="vcost.grading.values_equal",
            notes=f"sandbox isolation: {sandbox.isolation.value}",
        )

    @property
    def identity(self) -> VerifierIdentity:
        return self._identity

    def _code_verdict(self, item: GoldItem, grade: CodeGrade) -> Verdict:
        detail = f"{grade.passed}/{grade.total} hidden tests passed"
        if grade.failed_tags:
            detail += f"; failed tags: {', '.join(grade.failed_tags)}"
        verdict: Literal["accept", "reject"] = (
            "accept" if grade.ground_truth == "correct" else "reject"
        )
        return Verdict(item.item_id, verdict, None, detail)

    def _job(self, task: CodeTask, output: str) -> CodeJob:
        if task.id not in self._limits:
            self._limits[task.id] = reference_limits(task, self.sandbox)
        tests = [t.to_json() for t in task.tests]
        return CodeJob(output, task.entry_point, tests, task.float_tolerance, self._limits[task.id])

    def _one(self, item: GoldItem) -> Verdict:
        task = self.tasks.get(item.task_id)
        if task is None:
            return Verdict(item.item_id, "abstain", None, f"no hidden tests for {item.task_id}")
        if isinstance(task, CodeTask):
            (grade,) = grade_batch([self._job(task, item.output)], sandbox=self.sandbox, workers=1)
            return self._code_verdict(item, grade)
        data = grade_data(
            item.output,
            csv=task.csv,
            expected=task.answer,
            decimals=task.decimals,
            sandbox=self.sandbox,
        )
        return Verdict(
            item.item_id,
            "accept" if data.correct else "reject",
            None,
            f"answer {data.value!r}, status {data.status}",
        )

    def run(self, items: Sequence[GoldItem]) -> list[Verdict]:
        code = [
            (n, item, task)
            for n, item in enumerate(items)
            if isinstance(task := self.tasks.get(item.task_id), CodeTask)
        ]
        grades = grade_batch(
            [self._job(task, item.output) for _, item, task in code],
            sandbox=self.sandbox,
            workers=self.workers,
            progress=lambda _n, _g: self.progress(),
        )
        graded = {
            n: self._code_verdict(item, g) for (n, item, _), g in zip(code, grades, strict=True)
        }
        verdicts = []
        for n, item in enumerate(items):
            if n not in graded:
                graded[n] = self._one(item)
                self.progress()
            verdicts.append(graded[n])
        return verdicts


# ---------------------------------------------------------------------------- LLM judges


class JudgeVerifier:
    """An AI checker from :mod:`vcost.judges` behind the verifier interface.

    ``selection`` holds the answers as the checker is shown them (gold item ids are answer ids,
    as :func:`~vcost.reliability.gold_from_answers` makes them); ``client`` may be a
    :class:`~vcost.models.CassetteClient` in replay mode. One judgment per item (``repeat``).

    ``families`` is the configuration of seed 004, Step 3: ``cross`` (standard: the checker
    never judges its own family's answers, which abstain), ``same`` (only its own family's) or
    ``both`` (every answer; the same-family/cross-family comparison of
    :func:`~vcost.reliability.family_bias`). Every verdict is tagged with the checker's family
    and the answer's.
    """

    def __init__(
        self,
        checker: Any,
        *,
        client: Any,
        selection: Any,
        tasks: Mapping[str, Task],
        log: Any,
        repeat: int = 0,
        synthetic: bool = False,
        families: FamilyConfiguration = "cross",
    ) -> None:
        from vcost.judges import JUDGE_INSTRUCTIONS, JUDGE_PROMPT_VERSION

        if families not in _FAMILY_PERTURBATIONS:
            raise InputError(
                f"families must be cross, same or both, not {families!r}", field="families"
            )
        self.checker = checker
        self.client = client
        self.selection = selection
        self.tasks = tasks
        self.log = log
        self.repeat = repeat
        self.families: FamilyConfiguration = families
        self.family = str(checker.family or checker.name)
        shown_families = "" if families == "cross" else f", families={families}"
        self._identity = VerifierIdentity(
            name=checker.name,
            kind="model-judge",
            version=(
                f"{checker.model}@{checker.snapshot or 'unpinned'}/prompt-{JUDGE_PROMPT_VERSION}"
            ),
            model=f"{checker.provider}:{checker.model}",
            prompt_hash=hashlib.sha256(JUDGE_INSTRUCTIONS.encode()).hexdigest()[:16],
            decoding=(
                f"temperature={checker.temperature}, max_tokens={checker.max_tokens}, "
                f"seed={checker.seed}, repeat={repeat}{shown_families}"
            ),
            parser="vcost.judges.parse_reply",
            synthetic=synthetic,
            notes="SYNTHETIC judge: no real model produced these verdicts" if synthetic else "",
        )

    @property
    def identity(self) -> VerifierIdentity:
        return self._identity

    def run(self, items: Sequence[GoldItem]) -> list[Verdict]:
        from dataclasses import replace

        from vcost.answers import Selection, render_answer
        from vcost.judges import judge

        wanted = {i.item_id for i in items}
        answers = [a for a in self.selection.answers if a.answer_id in wanted]
        by_id = {a.answer_id: a for a in self.selection.answers}
        for item in items:
            # a derived item ("<base>~<suffix>", e.g. an exploit attempt) is shown with its
            # base answer's metadata (task, family, reported number) and its own code
            base = by_id.get(item.item_id.split("~")[0])
            if item.item_id not in by_id and "~" in item.item_id and base is not None:
                answers.append(
                    replace(
                        base,
                        answer_id=item.item_id,
                        code=item.output,
                        shown=render_answer(item.output, number=base.reported),
                    )
                )
        sub = Selection(self.selection.variant, self.selection.seed, tuple(answers))
        configurations = _FAMILY_PERTURBATIONS[self.families]
        for perturbation in configurations:
            result = judge(
                sub,
                self.tasks,
                {self.checker.name: self.checker},
                client=self.client,
                log=self.log,
                k=self.repeat + 1,
                perturbation=perturbation,  # type: ignore[arg-type]
            )
            if result.failed:
                raise VcostError(
                    f"{result.failed} judgment(s) by {self.checker.name} failed: "
                    + "; ".join(result.errors[:3]),
                    hint="a cassette miss means the prompt or the answers changed since recording",
                )
        found = {
            r["answer_id"]: r
            for perturbation in configurations
            for r in self.log.judgments(perturbation)
            if r["checker"] == self.checker.name and r["repeat"] == self.repeat
        }
        family_of = {a.answer_id: str(a.family) for a in answers}
        out: list[Verdict] = []
        for item in items:
            record = found.get(item.item_id)
            tags = {"judge_family": self.family, "answer_family": family_of.get(item.item_id, "")}
            if record is None:
                if item.item_id not in family_of:
                    why = "not in the selection shown to the checker"
                elif self.families == "same":
                    why = "not judged: an answer of another family (same-family configuration)"
                else:
                    why = "not judged: an answer of the checker's own family"
                out.append(Verdict(item.item_id, "abstain", None, why, **tags))
                continue
            verdict: VerdictValue = {"correct": "accept", "incorrect": "reject"}.get(
                str(record.get("verdict")), "abstain"
            )  # type: ignore[assignment]
            confidence = record.get("confidence")
            out.append(
                Verdict(
                    item.item_id,
                    verdict,
                    None if confidence is None else float(confidence),
                    f"{record.get('termination')}: {str(record.get('reason') or '')[:200]}",
                    **tags,
                )
            )
        return out

    def flip_rates(
        self, perturbations: Sequence[str] = ("paraphrase",), *, k: int = 1, alpha: float = 0.05
    ) -> list[Any]:
        """Run the checker standard and perturbed (``k`` repeats each, on the selection) and
        return :func:`vcost.judges.flip_rate` rows, ready for ``build_card(flip_rates=...)``.

        Perturbations: ``length-long``, ``length-short``, ``paraphrase``, ``same-family``
        (:mod:`vcost.judges._perturb`); a cassette must hold every call it replays."""
        from vcost.judges import flip_rate, judge

        rows: list[Any] = []
        checkers = {self.checker.name: self.checker}
        for perturbation in ("standard", *perturbations):
            result = judge(
                self.selection, self.tasks, checkers, client=self.client, log=self.log, k=k,
                perturbation=perturbation,  # type: ignore[arg-type]
            )  # fmt: skip
            if result.failed:
                raise VcostError(
                    f"{result.failed} {perturbation} judgment(s) by {self.checker.name} failed: "
                    + "; ".join(result.errors[:3]),
                    hint="a cassette miss means the prompt or the answers changed since recording",
                )
        mine = [r for r in self.log.judgments() if r["checker"] == self.checker.name]
        standard = [r for r in mine if r["perturbation"] == "standard" and r["repeat"] < k]
        for perturbation in perturbations:
            perturbed = [r for r in mine if r["perturbation"] == perturbation and r["repeat"] < k]
            rows += flip_rate(standard, perturbed, alpha=alpha)
        return rows
