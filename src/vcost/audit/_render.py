"""Console tables for an audit and for an audit plan (rich)."""

from __future__ import annotations

import math

from rich import box
from rich.console import Console
from rich.table import Table

from vcost.audit._audit import AuditReport, BenchmarkAudit, Estimate
from vcost.stats.audit import AuditPlan, Verdict

__all__ = ["render_audit", "render_plan"]

_STYLE = {Verdict.VERIFIABLE: "green", Verdict.MARGINAL: "yellow", Verdict.NOISE: "red"}


def _num(value: float | None, digits: int = 3) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:.{digits}f}"


def _est(est: Estimate | None, digits: int = 3) -> str:
    if est is None:
        return "—"
    if not (math.isfinite(est.lower) and math.isfinite(est.upper)):
        return _num(est.value, digits)
    return f"{est.value:.{digits}f} [{est.lower:.{digits}f}, {est.upper:.{digits}f}]"


def _verdict(verdict: Verdict) -> str:
    return f"[{_STYLE[verdict]}]{verdict.value}[/]"


def _table(title: str) -> Table:
    return Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)


def _benchmark(console: Console, bench: BenchmarkAudit, reps: int) -> None:
    head = f"{bench.benchmark}: {bench.n:,} items, {len(bench.models)} models"
    console.rule(head + (" [yellow](partial)[/]" if bench.partial else ""))
    models = _table("Models (95% bootstrap intervals over items)")
    for name in ("model", "accuracy", "eps", "ECE", "L-hat", "floor", "active", "self-eval r (p)"):
        models.add_column(name, justify="left" if name == "model" else "right")
    for m in bench.models:
        se = m.self_evaluation
        if se is None:
            self_eval = "—"
        elif math.isnan(se.rho):
            self_eval = f"— ({se.n} bins)"
        else:
            self_eval = f"{se.rho:+.2f} (p={se.p_permutation:.2f}, {se.n} bins)"
        lip = _num(m.lipschitz.value, 2) + ("" if m.lipschitz_source == "estimated" else "*")
        models.add_row(
            m.model,
            _est(m.accuracy),
            _num(m.error_rate),
            _est(m.ece),
            lip,
            _est(m.floor, 4),
            _num(m.active_floor, 4),
            self_eval,
        )
    console.print(models)
    if any(m.lipschitz_source != "estimated" for m in bench.models):
        console.print("  * L assumed 1 (no confidences) or given with --lipschitz")
    if bench.pairs:
        pairs = _table("Pairs: accuracy gap vs verification floor")
        for name in ("A", "B", "gap", "floor", "ratio", "verdict", "δ_acc", "flip", "ECE gap"):
            pairs.add_column(name, justify="left" if name in ("A", "B", "verdict") else "right")
        for p in bench.pairs:
            cal = p.calibration
            pairs.add_row(
                p.model_a,
                p.model_b,
                _num(p.accuracy.gap),
                _num(p.accuracy.floor, 4),
                f"{p.accuracy.ratio:.2f}",
                _verdict(p.accuracy.verdict),
                _num(p.noise_floor, 4),
                _num(p.flip_rate, 3),
                "—" if cal is None else f"{abs(cal.gap):.3f} ({cal.verdict.value})",
            )
        console.print(pairs)
        counts = bench.verdict_counts()
        console.print(
            f"  ranking {' > '.join(bench.ranking)}; order changes in "
            f"{bench.instability:.1%} of {reps:,} resamples (best model in "
            f"{bench.top_instability:.1%}); pairs: "
            + ", ".join(f"{v} {counts[v]}" for v in ("verifiable", "marginal", "noise"))
        )
    if bench.subjects:
        subjects = _table("Subjects: max accuracy gap vs floor, ranking instability")
        for name in ("subject", "n", "best", "max gap", "floor", "ratio", "verdict", "instab."):
            subjects.add_column(
                name, justify="left" if name in ("subject", "best", "verdict") else "right"
            )
        for s in bench.subjects:
            best, best_acc = s.accuracies[0]
            subjects.add_row(
                s.subject,
                str(s.n),
                f"{best} {best_acc:.2f}",
                _num(s.max_gap.gap),
                _num(s.max_gap.floor),
                f"{s.max_gap.ratio:.2f}",
                _verdict(s.max_gap.verdict),
                _num(s.instability, 2),
            )
        console.print(subjects)
    for note in bench.notes:
        console.print(f"  [yellow]note[/]: {note}")


def render_audit(report: AuditReport, console: Console | None = None) -> None:
    """Print the audit: per benchmark the models, pairs, ranking and subjects tables."""
    out = console or Console(highlight=False)
    for bench in report.benchmarks:
        _benchmark(out, bench, report.settings.reps)
    for skipped in report.skipped:
        out.print(f"[yellow]skipped[/] {skipped.benchmark}: {skipped.reason}")
    for note in report.notes:
        out.print(f"[yellow]note[/]: {note}")
    out.print(
        "floor = (L-hat * eps / n)^(1/3) (Wang 2026); verdict: gap/floor < 1 noise, "
        "< 2 marginal, else verifiable; δ_acc = paired sampling-noise floor; flip = share of "
        "resamples in which B beats A."
    )


def render_plan(plan: AuditPlan, console: Console | None = None) -> None:
    """Print ``vcost audit plan``: items needed passively, actively, to detect."""
    out = console or Console(highlight=False)
    table = _table(
        f"Items to verify calibration to delta = {plan.delta:g} at eps = {plan.eps:g}, "
        f"L = {plan.lipschitz:g}, depth K = {plan.depth}"
    )
    table.add_column("what")
    table.add_column("items", justify="right")
    table.add_column("formula")
    table.add_row("passive (random items)", f"{plan.passive:,}", "L^K eps / delta^3")
    table.add_row("active (chosen items)", f"{plan.active:,}", "eps / delta^2")
    table.add_row(
        "detect only",
        f"{plan.detect:,}",
        f"c1^2 eps / delta^2, c1 = {plan.c1:.4f}"
        + (" (extrapolated)" if plan.c1_extrapolated else ""),
    )
    out.print(table)
    out.print(f"bins at the passive size: {plan.bins}; floor there: {plan.floor_at_passive:.4f}.")
    if plan.available is not None:
        assert plan.passive_gap is not None
        assert plan.active_gap is not None
        depth = "no limit from depth (L <= 1)" if plan.max_depth is None else str(plan.max_depth)
        out.print(
            f"with {plan.available:,} items: passive needs {plan.passive_gap:.2f}x, active "
            f"{plan.active_gap:.2f}x of them "
            f"({'feasible' if plan.passive_gap <= 1 else 'infeasible'} passively, "
            f"{'feasible' if plan.active_gap <= 1 else 'infeasible'} actively); floor "
            f"{_num(plan.floor_at_available, 4)}, active floor "
            f"{_num(plan.active_floor_at_available, 4)}; deepest verifiable pipeline: {depth}."
        )
