"""The Step 6 model-level table for a terminal: a row per indicator, a column per model."""

from __future__ import annotations

from collections.abc import Callable

from rich.table import Table

from vcost.indicators import IndicatorReport, ModelIndicators
from vcost.report._format import estimate, number, percent

_ROWS: tuple[tuple[str, Callable[[ModelIndicators], str]], ...] = (
    ("episodes / verifiers", lambda m: f"{m.strata['all'].episodes} / {m.strata['all'].verifiers}"),
    ("Pr[S_B=1], success within budget", lambda m: estimate(m.strata["all"].success)),
    ("  refutation (GT-incorrect)", lambda m: estimate(m.strata["gt_incorrect"].success)),
    ("  confirmation (GT-correct)", lambda m: estimate(m.strata["gt_correct"].success)),
    ("false accepts (GT-incorrect)", lambda m: estimate(m.strata["gt_incorrect"].false_accept)),
    ("false rejects (GT-correct)", lambda m: estimate(m.strata["gt_correct"].false_reject)),
    ("budget exhausted", lambda m: estimate(m.strata["all"].budget_exhausted)),
    ("declared unverifiable", lambda m: estimate(m.strata["all"].unverifiable)),
    (
        "E[E_d/B], observed consumption",
        lambda m: estimate(m.strata["all"].observed_budget_consumption),
    ),
    ("effort ratio incorrect/correct", lambda m: estimate(m.effort_ratio, 2)),
    ("premature closures", lambda m: estimate(m.strata["all"].premature_closure)),
    (
        "VCE confirmed / inconclusive",
        lambda m: (
            f"{percent(m.vce.confirmed_rate)} / "
            f"{percent(m.vce.inconclusive_rate)} of {m.vce.outputs}"
        ),
    ),
    ("VCE envelope", lambda m: f"[{number(m.vce.lower)}, {number(m.vce.upper)}]"),
    (
        "Krippendorff's alpha (verdicts)",
        lambda m: (
            number(m.agreement_alpha) + (" ⚑ verifier-uncertain" if m.verifier_uncertain else "")
        ),
    ),
)


def indicators_table(report: IndicatorReport) -> Table:
    """Model-level indicators with their intervals, stamped with spec hash, date and version."""
    s = report.settings
    table = Table(
        title=(
            f"Model-level indicators (u = {s.cost_unit}, tau = {s.tau:g}, q = {s.q:g}; "
            f"[{1 - s.alpha:.0%} two-way cluster bootstrap])"
        ),
        caption=(
            f"spec {(report.spec_hash or 'not locked')[:16]}"
            + (f" (study version {report.study['version']})" if report.study else "")
            + f" · {report.computed_at} · "
            f"vcost {report.versions['vcost']}"
        ),
    )
    table.add_column("indicator")
    for m in report.models:
        table.add_column(m.model_id, overflow="fold")
    for name, cell in _ROWS:
        table.add_row(name, *(cell(m) for m in report.models))
    return table
