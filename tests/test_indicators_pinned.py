"""Seeded indicator values pinned bit for bit: speed work must not change a published number.

``tests/data/indicators_pinned.json`` holds the full report (every point estimate, interval and
per-output row) of the traces built here, computed by vcost before the bootstrap and episode
frame were made faster (branch s6-indicators). Regenerate it only for a deliberate change of
results: ``PYTHONPATH=src python tests/test_indicators_pinned.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from vcost.indicators import IndicatorSettings, compute_indicators
from vcost.simulate import SyntheticStudy, synthetic_trace
from vcost.trace import Trace

PINNED = Path(__file__).parent / "data" / "indicators_pinned.json"


def _mixed(trace: Trace) -> Trace:
    """Mixed budgets, unresolved ground truth, missing experience and confidence, a
    non-check block, categorical and numeric id columns: the slower paths of the frame."""
    answers = trace.answers.copy()
    answers.loc[answers.index[::7], "ground_truth"] = "indeterminate"
    episodes = trace.episodes.copy()
    rows = episodes.index[::5]
    episodes.loc[rows, "budget"] = 20.0
    episodes.loc[rows, "effort"] = episodes.loc[rows, "effort"] * 1.3
    episodes.loc[episodes.index[::11], "confidence"] = np.nan
    episodes.loc[episodes.index[::13], "block"] = "practice"
    episodes["verifier_id"] = episodes["verifier_id"].astype("category")
    verifiers = trace.verifiers.copy()
    verifiers.loc[verifiers.index[::4], "experience"] = None
    return Trace(answers=answers, episodes=episodes, verifiers=verifiers)


def _no_experience(trace: Trace) -> Trace:
    return Trace(answers=trace.answers, episodes=trace.episodes)


def cases() -> dict[str, tuple[Trace, IndicatorSettings]]:
    """The pinned traces and settings."""
    three = synthetic_trace(
        SyntheticStudy(
            models=("m-a", "m-b", "m-c"),
            model_shift=(0.0, 0.5, 1.0),
            outputs_per_model=60,
            verifiers=30,
            seed=3,
        )
    )
    big = synthetic_trace(
        SyntheticStudy(outputs_per_model=250, verifiers=90, baseline_outputs=20, seed=8)
    )
    return {
        "three_models": (three, IndicatorSettings(bootstrap_reps=200, seed=5)),
        "odd_chunks": (three, IndicatorSettings(bootstrap_reps=77, seed=0, alpha=0.1)),
        "mixed": (_mixed(three), IndicatorSettings(bootstrap_reps=150, seed=2)),
        "no_experience": (_no_experience(big), IndicatorSettings(bootstrap_reps=100, seed=9)),
        "big_default_reps": (big, IndicatorSettings()),
    }


def _report(trace: Trace, settings: IndicatorSettings, *, outputs: bool) -> dict[str, Any]:
    report = compute_indicators(trace, settings)
    body = report.to_dict()
    del body["computed_at"], body["versions"]
    if outputs:
        table = report.outputs.astype(object).where(pd.notna(report.outputs), None)
        body["outputs"] = table.to_dict(orient="list")
    return body


WITH_OUTPUTS = ("three_models", "mixed")


def _same(a: Any, b: Any, where: str) -> None:
    """Exact equality (floats to 1e-12 relative), NaN/None equal to themselves; fails naming
    the first differing path."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert list(a) == list(b), where
        for key in a:
            _same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return
    elif isinstance(a, float) and isinstance(b, float):
        # the last bits of a float sum depend on the CPU's vector width (the agreement alpha
        # differed by 2 ulps between two machines); a changed result differs far more
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15), f"{where}: {a!r} != {b!r}"
    else:
        assert type(a) is type(b), f"{where}: {a!r} != {b!r}"
        assert a == b, f"{where}: {a!r} != {b!r}"


@pytest.mark.parametrize("name", list(cases()))
def test_indicators_are_bit_identical_to_the_pinned_values(name: str) -> None:
    """Every value of the report equals the pinned one (same seed, same numbers; floats to
    their last bits)."""
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))[name]
    trace, settings = cases()[name]
    got = json.loads(json.dumps(_report(trace, settings, outputs=name in WITH_OUTPUTS)))
    _same(got, pinned, name)


if __name__ == "__main__":
    data = {n: _report(*c, outputs=n in WITH_OUTPUTS) for n, c in cases().items()}
    PINNED.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {PINNED} ({PINNED.stat().st_size:,} bytes)")
