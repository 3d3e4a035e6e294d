"""``StudySpec``: the whole measurement specification, its canonical form, hash and helpers.

The tables it is made of are in :mod:`vcost.spec._tables`. Rules that span tables (per-task
budgets need pilot do times and a do-time cap; tau must be reachable on the confidence scale; a
departure from the paper's protocol must be declared; m must meet its precision plan) are checked
here, each pointing at its own field.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, PrivateAttr, model_validator

from vcost.errors import SpecError
from vcost.spec._locate import Path_, dotted
from vcost.spec._tables import (
    STEP_4_MINIMUM,
    Agreement,
    Budget,
    Confidence,
    Contingency,
    Cost,
    CostUnit,
    Dataset,
    Decision,
    DecisionRule,
    Deviation,
    DoTimeCap,
    Flags,
    Interface,
    Mix,
    Pilot,
    Rules,
    Sessions,
    Stopping,
    Study,
    Table,
    Tools,
    Verdicts,
    Verifiers,
    fmt_number,
)
from vcost.stats.intervals import IntervalMethod
from vcost.trace import HUMAN_CONFIDENCE_LEVELS

if TYPE_CHECKING:
    from pathlib import Path

    from vcost.spec._lockfile import Lock

__all__ = ["StudySpec"]


def _tuples(value: Any) -> Any:
    """TOML arrays (lists) -> tuples, recursively, so strict tuple fields accept them."""
    if isinstance(value, list | tuple):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


class StudySpec(Table):
    """A measurement specification: every parameter a verification-cost study declares.

    Load one with :meth:`load` (a TOML file, with its lock enforced) or :meth:`from_toml_text`.
    ``canonical_json()`` is the hashed form (sorted keys, deviations excluded); ``spec_hash`` is
    its SHA-256; ``lock_hash`` the hash recorded when the spec was locked (what episodes are
    stamped with, unchanged by declared deviations). The canonical form is computed once, at
    validation: derive a changed spec from new TOML, not with ``model_copy(update=...)``.
    """

    spec_format: Literal[1] = Field(1, description="the spec format version, 1")
    study: Study = Field(description="name, version, registry and seed")
    cost: Cost = Field(description="unit")
    verifiers: Verifiers = Field(description="kind, description, eligibility and recruitment")
    budget: Budget = Field(description="mode and value, factor or arms")
    pilot: Pilot | None = Field(None, description="description and median_do_time")
    do_time_cap: DoTimeCap | None = Field(None, description="mode and value or factor")
    stopping: Stopping = Field(description="rule and tau")
    decision: Decision = Field(description="rule, q, interval and alpha")
    verdicts: Verdicts = Field(description="per_answer (m)")
    confidence: Confidence = Field(description="levels")
    flags: Flags | None = Field(None, description="[flags.guess] and [flags.inactivity]")
    agreement: Agreement = Field(description="statistic and threshold")
    tools: Tools = Field(description="allowed and forbidden")
    interface: Interface = Field(description="description")
    dataset: Dataset = Field(description="name, reference and ground_truth")
    sessions: Sessions | None = Field(None, description="count and pairs_per_session")
    mix: Mix | None = Field(None, description="wrong_fraction")
    contingencies: tuple[Contingency, ...] = Field((), description="[[contingencies]] entries")
    deviations: tuple[Deviation, ...] = Field((), description="[[deviations]] entries")

    _source: str | None = PrivateAttr(None)
    _lock: Lock | None = PrivateAttr(None)
    _canonical: str = PrivateAttr("")

    # -- construction ---------------------------------------------------------------------------

    @model_validator(mode="before")
    @classmethod
    def _prepare(cls, data: Any) -> Any:
        """Arrays to tuples; default confidence levels by verifier kind (people: 50/75/100 %)."""
        if not isinstance(data, dict):
            return data
        data = _tuples(data)
        if "confidence" not in data:
            verifiers = data.get("verifiers")
            kind = verifiers.get("kind") if isinstance(verifiers, dict) else None
            levels = () if kind == "model" else HUMAN_CONFIDENCE_LEVELS
            data = {**data, "confidence": {"levels": levels}}
        return data

    @model_validator(mode="after")
    def _rules(self) -> StudySpec:
        rules = Rules()
        budget = self.budget
        if budget.uses_pilot:
            rules.require(
                self.pilot is not None,
                ("pilot",),
                "budgets from pilot do times need a [pilot] table",
                "add [pilot] with description and a [pilot.median_do_time] table of task = minutes",
                at=("budget", "mode"),
            )
        if budget.mode == "per-task":
            rules.require(
                self.do_time_cap is not None,
                ("do_time_cap",),
                "per-task budgets need a declared do-time cap",
                'add [do_time_cap] with mode = "per-task" and factor = 2.0 (twice the pilot '
                "median), or a fixed value",
                at=("budget", "mode"),
            )
        if self.do_time_cap is not None and self.do_time_cap.mode == "per-task":
            rules.require(
                self.pilot is not None,
                ("pilot",),
                "a per-task do-time cap needs a [pilot] table",
                "add [pilot] with a [pilot.median_do_time] table of task = minutes",
                at=("do_time_cap", "mode"),
            )
        levels = self.confidence.levels
        if self.stopping.rule == "confidence-at-least-tau" and levels:
            rules.require(
                levels[-1] >= self.stopping.tau,
                ("stopping", "tau"),
                f"no confidence level reaches tau = {fmt_number(self.stopping.tau)}, so no verdict "
                "could end a check",
                f"expected tau <= {fmt_number(levels[-1])}, the highest level",
            )
        guess = self.flags.guess if self.flags else None
        if guess is not None and levels:
            rules.require(
                guess.at_confidence in levels,
                ("flags", "guess", "at_confidence"),
                f"{fmt_number(guess.at_confidence)} is not one of the confidence levels",
                "expected one of " + ", ".join(fmt_number(v) for v in levels),
            )
        protocol = {d.path for d in self.deviations if d.kind == "protocol"}
        if self.stopping.rule == "any-verdict":
            rules.require(
                ("stopping", "rule") in protocol,
                ("stopping", "rule"),
                "'any-verdict' departs from Crescitelli et al. Step 3 (a verdict ends a check "
                "only at confidence >= tau)",
                'declare it: [[deviations]] field = "stopping.rule", kind = "protocol", '
                'old = "confidence-at-least-tau", new = "any-verdict", reason = "..."',
            )
        m = self.verdicts.per_answer
        if m < STEP_4_MINIMUM:
            rules.require(
                ("verdicts", "per_answer") in protocol,
                ("verdicts", "per_answer"),
                f"m = {m} is below the N >= {STEP_4_MINIMUM} verifiers per output of "
                "Crescitelli et al. Step 4",
                'declare it: [[deviations]] field = "verdicts.per_answer", kind = "protocol", '
                f'old = {STEP_4_MINIMUM}, new = {m}, reason = "..."',
            )
        if self.verdicts.planning is not None:
            self._check_planning(rules)
        if self.mix is not None and self.sessions is not None:
            least = self.mix.min_correct_per_session + self.mix.min_wrong_per_session
            rules.require(
                least <= self.sessions.pairs_per_session,
                ("mix", "min_wrong_per_session"),
                f"a session checks {self.sessions.pairs_per_session} answers, fewer than the "
                f"{least} its minimums of correct and wrong answers need",
                "lower the minimums or raise sessions.pairs_per_session",
            )
        for i, deviation in enumerate(self.deviations):
            rules.require(
                deviation.path is not None,
                ("deviations", i, "field"),
                f"'{deviation.field}' is not a dotted field path",
                'expected e.g. "budget.value" or "pilot.median_do_time.t01"',
            )
        rules.done()
        return self

    def _check_planning(self, rules: Rules) -> None:
        from vcost.stats.vce import inconclusive_probability

        plan = self.verdicts.planning
        assert plan is not None
        d = self.decision
        kwargs: dict[str, Any] = {"q": d.q, "alpha": d.alpha, "method": d.interval}
        for i, p in enumerate(plan.failure_probabilities):
            rules.require(
                p != d.q,
                ("verdicts", "planning", "failure_probabilities", i),
                f"at p = q = {fmt_number(p)} no number of verdicts controls the inconclusive share",
                "plan for probabilities away from q, e.g. q - 0.4 and q + 0.4",
            )
        probs = [p for p in plan.failure_probabilities if p != d.q]
        if not probs:
            return
        m = self.verdicts.per_answer
        worst = max(inconclusive_probability(p, m, **kwargs) for p in probs)
        if worst <= plan.max_inconclusive:
            return
        smallest = next(
            (
                n
                for n in range(1, 501)
                if all(
                    inconclusive_probability(p, n, **kwargs) <= plan.max_inconclusive for p in probs
                )
            ),
            None,
        )
        rules.require(
            False,
            ("verdicts", "per_answer"),
            f"with m = {m} the inconclusive share reaches {worst:.3f}, above the planned "
            f"max_inconclusive = {fmt_number(plan.max_inconclusive)}",
            f"precision planning gives m = {smallest}"
            if smallest
            else "no m <= 500 meets the plan; relax it",
        )

    def model_post_init(self, context: Any, /) -> None:
        self._canonical = json.dumps(
            self.canonical_dict(),
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        )

    @classmethod
    def load(cls, path: str | Path) -> StudySpec:
        """Read, validate and (if ``<name>.lock.json`` is beside it) enforce the lock.

        Raises :class:`~vcost.errors.SpecError` naming file, line and field of every problem,
        or :class:`~vcost.errors.LockError` if a locked field changed without a deviation.
        """
        from vcost.spec._load import load_spec

        return load_spec(path)

    @classmethod
    def from_toml_text(
        cls, text: str, *, source: str | Path | None = None, lock: Lock | None = None
    ) -> StudySpec:
        """Validate a spec from TOML text; ``source`` names it in errors; ``lock`` is enforced."""
        from vcost.spec._load import spec_from_text

        return spec_from_text(text, source=source, lock=lock)

    # -- canonical form and hashes ---------------------------------------------------------------

    def canonical_dict(self) -> dict[str, Any]:
        """The spec as JSON-ready data: unset optional fields and deviations left out."""
        data: dict[str, Any] = self.model_dump(
            mode="json", exclude_none=True, exclude={"deviations"}
        )
        return data

    def canonical_json(self) -> str:
        """Sorted keys, no whitespace, shortest round-trip floats; deviations excluded."""
        return self._canonical

    @property
    def spec_hash(self) -> str:
        """SHA-256 (hex) of :meth:`canonical_json` as it is now."""
        return hashlib.sha256(self._canonical.encode("utf-8")).hexdigest()

    @property
    def lock(self) -> Lock | None:
        """The lock enforced when this spec was loaded, if any."""
        return self._lock

    @property
    def lock_hash(self) -> str | None:
        """The hash recorded at lock time (stays fixed under declared deviations)."""
        return self._lock.spec_hash if self._lock is not None else None

    @property
    def stamp_hash(self) -> str:
        """The hash to stamp episodes with: the lock hash if locked, else the spec hash."""
        return self.lock_hash or self.spec_hash

    @property
    def source(self) -> str | None:
        """The file (or name) the spec was read from."""
        return self._source

    # -- the protocol's parameters, by their names in the paper ----------------------------------

    @property
    def cost_unit(self) -> CostUnit:
        """u, the cost unit."""
        return self.cost.unit

    @property
    def tau(self) -> float:
        """The stopping confidence; a wrong verdict at confidence >= tau is a premature closure."""
        return self.stopping.tau

    @property
    def q(self) -> float:
        """The VCE threshold."""
        return self.decision.q

    @property
    def alpha(self) -> float:
        """1 - confidence level of the declared intervals."""
        return self.decision.alpha

    @property
    def interval_method(self) -> IntervalMethod:
        """The binomial interval method."""
        return self.decision.interval

    @property
    def decision_rule(self) -> DecisionRule:
        """The pre-registered decision rule."""
        return self.decision.rule

    @property
    def m(self) -> int:
        """Verdicts (verifiers) per answer."""
        return self.verdicts.per_answer

    @property
    def confidence_levels(self) -> tuple[float, ...]:
        """Confidence levels a verifier may report; empty means any probability in [0, 1]."""
        return self.confidence.levels

    @property
    def agreement_threshold(self) -> float:
        """Below this agreement, results are flagged verifier-uncertain (reported, not withheld)."""
        return self.agreement.threshold

    @property
    def seed(self) -> int | None:
        """The declared random seed."""
        return self.study.seed

    @property
    def budget_arms(self) -> tuple[str, ...]:
        """Names of the randomised budget arms (empty unless budget.mode is 'arms')."""
        return tuple(arm.name for arm in self.budget.arms)

    # -- helpers ---------------------------------------------------------------------------------

    def _error(self, message: str, field: str, hint: str | None = None) -> SpecError:
        return SpecError(message, source=self._source, field=field, hint=hint)

    def _pilot_median(self, task_id: str | None, field: str) -> float:
        pilot = self.pilot
        if task_id is None:
            raise self._error(f"{field} is per task: name the task", field, "pass task_id")
        if pilot is None or task_id not in pilot.median_do_time:
            raise self._error(
                f"task '{task_id}' has no pilot median do time",
                "pilot.median_do_time",
                "add it to [pilot.median_do_time]",
            )
        return pilot.median_do_time[task_id]

    def budget_for(self, task_id: str | None = None, *, arm: str | None = None) -> float:
        """The budget B (in the cost unit) for a check of an answer to ``task_id``.

        Fixed budgets ignore ``task_id``; per-task budgets need it; arms need ``arm`` (and
        ``task_id`` if the arm is a factor of the pilot median).
        """
        budget = self.budget
        if budget.mode != "arms":
            if arm is not None:
                raise self._error(
                    f"budget mode is '{budget.mode}', it has no arm '{arm}'", "budget.arms"
                )
            if budget.mode == "fixed":
                assert budget.value is not None
                return budget.value
            assert budget.factor is not None
            return budget.factor * self._pilot_median(task_id, "the budget")
        names = self.budget_arms
        if arm not in names:
            raise self._error(
                "the budget has randomised arms: name one"
                if arm is None
                else f"no budget arm named '{arm}'",
                "budget.arms",
                "expected one of " + ", ".join(names),
            )
        chosen = budget.arms[names.index(arm)]
        if chosen.value is not None:
            return chosen.value
        assert chosen.factor is not None
        return chosen.factor * self._pilot_median(task_id, "the budget")

    def do_time_cap_for(self, task_id: str | None = None) -> float | None:
        """The do-time cap (in the cost unit) for ``task_id``; ``None`` if none is declared."""
        cap = self.do_time_cap
        if cap is None:
            return None
        if cap.mode == "fixed":
            return cap.value
        assert cap.factor is not None
        return cap.factor * self._pilot_median(task_id, "the do-time cap")

    def reaches_tau(self, confidence: float) -> bool:
        """Whether a verdict at ``confidence`` reaches tau (a wrong one is a premature closure)."""
        return confidence >= self.stopping.tau - 1e-12

    def is_possible_guess(self, check_seconds: float, confidence: float | None) -> bool:
        """The guess flag: a verdict faster than declared, at the declared confidence."""
        guess = self.flags.guess if self.flags else None
        if guess is None or confidence is None:
            return False
        return check_seconds < guess.under_seconds and math.isclose(confidence, guess.at_confidence)

    def field_paths(self) -> dict[str, Any]:
        """Every leaf of the canonical spec by dotted path (arrays are leaves)."""
        out: dict[str, Any] = {}

        def walk(prefix: Path_, value: Any) -> None:
            if isinstance(value, dict) and value:
                for key, inner in value.items():
                    walk((*prefix, key), inner)
            else:
                out[dotted(prefix)] = value

        walk((), self.canonical_dict())
        return out
