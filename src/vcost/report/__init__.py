"""Renderers for indicator reports: a Markdown document and a console table."""

from __future__ import annotations

from vcost.report.console import indicators_table
from vcost.report.markdown import render_markdown

__all__ = ["indicators_table", "render_markdown"]
