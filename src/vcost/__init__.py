"""vcost: measure what it costs to verify AI output, and how often wrong output gets through.

The curated entry points load on first use, so ``import vcost`` stays cheap::

    spec = vcost.StudySpec.load("study.toml")
    trace = vcost.read_trace("trace/")
    vcost.stats.clopper_pearson(3, 3)

Subpackages (``vcost.stats``, ``vcost.answers``, ``vcost.judges``, ...) are reachable the same
way. The data flow and the layout are in the README and DESIGN notes.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: The installed distribution's version, read on first use: importlib.metadata costs tens of
#: milliseconds at every start of `vcost`, and only --version and written metadata need it.
__version__: str


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("vcost")
    except PackageNotFoundError:  # pragma: no cover - a source tree without install
        return "0.0.0"


_NAMES = {
    "StudySpec": "vcost.spec",
    "Trace": "vcost.trace",
    "read_trace": "vcost.trace_io",
    "write_trace": "vcost.trace_io",
    "validate_trace": "vcost.trace_io",
    "compute_indicators": "vcost.indicators",
    "Store": "vcost.store",
    "VcostError": "vcost.errors",
}
_SUBPACKAGES = frozenset(
    {
        "allocation",
        "analysis",
        "answers",
        "audit",
        "errors",
        "grading",
        "harness",
        "indicators",
        "judges",
        "models",
        "plant",
        "rehearsal",
        "release",
        "reliability",
        "report",
        "sandbox",
        "simulate",
        "spec",
        "stats",
        "store",
        "tasks",
        "trace",
        "trace_io",
    }
)

__all__ = sorted(["__version__", *_NAMES])


def __getattr__(name: str) -> Any:
    """Load a curated name or a subpackage on first use (PEP 562)."""
    if name == "__version__":
        value: Any = _installed_version()
    elif name in _NAMES:
        value = getattr(import_module(_NAMES[name]), name)
    elif name in _SUBPACKAGES:
        value = import_module(f"vcost.{name}")
    else:
        raise AttributeError(f"module 'vcost' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_NAMES, *_SUBPACKAGES})
