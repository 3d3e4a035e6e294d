"""Study report sections beyond RQ1-RQ2's core: the robustness and acceptance models, the
session trend, the VCE classification, success within budget, RQ3, RQ4, realism.

Each builder returns ``(title, text, table)`` sections; tables are raw frames that the renderer
formats (:func:`vcost.report._study_format.plain_table`).
"""

from __future__ import annotations

import pandas as pd

from vcost.analysis.realism import MIN_RATINGS
from vcost.analysis.study import StudyAnalysis
from vcost.report._study_format import ci, count, est, fmt

__all__ = [
    "Section",
    "acceptance_sections",
    "arm_sections",
    "mixed_sections",
    "model_sections",
    "realism_sections",
    "trend_sections",
    "vce_sections",
]

Section = tuple[str, str, pd.DataFrame | None]


def mixed_sections(a: StudyAnalysis) -> list[Section]:
    m = a.mixed
    title = "RQ1 robustness: mixed model of log time"
    if m is None:
        return []
    text = (
        f"{m.method}. Overall ratio {est(m.overall)}; {count(m.attempts)} finished attempts by "
        f"{count(m.people)} people on {count(m.tasks)} tasks ({count(m.excluded_timeouts)} "
        f"timed-out attempts left "
        f"out, so this is a check on the censored estimate above, not a replacement). SDs: "
        f"participant {fmt(m.participant_sd)}, task {fmt(m.task_sd)}, residual "
        f"{fmt(m.residual_sd)} (log scale)."
    )
    rows = [{"difficulty": d, "ratio": e.value, "lower": e.lower, "upper": e.upper}
            for d, e in m.by_difficulty.items()]  # fmt: skip
    table = pd.DataFrame(rows)
    return [(title, text, table)]


def acceptance_sections(a: StudyAnalysis) -> list[Section]:
    m = a.acceptance
    if m is None:
        return []
    excluded = ", ".join(f"{k} {count(v)}" for k, v in m.excluded.items() if v) or "none"
    text = (
        f"{m.method}. {count(m.rows)} checks of wrong answers by {count(m.people)} people (left "
        f"out: "
        f"{excluded}). Odds ratios: "
        + ("; ".join(f"{k} {est(e)}" for k, e in m.odds_ratios.items()) or "none estimable")
        + ". Predicted false-accept probability by subtlety:"
    )
    rows = [{"error_level": k, "p_accept": e.value, "lower": e.lower, "upper": e.upper, "n": e.n}
            for k, e in m.predicted.items()]  # fmt: skip
    table = pd.DataFrame(rows)
    return [("RQ2: model of accepting a wrong answer", text, table)]


def trend_sections(a: StudyAnalysis) -> list[Section]:
    t = a.trend
    if t is None:
        return []
    text = (
        "Each person's first, second, ... session. Trend factor per session (finished attempts; "
        "log effort on session number with person and difficulty fixed effects, "
        f"participant-clustered interval): do {est(t.factor['do'])}, check "
        f"{est(t.factor['check'])}; below 1 means faster in later sessions."
    )
    return [("Session trend", text, t.by_session)]


def vce_sections(a: StudyAnalysis) -> list[Section]:
    v = a.vce
    title = "VCE classification (larger-verdict subset)"
    if v is None or v.answers.empty:
        return [(title, "No wrong answer has a human check: no classification.", None)]
    e, mi, need = v.envelope, v.misses, v.min_verifiers
    text = (
        f"Subset: {v.subset_rule}. Three-state rule: q = {v.q:g}, two-sided "
        f"{1 - v.alpha:.0%} {v.method} intervals on each answer's share of misses (decidable "
        f"from {need.confirm} verdicts per answer). Of {count(e.outputs)} wrong answers: "
        f"{count(e.confirmed)} "
        f"confirmed, {count(e.not_vce)} not, {count(e.inconclusive)} inconclusive; envelope "
        f"[{fmt(e.lower)}, {fmt(e.upper)}] (descriptive, not a confidence interval). Misses: "
        f"{count(mi['failures'])} of {count(mi['checks'])} checks: {count(mi['false_accepts'])} "
        f"false accepts, "
        f"{count(mi['timeouts'])} timeouts, {count(mi['unverifiable'])} unverifiable."
    )
    if not v.resolvable:
        text += " With this few verdicts per answer nothing can be decided."
    return [
        (title, text, v.groups),
        ("VCE classification per answer", "Misses split into their three kinds.", v.answers),
    ]


def arm_sections(a: StudyAnalysis) -> list[Section]:
    arms = a.success_by_arm
    n = arms["arm"].nunique() if len(arms) else 0
    text = (
        "Pr[S_B = 1], a correct verdict within the budget, with its failure decomposition "
        "(false accept or false reject, budget run-out, unverifiable: they sum to 1 - success) "
        "and the observed budget consumption; intervals from the two-way cluster bootstrap over "
        "people and answers. A trace supports the estimate for its own budget only, so it is "
        f"given per budget arm ({n} here)."
    )
    shown = None
    if len(arms):
        shown = pd.DataFrame(
            {"arm": arms["arm"], "stratum": arms["stratum"], "checks": arms["checks"],
             "mean budget": arms["mean_budget"],
             "success": [ci(*r) for r in arms[["success", "success_lower",
                                                "success_upper"]].itertuples(index=False)],
             "wrong verdict": arms["wrong_verdict"], "budget ran out": arms["budget_exhausted"],
             "unverifiable": arms["unverifiable"],
             "observed budget consumption": [
                 ci(*r) for r in arms[["observed_budget_consumption", "obc_lower",
                                        "obc_upper"]].itertuples(index=False)]}
        )  # fmt: skip
    return [
        ("Success within budget", text, shown),
        (
            "Secondary descriptors of check episodes",
            "Shape, not magnitude, of the verification effort (Crescitelli et al., Sec. 5). "
            "Time to detection: effort until a correct reject of a wrong answer. Counterexample: "
            "whether a reason or counterexample came with a correct reject, and its length in "
            "characters (the trace keeps it as free text, not its structure). Verification "
            "length: events logged between start and end, and code runs.",
            a.descriptors if len(a.descriptors) else None,
        ),
    ]


def model_sections(a: StudyAnalysis) -> list[Section]:
    pm = a.per_model
    shown = None
    if len(pm):
        shown = pd.DataFrame(
            {"model": pm["model_id"], "answers": pm["answers"], "wrong": pm["wrong_answers"],
             "natural": pm["natural_errors"], "planted": pm["planted_errors"],
             "checks of wrong": pm["wrong_checks"],
             "false-accept rate": [ci(*r) for r in pm[["false_accept_rate",
                 "false_accept_lower", "false_accept_upper"]].itertuples(index=False)],
             "on natural errors": [ci(*r) for r in pm[["natural_false_accept_rate",
                 "natural_false_accept_lower", "natural_false_accept_upper"]].itertuples(
                 index=False)],
             "success within budget": [ci(*r) for r in pm[["success", "success_lower",
                 "success_upper"]].itertuples(index=False)],
             "time to correct verdict (conditional mean)": [ci(*r) for r in pm[[
                 "correct_verdict_time_conditional_mean", "correct_verdict_time_lower",
                 "correct_verdict_time_upper"]].itertuples(index=False)],
             "natural error rate (generation)": [ci(*r) for r in pm[["natural_error_rate",
                 "natural_error_rate_lower", "natural_error_rate_upper"]].itertuples(
                 index=False)]}
        )  # fmt: skip
    out: list[Section] = [
        (
            "RQ3: per model",
            "Results split by the model that produced the answer (descriptive). False-accept "
            "rates with the spec's binomial interval; success and the time to a correct verdict "
            "(conditional on one) with the two-way cluster bootstrap; the natural error rate in "
            "generation needs the answers log.",
            shown,
        ),
        (
            "RQ3: natural errors and how often people caught them",
            "Caught: a correct reject within budget.",
            a.natural_errors,
        ),
    ]
    m = a.misses
    if m is None:
        out.append(("RQ4: human vs AI-checker misses",
                    "Not computed: no wrong answer checked by both people and AI checkers, or no "
                    "AI-checker episodes (see notes).", None))  # fmt: skip
    else:
        parts = [m.table().assign(breakdown="all")]
        for column in ("source", "error_level"):
            if len(m.answers) and m.answers[column].notna().any():
                t = m.table(column)
                parts.append(t.assign(breakdown=[f"{column}={i}" for i in t.index]))
        cells = pd.concat(parts)
        cells = cells[["breakdown", *[c for c in cells.columns if c != "breakdown"]]]
        out += [
            (
                "RQ4: human vs AI-checker misses",
                f"Wrong answers by who missed them (a miss: false accept, timeout or "
                f"unverifiable; a side misses an answer when at least q = {m.q:g} of its checks "
                f"miss). {count(len(m.answers))} answers compared, {count(m.not_comparable)} lack "
                f"a human or "
                "an AI check.",
                cells.reset_index(drop=True),
            ),
            ("RQ4: per wrong answer", "Checks and misses by kind of checker.", m.answers),
        ]
    if len(a.ai_checker_rates):
        out.append(("AI checkers' error rates", "Over every standard judgment (repeats "
                    "included); effort in tokens is not a verification time.",
                    a.ai_checker_rates))  # fmt: skip
    return out


def realism_sections(a: StudyAnalysis) -> list[Section]:
    r = a.realism
    title = "Realism: planted vs natural errors"
    if r is None:
        return [(title, "No realism ratings given: not compared.", None)]
    d = r.difference
    rule = {
        True: "Planted errors are rated at least 1 point lower than natural ones: by the study "
        "design's rule they are reported separately and conclusions rest mainly on natural "
        "errors.",
        False: "Planted errors are not rated 1 point or more lower than natural ones: planted "
        "and natural errors are pooled.",
        None: f"Not decided: too few ratings (the rule needs at least {MIN_RATINGS} ratings "
        "each of planted and natural errors, so that their means have intervals).",
    }[r.separate]
    text = (
        f"How likely is it that an AI wrote this exact answer (1-5)? Natural - planted: "
        f"{ci(d['value'], d['lower'], d['upper'])} (Welch t interval; ratings repeat answers "
        f"across raters, so indicative only). {rule}"
    )
    out: list[Section] = [(title, text, r.kinds)]
    if r.separate:
        out.append(
            (
                "RQ2 split: planted vs natural errors",
                "False-accept rates reported separately by source; conclusions rest mainly on "
                "natural errors.",
                a.by_source,
            )
        )
    return out
