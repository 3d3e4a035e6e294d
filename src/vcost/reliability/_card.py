"""The grader card and its eligibility rules (seed 004, Step 6), from a policy declared in advance.

Policy (TOML), declared before the verifier is run (``declared_at`` must not be later than the
run; otherwise only the dashboard tier is granted)::

    task_class = "python-functions"
    declared_at = 2026-01-15
    label_level = "task"          # execution | task | business
    alpha = 0.05
    valid_days = 180              # the card's expiry
    target_bound = 0.05           # the zero-error bound the gold set should reach

    [tiers.external]              # evaluation results reported externally
    max_false_accept = 0.30       # on the cluster-aware (Korn-Graubard) upper bound, all strata
    max_false_reject = 0.30
    min_coverage = 0.8
    min_items = 20                # labelled items judged
    min_kappa = 0.6
    per_stratum = false           # true: every stratum's upper bound must pass too

    [tiers.billing]
    max_false_accept = 0.05
    [tiers.training-reward]
    max_false_accept = 0.10

    [drift]
    tolerance = 0.10              # absolute shift on the anchor that suspends eligibility
    anchor_items = 20

The protocol's rules, on top of the thresholds:

- dashboard: any verifier with a card;
- external evaluation: error rates with intervals published alongside (the card) + thresholds;
- billing: a model judge never decides billing alone; suspended by drift;
- training reward: a passed exploit audit and drift monitoring in place; suspended by drift.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from vcost.errors import InputError
from vcost.reliability._drift import AnchorSet, DriftCheck
from vcost.reliability._gold import GoldSet
from vcost.reliability._labels import LEVELS, Adjudication, LabelLevel
from vcost.reliability._rates import ReliabilityEstimate
from vcost.reliability._verifiers import VerifierIdentity, VerifierRun

__all__ = [
    "TIERS",
    "CardPolicy",
    "GraderCard",
    "TierDecision",
    "TierRule",
    "apply_drift",
    "build_card",
    "decide_eligibility",
    "expired",
    "load_policy",
]

TIERS: tuple[str, ...] = ("dashboard", "external", "billing", "training-reward")
_RULE_FIELDS = (
    "max_false_accept",
    "max_false_reject",
    "min_coverage",
    "min_items",
    "min_kappa",
    "per_stratum",
)


@dataclass(frozen=True)
class TierRule:
    """The thresholds one tier needs (None: no threshold)."""

    max_false_accept: float | None = None
    max_false_reject: float | None = None
    min_coverage: float | None = None
    min_items: int | None = None
    min_kappa: float | None = None
    per_stratum: bool = False


@dataclass(frozen=True)
class CardPolicy:
    """Thresholds and settings declared in advance (see the module docstring)."""

    task_class: str
    declared_at: date
    label_level: LabelLevel = "task"
    alpha: float = 0.05
    valid_days: int = 180
    target_bound: float = 0.05
    tiers: Mapping[str, TierRule] = field(default_factory=dict)
    drift_tolerance: float | None = None
    anchor_items: int | None = None
    source: str = ""
    sha256: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_class": self.task_class,
            "declared_at": self.declared_at.isoformat(),
            "label_level": self.label_level,
            "alpha": self.alpha,
            "valid_days": self.valid_days,
            "target_bound": self.target_bound,
            "tiers": {k: vars(v) for k, v in self.tiers.items()},
            "drift_tolerance": self.drift_tolerance,
            "anchor_items": self.anchor_items,
            "source": self.source,
            "sha256": self.sha256,
        }


def _line_of(text: str, key: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith((f"{key} ", f"{key}=", f"[{key}", f"[tiers.{key}")):
            return number
    return None


def load_policy(path: str | Path) -> CardPolicy:
    """Read and validate a card policy TOML; errors name the file, line and field."""
    p = Path(path)
    if not p.is_file():
        raise InputError("policy file not found", source=p, hint="check the path")
    raw = p.read_bytes()
    text = raw.decode("utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"not valid TOML: {error}", source=p) from None

    def bad(key: str, message: str, hint: str | None = None) -> InputError:
        return InputError(
            message, source=p, line=_line_of(text, key.split(".")[-1]), field=key, hint=hint
        )

    if not isinstance(data.get("task_class"), str) or not data["task_class"].strip():
        raise bad("task_class", "missing task_class", "name the task class the card certifies")
    declared = data.get("declared_at")
    if isinstance(declared, datetime):
        declared = declared.date()
    if not isinstance(declared, date):
        raise bad(
            "declared_at",
            "missing declared_at (a TOML date)",
            "thresholds must be declared before the verifier is run; give the date",
        )
    level = data.get("label_level", "task")
    if level not in LEVELS:
        raise bad("label_level", f"label_level must be one of {', '.join(LEVELS)}, not {level!r}")
    alpha = data.get("alpha", 0.05)
    if not isinstance(alpha, float) or not 0.0 < alpha < 1.0:
        raise bad("alpha", f"alpha must be a number in (0, 1), not {alpha!r}")
    valid_days = data.get("valid_days", 180)
    if not isinstance(valid_days, int) or isinstance(valid_days, bool) or valid_days < 1:
        raise bad("valid_days", f"valid_days must be a positive integer, not {valid_days!r}")
    target = data.get("target_bound", 0.05)
    if not isinstance(target, float) or not 0.0 < target < 1.0:
        raise bad("target_bound", f"target_bound must be in (0, 1), not {target!r}")
    tiers: dict[str, TierRule] = {}
    for name, body in (data.get("tiers") or {}).items():
        if name not in TIERS:
            raise bad(f"tiers.{name}", f"unknown tier {name!r}", f"one of {', '.join(TIERS)}")
        if not isinstance(body, dict):
            raise bad(f"tiers.{name}", "a tier is a table of thresholds")
        unknown = set(body) - set(_RULE_FIELDS)
        if unknown:
            key = sorted(unknown)[0]
            raise bad(f"tiers.{name}.{key}", f"unknown threshold {key!r}", ", ".join(_RULE_FIELDS))
        for key, value in body.items():
            if key == "per_stratum":
                if not isinstance(value, bool):
                    raise bad(f"tiers.{name}.{key}", "per_stratum must be true or false")
            elif key == "min_items":
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise bad(f"tiers.{name}.{key}", f"min_items must be a count, not {value!r}")
            elif (
                not isinstance(value, int | float)
                or isinstance(value, bool)
                or not (-1.0 <= value <= 1.0)
            ):
                raise bad(f"tiers.{name}.{key}", f"{key} must be a proportion, not {value!r}")
        tiers[name] = TierRule(**body)
    drift = data.get("drift") or {}
    tolerance = drift.get("tolerance")
    if tolerance is not None and not (isinstance(tolerance, float) and 0.0 < tolerance < 1.0):
        raise bad("drift.tolerance", f"tolerance must be in (0, 1), not {tolerance!r}")
    return CardPolicy(
        task_class=data["task_class"],
        declared_at=declared,
        label_level=level,
        alpha=alpha,
        valid_days=valid_days,
        target_bound=target,
        tiers=tiers,
        drift_tolerance=tolerance,
        anchor_items=drift.get("anchor_items"),
        source=str(p),
        sha256=hashlib.sha256(raw).hexdigest(),
    )


@dataclass(frozen=True)
class TierDecision:
    """Whether one tier is granted, and every reason it is not."""

    tier: str
    granted: bool
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"tier": self.tier, "granted": self.granted, "reasons": list(self.reasons)}


def _threshold_failures(
    rule: TierRule, estimate: Mapping[str, Any], labelling: Mapping[str, Any]
) -> list[str]:
    problems: list[str] = []
    rates = {(r["kind"], r["group"]): r for r in estimate["rates"]}
    checks = (("false-accept", rule.max_false_accept), ("false-reject", rule.max_false_reject))
    for kind, limit in checks:
        if limit is None:
            continue
        groups = ["all"] + (
            sorted(g for (k, g) in rates if k == kind and g.startswith("stratum:"))
            if rule.per_stratum
            else []
        )
        for group in groups:
            r = rates.get((kind, group))
            if r is None or not r["n"]:
                problems.append(f"{kind} rate ({group}) not estimable: no judged items")
                continue
            upper = r["korn_graubard"][1]
            if upper > limit:
                problems.append(f"{kind} rate ({group}) upper bound {upper:.3f} exceeds {limit:g}")
    abstention = estimate["abstention"]
    if rule.min_coverage is not None:
        coverage = abstention["coverage"]
        if coverage is None or coverage < rule.min_coverage:
            shown = "n/a" if coverage is None else f"{coverage:.3f}"
            problems.append(f"coverage {shown} below {rule.min_coverage:g}")
    if rule.min_items is not None and abstention["judged"] < rule.min_items:
        problems.append(f"{abstention['judged']} judged gold items, fewer than {rule.min_items}")
    if rule.min_kappa is not None:
        kappa = labelling.get("kappa")
        if kappa is None or kappa < rule.min_kappa:
            shown = "n/a" if kappa is None else f"{kappa:.3f}"
            problems.append(f"labeller agreement kappa {shown} below {rule.min_kappa:g}")
    return problems


_SAME_VERIFIER = ("name", "kind", "version", "model", "prompt_hash")


def _audit_elsewhere(
    audit: Mapping[str, Any] | None, verifier: VerifierIdentity, gold_digest: str
) -> list[str]:
    """Why an exploit audit is not an audit of this grader (empty: it is, or it names neither)."""
    if not audit:
        return []
    out: list[str] = []
    named = audit.get("verifier")
    if isinstance(named, Mapping):
        mine = verifier.to_dict()
        differ = [k for k in _SAME_VERIFIER if k in named and str(named[k]) != str(mine[k])]
        if differ:
            shown = ", ".join(f"{k} {named[k]!r} (this card: {mine[k]!r})" for k in differ)
            out.append(
                f"the exploit audit is of another verifier ({shown}): it does not count for "
                "this grader; run `vcost exploit` on this verifier"
            )
    gold = audit.get("gold")
    theirs = str(gold.get("digest") or "") if isinstance(gold, Mapping) else ""
    if gold_digest and theirs and theirs != gold_digest:
        out.append(
            f"the exploit audit was run on another gold set (digest {theirs[:12]}; this card's "
            f"gold set {gold_digest[:12]}): it does not count for this grader; run "
            "`vcost exploit` on this gold set"
        )
    return out


def decide_eligibility(
    *,
    verifier: VerifierIdentity,
    estimate: Mapping[str, Any],
    labelling: Mapping[str, Any],
    policy: CardPolicy,
    run_at: str,
    exploit_audit: Mapping[str, Any] | None,
    drift: Mapping[str, Any],
    gold_digest: str = "",
) -> tuple[TierDecision, ...]:
    """Each tier granted or not, with reasons, from the card's numbers and the protocol's rules.

    An exploit audit counts for training reward only as an audit of this grader: one that
    names another verifier (name, kind, version, model or prompt hash differ from
    ``verifier``) or, when ``gold_digest`` is given, another gold set (its ``gold.digest``)
    keeps training reward refused, with the reason, whether it passed or not."""
    decisions = [TierDecision("dashboard", True, ("a published card is all this tier needs",))]
    late = ""
    try:
        ran = datetime.fromisoformat(run_at).date()
        if policy.declared_at > ran:
            late = (
                f"thresholds declared {policy.declared_at} after the verifier ran ({ran}): "
                "they were not declared in advance"
            )
    except ValueError:
        late = f"the run's date {run_at!r} is unknown: cannot show the thresholds came first"
    suspended = drift.get("status") == "suspended"
    for tier in TIERS[1:]:
        reasons: list[str] = []
        if late:
            reasons.append(late)
        rule = policy.tiers.get(tier)
        if rule is None:
            reasons.append(f"the policy declares no thresholds for {tier}")
        else:
            reasons += _threshold_failures(rule, estimate, labelling)
        if tier == "billing" and verifier.kind == "model-judge":
            reasons.append(
                "a model judge never decides billing alone: route billing to a deterministic "
                "or programmatic check"
            )
        if tier == "training-reward":
            elsewhere = _audit_elsewhere(exploit_audit, verifier, gold_digest)
            if exploit_audit is None:
                reasons.append("no exploit audit has been run: training reward needs a passed one")
            elif elsewhere:
                reasons += elsewhere
            elif not exploit_audit.get("passed"):
                why = [str(r) for r in exploit_audit.get("reasons") or ()]
                reasons.append(
                    "the exploit audit did not pass" + (f": {'; '.join(why)}" if why else "")
                )
            if drift.get("status") == "not-monitored":
                reasons.append("no drift monitoring: freeze an anchor subset (vcost drift)")
        if tier in ("billing", "training-reward") and suspended:
            reasons.append("suspended by drift on the anchor subset until recertified")
        decisions.append(TierDecision(tier, not reasons, tuple(reasons)))
    return tuple(decisions)


@dataclass(frozen=True)
class GraderCard:
    """A verifier's grader card for one task class (JSON via :meth:`to_dict`)."""

    verifier: VerifierIdentity
    task_class: str
    issued_at: str
    expires_at: str
    run_at: str
    gold: Mapping[str, Any]
    labelling: Mapping[str, Any]
    estimate: Mapping[str, Any]
    flip_rates: tuple[Mapping[str, Any], ...]
    exploit_audit: Mapping[str, Any] | None
    policy: Mapping[str, Any]
    eligibility: tuple[TierDecision, ...]
    drift: Mapping[str, Any]
    notes: tuple[str, ...] = ()
    downstream: Mapping[str, Any] | None = None
    escalation: Mapping[str, Any] | None = None
    family_bias: Mapping[str, Any] | None = None

    def granted(self) -> list[str]:
        return [d.tier for d in self.eligibility if d.granted]

    def decision(self, tier: str) -> TierDecision:
        return next(d for d in self.eligibility if d.tier == tier)

    def to_dict(self) -> dict[str, Any]:
        return {
            "card": "vcost grader card",
            "verifier": self.verifier.to_dict(),
            "task_class": self.task_class,
            "issued_at": self.issued_at,
            "expires_at": self.expires_at,
            "run_at": self.run_at,
            "gold": dict(self.gold),
            "labelling": dict(self.labelling),
            "estimate": dict(self.estimate),
            "flip_rates": [dict(f) for f in self.flip_rates],
            "exploit_audit": None if self.exploit_audit is None else dict(self.exploit_audit),
            "policy": dict(self.policy),
            "eligibility": [d.to_dict() for d in self.eligibility],
            "drift": dict(self.drift),
            "notes": list(self.notes),
            "downstream": None if self.downstream is None else dict(self.downstream),
            "escalation": None if self.escalation is None else dict(self.escalation),
            "family_bias": None if self.family_bias is None else dict(self.family_bias),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GraderCard:
        try:
            return cls(
                verifier=VerifierIdentity.from_dict(data["verifier"]),
                task_class=data["task_class"],
                issued_at=data["issued_at"],
                expires_at=data["expires_at"],
                run_at=data["run_at"],
                gold=data["gold"],
                labelling=data["labelling"],
                estimate=data["estimate"],
                flip_rates=tuple(data.get("flip_rates") or ()),
                exploit_audit=data.get("exploit_audit"),
                policy=data["policy"],
                eligibility=tuple(
                    TierDecision(d["tier"], bool(d["granted"]), tuple(d["reasons"]))
                    for d in data["eligibility"]
                ),
                drift=data["drift"],
                notes=tuple(data.get("notes") or ()),
                downstream=data.get("downstream"),
                escalation=data.get("escalation"),
                family_bias=data.get("family_bias"),
            )
        except (KeyError, TypeError) as error:
            raise InputError(f"not a grader card ({error})", field=str(error)) from None


def _flip_dict(flip: Any) -> dict[str, Any]:
    return dict(flip.to_dict()) if hasattr(flip, "to_dict") else dict(flip)


def build_card(
    *,
    gold: GoldSet,
    adjudication: Adjudication,
    run: VerifierRun,
    estimate: ReliabilityEstimate,
    policy: CardPolicy,
    flip_rates: Sequence[Any] = (),
    exploit_audit: Mapping[str, Any] | None = None,
    anchor: AnchorSet | None = None,
    anchor_source: str = "",
    drift: DriftCheck | None = None,
    export_log: Sequence[Mapping[str, Any]] = (),
    issued_at: datetime | None = None,
    downstream: Any = None,
    escalation: Any = None,
    family_bias: Any = None,
) -> GraderCard:
    """Assemble a card: identity, datasheet, labelling, every rate, flips, tiers, expiry, drift.

    ``downstream`` (a :class:`~vcost.reliability.PassRate`) and ``escalation`` (an
    :class:`~vcost.reliability.EscalationCheck`), or their ``to_dict()``, are shown when given;
    a refuted escalation guarantee is also a note. ``family_bias`` (a
    :class:`~vcost.reliability.FamilyBias` or its ``to_dict()``) is the same-family vs
    cross-family comparison; a judge shown to favour its own family is also a note. None of
    them changes a tier: the policy declares no threshold for them."""
    if adjudication.level != policy.label_level:
        raise InputError(
            f"labels adjudicated at level {adjudication.level!r}, the policy asks for "
            f"{policy.label_level!r}",
            source=policy.source or None,
            field="label_level",
        )
    if anchor is not None and anchor.gold_digest != gold.digest():
        raise InputError(
            f"the anchor was frozen on another version of gold set {anchor.gold_set!r} "
            f"(digest {anchor.gold_digest[:12]}, this gold set {gold.digest()[:12]})",
            source=anchor_source or None,
            field="gold_digest",
            hint="build the card on the gold set the anchor was drawn from, or freeze a new anchor",
        )
    now = issued_at or datetime.now(UTC)
    labelling = adjudication.to_dict()
    if drift is not None:
        drift_section: dict[str, Any] = drift.to_dict()
    elif anchor is not None:
        drift_section = {
            "status": "monitored",
            "anchor_items": len(anchor.item_ids),
            "anchor_digest": anchor.digest,
            "tolerance": policy.drift_tolerance,
            "reasons": ["anchor frozen; no re-run compared yet"],
        }
    else:
        drift_section = {"status": "not-monitored", "reasons": ["no anchor subset frozen"]}
    estimate_dict = estimate.to_dict()
    notes: list[str] = []
    if run.identity.synthetic:
        notes.append(
            "SYNTHETIC VERIFIER: these verdicts come from a synthetic stand-in replayed from a "
            "cassette, not from a real model; the numbers show the method, not a real judge"
        )
    if gold.task_class != policy.task_class:
        notes.append(
            f"the gold set is for task class {gold.task_class!r}; the policy for "
            f"{policy.task_class!r}"
        )
    if labelling["expected_mismatches"]:
        notes.append(
            f"{len(labelling['expected_mismatches'])} item(s) labelled otherwise than their "
            "stratum expects: the labels were used"
        )
    escalation_dict = None if escalation is None else _flip_dict(escalation)
    if escalation_dict is not None and escalation_dict.get("status") == "refuted":
        notes.append(
            f"the judge's claimed agreement {escalation_dict.get('claimed')} on non-escalated "
            "items is refuted on the gold set: " + "; ".join(escalation_dict.get("reasons") or ())
        )
    family_dict = None if family_bias is None else _flip_dict(family_bias)
    if family_dict is not None and family_dict.get("self_preference"):
        notes.append(
            "self-preference: the judge favours outputs of its own model family "
            "(same-family vs cross-family judgments): "
            + "; ".join(
                r for r in family_dict.get("reasons") or () if "favours-own-family" in str(r)
            )
        )
    decisions = decide_eligibility(
        verifier=run.identity,
        estimate=estimate_dict,
        labelling=labelling,
        policy=policy,
        run_at=run.run_at,
        exploit_audit=exploit_audit,
        drift=drift_section,
        gold_digest=gold.digest(),
    )
    return GraderCard(
        verifier=run.identity,
        task_class=policy.task_class,
        issued_at=now.isoformat(),
        expires_at=(now + timedelta(days=policy.valid_days)).date().isoformat(),
        run_at=run.run_at,
        gold={
            **gold.datasheet(),
            "digest": gold.digest(),
            "exports": len(export_log),
            "export_recipients": sorted({str(e.get("recipient")) for e in export_log}),
        },
        labelling=labelling,
        estimate=estimate_dict,
        flip_rates=tuple(_flip_dict(f) for f in flip_rates),
        exploit_audit=exploit_audit,
        policy=policy.to_dict(),
        eligibility=decisions,
        drift=drift_section,
        notes=tuple(notes),
        downstream=None if downstream is None else _flip_dict(downstream),
        escalation=escalation_dict,
        family_bias=family_dict,
    )


def apply_drift(card: GraderCard, check: DriftCheck, policy: CardPolicy) -> GraderCard:
    """The card with a drift check's status and eligibility decided again under it."""
    drift = check.to_dict()
    decisions = decide_eligibility(
        verifier=card.verifier,
        estimate=card.estimate,
        labelling=card.labelling,
        policy=policy,
        run_at=card.run_at,
        exploit_audit=card.exploit_audit,
        drift=drift,
        gold_digest=str(card.gold.get("digest") or ""),
    )
    return replace(card, drift=drift, eligibility=decisions)


def expired(card: GraderCard, *, today: date | None = None) -> bool:
    """Whether the card is past its expiry date."""
    return (today or datetime.now(UTC).date()) > date.fromisoformat(card.expires_at)
