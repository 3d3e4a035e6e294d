"""Every benchmark script in bench/ still imports against the current library (a renamed or
removed name fails here, not at `make bench` time); nothing is run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.mark.parametrize("script", sorted(BENCH.glob("bench_*.py")), ids=lambda p: p.name)
def test_bench_script_imports(script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCH))  # as `python bench/X.py` runs: its helpers import
    spec = importlib.util.spec_from_file_location(f"bench_{script.stem}", script)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look themselves up
    spec.loader.exec_module(module)
    assert callable(getattr(module, "main", None)), f"{script.name} has no main()"
