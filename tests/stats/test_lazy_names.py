"""vcost.stats loads each name from its submodule on first use (PEP 562).

`vcost judge run` needs only a Clopper-Pearson interval; scipy.stats (about half a second to
import) is for the audit, calibration, PPI and VCE modules.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import vcost.stats


def test_every_public_name_is_its_submodules_object() -> None:
    assert set(vcost.stats.__all__) == set(vcost.stats._SOURCES)
    for name in vcost.stats.__all__:
        module = importlib.import_module(f"vcost.stats.{vcost.stats._SOURCES[name]}")
        assert getattr(vcost.stats, name) is getattr(module, name), name
    assert set(vcost.stats.__all__) <= set(dir(vcost.stats))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        vcost.stats.nope  # noqa: B018
    with pytest.raises(ImportError):
        from vcost.stats import nope  # type: ignore[attr-defined]  # noqa: F401


@pytest.mark.parametrize(
    ("name", "loads_scipy_stats"), [("clopper_pearson", False), ("plan_audit", True)]
)
def test_an_interval_does_not_load_scipy_stats(name: str, loads_scipy_stats: bool) -> None:
    code = f"import sys; from vcost.stats import {name}; print('scipy.stats' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(loads_scipy_stats)
