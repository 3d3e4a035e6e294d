"""The top-level package: curated names and subpackages load on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import vcost


def test_curated_names_resolve_to_their_modules() -> None:
    from vcost.spec import StudySpec
    from vcost.trace_io import read_trace

    assert vcost.StudySpec is StudySpec
    assert vcost.read_trace is read_trace
    assert vcost.stats.clopper_pearson(3, 3).lower == pytest.approx(0.2924, abs=1e-4)
    assert "judges" in dir(vcost)


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        vcost.nope  # noqa: B018


def test_importing_vcost_loads_no_heavy_module() -> None:
    heavy = "('pandas', 'numpy', 'vcost.stats')"
    code = f"import sys, vcost; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_grade_command_loads_only_what_it_uses() -> None:
    """Issue 14 (`vcost grade` start-up, counted in modules rather than timed): the grade
    command loads no model client, no statistics stack, not importlib.metadata (the version
    is read only for --version and written metadata) and, for --json, not rich (only the
    progress bar and the table use it)."""
    unwanted = (
        "importlib.metadata",
        "rich",
        "vcost.models",
        "vcost.stats",
        "numpy",
        "pandas",
        "httpx",
    )
    code = (
        "import sys; from vcost.cli import cli; cli.get_command(None, 'grade'); "
        f"print(sorted(m for m in {unwanted!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_version_option_prints_the_installed_version() -> None:
    from importlib.metadata import version

    out = subprocess.run(
        [sys.executable, "-c", "from vcost.cli import main; main()", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"vcost, version {version('vcost')}\n"
    assert vcost.__version__ == version("vcost")
