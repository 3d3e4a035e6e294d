"""The pre-registration document: every declared choice of a spec, in plain words (Markdown).

Crescitelli et al. ask that the decision rule be "pre-registered along with the estimator" and
that recruitment, sampling, eligibility and the agreement threshold be declared in advance; the
study design registers its plan on OSF before the panel. :func:`prereg` writes that text from a
spec: lock hash (or a NOT LOCKED warning), date and vcost version, each parameter as a sentence,
the four outcomes, premature closure, flags, sessions, contingencies, declared deviations with
their reasons, the instrumentation bound m*n*B, and the canonical spec the hash covers.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from vcost import __version__
from vcost.spec._analysis_plan import analysis_plan_markdown
from vcost.spec._model import StudySpec
from vcost.spec._tables import fmt_number as _num
from vcost.spec._tables import unit_label

if TYPE_CHECKING:
    from vcost.spec._tables import Deviation

__all__ = [
    "describe_budget",
    "describe_decision",
    "describe_stopping",
    "prereg",
]

_METHOD = {"clopper-pearson": "Clopper-Pearson", "wilson": "Wilson", "jeffreys": "Jeffreys"}
_STATISTIC = {
    "krippendorff-alpha": "Krippendorff's alpha",
    "fleiss-kappa": "Fleiss' kappa",
    "cohen-kappa": "Cohen's kappa",
}


def _pct(x: float) -> str:
    return f"{x * 100:g}%"


def _amount(value: float, spec: StudySpec) -> str:
    return f"{_num(value)} {unit_label(spec.cost_unit)}"


def _list(items: tuple[str, ...] | list[str], empty: str = "none", *, last: str = "and") -> str:
    if not items:
        return empty
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + f" {last} " + items[-1]


def _range(spec: StudySpec, factor: float) -> str:
    pilot = spec.pilot
    if pilot is None:  # pragma: no cover - validation requires a pilot
        return ""
    values = [factor * v for v in pilot.median_do_time.values()]
    return (
        f" ({len(values)} tasks; from {_amount(min(values), spec)} to "
        f"{_amount(max(values), spec)}; listed in Appendix A)"
    )


def describe_budget(spec: StudySpec) -> str:
    """The budget B as one sentence, e.g. "15 human-minutes per answer, fixed."."""
    budget = spec.budget
    if budget.mode == "fixed":
        assert budget.value is not None
        return f"{_amount(budget.value, spec)} per answer, fixed."
    if budget.mode == "per-task":
        assert budget.factor is not None
        return (
            f"per task: {_num(budget.factor)} x the task's median pilot do time"
            f"{_range(spec, budget.factor)}."
        )
    unit = spec.cost_unit
    arms = [f"'{arm.name}' = {arm.describe(unit)}" for arm in budget.arms]
    who = "each verifier" if budget.assignment == "per-verifier" else "each check"
    return (
        f"{len(arms)} randomised budget arms, {who} assigned to one at random: "
        f"{_list(arms)}. The announced budget may change behaviour, so each arm's trace "
        "supports the primary estimate for its own budget only."
    )


def describe_stopping(spec: StudySpec) -> str:
    """The stopping rule as one sentence."""
    stopping = spec.stopping
    ends = (
        "the verifier gives a verdict"
        if stopping.rule == "any-verdict"
        else f"the verifier gives a verdict with self-reported confidence >= tau = "
        f"{_num(stopping.tau)}"
    )
    options = [ends, "the budget B is exhausted"]
    if stopping.unverifiable:
        options.append("the verifier declares the answer unverifiable within budget")
    return "A check ends when " + ", ".join(options[:-1]) + ", or " + options[-1] + "."


def _resolution(m: int, spec: StudySpec) -> str:
    from vcost.stats.vce import VceState, classify_vce, min_verifiers

    d = spec.decision
    states = [
        classify_vce(k, m, q=d.q, alpha=d.alpha, method=d.interval).state for k in range(m + 1)
    ]
    confirm = [k for k, s in enumerate(states) if s is VceState.CONFIRMED]
    rule_out = [k for k, s in enumerate(states) if s is VceState.NOT]
    if not confirm and not rule_out:
        fewest = min_verifiers(q=d.q, alpha=d.alpha, method=d.interval)
        return (
            f"With {m} verdict{'s' if m != 1 else ''} per answer no answer can be resolved: every "
            f"one is inconclusive (the fewest verdicts that can confirm an error is "
            f"{fewest.confirm}, that can rule one out {fewest.reject})."
        )
    parts = []
    if confirm:
        k = confirm[0]
        parts.append(
            f"confirmed only if all {m} verifiers miss it"
            if k == m
            else f"confirmed when at least {k} of {m} verifiers miss it"
        )
    if rule_out:
        k = rule_out[-1]
        parts.append(
            "ruled out only if none misses it" if k == 0 else f"ruled out when at most {k} miss it"
        )
    return (
        f"With {m} verdicts per answer an error is "
        + "; ".join(parts)
        + "; anything in between is inconclusive."
    )


def describe_decision(spec: StudySpec) -> str:
    """The decision rule spelled out with q, alpha and the interval method."""
    d = spec.decision
    interval = f"two-sided {_pct(1 - d.alpha)} {_METHOD[d.interval]} interval"
    if d.rule == "three-state":
        return (
            f"Three-state rule. For each incorrect answer, with k of n verifiers failing to reach "
            f"a correct verdict within budget, the {interval} for Pr[S_B = 0] is computed. The "
            f"answer is a **confirmed** Verification-Cost Error when the interval's lower bound "
            f"is >= q = {_num(d.q)}; **not** a VCE when its upper bound is < q; "
            f"**inconclusive** otherwise."
        )
    return (
        f"Point-estimate rule (not recommended by Crescitelli et al.: with few verifiers the "
        f"attainable proportions are coarse and the rule is brittle). An incorrect answer is a "
        f"VCE when the observed share of verifiers who miss it, k/n, is >= q = {_num(d.q)}. The "
        f"{interval} is reported with every estimate."
    )


def _deviation(d: Deviation) -> str:
    def value(v: object) -> str:
        return "(not set)" if v is None else f"`{json.dumps(v, default=str)}`"

    return (
        f"- `{d.field}`: {value(d.old)} -> {value(d.new)} (declared {d.declared_at.isoformat()}). "
        f"Reason: {' '.join(d.reason.split())}"
    )


def _text(value: str | None) -> str:
    return " ".join(value.split()) if value else ""


def _sentence(value: str | None) -> str:
    """Free text as a sentence: whitespace folded, a full stop added if missing."""
    text = _text(value)
    return text if not text or text[-1] in ".!?" else text + "."


def prereg(spec: StudySpec, *, today: date | None = None) -> str:
    """A Markdown pre-registration of ``spec``, ready to paste into a registry."""
    today = today or datetime.now(UTC).date()
    study = spec.study
    lock = spec.lock
    out: list[str] = [f"# Pre-registration: {study.title or study.name}", ""]
    if lock is None:
        out += [
            "> **NOT LOCKED.** This specification has no lock file, so this text is a draft: "
            "run `vcost spec lock FILE` and generate it again before registering.",
            "",
        ]
    else:
        out += [
            f"> Locked specification `sha256:{lock.spec_hash}`, locked "
            f"{lock.locked_at.strftime('%Y-%m-%d %H:%M UTC')} with vcost {lock.vcost_version}.",
            "",
        ]
    out += [
        f"- Study: `{study.name}`, protocol version {study.version}",
        f"- Lock hash: `{lock.spec_hash}`" if lock else "- Lock hash: **NOT LOCKED**",
        f"- Spec hash now: `{spec.spec_hash}`"
        + (
            " (differs from the lock hash by the deviations in Section 6)"
            if lock and lock.spec_hash != spec.spec_hash
            else ""
        ),
        f"- Generated: {today.isoformat()} by vcost {__version__}",
    ]
    if study.registry:
        out.append(f"- Registry: {study.registry}")
    out += [
        "",
        "Every result obtained under this specification carries the date of measurement, the "
        "lock hash and the versions of the protocol, of vcost and of the evaluated system "
        "configuration (model snapshot, decoding parameters, system prompt), which is recorded "
        "alongside the protocol and not part of it.",
        "",
    ]
    if study.description:
        out += [_sentence(study.description), ""]

    v = spec.verifiers
    d = spec.decision
    out += ["## 1. Measurement specification", ""]
    out.append(f"- **Cost unit (u):** {unit_label(spec.cost_unit)}.")
    people = "people" if v.kind == "person" else "models"
    verifiers = [f"- **Verifier population (V):** {people}: {_sentence(v.description)}"]
    verifiers.append(f"  Eligibility: {_sentence(v.eligibility)}")
    verifiers.append(f"  Recruitment: {_sentence(v.recruitment)}")
    if v.sampling == "panel":
        verifiers.append(
            "  Sampling: a panel, not a representative sample; estimates are statements about "
            "the observed verifier panel, not about a wider population."
        )
    else:
        verifiers.append("  Sampling: representative of the declared population.")
    if v.panel_min is not None or v.panel_max is not None:
        size = (
            f"{v.panel_min}"
            if v.panel_min == v.panel_max
            else f"{v.panel_min or '?'} to {v.panel_max or '?'}"
        )
        verifiers.append(f"  Panel size: {size}.")
    if v.repeated_participation:
        verifiers.append(
            f"  Repeated participation: {_text(v.repeated_participation)}; model-level "
            "uncertainty accounts for dependence within verifier."
        )
    if v.metadata:
        verifiers.append(f"  Metadata recorded for stratified analysis: {_list(list(v.metadata))}.")
    out += verifiers
    out.append(f"- **Verification budget (B):** {describe_budget(spec)}")
    if spec.do_time_cap is not None:
        cap = spec.do_time_cap
        if cap.mode == "fixed":
            assert cap.value is not None
            text = f"{_amount(cap.value, spec)} per do attempt, fixed."
        else:
            assert cap.factor is not None
            text = f"{_num(cap.factor)} x the task's median pilot do time."
        out.append(
            f"- **Do-time cap:** {text} An attempt stopped at the cap counts as at least this long."
        )
    if spec.pilot is not None:
        out.append(f"- **Pilot do times:** {_sentence(spec.pilot.description)}")
    out.append(f"- **Stopping rule (tau):** {describe_stopping(spec)}")
    out.append(
        f"- **VCE threshold (q):** an incorrect answer is a Verification-Cost Error when at "
        f"least a fraction q = {_num(d.q)} of the verifier population fails to reach a correct "
        "verdict within the budget."
    )
    out.append(f"- **Decision rule:** {describe_decision(spec)}")
    m = spec.m
    verdicts = f"- **Verdicts per answer (m):** {m}"
    if spec.verdicts.basis == "precision-planning" and spec.verdicts.planning is not None:
        plan = spec.verdicts.planning
        probs = _list([_num(p) for p in plan.failure_probabilities])
        verdicts += (
            f", fixed by precision planning: at true failure probabilities {probs} at most "
            f"{_pct(plan.max_inconclusive)} of answers may be inconclusive"
        )
    verdicts += "."
    if d.rule == "three-state":
        verdicts += " " + _resolution(m, spec)
    out.append(verdicts)
    subset = spec.verdicts.subset
    if subset is not None:
        line = (
            f"- **Subset:** {subset.answers} answers ({_text(subset.selection)}) get "
            f"{subset.per_answer} verdicts each."
        )
        if d.rule == "three-state":
            line += " " + _resolution(subset.per_answer, spec)
        out.append(line)
    out.append(
        f"- **Interval method and alpha:** {_METHOD[d.interval]}, alpha = {_num(d.alpha)} "
        f"(two-sided {_pct(1 - d.alpha)}). Every estimate is reported with its interval and the "
        "number of verifier observations."
    )
    levels = spec.confidence_levels
    out.append(
        "- **Confidence scale:** "
        + (
            f"verifiers report one of {_list([_pct(x) for x in levels], last='or')}."
            if levels
            else "verifiers report a probability in [0, 1]."
        )
    )
    a = spec.agreement
    out.append(
        f"- **Agreement:** {_STATISTIC[a.statistic]} across verifiers of the same answers; "
        f'results below {_num(a.threshold)} are flagged "verifier-uncertain" and reported, '
        "not withheld. Agreement, verdict accuracy against ground truth and the premature-closure "
        "rate are reported side by side."
    )
    t = spec.tools
    out.append(
        f"- **Tools:** allowed: {_list(list(t.allowed))}; not allowed: {_list(list(t.forbidden))}."
    )
    out.append(
        f"- **Interface:** {_sentence(spec.interface.description)}"
        + (f" Version {spec.interface.version}." if spec.interface.version else "")
    )
    ds = spec.dataset
    data = (
        f"- **Dataset:** {ds.name} ({ds.reference}"
        + (f", version {ds.version}" if ds.version else "")
        + ")."
    )
    if ds.answers:
        data += f" {ds.answers} answers under verification."
    if ds.description:
        data += f" {_sentence(ds.description)}"
    out.append(data)
    out.append(
        f"- **Ground truth:** {_sentence(ds.ground_truth)} Ground truth is fixed before any "
        "verification, never by the verification episodes."
    )
    out.append(
        f"- **Known-correct baseline:** {_sentence(ds.baseline)}"
        if ds.baseline
        else "- **Known-correct baseline:** none declared (Crescitelli et al., Step 4, "
        "asks for one)."
    )
    out.append(
        f"- **Random seed:** {spec.seed}."
        if spec.seed is not None
        else "- **Random seed:** not declared."
    )

    tau = _pct(spec.tau) if levels else _num(spec.tau)
    out += [
        "",
        "## 2. Outcomes",
        "",
        "Each check ends in exactly one of four outcomes (Crescitelli et al. 2026, Section 6, "
        "Step 3):",
        "",
        "1. **Correct verdict** within budget: the verdict agrees with ground truth.",
        "2. **Wrong verdict** within budget: a *false accept* (an incorrect answer judged "
        "correct) or a *false reject* (a correct answer judged incorrect).",
        "3. **Budget exhausted** without a verdict (administrative censoring: the effort is at "
        "least B).",
        "4. **Declared unverifiable** within budget."
        if spec.stopping.unverifiable
        else "4. **Declared unverifiable**: not offered to verifiers in this study.",
        "",
        "A *miss* is any check of an incorrect answer that does not reach a correct verdict "
        "within budget (outcomes 2-4); the breakdown into the three is reported. Answers whose "
        "ground truth is unresolved form a separate indeterminate category and enter no rate.",
        "",
        f"**Premature closure:** a wrong verdict given at confidence >= tau = {tau}. Its rate is "
        "reported alongside the operational measures. Time to a correct verdict is reported "
        "only over checks that reached one.",
        "",
    ]

    flags = spec.flags
    if flags is not None and (flags.guess or flags.inactivity):
        out += [
            "## 3. Flags",
            "",
            "Nobody is excluded: flagged attempts are reported, and results are given with and "
            "without them.",
            "",
        ]
        if flags.guess is not None:
            g = flags.guess
            at = _pct(g.at_confidence) if levels else _num(g.at_confidence)
            out.append(
                f"- **Possible guess:** a verdict given in under {_num(g.under_seconds)} seconds "
                f"at {at} confidence."
            )
        if flags.inactivity is not None:
            gap = flags.inactivity
            what = f" (activity: {_list(list(gap.activity))})" if gap.activity else ""
            out.append(
                f"- **Inactivity:** gaps over {_num(gap.gap_minutes)} minutes between "
                f"activity{what}."
            )
        out.append("")

    if spec.sessions is not None or spec.mix is not None:
        out += ["## 4. Sessions and mix", ""]
        s = spec.sessions
        if s is not None:
            text = f"- **Sessions:** {s.count} sessions of {s.pairs_per_session} do/check pairs"
            if s.target_minutes is not None:
                text += f", about {_num(s.target_minutes)} minutes each"
            if s.max_minutes is not None:
                text += (
                    f", ending after {s.pairs_per_session} pairs or {_num(s.max_minutes)} "
                    "minutes, whichever comes first"
                )
            text += "."
            if s.practice_tasks:
                text += (
                    f" A practice session on {s.practice_tasks} tasks not used in the study "
                    "comes first."
                )
            if s.extra_sessions:
                plural = "s" if s.extra_sessions != 1 else ""
                text += (
                    f" Pairs not started move on, adding up to {s.extra_sessions} extra "
                    f"session{plural}."
                )
            if s.order:
                text += f" Order: {_sentence(s.order)}"
            if s.pause == "between-items":
                text += (
                    " Pauses: a participant may pause only between items; an item's clock "
                    "never stops, and the session's time limit keeps running."
                )
            elif s.pause == "none":
                text += " Pauses: none; the next item starts as soon as one ends."
            out.append(text)
        mix = spec.mix
        if mix is not None:
            text = (
                f"- **Correct/wrong mix:** {_pct(mix.wrong_fraction)} of checked answers are wrong"
            )
            minimums = []
            if mix.min_correct_per_session:
                minimums.append(f"at least {mix.min_correct_per_session} correct")
            if mix.min_wrong_per_session:
                minimums.append(f"at least {mix.min_wrong_per_session} wrong")
            if minimums:
                text += f"; each session has {' and '.join(minimums)}"
            text += (
                "; verifiers are " + ("told" if mix.disclosed else "not told") + " the proportion."
            )
            out.append(text)
        out.append("")

    out += ["## 5. Contingencies", ""]
    if spec.contingencies:
        out += [f"- If {_text(c.when)}: {_text(c.then)}." for c in spec.contingencies]
    else:
        out.append("None declared.")
    out.append("")

    protocol = [dv for dv in spec.deviations if dv.kind == "protocol"]
    later = [dv for dv in spec.deviations if dv.kind == "lock"]
    out += [
        "## 6. Declared deviations",
        "",
        "### From the protocol of Crescitelli et al. (2026)",
        "",
    ]
    out += [_deviation(dv) for dv in protocol] or ["None."]
    out += ["", "### From the locked specification", ""]
    out += [_deviation(dv) for dv in later] or ["None."]
    out.append("")

    out += ["## 7. Analysis plan", "", *analysis_plan_markdown(), ""]

    out += ["## 8. Instrumentation cost", ""]
    if spec.budget.mode == "fixed" and spec.budget.value is not None:
        per = _amount(m * spec.budget.value, spec)
        bound = f"at most m x B = {per} of verifier effort per answer"
        if ds.answers:
            total = _amount(m * spec.budget.value * ds.answers, spec)
            bound += f", {total} for the {ds.answers} answers (m x n x B)"
        out.append(
            f"Each check is bounded by B, so the checks consume {bound}, plus the baseline and "
            "calibration overhead."
        )
    else:
        out.append(
            "Each check is bounded by its budget, so the checks consume at most m x B per answer "
            "(summed over answers: m x n x B), plus the baseline and calibration overhead."
        )
    out.append("")

    if spec.pilot is not None and spec.budget.uses_pilot:
        out += [
            "## Appendix A. Per-task budgets",
            "",
            "| task | pilot median do time | budget | do-time cap |",
            "|---|---|---|---|",
        ]
        for task, median in sorted(spec.pilot.median_do_time.items()):
            budget = (
                _num(spec.budget_for(task))
                if spec.budget.mode == "per-task"
                else ", ".join(
                    f"{n}: {_num(spec.budget_for(task, arm=n))}" for n in spec.budget_arms
                )
            )
            task_cap = spec.do_time_cap_for(task)
            cap_text = _num(task_cap) if task_cap is not None else "-"
            out.append(f"| {task} | {_num(median)} | {budget} | {cap_text} |")
        out += ["", f"All values in {unit_label(spec.cost_unit)}.", ""]

    out += [
        "## Appendix B. The specification",
        "",
        "The hash is the SHA-256 of this canonical JSON (sorted keys, no whitespace; declared "
        "deviations are not part of it):",
        "",
        "```json",
        json.dumps(spec.canonical_dict(), indent=2, sort_keys=True, ensure_ascii=False),
        "```",
        "",
    ]
    return "\n".join(out)
