"""The indicator report as a Markdown document (Steps 5 and 6 of the protocol)."""

from __future__ import annotations

from vcost.indicators import IndicatorReport, ModelIndicators, StratumIndicators
from vcost.report._format import estimate, number, percent

_STRATUM_NAMES = {
    "all": "all resolved outputs",
    "gt_correct": "GT-correct (confirmation)",
    "gt_incorrect": "GT-incorrect (refutation)",
    "baseline": "known-correct baseline",
}


def _strata_rows(strata: list[StratumIndicators]) -> list[str]:
    lines = [
        "| stratum | episodes | outputs | verifiers | Pr[S_B=1] | wrong verdict "
        "(false accept / false reject) | budget exhausted | unverifiable | E[E_d/B] | "
        "correct-verdict time, conditional on success: mean [CI] / median | "
        "premature closures | verdict accuracy |",
        "|---|---:|---:|---:|---|---|---|---|---|---|---|---|",
    ]
    for st in strata:
        cvt = st.correct_verdict_time
        name = _STRATUM_NAMES.get(st.stratum, st.stratum.replace(":", ": "))
        lines.append(
            f"| {name} | {st.episodes} | {st.outputs} | "
            f"{st.verifiers} | {estimate(st.success)} | {estimate(st.wrong_verdict)} "
            f"({number(st.false_accept.value)} / {number(st.false_reject.value)}) | "
            f"{estimate(st.budget_exhausted)} | {estimate(st.unverifiable)} | "
            f"{estimate(st.observed_budget_consumption)} | "
            f"{estimate(cvt.mean, 2)} / {number(cvt.median, 2)} | "
            f"{estimate(st.premature_closure)} | {estimate(st.verdict_accuracy)} |"
        )
    return lines


def _model_section(m: ModelIndicators, unit: str) -> list[str]:
    lo, hi, mean = m.verdicts_per_incorrect_output
    flag = " — **verifier-uncertain** (agreement below the declared threshold)"
    lines = [
        f"### {m.model_id}",
        "",
        *_strata_rows(list(m.strata.values())),
        "",
        f"- Effort ratio E[E_d | GT-incorrect] / E[E_d | GT-correct]: "
        f"{estimate(m.effort_ratio, 2)} (dimensionless, but budget-dependent).",
        f"- VCE classification over {m.vce.outputs} incorrect outputs "
        f"({lo}-{hi} verdicts each, mean {number(mean, 1)}): confirmed {m.vce.confirmed}, "
        f"not {m.vce.not_vce}, inconclusive {m.vce.inconclusive}; confirmed rate "
        f"{percent(m.vce.confirmed_rate)}, inconclusive rate {percent(m.vce.inconclusive_rate)},"
        f" envelope [{number(m.vce.lower)}, {number(m.vce.upper)}].",
        f"- Agreement on verdicts (Krippendorff's alpha, nominal): {number(m.agreement_alpha)}"
        + (flag if m.verifier_uncertain else "")
        + ".",
        f"- Instrumentation: {number(m.effort_spent, 1)} {unit} spent of the bound "
        f"m·n·B = {number(m.instrumentation_bound, 1)} {unit}.",
        f"- Excess observed budget consumption on GT-correct outputs over the known-correct "
        f"baseline: {number(m.excess_consumption_over_baseline)} (comparative, not causal).",
    ]
    if m.indeterminate_episodes:
        lines.append(
            f"- {m.indeterminate_episodes} episodes on outputs with unresolved ground truth "
            "(indeterminate; in no rate)."
        )
    return [*lines, ""]


def render_markdown(
    report: IndicatorReport,
    *,
    title: str = "Verification-cost indicators",
    label: str | None = None,
) -> str:
    """Render ``report`` as Markdown; ``label`` is shown as a banner (e.g. synthetic data)."""
    s = report.settings
    lines = [f"# {title}", ""]
    if label:
        lines += [f"> **{label}**", ""]
    lines += [
        f"- Spec hash: `{report.spec_hash or 'NOT LOCKED'}`"
        + (f" ({report.study['hash_kind']})" if report.study else ""),
        *(
            [f"- Study: {report.study['name']}, version {report.study['version']}"]
            if report.study
            else []
        ),
        f"- Computed: {report.computed_at} (UTC)",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in report.versions.items()),
        f"- Cost unit u: {s.cost_unit}; stopping confidence tau = {s.tau:g}; VCE threshold "
        f"q = {s.q:g}; {s.interval_method} intervals at {1 - s.alpha:.0%}; agreement threshold "
        f"{s.agreement_threshold:g}",
        f"- Model-level intervals: two-way cluster (pigeonhole) bootstrap over verifiers and "
        f"outputs, {s.bootstrap_reps} replicates, percentile, seed {s.seed}.",
        "",
        "## Declared deviations",
        "",
    ]
    if report.deviations:
        lines += [
            f"- `{d.get('field')}` ({d.get('kind', 'lock')}): {d.get('old')!s} → {d.get('new')!s}"
            f" — {d.get('reason')}"
            for d in report.deviations
        ]
    else:
        lines.append("None declared.")
    lines += [
        "",
        "## Model-level indicators (Step 6)",
        "",
        "| model | episodes | verifiers | Pr[S_B=1] | E[E_d/B] | confirmed VCE rate | "
        "inconclusive rate | envelope | alpha |",
        "|---|---:|---:|---|---|---:|---:|---|---|",
    ]
    for m in report.models:
        a = m.strata["all"]
        lines.append(
            f"| {m.model_id} | {a.episodes} | {a.verifiers} | {estimate(a.success)} | "
            f"{estimate(a.observed_budget_consumption)} | {percent(m.vce.confirmed_rate)} | "
            f"{percent(m.vce.inconclusive_rate)} | [{number(m.vce.lower)}, "
            f"{number(m.vce.upper)}] | {number(m.agreement_alpha)}"
            f"{' ⚑' if m.verifier_uncertain else ''} |"
        )
    lines += ["", "## Stratified indicators (Step 5)", ""]
    for m in report.models:
        lines += _model_section(m, s.cost_unit)
    if report.baseline:
        lines += ["## Known-correct baseline (Step 4)", "", *_strata_rows([report.baseline]), ""]
    lines += [
        "## How to read this",
        "",
        "- Pr[S_B=1] is the share of episodes that reached a verdict agreeing with ground truth "
        "within the budget; the failure decomposition (wrong verdict, budget exhausted, "
        "unverifiable) sums to 1 - Pr[S_B=1].",
        "- E[E_d/B] is observed budget consumption: a measure of burden, not of the latent cost "
        "of establishing correctness.",
        "- Correct-verdict time is conditional on a correct verdict having been reached; it is not "
        "an estimate of the full distribution of verification cost.",
        "- A premature closure is a wrong verdict given at confidence >= tau.",
        "- The VCE envelope [confirmed, confirmed + inconclusive] is descriptive: it is neither a "
        "confidence interval for the VCE rate nor a bound that provably contains it.",
        "- These are comparative indicators under this specification only; they do not transfer "
        "to other budgets, tools, interfaces or verifier populations.",
        "",
    ]
    return "\n".join(lines)
