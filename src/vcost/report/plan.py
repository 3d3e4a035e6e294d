"""The study-planning report: one SVG figure, Markdown and JSON (:func:`render_plan`).

The figure (matplotlib object API on an Agg canvas, SVG with fixed ids and no date) has four
panels over the designs of the grid: the expected 95 % interval width of the verification ratio
and of the false-accept rate (dashed: the targets), the expected share of inconclusive VCE
classifications, and the chance of detecting H1-H3 at the assumed effect sizes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from vcost.analysis.plan import PlanResult
from vcost.report._page import md_table
from vcost.report._study_format import fmt
from vcost.report._study_plots import svg_text

__all__ = ["plan_markdown", "plan_svg", "render_plan"]

_POWER = (("power_h1_below_one", "H1 ratio < 1"), ("power_h1_rises", "H1 rises w/ difficulty"),
          ("power_h2", "H2 subtle > obvious"), ("power_h3", "H3 FA faster than CR"))  # fmt: skip


def plan_svg(plan: PlanResult) -> str:
    """The planning figure as SVG text."""
    s = plan.summary
    t = plan.targets
    x = np.arange(len(s))
    labels = [str(d) for d in s["design"]]
    fig = Figure(figsize=(10.0, 7.0))
    axes = fig.subplots(2, 2, sharex=True)
    panels = (
        (axes[0, 0], "ratio_width", "Verification ratio: 95% interval width", t.ratio_width),
        (axes[0, 1], "fa_width", "False-accept rate: 95% interval width", t.fa_width),
        (axes[1, 0], "inconclusive_share", "Share of inconclusive VCE classifications",
         t.inconclusive_share),
    )  # fmt: skip
    for ax, col, title, target in panels:
        ax.bar(x, s[col].to_numpy(float), color="tab:blue", alpha=0.75)
        if target is not None:
            ax.axhline(target, color="tab:red", linestyle="--", label=f"target {target:g}")
            ax.legend(fontsize=7)
        ax.set_title(title, fontsize=9)
    axes[1, 0].set_ylim(0, 1)
    ax = axes[1, 1]
    width = 0.8 / len(_POWER)
    for i, (col, name) in enumerate(_POWER):
        ax.bar(x + (i - 1.5) * width, s[col].to_numpy(float), width=width, label=name)
    if t.power is not None:
        ax.axhline(t.power, color="tab:red", linestyle="--")
    ax.set_ylim(0, 1)
    ax.set_title("Chance of detecting H1-H3 (assumed effects)", fontsize=9)
    ax.legend(fontsize=6, loc="upper left")
    for ax in axes[1]:
        ax.set_xticks(x, labels, rotation=60, ha="right", fontsize=7)
    fig.suptitle(f"Study planning: {plan.settings['sims']} simulated studies per design "
                 "(SYNTHETIC)", fontsize=10)  # fmt: skip
    return svg_text(fig)


def plan_markdown(plan: PlanResult) -> str:
    """The plan as Markdown: settings, targets, the summary table and the recommendation."""
    best = plan.recommend()
    cols = ["design", "attempts", "sims", "ratio_width", "fa_width", "inconclusive_share",
            *(c for c, _ in _POWER)]  # fmt: skip
    rec = (
        "No design in the grid meets the targets."
        if best is None
        else f"Smallest design meeting the targets: **{best['design']}** "
        f"({int(best['attempts'])} human attempts)."
    )
    targets = ", ".join(f"{k} {v:g}" for k, v in plan.targets.__dict__.items() if v is not None)
    return "\n".join(
        [
            "# Study plan (simulated, SYNTHETIC)\n",
            f"- {plan.settings['sims']} simulated studies per design; ratio interval: "
            f"{plan.settings['ratio_interval']}; q = {plan.settings['q']:g}, alpha = "
            f"{plan.settings['alpha']:g}, {plan.settings['method']}",
            f"- targets: {targets or 'none'}",
            "- assumed effects and their sources: see plan.json (`assumptions`)\n",
            rec + "\n",
            md_table(plan.summary[cols].map(fmt)),
        ]
    )


def render_plan(plan: PlanResult, out_dir: str | Path) -> dict[str, Path]:
    """Write plan.svg, plan.md, plan.json and studies.csv into ``out_dir``; return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"svg": out / "plan.svg", "markdown": out / "plan.md", "json": out / "plan.json",
             "studies": out / "studies.csv"}  # fmt: skip
    paths["svg"].write_text(plan_svg(plan), encoding="utf-8")
    paths["markdown"].write_text(plan_markdown(plan), encoding="utf-8")
    paths["json"].write_text(json.dumps(plan.to_dict(), indent=2), encoding="utf-8")
    plan.studies.to_csv(paths["studies"], index=False)
    return paths
