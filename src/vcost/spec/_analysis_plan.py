"""The analysis plan vcost runs, as text: the pre-registered analyses and vcost's own choices.

Seed 003 fixes *what* is analysed (RQ1-RQ4, H1-H3, the "Analysis" sections); where it leaves the
*how* open, vcost chose, and a reviewer must see those choices declared before the data exist.
:data:`ANALYSES` lists each pre-registered analysis with its estimator; :data:`DECLARED_CHOICES`
the estimator choices that are vcost's, not the design's. The pre-registration document
(:func:`vcost.spec.prereg`) and the study report (:mod:`vcost.report.study`) both print them,
so the two cannot drift apart.
"""

from __future__ import annotations

__all__ = ["ANALYSES", "DECLARED_CHOICES", "LIMITATIONS", "analysis_plan_markdown"]

ANALYSES: tuple[tuple[str, str], ...] = (
    ("RQ1: verification ratio (primary)",
     "check time / do time from a log-normal accelerated-failure-time model, budget and cap "
     "timeouts right-censored; terms condition, difficulty, condition x difficulty, block order, "
     "position in block, person; overall ratio = geometric mean over difficulty labels"),
    ("RQ1: robustness", "crossed mixed model of log time on finished attempts (person and task "
     "random effects); Weibull AFT sensitivity; raw medians of finished attempts (secondary)"),
    ("H1: ratio below 1 and rising with difficulty",
     "per person and pooled; the contrast ratio(harder label) / ratio(easiest label) with its "
     "interval; the count of people showing each pattern"),
    ("RQ1: break-even", "check time + non-accept rate x do time < do time, per task, per "
     "difficulty, per person; correct-only versions secondary"),
    ("RQ1: correct answers per hour", "doing vs delegating (Ipeirotis & Zheng 2025)"),
    ("RQ2 / H2: errors that get through",
     "false-accept and false-reject rates with the spec's binomial interval; by subtlety and "
     "error type with counts; logistic model of accepting a wrong answer; outcomes per 100 "
     "delegated tasks at 5, 10 and 20 % real-world error rates"),
    ("H3: false accepts faster than correct rejects",
     "medians raw and relative to each person's median do time, per person; a log-time "
     "regression test with person and difficulty effects"),
    ("Premature closures", "wrong verdicts at confidence >= tau, count and rates"),
    ("Flags", "possible guesses and inactivity gaps; headline results with and without them"),
    ("Session trend", "per-session summaries and a trend factor per session"),
    ("VCE classification", "three-state rule on the larger-verdict subset, with its envelope"),
    ("RQ3 / RQ4", "per model (descriptive); human vs AI-checker misses"),
)  # fmt: skip

DECLARED_CHOICES: tuple[tuple[str, str], ...] = (
    ("Survival model", "a fixed-effects (person dummies) log-normal AFT fitted by maximum "
     "likelihood, not a mixed-effects survival model: no Python library fits frailty survival "
     "models, and with 3-4 people person effects are better fixed (seed 003's small-N design); "
     "above 60 people the person term is dropped and people are resampled"),
    ("Ratio intervals", "cluster bootstrap over tasks (people fixed: claims are about the "
     "panel), standard error with the few-cluster correction t(G-1) x sqrt(G/(G-1)); per person "
     "and difficulty G is the tasks in that cell"),
    ("Break-even and correct answers per hour", "the same task bootstrap and correction, for "
     "correct answers per hour on the log scale (delta method: a rate cannot be negative); no "
     "interval per task (a handful of attempts each)"),
    ("Proportions", "the spec's binomial interval (Clopper-Pearson by default) treating checks "
     "as independent; per-100 cells are a proportion's interval times a fixed count"),
    ("Medians", "distribution-free order-statistic interval (exact coverage >= 95 %)"),
    ("H3 test", "least squares of log check time on a false-accept indicator with person and "
     "difficulty fixed effects, model-based standard errors, t(N-K)"),
    ("Acceptance model", "logistic regression of accepting a wrong answer with "
     "participant-clustered (sandwich) standard errors, not a mixed-effects logit (no reliable "
     "Laplace GLMM in Python)"),
    ("Pattern counts", "'clear of the null' means the person's interval excludes 1 (ratio) or "
     "0 (saving), or the hard and easy intervals do not overlap"),
)  # fmt: skip

LIMITATIONS: tuple[str, ...] = (
    "Results describe the observed panel of people and these tasks only, not programmers in "
    "general (seed 003; Crescitelli et al. 2026, Sec. 6: statements about the observed verifier "
    "panel).",
    "With 3-4 people each answer gets one human verdict: no answer-level VCE decision, and "
    "error rates pool across answers.",
    "Half of the answers are wrong; people may check differently when errors are rarer, so the "
    "per-100 illustration assumes the measured rates carry over.",
    "Timeouts make both times lower bounds; the censored model assumes log-normal times.",
    "Planted errors may be easier or harder to spot than natural ones (see the realism check).",
    "Intervals are conditional on the panel: people are not resampled unless the panel is a "
    "crowd.",
)  # fmt: skip


def analysis_plan_markdown() -> list[str]:
    """The plan as Markdown lines: the analyses, then vcost's declared choices."""
    out = ["Pre-registered analyses (seed 003) and the estimator vcost uses for each:", ""]
    out += [f"- **{name}:** {how}." for name, how in ANALYSES]
    out += ["", "Estimator choices made by vcost, not by the study design (declared here):", ""]
    out += [f"- **{name}:** {how}." for name, how in DECLARED_CHOICES]
    return out
