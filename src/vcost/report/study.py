"""The study report: a self-contained HTML file (plots inline as SVG), Markdown and JSON.

:func:`render_study` writes ``report.html``, ``report.md`` and ``numbers.json`` for a
:class:`vcost.analysis.StudyAnalysis`. Every number shown is in ``numbers.json`` and comes from
``analyse_study`` (one call). Plots use matplotlib's object API on an Agg canvas, saved as SVG
text with fixed ids and no date: survival curves do vs check (Kaplan-Meier, censored at the
budget/cap), the per-person ratio forest plot, break-even per task, false accepts by subtlety,
the outcome decomposition and the VCE classification envelope (overall, per model, per source).
Sections: RQ1-RQ2, H3, the VCE classification, success within budget per budget arm, the
secondary descriptors, RQ3 per model, RQ4 human vs AI-checker misses, realism (and, when the
one-point rule fires, RQ2 split planted / natural) and the model configurations, which also head
the report with the spec hash, deviations, date and vcost version. The HTML loads nothing from
the network.
"""

from __future__ import annotations

import html
import io
import json
from pathlib import Path
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from vcost.analysis.study import StudyAnalysis

__all__ = [
    "FOREST_MAX_PEOPLE",
    "PLOTS",
    "TABLE_MAX_ROWS",
    "render_study",
    "study_markdown",
    "study_plots",
]

PLOTS = ("survival", "person_forest", "break_even", "false_accepts", "outcomes", "vce_envelope")
FOREST_MAX_PEOPLE = 40
"""More people than this: the forest plot becomes a caterpillar plot (sorted, unlabelled)."""
TABLE_MAX_ROWS = 200
"""Longer tables are cut to this many rows in HTML and Markdown (all rows are in numbers.json)."""


def _svg(fig: Figure) -> str:
    FigureCanvasAgg(fig)
    buf = io.StringIO()
    with mpl.rc_context({"svg.hashsalt": "vcost-report", "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg") :]


def _km(times: np.ndarray, events: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kaplan-Meier step function (times, survival) with right-censoring."""
    order = np.argsort(times, kind="stable")
    t, e = times[order], events[order]
    at_risk = len(t)
    xs, ys, s = [0.0], [1.0], 1.0
    for value in np.unique(t):
        here = t == value
        deaths = int(e[here].sum())
        if deaths:
            s *= 1.0 - deaths / at_risk
            xs.append(float(value))
            ys.append(s)
        at_risk -= int(here.sum())
    return np.asarray(xs), np.asarray(ys)


def study_plots(a: StudyAnalysis) -> dict[str, str]:
    """The report's plots as inline SVG text, by name (a plot without data is left out)."""
    unit = str(a.meta.get("cost_unit", ""))
    out: dict[str, str] = {}
    att = a.attempts
    fig = Figure(figsize=(5.5, 3.2))
    ax = fig.add_subplot()
    for block, colour in (("do", "tab:blue"), ("check", "tab:orange")):
        sub = att[att["block"] == block]
        if len(sub):
            x, y = _km(sub["effort"].to_numpy(float), ~sub["censored"].to_numpy(bool))
            ax.step(x, y, where="post", color=colour, label=f"{block} (n={len(sub)})")
    if ax.lines:
        ax.set_xlabel(f"time ({unit})")
        ax.set_ylabel("share not yet finished")
        ax.set_title("Survival curves: do vs check (timeouts censored)")
        ax.legend()
        out["survival"] = _svg(fig)

    people = a.people[a.people["difficulty"] == "all"].dropna(subset=["ratio"])
    if len(people):
        crowd = len(people) > FOREST_MAX_PEOPLE
        if crowd:  # a caterpillar plot: people sorted by ratio, no names
            people = people.sort_values("ratio")
        fig = Figure(figsize=(5.5, 6.0 if crowd else 0.5 + 0.4 * len(people)))
        ax = fig.add_subplot()
        yy = np.arange(len(people))
        ratio = people["ratio"].to_numpy(float)
        lo = np.nan_to_num(ratio - people["lower"].to_numpy(float))
        hi = np.nan_to_num(people["upper"].to_numpy(float) - ratio)
        if crowd:
            ax.errorbar(ratio, yy, xerr=[lo, hi], fmt=".", color="tab:blue", markersize=2,
                        elinewidth=0.3)  # fmt: skip
            ax.set_yticks([])
            ax.set_ylabel(f"{len(people)} people, sorted by ratio")
        else:
            ax.errorbar(ratio, yy, xerr=[lo, hi], fmt="o", color="tab:blue")
            ax.set_yticks(yy, [str(v) for v in people["verifier_id"]])
        ax.axvline(1.0, color="grey", linestyle="--")
        ax.set_xscale("log")
        ax.set_xlabel("verification ratio (check / do), 95% task-resampling interval")
        ax.set_title("Per-person verification ratio")
        out["person_forest"] = _svg(fig)

    be = a.break_even.dropna(subset=["saving"])
    if len(be):
        fig = Figure(figsize=(6.5, 3.2))
        ax = fig.add_subplot()
        colours = ["tab:green" if s > 0 else "tab:red" for s in be["saving"]]
        ax.bar(range(len(be)), be["saving"], color=colours)
        ax.set_xticks(range(len(be)), [str(t) for t in be["task_id"]], rotation=90, fontsize=6)
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_ylabel(f"time saved by delegating ({unit})")
        ax.set_title("Break-even per task (green: delegation saves time)")
        out["break_even"] = _svg(fig)

    sub = a.by_subtlety
    if len(sub):
        fig = Figure(figsize=(4.5, 3.0))
        ax = fig.add_subplot()
        x = np.arange(len(sub))
        rate = sub["rate"].to_numpy(float)
        ax.bar(x, rate, color="tab:red", alpha=0.7)
        lower, upper = sub["lower"].to_numpy(float), sub["upper"].to_numpy(float)
        ax.errorbar(x, rate, yerr=[rate - lower, upper - rate], fmt="none", color="black")
        ax.set_xticks(x, [f"{lvl}\n(n={n})" for lvl, n in zip(sub["error_level"], sub["checks"],
                                                               strict=True)])  # fmt: skip
        ax.set_ylim(0, 1)
        ax.set_ylabel("false-accept rate")
        ax.set_title("False accepts by subtlety")
        out["false_accepts"] = _svg(fig)

    dec = a.decomposition
    if len(dec):
        fig = Figure(figsize=(5.0, 2.8))
        ax = fig.add_subplot()
        left = np.zeros(len(dec))
        cols = ["correct_verdict", "wrong_verdict", "budget_exhausted", "unverifiable"]
        for col, colour in zip(cols, ("tab:green", "tab:red", "tab:grey", "tab:purple"),
                               strict=True):  # fmt: skip
            share = dec[col].to_numpy(float) / np.maximum(dec["checks"].to_numpy(float), 1)
            ax.barh(range(len(dec)), share, left=left, color=colour, label=col)
            left += share
        ax.set_yticks(range(len(dec)), [f"{g} answers" for g in dec["ground_truth"]])
        ax.set_xlim(0, 1)
        ax.legend(fontsize=7, loc="lower right")
        ax.set_title("Outcome decomposition of checks")
        out["outcomes"] = _svg(fig)

    envelope = _envelope_plot(a)
    if envelope is not None:
        out["vce_envelope"] = envelope
    return out


def _envelope_plot(a: StudyAnalysis) -> str | None:
    """Confirmed / inconclusive / not shares per group, the envelope as a bracket."""
    v = a.vce
    if v is None or v.groups.empty:
        return None
    g = v.groups.iloc[::-1].reset_index(drop=True)  # "all" on top
    labels = [
        f"{'all' if str(group) == 'all' else str(value)} (n={int(n)})"
        for group, value, n in zip(g["group"], g["value"], g["outputs"], strict=True)
    ]
    fig = Figure(figsize=(5.5, 0.9 + 0.35 * len(g)))
    ax = fig.add_subplot()
    y = np.arange(len(g))
    n = np.maximum(g["outputs"].to_numpy(float), 1)
    left = np.zeros(len(g))
    for col, colour, name in (("confirmed", "tab:red", "confirmed"),
                              ("inconclusive", "tab:orange", "inconclusive"),
                              ("not_vce", "tab:green", "not")):  # fmt: skip
        share = g[col].to_numpy(float) / n
        ax.barh(y, share, left=left, color=colour, alpha=0.6, label=name)
        left += share
    low, high = g["envelope_lower"].to_numpy(float), g["envelope_upper"].to_numpy(float)
    ax.errorbar((low + high) / 2, y, xerr=(high - low) / 2, fmt="none", color="black",
                capsize=4, label="envelope")  # fmt: skip
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of wrong answers in the subset")
    title = "VCE classification envelope (larger-verdict subset)"
    if not v.resolvable:
        title += f"\nat most {int(v.answers['verdicts'].max())} verdict(s) per answer: nothing "
        title += "can be decided"
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=4, frameon=False)
    return _svg(fig)


def _fmt(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, float | np.floating):
        return "" if not np.isfinite(value) else f"{value:.3g}"
    return str(value)


def _cut(frame: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """At most TABLE_MAX_ROWS rows, and a note when rows were left out."""
    if len(frame) <= TABLE_MAX_ROWS:
        return frame, ""
    return frame.head(TABLE_MAX_ROWS), (
        f"first {TABLE_MAX_ROWS} of {len(frame)} rows; every row is in numbers.json"
    )


def _md_table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "_(none)_\n"
    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "---|" * len(frame.columns)
    rows = ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *rows]) + "\n"


def _est(e: Any) -> str:
    return f"{_fmt(e.value)} [{_fmt(e.lower)}, {_fmt(e.upper)}] (n={e.n})"


def _sections(a: StudyAnalysis) -> list[tuple[str, str, pd.DataFrame | None]]:
    """(title, text, table) of each report section, shared by Markdown and HTML."""
    r = a.ratio
    ratio_text = "No verification ratio (see notes)."
    ratio_table = None
    if r is not None:
        ratio_text = (
            f"Overall verification ratio (censored log-normal AFT, geometric mean over difficulty "
            f"labels): {_est(r.overall)}; 95% interval from the cluster bootstrap over "
            f"{r.resample} ({r.replicates} replicates; standard error with a few-cluster "
            f"correction). {r.censored} of {r.attempts} attempts "
            f"timed out (censored). Weibull AFT sensitivity: {_fmt(r.weibull_overall)}."
        )
        ratio_table = pd.DataFrame(
            [{"difficulty": d, "ratio": e.value, "lower": e.lower, "upper": e.upper,
              "wald_lower": r.wald_by_difficulty[d].lower,
              "wald_upper": r.wald_by_difficulty[d].upper,
              "weibull": r.weibull_by_difficulty.get(d, float("nan")), "attempts": e.n}
             for d, e in r.by_difficulty.items()]
        )  # fmt: skip
    rates = a.error_rates
    ph = a.per_hour
    return [
        ("RQ1 / H1: verification ratio", ratio_text, ratio_table),
        ("Timeout share", "Attempts stopped by the budget (check) or cap (do).", a.timeouts),
        (
            "Raw medians of finished attempts (secondary)",
            "They leave out timed-out attempts, so they understate both times.",
            a.medians,
        ),
        *_mixed_sections(a),
        ("Per-person ratios", "Intervals from resampling each person's tasks.", a.people),
        ("Per-task ratios", "Adjusted for who did the task; Wald interval, pooled scale.", a.tasks),
        (
            "Break-even per task",
            "Delegation saves time only if check time + non-accept rate x do time < do time "
            "(mean efforts, timeouts at their limit). Correct answers per hour: doing "
            f"{_fmt(ph.set_index('mode').loc['doing', 'value'])}, delegating "
            f"{_fmt(ph.set_index('mode').loc['delegating', 'value'])} (at the study's mix).",
            a.break_even,
        ),
        (
            "RQ2 / H2: errors that get through",
            f"False-accept rate {_est(rates['false_accept'])}; false-reject rate "
            f"{_est(rates['false_reject'])}. By subtlety:",
            a.by_subtlety,
        ),
        ("False accepts by error type", "Descriptive, with counts.", a.by_error_type),
        *_acceptance_sections(a),
        (
            "Outcomes per 100 delegated tasks",
            "At assumed real-world error rates, using the measured rates for wrong and correct "
            "answers (people may check differently when errors are rarer).",
            a.per_100,
        ),
        (
            "H3: false accepts vs correct rejects",
            "Median times, raw and relative to each person's own median do time.",
            a.h3,
        ),
        (
            "Outcome decomposition",
            "Premature closures (wrong verdicts at top confidence): "
            f"{a.premature_closures['count']}. "
            f"Time to correct verdict (conditional on a correct verdict): median "
            f"{_fmt(a.time_to_correct['median'])}, n={int(a.time_to_correct['n'])}.",
            a.decomposition,
        ),
        (
            "Flags and headline results with and without flagged attempts",
            f"Possible guesses: {a.flags['possible_guesses']}; inactivity gaps: "
            f"{a.flags['inactivity_gaps']}. Nobody is excluded.",
            a.headline,
        ),
        *_trend_sections(a),
        *_vce_sections(a),
        *_arm_sections(a),
        *_model_sections(a),
        *_realism_sections(a),
        (
            "Model configurations",
            "The generation-side configuration of every model whose answers or verdicts were "
            "analysed (prompt hash: SHA-256 of the prompt version and system prompt).",
            pd.DataFrame(a.meta.get("model_configurations", [])),
        ),
    ]


def _ci(value: Any, lower: Any, upper: Any) -> str:
    """``0.19 [0.13, 0.27]`` (empty when undefined)."""
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return ""
    text = _fmt(value)
    if lower is None or (isinstance(lower, float) and not np.isfinite(lower)):
        return text
    return f"{text} [{_fmt(lower)}, {_fmt(upper)}]"


Section = tuple[str, str, pd.DataFrame | None]


def _mixed_sections(a: StudyAnalysis) -> list[Section]:
    m = a.mixed
    title = "RQ1 robustness: mixed model of log time"
    if m is None:
        return []
    text = (
        f"{m.method}. Overall ratio {_est(m.overall)}; {m.attempts} finished attempts by "
        f"{m.people} people on {m.tasks} tasks ({m.excluded_timeouts} timed-out attempts left "
        f"out, so this is a check on the censored estimate above, not a replacement). SDs: "
        f"participant {_fmt(m.participant_sd)}, task {_fmt(m.task_sd)}, residual "
        f"{_fmt(m.residual_sd)} (log scale)."
    )
    rows = [{"difficulty": d, "ratio": e.value, "lower": e.lower, "upper": e.upper}
            for d, e in m.by_difficulty.items()]  # fmt: skip
    table = pd.DataFrame(rows)
    return [(title, text, table)]


def _acceptance_sections(a: StudyAnalysis) -> list[Section]:
    m = a.acceptance
    if m is None:
        return []
    excluded = ", ".join(f"{k} {v}" for k, v in m.excluded.items() if v) or "none"
    text = (
        f"{m.method}. {m.rows} checks of wrong answers by {m.people} people (left out: "
        f"{excluded}). Odds ratios: "
        + ("; ".join(f"{k} {_est(e)}" for k, e in m.odds_ratios.items()) or "none estimable")
        + ". Predicted false-accept probability by subtlety:"
    )
    rows = [{"error_level": k, "p_accept": e.value, "lower": e.lower, "upper": e.upper, "n": e.n}
            for k, e in m.predicted.items()]  # fmt: skip
    table = pd.DataFrame(rows)
    return [("RQ2: model of accepting a wrong answer", text, table)]


def _trend_sections(a: StudyAnalysis) -> list[Section]:
    t = a.trend
    if t is None:
        return []
    text = (
        "Each person's first, second, ... session. Trend factor per session (finished attempts; "
        "log effort on session number with person and difficulty fixed effects, "
        f"participant-clustered interval): do {_est(t.factor['do'])}, check "
        f"{_est(t.factor['check'])}; below 1 means faster in later sessions."
    )
    return [("Session trend", text, t.by_session)]


def _vce_sections(a: StudyAnalysis) -> list[Section]:
    v = a.vce
    title = "VCE classification (larger-verdict subset)"
    if v is None or v.answers.empty:
        return [(title, "No wrong answer has a human check: no classification.", None)]
    e, mi, need = v.envelope, v.misses, v.min_verifiers
    text = (
        f"Subset: {v.subset_rule}. Three-state rule: q = {v.q:g}, two-sided "
        f"{1 - v.alpha:.0%} {v.method} intervals on each answer's share of misses (decidable "
        f"from {need.confirm} verdicts per answer). Of {e.outputs} wrong answers: {e.confirmed} "
        f"confirmed, {e.not_vce} not, {e.inconclusive} inconclusive; envelope "
        f"[{_fmt(e.lower)}, {_fmt(e.upper)}] (descriptive, not a confidence interval). Misses: "
        f"{mi['failures']} of {mi['checks']} checks: {mi['false_accepts']} false accepts, "
        f"{mi['timeouts']} timeouts, {mi['unverifiable']} unverifiable."
    )
    if not v.resolvable:
        text += " With this few verdicts per answer nothing can be decided."
    return [
        (title, text, v.groups),
        ("VCE classification per answer", "Misses split into their three kinds.", v.answers),
    ]


def _arm_sections(a: StudyAnalysis) -> list[Section]:
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
             "success": [_ci(*r) for r in arms[["success", "success_lower",
                                                "success_upper"]].itertuples(index=False)],
             "wrong verdict": arms["wrong_verdict"], "budget ran out": arms["budget_exhausted"],
             "unverifiable": arms["unverifiable"],
             "observed budget consumption": [
                 _ci(*r) for r in arms[["observed_budget_consumption", "obc_lower",
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


def _model_sections(a: StudyAnalysis) -> list[Section]:
    pm = a.per_model
    shown = None
    if len(pm):
        shown = pd.DataFrame(
            {"model": pm["model_id"], "answers": pm["answers"], "wrong": pm["wrong_answers"],
             "natural": pm["natural_errors"], "planted": pm["planted_errors"],
             "checks of wrong": pm["wrong_checks"],
             "false-accept rate": [_ci(*r) for r in pm[["false_accept_rate",
                 "false_accept_lower", "false_accept_upper"]].itertuples(index=False)],
             "on natural errors": [_ci(*r) for r in pm[["natural_false_accept_rate",
                 "natural_false_accept_lower", "natural_false_accept_upper"]].itertuples(
                 index=False)],
             "success within budget": [_ci(*r) for r in pm[["success", "success_lower",
                 "success_upper"]].itertuples(index=False)],
             "time to correct verdict (conditional mean)": [_ci(*r) for r in pm[[
                 "correct_verdict_time_conditional_mean", "correct_verdict_time_lower",
                 "correct_verdict_time_upper"]].itertuples(index=False)],
             "natural error rate (generation)": [_ci(*r) for r in pm[["natural_error_rate",
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
                f"miss). {len(m.answers)} answers compared, {m.not_comparable} lack a human or "
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


def _realism_sections(a: StudyAnalysis) -> list[Section]:
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
        None: "The rule needs ratings of both planted and natural errors.",
    }[r.separate]
    text = (
        f"How likely is it that an AI wrote this exact answer (1-5)? Natural - planted: "
        f"{_ci(d['value'], d['lower'], d['upper'])} (Welch t interval; ratings repeat answers "
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


def _config_line(c: dict[str, Any]) -> str:
    if c.get("source") == "not given":
        return f"model {c['name']} ({c['role']}): configuration not given"

    def value(key: str) -> str:
        return "-" if c.get(key) is None else str(c[key])

    parts = [f"{value('provider')} {value('model')}"]
    if c.get("snapshot"):
        parts.append(f"snapshot {c['snapshot']}")
    parts.append(
        f"temperature {value('temperature')}, max_tokens {value('max_tokens')}, "
        f"seed {value('seed')}"
    )
    if c.get("prompt_version") is None:
        parts.append("prompt version not recorded")
    else:
        parts.append(f"prompt {c['prompt_version']} (hash {value('prompt_hash')})")
    return f"model {c['name']} ({c['role']}): " + "; ".join(parts) + f" [{c.get('source')}]"


def _spec_line(m: dict[str, Any]) -> str:
    s = m.get("study") or {}
    if not s:
        return "spec: none given (defaults: 95% Clopper-Pearson, tau = 1)"
    return f"spec: {s['name']}, version {s['version']}; {s['hash_kind']} {s['hash']}"


def _meta_lines(a: StudyAnalysis) -> list[str]:
    m = a.meta
    dev = "; ".join(f"{d['field']}: {d['old']} -> {d['new']}" for d in m["deviations"]) or "none"
    return [
        _spec_line(m),
        f"deviations: {dev}",
        f"date: {m['date']}; vcost {m['vcost_version']}; cost unit {m['cost_unit']}",
        f"models: {', '.join(m['models'])}",
        *(_config_line(c) for c in m.get("model_configurations", [])),
    ]


def study_markdown(a: StudyAnalysis, *, label: str | None = None) -> str:
    """The report as Markdown (tables, no plots); ``label`` is a banner (e.g. SYNTHETIC)."""
    title = "Study analysis" + (" (PILOT)" if a.pilot else "")
    parts = [f"# {title}\n", *([f"**{label}**\n"] if label else []),
             *(f"- {line}" for line in _meta_lines(a)), ""]  # fmt: skip
    if a.notes:
        parts += ["## Notes\n", *(f"- {n}" for n in a.notes), ""]
    for name, text, table in _sections(a):
        parts += [f"## {name}\n", text + "\n"]
        if table is not None:
            shown, cut = _cut(table)
            parts.append(_md_table(shown) + (f"\n_({cut})_\n" if cut else ""))
    return "\n".join(parts)


def _html_table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "<p><em>(none)</em></p>"
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    return f'<div class="wide">{table}</div>'


_CSS = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0 1.5rem}
td,th{border:1px solid #ccc;padding:.2rem .4rem;text-align:right}
.pilot{background:#fee;border:1px solid #c00;padding:.5rem}
figure{margin:1rem 0}svg{max-width:100%;height:auto}.wide{overflow-x:auto}"""

_PLOT_AT = {
    "RQ1 / H1: verification ratio": ("survival",),
    "Per-person ratios": ("person_forest",),
    "Break-even per task": ("break_even",),
    "RQ2 / H2: errors that get through": ("false_accepts",),
    "Outcome decomposition": ("outcomes",),
    "VCE classification (larger-verdict subset)": ("vce_envelope",),
}


def study_html(
    a: StudyAnalysis, plots: dict[str, str] | None = None, *, label: str | None = None
) -> str:
    """The report as one self-contained HTML page (plots inline as SVG)."""
    svgs = study_plots(a) if plots is None else plots
    title = "Study analysis" + (" (PILOT)" if a.pilot else "")
    body = [f"<h1>{html.escape(title)}</h1>"]
    if label:
        body.append(f'<p class="pilot" data-label>{html.escape(label)}</p>')
    body.append("<ul>")
    body += [f"<li>{html.escape(line)}</li>" for line in _meta_lines(a)] + ["</ul>"]
    if a.pilot:
        body.append('<p class="pilot">Fewer than 3 people: the human part is a pilot.</p>')
    if a.notes:
        body += ["<h2>Notes</h2><ul>", *(f"<li>{html.escape(n)}</li>" for n in a.notes), "</ul>"]
    for name, text, table in _sections(a):
        body += [f"<h2>{html.escape(name)}</h2>", f"<p>{html.escape(text)}</p>"]
        for plot in _PLOT_AT.get(name, ()):
            if plot in svgs:
                body.append(f'<figure data-plot="{plot}">{svgs[plot]}</figure>')
        if table is not None:
            shown, cut = _cut(table)
            body.append(_html_table(shown))
            if cut:
                body.append(f"<p><em>({html.escape(cut)})</em></p>")
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )


def render_study(
    a: StudyAnalysis, out_dir: str | Path, *, label: str | None = None
) -> dict[str, Path]:
    """Write report.html, report.md and numbers.json into ``out_dir``; return their paths.

    ``label`` (e.g. "SYNTHETIC ...") is shown as a banner and stored in numbers.json.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"html": out / "report.html", "markdown": out / "report.md",
             "json": out / "numbers.json"}  # fmt: skip
    paths["html"].write_text(study_html(a, label=label), encoding="utf-8")
    paths["markdown"].write_text(study_markdown(a, label=label), encoding="utf-8")
    numbers = a.to_dict()
    if label:
        numbers["label"] = label
    paths["json"].write_text(json.dumps(numbers, indent=2), encoding="utf-8")
    return paths
