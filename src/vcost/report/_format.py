"""Number formatting shared by the renderers."""

from __future__ import annotations

import math

from vcost.indicators import Estimate


def number(value: float, digits: int = 3) -> str:
    """A number, or an em dash where it is undefined."""
    return "—" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def estimate(e: Estimate, digits: int = 3) -> str:
    """``0.812 [0.701, 0.905]``, or an em dash for an empty stratum."""
    if math.isnan(e.value):
        return "—"
    if math.isnan(e.lower):
        return number(e.value, digits)
    return f"{e.value:.{digits}f} [{e.lower:.{digits}f}, {e.upper:.{digits}f}]"


def percent(value: float) -> str:
    """A share as a percentage with one decimal."""
    return "—" if math.isnan(value) else f"{100 * value:.1f}%"
