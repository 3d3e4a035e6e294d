"""The page every vcost report shares: style sheet, tables, figures, contents anchors.

The study report (:mod:`vcost.report.study`) and the audit report (:mod:`vcost.audit`) are
built from these pieces so they follow the same layout rules: a page no wider than the screen
at 1,280 or 390 px (a wide table scrolls inside its own box, long names wrap), a red banner
for a label such as SYNTHETIC, a caption under every figure, and an A4 print layout (tables
wrapped, figures kept whole, the contents list left out). Nothing is loaded from the network.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import pandas as pd

__all__ = ["CSS", "anchor", "figure", "html_table", "md_table", "page"]

CSS = """*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;line-height:1.45;max-width:62rem;margin:1.5rem auto;
padding:0 1rem;color:#111;overflow-wrap:anywhere}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
h3{font-size:1.05rem;margin-top:1.5rem}
table{border-collapse:collapse;font-size:.82rem;margin:.5rem 0 1rem;overflow-wrap:normal}
td,th{border:1px solid #ccc;padding:.2rem .4rem;text-align:right;vertical-align:top}
td{white-space:nowrap}td.t{white-space:normal;min-width:6rem;text-align:left}
th{background:#f3f3f3;text-align:left;font-weight:600}
td:first-child{text-align:left}
.wide{overflow-x:auto;max-width:100%}
.banner{background:#fee;border:1px solid #c00;padding:.5rem;font-weight:600}
.summary{background:#f6f8fa;border-left:4px solid #2a6;padding:.5rem 1rem .5rem 2rem}
.summary li{margin:.3rem 0}.summary ul{padding-left:1.2rem}
.notes li{font-size:.9rem}
figure{margin:1rem 0}figcaption{font-size:.85rem;color:#333;max-width:42rem}
svg{max-width:100%;height:auto}
nav ol{columns:2;font-size:.9rem}@media (max-width:40rem){nav ol{columns:1}}
@page{size:A4;margin:14mm}
@media print{body{max-width:none;margin:0;padding:0;font-size:10pt}nav{display:none}
.wide{overflow:visible}table{font-size:7.5pt;width:100%;table-layout:auto}
td,th{padding:1px 3px;white-space:normal}td{overflow-wrap:anywhere}
td.t{min-width:0;overflow-wrap:break-word}
th{overflow-wrap:break-word}
figure,tr,.summary{break-inside:avoid}h2,h3{break-after:avoid}
svg{max-height:120mm}}"""


def anchor(name: str) -> str:
    """A section title as an id for the contents list."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


_NUMBER = re.compile(r"^[-+]?[\d.,]*\d")


def _cell(value: object) -> str:
    """A number (with its interval) stays on one line; text (names, notes) may wrap."""
    text = str(value)
    kind = "" if not text or _NUMBER.match(text) else " class='t'"
    return f"<td{kind}>{html.escape(text)}</td>"


def html_table(frame: pd.DataFrame) -> str:
    """A table of already formatted cells, in a box that scrolls when it is too wide; text
    cells wrap (a long model name does not push the numbers out of view), numbers do not."""
    if frame.empty:
        return "<p><em>(none)</em></p>"
    head = "".join(f"<th scope='col'>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = "".join(
        "<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in frame.itertuples(index=False)
    )
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    return f'<div class="wide" tabindex="0">{table}</div>'


def md_table(frame: pd.DataFrame) -> str:
    """The same table as Markdown."""
    if frame.empty:
        return "_(none)_\n"
    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "---|" * len(frame.columns)
    rows = ["| " + " | ".join(map(str, row)) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *rows]) + "\n"


def figure(name: str, svg: str, caption: str) -> str:
    """An inline SVG with its caption under it (what to see in the plot)."""
    return (
        f'<figure data-plot="{html.escape(name)}">{svg}'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
    )


def page(title: str, body: Iterable[str]) -> str:
    """A self-contained HTML document: the shared style sheet and ``body`` (HTML pieces)."""
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )
