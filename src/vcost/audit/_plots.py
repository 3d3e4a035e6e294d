"""SVG plots of an audit: the verification floor against n, detection power against m * eps.

Drawn with matplotlib's object API on an Agg canvas (no pyplot, no display, no global state);
SVG output is deterministic (fixed hash salt, no date) so reruns give identical files. With a
``label`` (synthetic data) every plot carries it in red across its top, as in the study report;
:data:`CAPTIONS` says what to see in each plot (the audit report prints them under the plots).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

import matplotlib as mpl
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from vcost.audit._audit import AuditReport
from vcost.report._study_plots import label_marker, svg_text
from vcost.stats.audit import detection_powers, verification_floors

__all__ = ["CAPTIONS", "PLOTS", "audit_plots", "plot_detection_power", "plot_floor_vs_n",
           "write_plots"]  # fmt: skip

PLOTS = ("floor_vs_n", "detection_power")
CAPTIONS = {
    "floor_vs_n": "The smallest accuracy difference a benchmark of n items can verify, for each "
    "model (solid lines: random items, (L eps / n)^(1/3); dashed: items the auditor chooses, "
    "sqrt(eps / n)). Dots mark each model at its benchmark's number of items; grey crosses are "
    "the accuracy gaps between pairs of models there. A cross below the dots is a difference "
    "the log cannot verify; the lines show how many items would be needed.",
    "detection_power": "The chance that an audit of m items sees at least one error of a model "
    "with error rate eps, against m x eps (the errors expected among the items), for four "
    "error rates. The curves fall onto one, rising steeply around m x eps = 1 (dotted line). "
    "Black dots are the audited models: a dot on the left flank means the log is too small to "
    "reliably see that model's errors at all.",
}

_MAX_CURVES = 12
DETECTION_EPS = (0.01, 0.05, 0.10, 0.30)
# Plain tick labels ("1000", "0.01"): the default log labels go through mathtext, slowly.
_PLAIN = FuncFormatter(lambda value, _: f"{value:g}")


def _style() -> AbstractContextManager[None]:
    """Fixed SVG ids, text kept as text: identical output for identical input."""
    return mpl.rc_context({"svg.hashsalt": "vcost-audit", "svg.fonttype": "none", "font.size": 9.0})


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)
    with _style():
        fig.savefig(path, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return path


def plot_floor_vs_n(report: AuditReport, *, label: str | None = None) -> Figure:
    """Floor (L eps / n)^(1/3) (solid) and active floor sqrt(eps / n) (dashed) against n.

    One colour per benchmark x model (at most 12); a dot marks each model at the benchmark's n,
    a grey cross each pair's accuracy gap at that n: crosses below the dot are under the floor.
    """
    with _style():
        fig = Figure(figsize=(6.4, 4.2))
        fig.subplots_adjust(left=0.11, right=0.97, bottom=0.12, top=0.92)
        ax = fig.add_subplot()
        n_grid = np.logspace(1, 6, 200)
        colours = mpl.colormaps["tab10"]
        drawn = 0
        for bench in report.benchmarks:
            for model in bench.models:
                if drawn >= _MAX_CURVES:
                    break
                eps = min(1.0, max(model.error_rate, 3.0 / model.n))
                colour = colours(drawn % 10)
                curve = f"{bench.benchmark}: {model.model} (eps={model.error_rate:.3f})"
                ax.plot(
                    n_grid,
                    verification_floors(n_grid, eps, lipschitz=model.lipschitz.value),
                    color=colour,
                    lw=1.2,
                    label=curve,
                )
                ax.plot(n_grid, np.sqrt(eps / n_grid), color=colour, lw=0.8, ls="--")
                ax.plot([model.n], [model.floor.value], "o", color=colour, ms=4)
                drawn += 1
            gaps = [p.accuracy.gap for p in bench.pairs if p.accuracy.gap > 0]
            if gaps:
                ax.plot([bench.n] * len(gaps), gaps, "x", color="0.45", ms=4)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(_PLAIN)
        ax.xaxis.set_major_formatter(_PLAIN)
        ax.set_xlabel("items n")
        ax.set_ylabel("smallest resolvable difference")
        ax.set_title("Verification floor (L eps / n)^(1/3), solid; active sqrt(eps / n), dashed")
        ax.grid(True, which="major", lw=0.3)
        ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.13), frameon=False)
    return label_marker(label)(fig)


def plot_detection_power(report: AuditReport, *, label: str | None = None) -> Figure:
    """Chance of detecting an error rate eps with m items, against m * eps (Wang 2026, Fig. 2).

    Curves for four error rates collapse onto 1 - exp(-m eps): the transition sits at
    m * eps ~ 1 (dotted). Each audited model is marked at its n * eps.
    """
    with _style():
        fig = Figure(figsize=(6.4, 4.2))
        fig.subplots_adjust(left=0.11, right=0.97, bottom=0.12, top=0.92)
        ax = fig.add_subplot()
        x = np.logspace(-2, 2, 200)
        for eps in DETECTION_EPS:
            m = np.unique(np.maximum(1, np.round(x / eps)))
            ax.plot(m * eps, detection_powers(m, eps), lw=1.2, label=f"eps = {eps:g}")
        ax.axvline(1.0, color="0.3", ls=":", lw=1)
        for bench in report.benchmarks:
            for model in bench.models:
                eps = min(1.0, max(model.error_rate, 3.0 / model.n))
                power = float(detection_powers(model.n, eps))
                me = model.n * eps
                ax.plot([me], [power], "k.", ms=4)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(_PLAIN)
        ax.set_xlabel("m * eps (expected errors among the audited items)")
        ax.set_ylabel("detection power")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title("Phase transition near m * eps = 1 (dots: the audited models)")
        ax.grid(True, lw=0.3)
        ax.legend(fontsize=7, loc="upper left", frameon=False)
    return label_marker(label)(fig)


def write_plots(
    report: AuditReport, directory: str | Path, *, label: str | None = None
) -> list[Path]:
    """Write ``floor_vs_n.svg`` and ``detection_power.svg`` into ``directory``."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    return [
        _save(plot_floor_vs_n(report, label=label), out / "floor_vs_n.svg"),
        _save(plot_detection_power(report, label=label), out / "detection_power.svg"),
    ]


def audit_plots(report: AuditReport, *, label: str | None = None) -> dict[str, str]:
    """Both plots as inline SVG text by name (:data:`PLOTS`), for the HTML report."""
    with _style():
        return {
            "floor_vs_n": svg_text(plot_floor_vs_n(report, label=label)),
            "detection_power": svg_text(plot_detection_power(report, label=label)),
        }
