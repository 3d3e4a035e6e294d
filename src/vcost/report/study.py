"""The study report: a self-contained HTML file (plots inline as SVG), Markdown and JSON.

:func:`render_study` writes ``report.html``, ``report.md`` and ``numbers.json`` for a
:class:`vcost.analysis.StudyAnalysis`. Every number shown is in ``numbers.json`` and comes from
``analyse_study`` (one call). The report reads as a results section: a header (spec, version,
hash, deviations, date, vcost version, models), an opening summary of the headline findings in
words with their intervals (:func:`vcost.report._study_sections.summary`), the notes and
warnings, a contents list, then one section per pre-registered analysis with plain-language
columns in one number format (:mod:`vcost.report._study_format`), captions under each plot
saying what to see, the methods with vcost's declared estimator choices, and the limitations.

Layout rules (the page pieces are shared with the audit report, :mod:`vcost.report._page`),
checked in a real browser (tests/analysis/test_report_browser.py): nothing
overflows the page horizontally at 1,280 or 390 px (wide tables scroll inside their own box,
long hashes wrap); with a ``label`` (synthetic data) a banner heads the page and every plot
carries the label; printed (Chromium's "print to PDF"), pages are A4 with tables wrapped,
figures kept whole and the contents list left out. The HTML loads nothing from the network.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pandas as pd

from vcost.analysis.study import StudyAnalysis
from vcost.report._page import anchor, figure, html_table, md_table, page
from vcost.report._study_format import plain_table
from vcost.report._study_plots import CAPTIONS, FOREST_MAX_PEOPLE, PLOTS, study_plots
from vcost.report._study_sections import meta_lines, sections, summary, unit_word

__all__ = [
    "FOREST_MAX_PEOPLE",
    "PLOTS",
    "TABLE_MAX_ROWS",
    "render_study",
    "study_html",
    "study_markdown",
    "study_plots",
]

TABLE_MAX_ROWS = 200
"""Longer tables are cut to this many rows in HTML and Markdown (all rows are in numbers.json)."""

_PLOT_AT = {
    "RQ1 / H1: verification ratio": ("survival",),
    "Per-person ratios": ("person_forest",),
    "Break-even per task": ("break_even",),
    "RQ2 / H2: errors that get through": ("false_accepts",),
    "Outcome decomposition": ("outcomes",),
    "VCE classification (larger-verdict subset)": ("vce_envelope",),
}


def _cut(frame: pd.DataFrame, unit: str) -> tuple[pd.DataFrame, str]:
    """At most TABLE_MAX_ROWS rows in the report's format, and a note when rows were left out.

    Rows are cut before formatting (formatting is cell by cell, so the shown rows are the same)
    and a 1,000-person crowd's tables are not formatted in full only to be dropped.
    """
    if len(frame) <= TABLE_MAX_ROWS:
        return plain_table(frame, unit), ""
    return plain_table(frame.head(TABLE_MAX_ROWS), unit), (
        f"first {TABLE_MAX_ROWS} of {len(frame):,} rows; every row is in numbers.json"
    )


def _title(a: StudyAnalysis) -> str:
    return "Study analysis" + (" (PILOT)" if a.pilot else "")


def study_markdown(a: StudyAnalysis, *, label: str | None = None) -> str:
    """The report as Markdown (tables, no plots); ``label`` is a banner (e.g. SYNTHETIC)."""
    unit = unit_word(a)
    parts = [f"# {_title(a)}\n", *([f"**{label}**\n"] if label else []),
             *(f"- {line}" for line in meta_lines(a)), ""]  # fmt: skip
    parts += ["## Summary\n", *(f"- {s}" for s in summary(a)), ""]
    if a.notes:
        parts += ["## Notes and warnings\n", *(f"- {n}" for n in a.notes), ""]
    for name, text, table in sections(a):
        parts += [f"## {name}\n", text + "\n"]
        if table is not None:
            shown, cut = _cut(table, unit)
            parts.append(md_table(shown) + (f"\n_({cut})_\n" if cut else ""))
    return "\n".join(parts)


def _figure(name: str, svg: str) -> str:
    return figure(name, svg, CAPTIONS.get(name, ""))


def study_html(
    a: StudyAnalysis, plots: dict[str, str] | None = None, *, label: str | None = None
) -> str:
    """The report as one self-contained HTML page (plots inline as SVG)."""
    svgs = study_plots(a, label=label) if plots is None else plots
    unit = unit_word(a)
    title = _title(a)
    body = [f"<h1>{html.escape(title)}</h1>"]
    if label:
        body.append(f'<p class="banner" data-label>{html.escape(label)}</p>')
    if a.pilot:
        body.append('<p class="banner">Fewer than 3 people: the human part is a pilot.</p>')
    body.append("<ul class='meta'>")
    body += [f"<li>{html.escape(line)}</li>" for line in meta_lines(a)] + ["</ul>"]
    body.append("<h2 id='summary'>Summary</h2><ul class='summary'>")
    body += [f"<li>{html.escape(s)}</li>" for s in summary(a)] + ["</ul>"]
    parts = sections(a)
    toc = [("summary", "Summary")]
    if a.notes:
        toc.append(("notes", "Notes and warnings"))
    toc += [(anchor(name), name) for name, _, _ in parts]
    body.append("<nav aria-label='Contents'><h2 id='contents'>Contents</h2><ol>")
    body += [f"<li><a href='#{i}'>{html.escape(t)}</a></li>" for i, t in toc] + ["</ol></nav>"]
    if a.notes:
        body += ["<h2 id='notes'>Notes and warnings</h2><ul class='notes'>",
                 *(f"<li>{html.escape(n)}</li>" for n in a.notes), "</ul>"]  # fmt: skip
    for name, text, table in parts:
        body += [f"<h2 id='{anchor(name)}'>{html.escape(name)}</h2>",
                 f"<p>{html.escape(text)}</p>"]  # fmt: skip
        for plot in _PLOT_AT.get(name, ()):
            if plot in svgs:
                body.append(_figure(plot, svgs[plot]))
        if table is not None:
            shown, cut = _cut(table, unit)
            body.append(html_table(shown))
            if cut:
                body.append(f"<p><em>({html.escape(cut)})</em></p>")
    return page(title, body)


def render_study(
    a: StudyAnalysis, out_dir: str | Path, *, label: str | None = None
) -> dict[str, Path]:
    """Write report.html, report.md and numbers.json into ``out_dir``; return their paths.

    ``label`` (e.g. "SYNTHETIC ...") is shown as a banner and on every plot, and stored in
    numbers.json.
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
