"""The study report: a self-contained HTML file (plots inline as SVG), Markdown and JSON.

:func:`render_study` writes ``report.html``, ``report.md`` and ``numbers.json`` for a
:class:`vcost.analysis.StudyAnalysis`. Every number shown is in ``numbers.json`` and comes from
``analyse_study`` (one call). Plots use matplotlib's object API on an Agg canvas, saved as SVG
text with fixed ids and no date: survival curves do vs check (Kaplan-Meier, censored at the
budget/cap), the per-person ratio forest plot, break-even per task, false accepts by subtlety,
and the outcome decomposition. The HTML loads nothing from the network.
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

PLOTS = ("survival", "person_forest", "break_even", "false_accepts", "outcomes")
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
        ax.errorbar(x, rate, yerr=[rate - sub["lower"], sub["upper"] - rate], fmt="none",
                    color="black")  # fmt: skip
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
    return out


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
            f"labels): {_est(r.overall)}; 95% interval from the two-way cluster bootstrap over "
            f"{r.resample} ({r.replicates} replicates). {r.censored} of {r.attempts} attempts "
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
        ("Per-person ratios", "Intervals from resampling each person's tasks.", a.people),
        ("Per-task ratios", "Adjusted for who did the task; Wald interval, pooled scale.", a.tasks),
        (
            "Break-even per task",
            "Delegation saves time only if check time + non-accept rate x do time < do time "
            "(mean efforts, timeouts at their limit). Correct answers per hour: doing "
            f"{_fmt(ph['doing'])}, delegating {_fmt(ph['delegating'])} (at the study's mix).",
            a.break_even,
        ),
        (
            "RQ2 / H2: errors that get through",
            f"False-accept rate {_est(rates['false_accept'])}; false-reject rate "
            f"{_est(rates['false_reject'])}. By subtlety:",
            a.by_subtlety,
        ),
        ("False accepts by error type", "Descriptive, with counts.", a.by_error_type),
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
            f"Premature closures (wrong verdicts at top confidence): {a.premature_closures}. "
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
    ]


def _meta_lines(a: StudyAnalysis) -> list[str]:
    m = a.meta
    dev = "; ".join(f"{d['field']}: {d['old']} -> {d['new']}" for d in m["deviations"]) or "none"
    return [
        f"spec: {m['spec_name']} (hash {m['spec_hash']})",
        f"deviations: {dev}",
        f"date: {m['date']}; vcost {m['vcost_version']}; cost unit {m['cost_unit']}",
        f"models: {', '.join(m['models'])}",
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
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


_CSS = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0 1.5rem}
td,th{border:1px solid #ccc;padding:.2rem .4rem;text-align:right}
.pilot{background:#fee;border:1px solid #c00;padding:.5rem}
figure{margin:1rem 0}svg{max-width:100%;height:auto}"""

_PLOT_AT = {
    "RQ1 / H1: verification ratio": ("survival",),
    "Per-person ratios": ("person_forest",),
    "Break-even per task": ("break_even",),
    "RQ2 / H2: errors that get through": ("false_accepts",),
    "Outcome decomposition": ("outcomes",),
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
