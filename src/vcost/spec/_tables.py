"""The tables of a measurement specification: one frozen pydantic model per TOML table.

Crescitelli et al. (2026, Sec. 5) define the full specification as the tuple (u, V, B, tau, q, m,
interval method, alpha, decision rule, tools, interface, dataset); the study design (seed 003)
adds what a human study must also fix in advance: pilot do times, the do-time cap, sessions, the
correct/wrong mix, the confidence scale, the guess and inactivity flags, contingencies and
declared deviations. Every model is frozen, strict (a string is never read as a number) and
forbids unknown keys. :class:`~vcost.spec._model.StudySpec` assembles them.

Cross-field rules live in ``model_validator(mode="after")`` hooks. A hook collects every broken
rule and raises them together as one ``spec_rules`` error whose context lists (field, message,
hint) issues, so the loader can point each one at its own line; fields are relative to the
model that raised them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from vcost.spec._locate import Path_, split_dotted
from vcost.stats.intervals import IntervalMethod
from vcost.trace import HUMAN_CONFIDENCE_LEVELS

__all__ = [
    "COST_UNITS",
    "RULES_ERROR",
    "STEP_4_MINIMUM",
    "Agreement",
    "Budget",
    "BudgetArm",
    "Confidence",
    "Contingency",
    "Cost",
    "CostUnit",
    "Dataset",
    "Decision",
    "DecisionRule",
    "Deviation",
    "DoTimeCap",
    "Flags",
    "GuessFlag",
    "InactivityFlag",
    "Interface",
    "Issue",
    "Mix",
    "PauseRule",
    "Pilot",
    "Planning",
    "Sessions",
    "Stopping",
    "Study",
    "Tools",
    "VerdictSubset",
    "Verdicts",
    "Verifiers",
    "fmt_number",
    "unit_label",
]

CostUnit = Literal["human-minutes", "seconds", "tokens", "usd", "flops"]
COST_UNITS: Final[tuple[str, ...]] = get_args(CostUnit)
BudgetMode = Literal["fixed", "per-task", "arms"]
CapMode = Literal["fixed", "per-task"]
StoppingRule = Literal["confidence-at-least-tau", "any-verdict"]
DecisionRule = Literal["three-state", "point-estimate"]
AgreementStatistic = Literal["krippendorff-alpha", "fleiss-kappa", "cohen-kappa"]
Sampling = Literal["panel", "representative"]
Assignment = Literal["per-verifier", "per-episode"]
DeviationKind = Literal["protocol", "lock"]
VerdictBasis = Literal["fixed", "precision-planning"]
PauseRule = Literal["none", "between-items"]

STEP_4_MINIMUM: Final = 3
"""Crescitelli et al., Step 4: inter-rater agreement across N >= 3 verifiers per output."""

RULES_ERROR: Final = "spec_rules"

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
Positive = Annotated[float, Field(gt=0)]


@dataclass(frozen=True)
class Issue:
    """One broken cross-field rule; ``field`` and ``at`` are relative to the raising model."""

    field: Path_
    message: str
    hint: str | None = None
    at: Path_ | None = None  # where to point the line, if not at ``field``


class Rules:
    """Collects broken rules; :meth:`done` raises them all as one pydantic error."""

    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def require(
        self,
        ok: bool,
        field: Path_,
        message: str,
        hint: str | None = None,
        *,
        at: Path_ | None = None,
    ) -> None:
        if not ok:
            self.issues.append(Issue(field, message, hint, at))

    def done(self) -> None:
        if self.issues:
            raise PydanticCustomError(
                RULES_ERROR,
                "{count} cross-field rule(s) broken",
                {"count": len(self.issues), "issues": tuple(self.issues)},
            )


def fmt_number(x: float) -> str:
    """A number as a person writes it: 15 not 15.0, 0.667 not 0.66700."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _exactly_one_of(rules: Rules, values: dict[str, object], what: str) -> None:
    given = [name for name, value in values.items() if value is not None]
    names = " or ".join(f"'{n}'" for n in values)
    if len(given) != 1:
        field = given[1] if len(given) > 1 else next(iter(values))
        rules.require(False, (field,), f"{what} needs exactly one of {names}", f"got {len(given)}")


class Table(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)


class Study(Table):
    """``[study]``: what this specification is for, and its version (temporal validity)."""

    name: Name = Field(description="a short name of letters, digits, '.', '-' or '_'")
    title: Text | None = Field(None, description="a one-line title")
    version: Text = Field(description='the protocol version as a string, e.g. "1"')
    description: Text | None = Field(None, description="a paragraph of plain text")
    registry: Text | None = Field(None, description='where it is pre-registered, e.g. "OSF"')
    seed: int | None = Field(None, ge=0, description="a non-negative integer random seed")


class Cost(Table):
    """``[cost]``: the cost unit u in which effort, budgets and caps are measured."""

    unit: CostUnit = Field(description="one of " + ", ".join(COST_UNITS))


class Verifiers(Table):
    """``[verifiers]``: the verifier population V (Step 4: recruitment, eligibility, sampling)."""

    kind: Literal["person", "model"] = Field(description='"person" or "model"')
    description: Text = Field(description="who the verifiers are, in plain words")
    eligibility: Text = Field(description="who may take part (screening, exclusions)")
    recruitment: Text = Field(description="how verifiers are recruited or chosen")
    sampling: Sampling = Field(
        "panel", description='"panel" (claims about this panel only) or "representative"'
    )
    panel_min: int | None = Field(None, ge=1, description="an integer >= 1")
    panel_max: int | None = Field(None, ge=1, description="an integer >= panel_min")
    repeated_participation: Text | None = Field(
        None, description="how many outputs each verifier assesses"
    )
    metadata: tuple[Text, ...] = Field((), description="an array of strings (e.g. experience)")

    @model_validator(mode="after")
    def _rules(self) -> Verifiers:
        rules = Rules()
        if self.panel_min is not None and self.panel_max is not None:
            rules.require(
                self.panel_min <= self.panel_max,
                ("panel_max",),
                f"panel_max = {self.panel_max} is below panel_min = {self.panel_min}",
                "expected panel_min <= panel_max",
            )
        rules.done()
        return self


class BudgetArm(Table):
    """One ``[[budget.arms]]`` entry: a randomised budget condition."""

    name: Name = Field(description="a short arm name")
    value: Positive | None = Field(None, description="a number > 0 in {unit}")
    factor: Positive | None = Field(
        None, description="a number > 0, multiplying each task's pilot median do time"
    )

    @model_validator(mode="after")
    def _rules(self) -> BudgetArm:
        rules = Rules()
        _exactly_one_of(rules, {"value": self.value, "factor": self.factor}, "a budget arm")
        rules.done()
        return self

    def describe(self, unit: str) -> str:
        if self.value is not None:
            return f"{fmt_number(self.value)} {unit_label(unit)}"
        return f"{fmt_number(self.factor or 0.0)} x the task's median pilot do time"


class Budget(Table):
    """``[budget]``: the verification budget B per answer, in the cost unit."""

    mode: BudgetMode = Field(description='"fixed", "per-task" or "arms"')
    value: Positive | None = Field(None, description="a number > 0 in {unit}")
    factor: Positive | None = Field(
        None, description="a number > 0, multiplying each task's pilot median do time"
    )
    arms: tuple[BudgetArm, ...] = Field((), description="[[budget.arms]] entries")
    assignment: Assignment | None = Field(
        None, description='"per-verifier" or "per-episode" (the unit randomised to arms)'
    )

    @model_validator(mode="after")
    def _rules(self) -> Budget:
        rules = Rules()
        mode = self.mode
        hints = {
            "fixed": 'mode = "fixed" takes value (e.g. value = 15)',
            "per-task": 'mode = "per-task" takes factor (e.g. factor = 1.0 x the pilot median)',
            "arms": 'mode = "arms" takes [[budget.arms]] entries and assignment',
        }
        for name, used_by in (("value", "fixed"), ("factor", "per-task")):
            given = getattr(self, name) is not None
            if mode == used_by:
                rules.require(given, (name,), f"budget mode '{mode}' needs '{name}'", hints[mode])
            else:
                rules.require(
                    not given, (name,), f"'{name}' does not apply to mode '{mode}'", hints[mode]
                )
        if mode == "arms":
            rules.require(
                len(self.arms) >= 2,
                ("arms",),
                f"randomised budget arms need at least 2 budgets; got {len(self.arms)}",
                "one trace supports only its own budget; with one budget use mode = 'fixed'",
                at=("arms",) if self.arms else ("mode",),
            )
            names = [arm.name for arm in self.arms]
            for i, name in enumerate(names):
                rules.require(
                    name not in names[:i],
                    ("arms", i, "name"),
                    f"budget arm name '{name}' is used twice",
                    "give each arm its own name",
                )
            budgets = [(arm.value, arm.factor) for arm in self.arms]
            for i, budget in enumerate(budgets):
                rules.require(
                    budget not in budgets[:i],
                    ("arms", i),
                    f"budget arm '{names[i]}' repeats the budget of an earlier arm",
                    "arms must differ in their budget",
                )
            rules.require(
                self.assignment is not None,
                ("assignment",),
                "budget arms need 'assignment'",
                'expected "per-verifier" or "per-episode"',
                at=("mode",),
            )
        else:
            rules.require(
                not self.arms, ("arms",), f"[[budget.arms]] does not apply to mode '{mode}'"
            )
            rules.require(
                self.assignment is None,
                ("assignment",),
                f"'assignment' does not apply to mode '{mode}'",
            )
        rules.done()
        return self

    @property
    def uses_pilot(self) -> bool:
        """Whether some budget is a factor times a pilot median do time."""
        return self.mode == "per-task" or any(arm.factor is not None for arm in self.arms)


class Pilot(Table):
    """``[pilot]``: the pilot's median do time per task, basis of per-task budgets and caps."""

    description: Text = Field(description="how the pilot measured do times")
    median_do_time: dict[Text, Positive] = Field(
        min_length=1, description="a table of task id = median do time (> 0) in {unit}"
    )


class DoTimeCap(Table):
    """``[do_time_cap]``: the longest a do attempt may run before it is stopped."""

    mode: CapMode = Field(description='"fixed" or "per-task"')
    value: Positive | None = Field(None, description="a number > 0 in {unit}")
    factor: Positive | None = Field(
        None, description="a number > 0, multiplying each task's pilot median do time"
    )

    @model_validator(mode="after")
    def _rules(self) -> DoTimeCap:
        rules = Rules()
        wanted = "value" if self.mode == "fixed" else "factor"
        other = "factor" if wanted == "value" else "value"
        rules.require(
            getattr(self, wanted) is not None,
            (wanted,),
            f"do-time cap mode '{self.mode}' needs '{wanted}'",
            "e.g. value = 20" if wanted == "value" else "e.g. factor = 2.0 (twice the median)",
        )
        rules.require(
            getattr(self, other) is None,
            (other,),
            f"'{other}' does not apply to do-time cap mode '{self.mode}'",
        )
        rules.done()
        return self


class Stopping(Table):
    """``[stopping]``: when a check ends (Step 3) and the stopping confidence tau."""

    rule: StoppingRule = Field(
        "confidence-at-least-tau", description='"confidence-at-least-tau" or "any-verdict"'
    )
    tau: float = Field(ge=0, le=1, description="a number in [0, 1], e.g. 0.9")
    unverifiable: bool = Field(
        True, description="true or false: may a verifier declare an answer unverifiable"
    )


class Decision(Table):
    """``[decision]``: the VCE threshold q and the pre-registered decision rule."""

    rule: DecisionRule = Field(description='"three-state" (recommended) or "point-estimate"')
    q: float = Field(gt=0, lt=1, description="a number in (0, 1), e.g. 0.5")
    interval: IntervalMethod = Field(description='"clopper-pearson", "wilson" or "jeffreys"')
    alpha: float = Field(gt=0, lt=1, description="a number in (0, 1), e.g. 0.05 for 95%")


class Planning(Table):
    """``[verdicts.planning]``: the precision-planning target that fixes m."""

    failure_probabilities: tuple[Annotated[float, Field(ge=0, le=1)], ...] = Field(
        min_length=1,
        description="an array of true failure probabilities Pr[S_B = 0] in [0, 1], e.g. [0.1, 0.9]",
    )
    max_inconclusive: float = Field(
        gt=0, lt=1, description="the tolerated inconclusive share, a number in (0, 1)"
    )


class VerdictSubset(Table):
    """``[verdicts.subset]``: a subset of answers that gets more verdicts than m."""

    answers: int = Field(ge=1, description="the number of answers in the subset, >= 1")
    per_answer: int = Field(ge=1, description="verdicts per answer in the subset, > m")
    selection: Text = Field(description='which answers, e.g. "12 wrong answers, at random"')


class Verdicts(Table):
    """``[verdicts]``: m, the number of verdicts (verifiers) per answer."""

    per_answer: int = Field(ge=1, description="an integer >= 1 (m)")
    basis: VerdictBasis = Field(
        "fixed", description='"fixed" or "precision-planning" (then [verdicts.planning])'
    )
    planning: Planning | None = Field(None, description="a [verdicts.planning] table")
    subset: VerdictSubset | None = Field(None, description="a [verdicts.subset] table")

    @model_validator(mode="after")
    def _rules(self) -> Verdicts:
        rules = Rules()
        if self.basis == "precision-planning":
            rules.require(
                self.planning is not None,
                ("planning",),
                "basis = 'precision-planning' needs a [verdicts.planning] table",
                "declare failure_probabilities and max_inconclusive",
                at=("basis",),
            )
        else:
            rules.require(
                self.planning is None,
                ("planning",),
                "[verdicts.planning] applies only with basis = 'precision-planning'",
            )
        if self.subset is not None:
            rules.require(
                self.subset.per_answer > self.per_answer,
                ("subset", "per_answer"),
                f"the subset gets {self.subset.per_answer} verdicts per answer, "
                f"not more than m = {self.per_answer}",
                f"expected an integer > {self.per_answer}",
            )
        rules.done()
        return self


class Confidence(Table):
    """``[confidence]``: the confidence levels a verifier may report (empty: any probability)."""

    levels: tuple[Annotated[float, Field(ge=0, le=1)], ...] = Field(
        HUMAN_CONFIDENCE_LEVELS,
        description="an increasing array of numbers in [0, 1], e.g. [0.5, 0.75, 1.0]",
    )

    @model_validator(mode="after")
    def _rules(self) -> Confidence:
        rules = Rules()
        levels = self.levels
        for i in range(1, len(levels)):
            rules.require(
                levels[i] > levels[i - 1],
                ("levels", i),
                "confidence levels must increase strictly",
                f"{fmt_number(levels[i])} follows {fmt_number(levels[i - 1])}",
            )
        rules.done()
        return self


class GuessFlag(Table):
    """``[flags.guess]``: verdicts this fast at this confidence are flagged as possible guesses."""

    under_seconds: Positive = Field(description="a number of seconds > 0, e.g. 30")
    at_confidence: float = Field(ge=0, le=1, description="one of the confidence levels, e.g. 0.5")


class InactivityFlag(Table):
    """``[flags.inactivity]``: gaps between activity longer than this are flagged."""

    gap_minutes: Positive = Field(description="a number of minutes > 0, e.g. 10")
    activity: tuple[Text, ...] = Field((), description="an array of what counts as activity")


class Flags(Table):
    """``[flags]``: attempts flagged (never excluded); results reported with and without."""

    guess: GuessFlag | None = Field(None, description="a [flags.guess] table")
    inactivity: InactivityFlag | None = Field(None, description="a [flags.inactivity] table")


class Agreement(Table):
    """``[agreement]``: the inter-rater agreement statistic and the verifier-uncertain threshold."""

    statistic: AgreementStatistic = Field(
        "krippendorff-alpha", description='"krippendorff-alpha", "fleiss-kappa" or "cohen-kappa"'
    )
    threshold: float = Field(gt=0, le=1, description="a number in (0, 1], e.g. 0.667")


class Tools(Table):
    """``[tools]``: what verifiers may and may not use."""

    allowed: tuple[Text, ...] = Field(description="an array of strings")
    forbidden: tuple[Text, ...] = Field((), description="an array of strings")

    @model_validator(mode="after")
    def _rules(self) -> Tools:
        rules = Rules()
        for i, tool in enumerate(self.forbidden):
            rules.require(
                tool not in self.allowed,
                ("forbidden", i),
                f"'{tool}' is both allowed and forbidden",
                "list it in one of the two",
            )
        rules.done()
        return self


class Interface(Table):
    """``[interface]``: how outputs are presented and verdicts collected."""

    description: Text = Field(description="the interface, in plain words")
    version: Text | None = Field(None, description="a version string")


class Dataset(Table):
    """``[dataset]``: the ground-truth dataset (Step 1) and the known-correct baseline (Step 4)."""

    name: Text = Field(description="a name")
    reference: Text = Field(description="a path, URL or DOI")
    version: Text | None = Field(None, description="a version string")
    ground_truth: Text = Field(description="how ground truth is fixed before verification")
    answers: int | None = Field(None, ge=1, description="the number n of answers, >= 1")
    baseline: Text | None = Field(None, description="the held-out known-correct outputs")
    description: Text | None = Field(None, description="a paragraph of plain text")


class Sessions(Table):
    """``[sessions]``: how a verifier's work is split into timed sessions."""

    count: int = Field(ge=1, description="the number of main sessions, >= 1")
    pairs_per_session: int = Field(ge=1, description="do/check pairs per session, >= 1")
    practice_tasks: int = Field(0, ge=0, description="tasks in a practice session (0: none)")
    target_minutes: Positive | None = Field(None, description="a number of minutes > 0")
    max_minutes: Positive | None = Field(None, description="a number of minutes > 0")
    extra_sessions: int = Field(0, ge=0, description="sessions allowed for pairs left over")
    order: Text | None = Field(None, description="how pairs and blocks are ordered")
    pause: PauseRule | None = Field(
        None,
        description='"none" or "between-items": when a participant may pause (unset: "none")',
    )

    @model_validator(mode="after")
    def _rules(self) -> Sessions:
        rules = Rules()
        if self.target_minutes is not None and self.max_minutes is not None:
            rules.require(
                self.target_minutes <= self.max_minutes,
                ("target_minutes",),
                f"target_minutes = {fmt_number(self.target_minutes)} exceeds "
                f"max_minutes = {fmt_number(self.max_minutes)}",
                "expected target_minutes <= max_minutes",
            )
        rules.done()
        return self


class Mix(Table):
    """``[mix]``: the share of wrong answers among checks, and per-session minimums."""

    wrong_fraction: float = Field(gt=0, lt=1, description="a number in (0, 1), e.g. 0.5")
    min_correct_per_session: int = Field(0, ge=0, description="an integer >= 0")
    min_wrong_per_session: int = Field(0, ge=0, description="an integer >= 0")
    disclosed: bool = Field(False, description="true or false: are verifiers told the mix")


class Contingency(Table):
    """One ``[[contingencies]]`` entry: a pre-registered if-then change of plan."""

    when: Text = Field(description="the condition, in plain words")
    then: Text = Field(description="what is done, in plain words")


class Deviation(Table):
    """One ``[[deviations]]`` entry.

    ``kind = "protocol"``: a departure from Crescitelli et al.'s protocol, declared before
    locking (``old`` is the protocol's value). ``kind = "lock"`` (default): a change after
    locking (``old`` is the locked value; omitted if the field was not set at lock time,
    ``new`` omitted if the field is now removed).
    """

    field: Text = Field(description='a dotted field path, e.g. "budget.value"')
    kind: DeviationKind = Field("lock", description='"lock" (after locking) or "protocol"')
    old: Any = Field(None, description="the locked (or the protocol's) value")
    new: Any = Field(None, description="the value now in the spec")
    reason: Text = Field(description="a reason in plain words")
    declared_at: datetime | date = Field(description="a TOML date or date-time, e.g. 2027-03-01")

    @property
    def path(self) -> Path_ | None:
        """The field as a loc path, or ``None`` if it is not a well-formed dotted path."""
        return split_dotted(self.field)


def unit_label(unit: str) -> str:
    """How a cost unit reads in a sentence."""
    return {"usd": "USD", "flops": "FLOPs"}.get(unit, unit)
