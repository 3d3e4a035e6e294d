"""Benchmark: the verifiability audit of ~27,000 items x 6 models with 1,000 bootstrap resamples.

The log is **synthetic** (drawn here, seeded): the five benchmark sizes of Wang (2026) (MMLU
14,042 items in 57 subjects, TruthfulQA 817, ARC-Challenge 1,172, HellaSwag 10,042, WinoGrande
1,267: 27,340 items), six models whose per-item correctness shares an item difficulty, and
miscalibrated confidences. vcost's ``audit`` (every resample of a benchmark is one matrix of item
multiplicities, every resampled statistic one matrix product) runs against a straightforward
per-resample loop over the same statistics in the same process: per resample, draw indices, take
the items, compute each model's accuracy, ECE, Lipschitz estimate and floor with the library's
scalar functions, the ranking and pair flips, and the per-subject rankings. The two use
different random draws, so the check is that point estimates agree exactly and bootstrap
summaries agree within Monte Carlo error. Prints both times and the ratio; appends a JSON line
to bench/results/audit.jsonl.

    python bench/bench_audit.py [--reps 1000]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from vcost import __version__
from vcost.audit import AuditSettings, EvalResults, audit
from vcost.stats.audit import verification_floor
from vcost.stats.calibration import expected_calibration_error, lipschitz_estimate

BENCHMARKS = {
    "mmlu": 14_042,
    "truthfulqa": 817,
    "arc_challenge": 1_172,
    "hellaswag": 10_042,
    "winogrande": 1_267,
}
MODELS = ("model-a", "model-b", "model-c", "model-d", "model-e", "model-f")
SKILL = (1.6, 1.5, 1.45, 1.2, 0.9, 0.6)  # logit offsets: two near-ties, a spread


def synthetic_log(seed: int = 1) -> EvalResults:
    """A synthetic per-item log (clearly not model output), in the audit's own frame."""
    rng = np.random.default_rng(seed)
    parts = []
    for bench, n in BENCHMARKS.items():
        difficulty = rng.normal(0.0, 1.2, n)
        subject = (
            np.array([f"subject-{i:02d}" for i in rng.integers(0, 57, n)])
            if bench == "mmlu"
            else np.full(n, "")
        )
        for model, skill in zip(MODELS, SKILL, strict=True):
            p = 1 / (1 + np.exp(-(skill - difficulty)))
            correct = (rng.uniform(size=n) < p).astype(np.float64)
            # overconfident: confidence pulls the true probability towards 1
            confidence = np.clip(p**0.6 + rng.normal(0, 0.03, n), 0.25, 1.0)
            parts.append(
                pd.DataFrame(
                    {
                        "model": model,
                        "benchmark": bench,
                        "item": [f"{bench}-{i}" for i in range(n)],
                        "subject": subject,
                        "correct": correct,
                        "confidence": confidence,
                        "source": "<synthetic>",
                        "line": pd.array([None] * n, dtype="Int64"),
                    }
                )
            )
    return EvalResults(frame=pd.concat(parts, ignore_index=True), sources=("<synthetic>",))


def loop_baseline(results: EvalResults, settings: AuditSettings) -> dict[str, dict[str, float]]:
    """The same bootstrap statistics, one resample at a time (the straightforward way)."""
    rng = np.random.default_rng(settings.seed + 1)
    out: dict[str, dict[str, float]] = {}
    frame = results.frame
    for bench in sorted(frame["benchmark"].unique()):
        sub = frame[frame["benchmark"] == bench]
        wide = sub.pivot(index="item", columns="model", values="correct")
        conf = sub.pivot(index="item", columns="model", values="confidence")
        subject = sub.groupby("item")["subject"].first().reindex(wide.index)
        models = sorted(wide.columns)
        c = wide[models].to_numpy()
        k = conf[models].to_numpy()
        n = c.shape[0]
        labels, codes = np.unique(subject.to_numpy(), return_inverse=True)
        groups = [np.flatnonzero(codes == s) for s in range(len(labels))]
        observed = np.argsort(-c.mean(axis=0), kind="stable")
        changed = 0
        subject_changed = np.zeros(len(labels))
        ece = np.empty((settings.reps, len(models)))
        floor = np.empty((settings.reps, len(models)))
        for r in range(settings.reps):
            draws = [g[rng.integers(0, g.size, g.size)] for g in groups]
            idx = np.concatenate(draws)
            cr, kr = c[idx], k[idx]
            acc = cr.mean(axis=0)
            changed += bool(np.any(np.argsort(-acc, kind="stable") != observed))
            for j in range(len(models)):
                ece[r, j] = expected_calibration_error(kr[:, j], cr[:, j], bins=settings.bins)
                lip = lipschitz_estimate(
                    kr[:, j], cr[:, j], bins=settings.bins, min_count=settings.min_count
                ).value
                floor[r, j] = verification_floor(n, max(1 - acc[j], 3 / n), lipschitz=lip)
            if len(labels) > 1:
                for s, (g, d) in enumerate(zip(groups, draws, strict=True)):
                    ref = np.argsort(-c[g].mean(axis=0), kind="stable")
                    subject_changed[s] += bool(
                        np.any(np.argsort(-c[d].mean(axis=0), kind="stable") != ref)
                    )
        out[str(bench)] = {
            "instability": changed / settings.reps,
            "ece_upper_0": float(np.quantile(ece[:, 0], 0.975)),
            "floor_upper_0": float(np.quantile(floor[:, 0], 0.975)),
            "subject_instability_mean": float(subject_changed.mean() / settings.reps),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    args = parser.parse_args()
    t0 = time.perf_counter()
    results = synthetic_log()
    items = int(results.frame.groupby("benchmark")["item"].nunique().sum())
    print(
        f"synthetic log: {items:,} items x {len(MODELS)} models = {len(results.frame):,} rows "
        f"in {len(BENCHMARKS)} benchmarks ({time.perf_counter() - t0:.1f} s to draw)"
    )
    settings = AuditSettings(reps=args.reps, seed=0)

    t0 = time.perf_counter()
    report = audit(results, settings)
    t_vcost = time.perf_counter() - t0
    print(f"vcost audit, vectorised ({args.reps} resamples): {t_vcost:.2f} s")

    t0 = time.perf_counter()
    base = loop_baseline(results, settings)
    t_loop = time.perf_counter() - t0
    print(f"per-resample loop baseline ({args.reps} resamples): {t_loop:.2f} s")
    print(f"ratio loop / vcost: {t_loop / t_vcost:.1f}x")

    for bench in report.benchmarks:
        b = base[bench.benchmark]
        first = next(m for m in bench.models if m.model == MODELS[0])
        assert first.ece is not None
        assert abs(bench.instability - b["instability"]) < 0.06, (bench.benchmark, b)
        assert abs(first.ece.upper - b["ece_upper_0"]) < 0.004, (bench.benchmark, b)
        assert abs(first.floor.upper - b["floor_upper_0"]) < 0.1 * first.floor.value, b
        if bench.subjects:
            mean = float(np.mean([s.instability for s in bench.subjects]))
            assert abs(mean - b["subject_instability_mean"]) < 0.03, (mean, b)
        print(
            f"  {bench.benchmark:14s} n={bench.n:6,d} instability vcost {bench.instability:.3f} "
            f"loop {b['instability']:.3f}; ECE upper {first.ece.upper:.4f} / "
            f"{b['ece_upper_0']:.4f}"
        )
    print("bootstrap summaries agree within Monte Carlo error")

    out = Path(__file__).parent / "results" / "audit.jsonl"
    out.parent.mkdir(exist_ok=True)
    with out.open("a", encoding="utf-8") as fh:
        fh.write(
            json.dumps(
                {
                    "at": datetime.now(UTC).isoformat(timespec="seconds"),
                    "vcost": __version__,
                    "python": platform.python_version(),
                    "items": items,
                    "models": len(MODELS),
                    "reps": args.reps,
                    "vcost_s": round(t_vcost, 3),
                    "loop_s": round(t_loop, 3),
                    "ratio": round(t_loop / t_vcost, 2),
                }
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
