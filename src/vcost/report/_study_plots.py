"""The study report's plots: matplotlib's object API on an Agg canvas, saved as SVG text with
fixed ids and no date, so a report is byte-stable for the same numbers.

Survival curves do vs check (Kaplan-Meier, censored at the budget/cap), the per-person ratio
forest plot, break-even per task, false accepts by subtlety, the outcome decomposition and the
VCE classification envelope. With a ``label`` (synthetic data) every plot carries it in red
across its top, so a plot copied out of the report still says what it shows. :data:`CAPTIONS`
tells the reader what to see in each plot.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import matplotlib as mpl
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from vcost.analysis.study import StudyAnalysis

__all__ = ["CAPTIONS", "FOREST_MAX_PEOPLE", "PLOTS", "label_marker", "study_plots", "svg_text"]

PLOTS = ("survival", "person_forest", "break_even", "false_accepts", "outcomes", "vce_envelope")
FOREST_MAX_PEOPLE = 40
"""More people than this: the forest plot becomes a caterpillar plot (sorted, unlabelled)."""

CAPTIONS = {
    "survival": "Share of attempts not yet finished against time, doing (blue) and checking "
    "(orange); timed-out attempts are censored (the curve stops falling at the limit). The "
    "further left the orange curve lies, the faster checking is than doing.",
    "person_forest": "Each person's verification ratio with its 95% interval (log scale). "
    "Left of the dashed line at 1, checking was faster than doing for that person.",
    "break_even": "Time saved per task by delegating (do time minus check time minus the redo "
    "of every check not ending in an accept). Green bars save time, red bars cost time. Point "
    "values: a task has too few attempts for an interval.",
    "false_accepts": "Share of wrong answers accepted, by how subtle the error was, with 95% "
    "Clopper-Pearson intervals and the number of checks.",
    "outcomes": "How checks ended, split by whether the answer was correct or wrong: correct "
    "verdict, wrong verdict, budget ran out, declared unverifiable.",
    "vce_envelope": "Verification-Cost Error classification of the wrong answers in the larger-"
    "verdict subset: confirmed, inconclusive and not, with the envelope bracket. With few "
    "verdicts per answer everything is inconclusive.",
}

Marker = Callable[[Figure], Figure]


def label_marker(label: str | None) -> Marker:
    """A function adding ``label`` in red across a figure's top (identity without one)."""

    def add(fig: Figure) -> Figure:
        if label:
            fig.text(0.5, 1.0, label.split(":")[0].split(".")[0], ha="center", va="bottom",
                     color="#b00", fontsize=8, fontweight="bold")  # fmt: skip
        return fig

    return add


def svg_text(fig: Figure) -> str:
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


def study_plots(a: StudyAnalysis, *, label: str | None = None) -> dict[str, str]:
    """The report's plots as inline SVG text, by name (a plot without data is left out)."""
    mark = label_marker(label)
    unit = str(a.meta.get("cost_unit", ""))
    out: dict[str, str] = {}
    att = a.attempts
    fig = Figure(figsize=(5.5, 3.2))
    ax = fig.add_subplot()
    for block, colour in (("do", "tab:blue"), ("check", "tab:orange")):
        sub = att[att["block"] == block]
        if len(sub):
            x, y = _km(sub["effort"].to_numpy(float), ~sub["censored"].to_numpy(bool))
            ax.step(x, y, where="post", color=colour, label=f"{block} (n={len(sub):,})")
    if ax.lines:
        ax.set_xlabel(f"time ({unit})")
        ax.set_ylabel("share not yet finished")
        ax.set_title("Survival curves: do vs check (timeouts censored)")
        ax.legend()
        out["survival"] = svg_text(mark(fig))

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
            ax.set_ylabel(f"{len(people):,} people, sorted by ratio")
        else:
            ax.errorbar(ratio, yy, xerr=[lo, hi], fmt="o", color="tab:blue")
            ax.set_yticks(yy, [str(v) for v in people["verifier_id"]])
        ax.axvline(1.0, color="grey", linestyle="--")
        ax.set_xscale("log")
        ax.set_xlabel("verification ratio (check / do), 95% task-resampling interval")
        ax.set_title("Per-person verification ratio")
        out["person_forest"] = svg_text(mark(fig))

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
        out["break_even"] = svg_text(mark(fig))

    sub = a.by_subtlety
    if len(sub):
        fig = Figure(figsize=(4.5, 3.0))
        ax = fig.add_subplot()
        x = np.arange(len(sub))
        rate = sub["rate"].to_numpy(float)
        ax.bar(x, rate, color="tab:red", alpha=0.7)
        lower, upper = sub["lower"].to_numpy(float), sub["upper"].to_numpy(float)
        ax.errorbar(x, rate, yerr=[rate - lower, upper - rate], fmt="none", color="black")
        ax.set_xticks(x, [f"{lvl}\n(n={n:,})" for lvl, n in zip(sub["error_level"], sub["checks"],
                                                               strict=True)])  # fmt: skip
        ax.set_ylim(0, 1)
        ax.set_ylabel("false-accept rate")
        ax.set_title("False accepts by subtlety")
        out["false_accepts"] = svg_text(mark(fig))

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
        out["outcomes"] = svg_text(mark(fig))

    envelope = _envelope_plot(a, mark)
    if envelope is not None:
        out["vce_envelope"] = envelope
    return out


def _envelope_plot(a: StudyAnalysis, mark: Marker) -> str | None:
    """Confirmed / inconclusive / not shares per group, the envelope as a bracket."""
    v = a.vce
    if v is None or v.groups.empty:
        return None
    g = v.groups.iloc[::-1].reset_index(drop=True)  # "all" on top
    labels = [
        f"{'all' if str(group) == 'all' else str(value)} (n={int(n):,})"
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
    return svg_text(mark(fig))
