"""The audit as a report a reader accepts: self-contained HTML (plots inline) and Markdown.

:func:`render_audit_report` writes ``report.html``, ``report.md`` and ``audit.json`` for an
:class:`~vcost.audit.AuditReport`. It follows the study report's rules and is built from the
same pieces (:mod:`vcost.report._page` for the page, :mod:`vcost.report._study_format` for the
numbers): a header, an opening summary of the findings in words with their 95% intervals (per
benchmark the verdict counts and the ranking instability, per model pair the accuracy gap, the
verification floor and the verdict), notes and warnings, a contents list, one section per
benchmark with plain-language columns, the two plots with captions saying what to see, the
methods and the limitations.

One number format: every non-integer with three decimals (the audit's floors are a few
hundredths, so the study report's two decimals would hide them), an interval as
``0.050 [0.031, 0.069]``, counts with thousands separators, shares as 0-1 shares (never mixed
with percentages).

A ``label`` (e.g. "SYNTHETIC DATA: ...") is a red banner at the top and is drawn on both
plots. :func:`audit_label` decides it: a label given by the caller, else ``synthetic=True``
(``vcost audit --synthetic``), else the log's own marker (CSV/JSONL rows with a true
``synthetic`` column, :attr:`AuditReport.synthetic`).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from vcost.audit._audit import AuditReport, BenchmarkAudit, Estimate, ModelAudit, PairAudit
from vcost.audit._plots import CAPTIONS, audit_plots
from vcost.report._page import anchor, figure, html_table, md_table, page
from vcost.report._study_format import ci, count, fmt

__all__ = [
    "SUMMARY_MAX_PAIRS",
    "TABLE_MAX_ROWS",
    "audit_html",
    "audit_label",
    "audit_markdown",
    "render_audit_report",
]

DIGITS = 3
TABLE_MAX_ROWS = 200
"""Longer tables (subjects) are cut to this many rows; every row is in audit.json."""
SUMMARY_MAX_PAIRS = 6
"""Pairs described one by one in the summary, per benchmark (closest to the floor first)."""
_TITLE = "Audit of an evaluation log"


def audit_label(
    report: AuditReport, *, label: str | None = None, synthetic: bool = False
) -> str | None:
    """The banner for the report: ``label``, else SYNTHETIC by flag or by the log's marker."""
    if label:
        return label
    if synthetic:
        return "SYNTHETIC DATA: marked synthetic by the user (--synthetic), not real model output."
    if report.synthetic:
        files = ", ".join(Path(s).name for s in report.synthetic)
        return (
            f"SYNTHETIC DATA: the log marks its rows as synthetic ('synthetic' column in {files})."
        )
    return None


def _n(value: float) -> str:
    return fmt(float(value), DIGITS)


def _bins(n: int) -> str:
    return f"{count(n)} bin" + ("" if n == 1 else "s")


def _e(e: Estimate | None) -> str:
    return "" if e is None else ci(e.value, e.lower, e.upper, DIGITS)


def _pair_floor(bench: BenchmarkAudit, pair: PairAudit) -> tuple[ModelAudit, Estimate]:
    """The model whose floor the pair is held against (the larger one) and that floor."""
    models = {m.model: m for m in bench.models}
    a, b = models[pair.model_a], models[pair.model_b]
    hard = a if a.floor.value >= b.floor.value else b
    return hard, hard.floor


def _verdict_words(bench: BenchmarkAudit) -> str:
    counts = bench.verdict_counts()
    total = sum(counts.values())
    return (
        f"of its {count(total)} model pairs, {count(counts['verifiable'])} differ by more than "
        f"twice the verification floor (verifiable), {count(counts['marginal'])} by one to two "
        f"floors (marginal) and {count(counts['noise'])} by less than one floor (noise)"
    )


def _instability_words(bench: BenchmarkAudit, reps: int) -> str:
    changed = round(bench.instability * reps)
    best = round(bench.top_instability * reps)
    return (
        f"the order of the models ({' > '.join(bench.ranking)}) changes in {count(changed)} of "
        f"{count(reps)} bootstrap resamples ({_n(bench.instability)}), the best model in "
        f"{count(best)} ({_n(bench.top_instability)})"
    )


def _pair_sentence(bench: BenchmarkAudit, pair: PairAudit) -> str:
    hard, floor = _pair_floor(bench, pair)
    noise = (
        "above the sampling-noise floor" if pair.above_noise else "within the sampling-noise floor"
    )
    return (
        f"{pair.model_a} vs {pair.model_b}: accuracy gap {_e(pair.gap_interval)} against a "
        f"verification floor of {_e(floor)} (the floor of {hard.model}), "
        f"ratio {_n(pair.accuracy.ratio)}: {pair.accuracy.verdict.value}; the gap is {noise} "
        f"({_n(pair.noise_floor)})."
    )


def summary(report: AuditReport) -> list[tuple[str, list[str]]]:
    """The findings as sentences with their 95% intervals: per benchmark a headline and the
    sentences on its pairs."""
    reps = report.settings.reps
    out: list[tuple[str, list[str]]] = []
    for bench in report.benchmarks:
        line = (
            f"{bench.benchmark} ({count(bench.n)} items every model answered, "
            f"{count(len(bench.models))} models): {_verdict_words(bench)}"
        )
        if len(bench.models) > 1:
            line += f"; {_instability_words(bench, reps)}"
        if bench.partial:
            line += "; partial: some models lack items (see the notes)"
        # The pairs whose verdict is closest to changing: gap / floor nearest 1.
        chosen = sorted(bench.pairs, key=lambda p: abs(p.accuracy.ratio - 1.0))
        details = [_pair_sentence(bench, pair) for pair in chosen[:SUMMARY_MAX_PAIRS]]
        if len(bench.pairs) > SUMMARY_MAX_PAIRS:
            details.append(
                f"{count(len(bench.pairs) - SUMMARY_MAX_PAIRS)} more pairs are in the "
                f"{bench.benchmark} section (above: the pairs whose gap is closest to the floor)."
            )
        out.append((line + ".", details))
    for skipped in report.skipped:
        out.append((f"{skipped.benchmark} was not audited: {skipped.reason}.", []))
    return out


def _models_table(bench: BenchmarkAudit) -> pd.DataFrame:
    rows = []
    for m in bench.models:
        se = m.self_evaluation
        if se is None:
            self_eval = "no confidences"
        elif fmt(se.rho, 2) == "":
            self_eval = f"not estimable ({_bins(se.n)})"
        else:
            self_eval = f"r = {_n(se.rho)}, p = {_n(se.p_permutation)} ({_bins(se.n)})"
        slope = _n(m.lipschitz.value)
        if m.lipschitz_source != "estimated":
            slope += " (assumed)" if m.lipschitz_source == "assumed" else " (given)"
        rows.append(
            {
                "model": m.model,
                "accuracy [95% interval]": _e(m.accuracy),
                "error rate": _n(m.error_rate),
                "calibration error (ECE) [95% interval]": _e(m.ece) or "no confidences",
                "slope L of the reliability curve": slope,
                "verification floor [95% interval]": _e(m.floor),
                "floor with chosen items": _n(m.active_floor),
                "self-evaluation (rank correlation)": self_eval,
            }
        )
    return pd.DataFrame(rows)


def _pairs_table(bench: BenchmarkAudit) -> pd.DataFrame:
    rows = []
    for p in bench.pairs:
        _, floor = _pair_floor(bench, p)
        cal = p.calibration
        rows.append(
            {
                "more accurate": p.model_a,
                "less accurate": p.model_b,
                "accuracy gap [95% interval]": _e(p.gap_interval),
                "verification floor (larger of the two)": _n(floor.value),
                "gap / floor": _n(p.accuracy.ratio),
                "verdict": p.accuracy.verdict.value,
                "sampling-noise floor": _n(p.noise_floor),
                "share of resamples reversing the pair": _n(p.flip_rate),
                "calibration gap (verdict)": (
                    "" if cal is None else f"{_n(abs(cal.gap))} ({cal.verdict.value})"
                ),
            }
        )
    return pd.DataFrame(rows)


def _subjects_table(bench: BenchmarkAudit) -> pd.DataFrame:
    rows = []
    for s in bench.subjects:
        best, best_acc = s.accuracies[0]
        rows.append(
            {
                "subject": s.subject,
                "items": count(s.n),
                "best model (accuracy)": f"{best} ({_n(best_acc)})",
                "largest gap": _n(s.max_gap.gap),
                "verification floor": _n(s.max_gap.floor),
                "gap / floor": _n(s.max_gap.ratio),
                "verdict": s.max_gap.verdict.value,
                "share of resamples changing the order": _n(s.instability),
            }
        )
    return pd.DataFrame(rows)


Block = tuple[str, str | pd.DataFrame]
"""A piece of a section: ``("p", text)``, ``("h3", title)`` or ``("table", frame)``."""


def _bench_blocks(bench: BenchmarkAudit, reps: int) -> list[Block]:
    blocks: list[Block] = [
        (
            "p",
            f"{count(bench.n)} items answered by every model"
            + (" (partial: some models lack items, see the notes)" if bench.partial else "")
            + ". Accuracy, calibration error and floors with 95% percentile bootstrap "
            f"intervals over items ({count(reps)} resamples).",
        ),
        ("h3", "Models"),
        ("table", _models_table(bench)),
    ]
    if any(m.lipschitz_source == "assumed" for m in bench.models):
        blocks.append(("p", "Assumed slope: the model gives no confidences, so L = 1 is used."))
    if bench.pairs:
        blocks += [
            ("h3", "Model pairs: accuracy gap against the verification floor"),
            (
                "p",
                "Verdict: gap / floor below 1 is noise, 1 to 2 marginal, 2 or more "
                "verifiable. The sampling-noise floor is the gap ordinary sampling noise "
                "could produce at this number of items; a gap can clear it and still sit "
                "below the verification floor.",
            ),
            ("table", _pairs_table(bench)),
            ("p", f"Ranking: {_instability_words(bench, reps)}."),
        ]
    if bench.subjects:
        frame = _subjects_table(bench)
        blocks.append(("h3", "Subjects: largest gap against the floor, and ranking instability"))
        blocks.append(("table", frame.head(TABLE_MAX_ROWS)))
        if len(frame) > TABLE_MAX_ROWS:
            blocks.append(
                (
                    "p",
                    f"First {TABLE_MAX_ROWS} of {count(len(frame))} subjects; every subject is "
                    "in audit.json.",
                )
            )
    return blocks


def methods(report: AuditReport) -> list[str]:
    """How every number was computed (the audit's METHOD, settings and decisions)."""
    s = report.settings
    lipschitz = (
        f"fixed at {fmt(s.lipschitz, 2)} (--lipschitz)"
        if s.lipschitz is not None
        else f"estimated from the confidences, clipped to [{fmt(s.lipschitz_clip[0], 0)}, "
        f"{fmt(s.lipschitz_clip[1], 0)}]; 1 for a model without confidences"
    )
    return [
        "Source: Wang (2026), 'The Verification Tax: Fundamental Limits of AI Auditing in the "
        "Rare-Error Regime'. docs/audit.md explains every number and the decisions the paper "
        "leaves open.",
        "Verification floor: (L x eps / n)^(1/3), eps = 1 - accuracy (3 / n when a model made "
        f"no error), n the items every model answered; slope L {lipschitz}. Floor with chosen "
        "items: sqrt(eps / n).",
        "A pair's gap is held against the larger of the two models' floors; the verdict "
        f"thresholds are gap / floor = {fmt(s.marginal, 0)} and {fmt(s.verifiable, 0)}.",
        f"Calibration error: {count(s.bins)} equal-width confidence bins; a bin enters the "
        f"slope estimate with at least {count(s.min_count)} items.",
        f"Intervals: {fmt(100 * (1 - s.alpha), 0)}% percentile bootstrap over items "
        f"({count(s.reps)} resamples, seed {s.seed}), within subjects when there are "
        "subjects. Ranking instability: the share of resamples whose order of models differs "
        "from the observed order.",
        "Sampling-noise floor: z x sd(a_i - b_i) / sqrt(n), the paired difference of the two "
        "models' per-item scores.",
    ]


LIMITATIONS = (
    "The floors are minimax rates: they say how small a difference any audit of this many "
    "items can resolve in the worst case, up to constants the paper does not fix; a verdict "
    "is a statement about the log's size, not a test of a hypothesis.",
    "The results describe these items and these runs only: another sample of items, another "
    "prompt or another seed can order the models differently (the ranking instability "
    "measures only the resampling of these items).",
    "The slope L is estimated from sparse confidence bins and clipped; without confidences "
    "L = 1 is assumed, which understates the floor of a badly calibrated model.",
    "Items are treated as independent; items that share a passage or a template make every "
    "interval too narrow.",
    "Scores are taken from the log as given; a wrong grader or a leaked item is not detected.",
)


def _sections(report: AuditReport) -> list[tuple[str, list[Block]]]:
    reps = report.settings.reps
    out: list[tuple[str, list[Block]]] = []
    for bench in report.benchmarks:
        out.append((f"Benchmark {bench.benchmark}", _bench_blocks(bench, reps)))
    return out


def _notes(report: AuditReport) -> list[str]:
    notes = list(report.notes)
    for bench in report.benchmarks:
        notes += [f"{bench.benchmark}: {n}" for n in bench.notes]
    notes += [f"skipped {s.benchmark}: {s.reason}" for s in report.skipped]
    return notes


def _meta(report: AuditReport, version: str) -> list[str]:
    sources = ", ".join(Path(s).name for s in report.sources[:5])
    if len(report.sources) > 5:
        sources += f" and {count(len(report.sources) - 5)} more files"
    return [
        f"log: {sources}",
        f"benchmarks audited: {count(len(report.benchmarks))}; skipped: "
        f"{count(len(report.skipped))}",
        f"vcost {version}; {count(report.settings.reps)} bootstrap resamples, seed "
        f"{report.settings.seed}",
    ]


def audit_markdown(report: AuditReport, *, label: str | None = None) -> str:
    """The report as Markdown (tables, no plots); ``label`` is a banner (e.g. SYNTHETIC)."""
    from vcost import __version__

    parts = [f"# {_TITLE}\n", *([f"**{label}**\n"] if label else [])]
    parts += [*(f"- {line}" for line in _meta(report, __version__)), ""]
    parts.append("## Summary\n")
    for line, details in summary(report):
        parts += [f"- {line}", *(f"  - {d}" for d in details)]
    parts.append("")
    notes = _notes(report)
    if notes:
        parts += ["## Notes and warnings\n", *(f"- {n}" for n in notes), ""]
    for name, blocks in _sections(report):
        parts.append(f"## {name}\n")
        for kind, value in blocks:
            if isinstance(value, pd.DataFrame):
                parts.append(md_table(value))
            elif kind == "h3":
                parts.append(f"### {value}\n")
            else:
                parts.append(f"{value}\n")
    parts += ["## Plots\n"]
    parts += [f"- {name}.svg: {CAPTIONS[name]}" for name in CAPTIONS] + [""]
    parts += ["## Methods\n", *(f"- {m}" for m in methods(report)), ""]
    parts += ["## Limitations\n", *(f"- {m}" for m in LIMITATIONS), ""]
    return "\n".join(parts)


def _ul(items: Sequence[str], cls: str = "") -> str:
    attr = f" class='{cls}'" if cls else ""
    return f"<ul{attr}>" + "".join(f"<li>{html.escape(i)}</li>" for i in items) + "</ul>"


def audit_html(
    report: AuditReport, plots: dict[str, str] | None = None, *, label: str | None = None
) -> str:
    """The report as one self-contained HTML page (plots inline as SVG)."""
    from vcost import __version__

    svgs = audit_plots(report, label=label) if plots is None else plots
    body = [f"<h1>{_TITLE}</h1>"]
    if label:
        body.append(f'<p class="banner" data-label>{html.escape(label)}</p>')
    body.append(_ul(_meta(report, __version__), "meta"))
    body.append("<h2 id='summary'>Summary</h2><ul class='summary'>")
    for line, details in summary(report):
        body.append(f"<li>{html.escape(line)}{_ul(details) if details else ''}</li>")
    body.append("</ul>")
    notes = _notes(report)
    sections = _sections(report)
    toc = [("summary", "Summary")] + ([("notes", "Notes and warnings")] if notes else [])
    toc += [(anchor(name), name) for name, _ in sections]
    toc += [("plots", "Plots"), ("methods", "Methods"), ("limitations", "Limitations")]
    body.append("<nav aria-label='Contents'><h2 id='contents'>Contents</h2><ol>")
    body += [f"<li><a href='#{i}'>{html.escape(t)}</a></li>" for i, t in toc] + ["</ol></nav>"]
    if notes:
        body += ["<h2 id='notes'>Notes and warnings</h2>", _ul(notes, "notes")]
    for name, blocks in sections:
        body.append(f"<h2 id='{anchor(name)}'>{html.escape(name)}</h2>")
        for kind, value in blocks:
            if isinstance(value, pd.DataFrame):
                body.append(html_table(value))
            else:
                body.append(f"<{kind}>{html.escape(value)}</{kind}>")
    body.append("<h2 id='plots'>Plots</h2>")
    body += [figure(name, svgs[name], CAPTIONS[name]) for name in CAPTIONS if name in svgs]
    body += ["<h2 id='methods'>Methods</h2>", _ul(methods(report))]
    body += ["<h2 id='limitations'>Limitations</h2>", _ul(LIMITATIONS)]
    return page(_TITLE, body)


def render_audit_report(
    report: AuditReport,
    out_dir: str | Path,
    *,
    label: str | None = None,
    payload: dict[str, Any] | None = None,
) -> dict[str, Path]:
    """Write report.html, report.md and audit.json into ``out_dir``; return their paths.

    ``payload`` is the JSON to write (default ``report.to_dict()``); ``label`` is stored in it.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "html": out / "report.html",
        "markdown": out / "report.md",
        "json": out / "audit.json",
    }
    paths["html"].write_text(audit_html(report, label=label), encoding="utf-8")
    paths["markdown"].write_text(audit_markdown(report, label=label), encoding="utf-8")
    data = dict(payload if payload is not None else report.to_dict())
    if label:
        data["label"] = label
    paths["json"].write_text(json.dumps(data, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return paths
