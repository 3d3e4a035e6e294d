"""End to end on the shipped log that vcost produced itself (src/vcost/examples/audit-checkers):
read, audit, table, JSON, plots; numbers checked against a plain recount of the file."""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections import defaultdict
from pathlib import Path

import pytest
from rich.console import Console

import vcost
from vcost.audit import AuditSettings, audit, read_results, render_audit, write_plots
from vcost.stats.audit import Verdict, verification_floor

EXAMPLE = Path(vcost.__file__).parent / "examples" / "audit-checkers"
LOG = EXAMPLE / "results.csv.gz"
CHECKERS = {
    "edge-tests",
    "first-3-tests",
    "random-1-test",
    "random-5-tests",
    "random-half",
    "typical-tests",
}


def recount() -> dict[str, list[float]]:
    """Per checker, its 0/1 scores, read with the csv module (independent of vcost's reader)."""
    scores: dict[str, list[float]] = defaultdict(list)
    with gzip.open(LOG, "rt", encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            scores[row["model"]].append(float(row["correct"]))
    return scores


@pytest.fixture(scope="module")
def report() -> object:
    return audit(read_results(LOG), AuditSettings(reps=1000, seed=0))


def test_the_log_is_shipped_and_described() -> None:
    """The log ships with the package, with a README that says how it was made and that the
    "models" are rule-based checkers, not language models."""
    readme = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    assert "scripts/make_audit_example.py" in readme
    assert "no language model" in readme
    assert set(recount()) == CHECKERS
    assert all(len(v) == 1269 for v in recount().values())


def test_audit_numbers_match_a_recount(report: object) -> None:
    """Accuracies equal a plain recount; floors are (L-hat eps / n)^(1/3); 15 pairs, all three
    verdicts occur; the near-tie random-5-tests vs typical-tests (0.800 vs 0.786) is noise."""
    bench = report.benchmarks[0]  # type: ignore[attr-defined]
    assert bench.benchmark == "vcost-bank-code"
    assert bench.n == 1269
    counts = recount()
    for m in bench.models:
        assert m.accuracy.value == pytest.approx(sum(counts[m.model]) / 1269)
        assert m.floor.value == pytest.approx(
            verification_floor(1269, m.error_rate, lipschitz=m.lipschitz.value)
        )
    assert bench.ranking[0] == "edge-tests"
    assert bench.ranking[-1] == "random-1-test"
    assert len(bench.pairs) == 15
    assert {p.accuracy.verdict for p in bench.pairs} == set(Verdict)
    pair = next(
        p for p in bench.pairs if {p.model_a, p.model_b} == {"random-5-tests", "typical-tests"}
    )
    assert pair.accuracy.verdict is Verdict.NOISE
    assert pair.accuracy.gap == pytest.approx(0.0142, abs=1e-3)
    assert [s.subject for s in bench.subjects] == [
        "boundary",
        "missed-edge-case",
        "reference",
        "wrong-condition",
    ]


def test_table_json_and_plots(report: object, tmp_path: Path) -> None:
    """The readable table names every checker and verdict; the JSON is valid without NaN;
    both SVG plots are written."""
    buffer = io.StringIO()
    render_audit(report, Console(file=buffer, width=140, highlight=False))  # type: ignore[arg-type]
    text = buffer.getvalue()
    for name in CHECKERS:
        assert name in text
    for word in ("verifiable", "marginal", "noise", "ranking", "Subjects"):
        assert word in text
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))  # type: ignore[attr-defined]
    assert data["benchmarks"][0]["n"] == 1269
    paths = write_plots(report, tmp_path)  # type: ignore[arg-type]
    assert all(p.stat().st_size > 5000 for p in paths)
