"""Study analysis from a verification trace. So far: human vs AI-checker misses (RQ4)."""

from __future__ import annotations

from vcost.analysis.misses import MissComparison, compare_misses

__all__ = ["MissComparison", "compare_misses"]
