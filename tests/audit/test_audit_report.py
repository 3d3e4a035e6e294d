"""Tests for vcost.audit.audit: every number against the library's single calls, the
vectorised bootstrap against a loop over the same resamples, partial and bad input, plots."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from vcost.audit import (
    AuditSettings,
    EvalResults,
    audit,
    resample_weights,
    write_plots,
)
from vcost.errors import InputError
from vcost.stats.audit import Verdict, classify_gap, paired_difference_floor, verification_floor
from vcost.stats.calibration import (
    debiased_calibration_error,
    expected_calibration_error,
    lipschitz_estimate,
)


def synthetic(
    n: int = 400,
    skills: tuple[float, ...] = (0.9, 0.75, 0.74),
    seed: int = 0,
    subjects: int = 0,
    confidence: bool = True,
) -> list[dict[str, object]]:
    """A small seeded per-item log (synthetic, for tests)."""
    rng = np.random.default_rng(seed)
    records: list[dict[str, object]] = []
    for j, skill in enumerate(skills):
        conf = np.clip(rng.normal(skill, 0.1, n), 0, 1)
        correct = rng.uniform(size=n) < skill
        for i in range(n):
            row: dict[str, object] = {
                "model": f"model-{j}",
                "benchmark": "bench",
                "item": f"i{i:04d}",
                "correct": int(correct[i]),
            }
            if confidence:
                row["confidence"] = float(conf[i])
            if subjects:
                row["subject"] = f"s{i % subjects}"
            records.append(row)
    return records


@pytest.fixture(scope="module")
def report_and_data() -> tuple[object, EvalResults]:
    results = EvalResults.from_records(synthetic(subjects=4))
    return audit(results, AuditSettings(reps=300, seed=3)), results


def test_point_numbers_are_the_library_calls(report_and_data: tuple[object, EvalResults]) -> None:
    """Every number in the report is one library call on the same items: accuracy, ECE (L1,
    L2, max), the debiased error, L-hat, the floor with eps and L-hat, the paired delta_acc,
    and the verdict of gap against the larger floor."""
    report, results = report_and_data
    bench = report.benchmarks[0]  # type: ignore[attr-defined]
    frame = results.frame
    for m in bench.models:
        rows = frame[frame["model"] == m.model].sort_values("item")
        c, y = rows["confidence"].to_numpy(), rows["correct"].to_numpy()
        assert m.accuracy.value == pytest.approx(y.mean())
        assert m.ece.value == pytest.approx(expected_calibration_error(c, y))
        assert m.ece_l2 == pytest.approx(expected_calibration_error(c, y, norm="l2"))
        assert m.mce == pytest.approx(expected_calibration_error(c, y, norm="max"))
        assert m.debiased == pytest.approx(debiased_calibration_error(c, y).value)
        lip = lipschitz_estimate(c, y).value
        assert m.lipschitz.value == pytest.approx(lip)
        assert m.floor.value == pytest.approx(verification_floor(400, 1 - y.mean(), lipschitz=lip))
        assert m.accuracy.lower <= m.accuracy.value <= m.accuracy.upper
        assert m.floor.lower <= m.floor.upper
    by_name = {m.model: m for m in bench.models}
    for pair in bench.pairs:
        a = frame[frame["model"] == pair.model_a].sort_values("item")["correct"].to_numpy()
        b = frame[frame["model"] == pair.model_b].sort_values("item")["correct"].to_numpy()
        assert pair.accuracy.gap == pytest.approx(a.mean() - b.mean())
        assert pair.accuracy.gap >= 0
        assert pair.noise_floor == pytest.approx(paired_difference_floor(a, b))
        floor = max(by_name[pair.model_a].floor.value, by_name[pair.model_b].floor.value)
        assert pair.accuracy == classify_gap(a.mean() - b.mean(), floor)
    assert bench.ranking[0] == "model-0"
    assert len(bench.subjects) == 4
    assert sum(s.n for s in bench.subjects) == 400


def test_close_models_are_noise_and_unstable(report_and_data: tuple[object, EvalResults]) -> None:
    """model-1 and model-2 (skills 0.75 and 0.74, 400 items) are noise and flip often;
    model-0 (0.9) is far above both and its pairs never flip."""
    report, _ = report_and_data
    bench = report.benchmarks[0]  # type: ignore[attr-defined]
    pairs = {(p.model_a, p.model_b): p for p in bench.pairs}
    close = pairs.get(("model-1", "model-2")) or pairs[("model-2", "model-1")]
    assert close.accuracy.verdict is Verdict.NOISE
    assert 0.05 < close.flip_rate < 0.95
    assert pairs[("model-0", "model-1")].flip_rate == 0.0
    assert 0.05 < bench.instability < 0.95
    assert bench.top_instability == 0.0


def test_resample_weights_are_stratified_multiplicities() -> None:
    """Each row counts n draws; within each stratum the counts sum to its size; over many
    rows every item is drawn once per row on average."""
    strata = np.repeat([0, 1, 2], [5, 10, 85])
    w = resample_weights(strata, 2000, np.random.default_rng(0))
    assert w.shape == (2000, 100)
    assert np.all(w.sum(axis=1) == 100)
    assert np.all(w[:, :5].sum(axis=1) == 5)
    assert np.all(w[:, 5:15].sum(axis=1) == 10)
    assert abs(float(w.mean()) - 1.0) < 0.01


def test_vectorised_instability_equals_a_loop_over_the_same_resamples() -> None:
    """Replaying the audit's generator: the ranking instability and the pair flip rates equal
    an explicit loop over the same multiplicity rows (one resample at a time)."""
    records = synthetic(n=150, skills=(0.8, 0.78, 0.7), seed=4, confidence=False)
    settings = AuditSettings(reps=200, seed=9, chunk=64)
    report = audit(EvalResults.from_records(records), settings)
    bench = report.benchmarks[0]
    models = sorted({str(r["model"]) for r in records})
    correct = np.array(
        [[float(r["correct"]) for r in records if r["model"] == m] for m in models]  # type: ignore[arg-type]
    ).T
    rng = np.random.default_rng(9)
    weights = np.vstack([resample_weights(np.zeros(150), k, rng) for k in (64, 64, 64, 8)])
    observed = list(np.argsort(-correct.mean(axis=0), kind="stable"))
    changed, flips = 0, {}
    for row in weights:
        acc = row @ correct / 150
        changed += list(np.argsort(-acc, kind="stable")) != observed
        for pair in bench.pairs:
            a, b = models.index(pair.model_a), models.index(pair.model_b)
            flips[(a, b)] = flips.get((a, b), 0) + int(acc[b] > acc[a])
    assert bench.instability == pytest.approx(changed / 200)
    for pair in bench.pairs:
        a, b = models.index(pair.model_a), models.index(pair.model_b)
        assert pair.flip_rate == pytest.approx(flips[(a, b)] / 200)


def test_bootstrap_interval_coverage() -> None:
    """Simulation (seeded): 100 logs of 2 models x 200 items with true accuracies 0.7 and
    0.6; the 95% percentile interval of the audit covers the true accuracy in 88-100% of
    logs (nominal 95%; the Monte Carlo standard error at 100 logs is 2.2 points)."""
    rng = np.random.default_rng(21)
    covered = 0
    for trial in range(100):
        rows = []
        for name, p in (("a", 0.7), ("b", 0.6)):
            hits = rng.uniform(size=200) < p
            rows += [
                {"model": name, "benchmark": "x", "item": str(i), "correct": int(h)}
                for i, h in enumerate(hits)
            ]
        report = audit(EvalResults.from_records(rows), AuditSettings(reps=300, seed=trial))
        a = next(m for m in report.benchmarks[0].models if m.model == "a")
        covered += a.accuracy.lower <= 0.7 <= a.accuracy.upper
    assert 0.88 <= covered / 100 <= 1.0


def test_missing_items_are_labelled_partial_or_strict_errors() -> None:
    """Bad input: a model missing items. By default the audit uses the items all models share
    and says so; with strict=True it is an error naming the model, the item and where it is."""
    records = [
        r
        for r in synthetic(n=50)
        if not (r["model"] == "model-2" and r["item"] in ("i0003", "i0007"))
    ]
    report = audit(EvalResults.from_records(records, source="log.csv"), AuditSettings(reps=50))
    bench = report.benchmarks[0]
    assert bench.partial
    assert bench.n == 48
    assert any("model 'model-2' lacks 2 of 50 items (i0003, i0007)" in n for n in bench.notes)
    assert report.to_dict()["benchmarks"][0]["partial"] is True
    with pytest.raises(InputError) as caught:
        audit(EvalResults.from_records(records, source="log.csv"), AuditSettings(strict=True))
    message = str(caught.value)
    assert "model 'model-2' has no result for item 'i0003'" in message
    assert message.startswith("log.csv")


def test_one_item_benchmark_is_skipped_or_an_error() -> None:
    """Bad input: a benchmark with one item cannot be audited; it is skipped with the reason
    (and the rest audited); alone, or with strict=True, it is an error."""
    records = synthetic(n=30)
    lone = [
        {"model": m, "benchmark": "tiny", "item": "only", "correct": 1}
        for m in ("model-0", "model-1")
    ]
    report = audit(EvalResults.from_records(records + lone), AuditSettings(reps=50))
    assert [b.benchmark for b in report.benchmarks] == ["bench"]
    assert report.skipped[0].benchmark == "tiny"
    assert "at least 2" in report.skipped[0].reason
    with pytest.raises(InputError, match="no benchmark could be audited"):
        audit(EvalResults.from_records(lone), AuditSettings(reps=50))
    with pytest.raises(InputError, match="benchmark 'tiny' has 1 item"):
        audit(EvalResults.from_records(records + lone), AuditSettings(reps=50, strict=True))


def test_without_confidences_l_is_assumed_one_and_labelled() -> None:
    """No confidence column: calibration is None, L = 1 is used and noted; a model with no
    errors gets eps = 3 / n in its floor (the rule of three), not 0."""
    records = synthetic(n=60, skills=(1.0, 0.8), confidence=False)
    bench = audit(EvalResults.from_records(records), AuditSettings(reps=50)).benchmarks[0]
    perfect = bench.models[0]
    assert perfect.accuracy.value == 1.0
    assert perfect.ece is None
    assert perfect.lipschitz_source == "assumed"
    assert perfect.floor.value == pytest.approx(verification_floor(60, 3 / 60))
    assert any("L = 1 assumed" in note for note in bench.notes)
    assert bench.pairs[0].calibration is None


def test_subject_clash_is_an_error() -> None:
    """One item with two subjects (different per model) is an error naming the item."""
    records = synthetic(n=10, subjects=2)
    records[-1] = {**records[-1], "subject": "other"}
    with pytest.raises(InputError, match="item 'i0009' of benchmark 'bench' has different"):
        audit(EvalResults.from_records(records), AuditSettings(reps=10))


def test_json_is_valid_and_reproducible(report_and_data: tuple[object, EvalResults]) -> None:
    """to_dict() is JSON without NaN; the same seed gives the same report."""
    report, results = report_and_data
    text = json.dumps(report.to_dict(), allow_nan=False)  # type: ignore[attr-defined]
    data = json.loads(text)
    assert data["benchmarks"][0]["verdict_counts"]["noise"] >= 1
    assert data["settings"]["reps"] == 300
    again = audit(results, AuditSettings(reps=300, seed=3))
    assert again.to_dict() == report.to_dict()  # type: ignore[attr-defined]


def test_plots_are_deterministic_svg(
    tmp_path: Path, report_and_data: tuple[object, EvalResults]
) -> None:
    """Two SVG files, valid XML, with their titles as text; a second run writes the same
    bytes (fixed hash salt, no date)."""
    report, _ = report_and_data
    first = write_plots(report, tmp_path / "a")  # type: ignore[arg-type]
    second = write_plots(report, tmp_path / "b")  # type: ignore[arg-type]
    assert [p.name for p in first] == ["floor_vs_n.svg", "detection_power.svg"]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes()
        root = ET.parse(a).getroot()
        assert root.tag.endswith("svg")
    assert "Verification floor" in first[0].read_text()
    assert "Phase transition" in first[1].read_text()


def test_settings_validation() -> None:
    """Settings that cannot work are refused up front."""
    with pytest.raises(ValueError, match="reps"):
        AuditSettings(reps=0)
    with pytest.raises(ValueError, match="alpha"):
        AuditSettings(alpha=1.5)
    assert math.isclose(AuditSettings().alpha, 0.05)
