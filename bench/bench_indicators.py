"""Benchmark: all indicators on a synthetic trace of 1,000,000 check episodes.

Runs vcost's ``compute_indicators`` and, in the same process on the same trace, a
straightforward pandas implementation of the same numbers (groupby for the point indicators,
per-output Clopper-Pearson intervals and VCE states, and the two-way cluster bootstrap done by
mapping resampled multiplicities onto episodes and grouping, replicate by replicate). Both use
the same number of bootstrap replicates. Prints both times and the ratio, checks that the
point estimates agree, and appends a JSON line to bench/results/indicators.jsonl.

    python bench/bench_indicators.py [--episodes 1000000] [--reps 200]
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
from scipy.stats import beta

from vcost import __version__
from vcost.indicators import IndicatorSettings, compute_indicators
from vcost.simulate import SyntheticStudy, synthetic_trace


def pandas_baseline(answers: pd.DataFrame, episodes: pd.DataFrame, reps: int) -> pd.DataFrame:
    """The same indicators with plain pandas: joins, groupby, and a replicate loop."""
    df = episodes.merge(answers, on="answer_id")
    df = df[df["role"] == "model"]
    inc = df["ground_truth"] == "incorrect"
    verdict = df["termination"] == "verdict"
    right = verdict & ((df["verdict"] == "accept") != inc)
    df = df.assign(
        success=right.astype(float),
        wrong=(verdict & ~right).astype(float),
        exhausted=(df["termination"] == "budget_exhausted").astype(float),
        unverifiable=(df["termination"] == "unverifiable").astype(float),
        premature=(verdict & ~right & (df["confidence"] >= 0.9)).astype(float),
        usage=df["effort"] / df["budget"],
        stratum=np.where(inc, "gt_incorrect", "gt_correct"),
    )
    per_output = df.groupby("answer_id").agg(
        m=("success", "size"), k=("success", "sum"), gt=("ground_truth", "first")
    )
    fail = per_output["m"] - per_output["k"]
    lower = beta.ppf(0.025, fail, per_output["m"] - fail + 1)
    upper = beta.ppf(0.975, fail + 1, per_output["m"] - fail)
    lower = np.where(fail == 0, 0.0, lower)
    upper = np.where(fail == per_output["m"], 1.0, upper)
    per_output["vce"] = np.select([lower >= 0.5, upper < 0.5], ["confirmed", "not"], "inconclusive")
    cols = ["success", "wrong", "exhausted", "unverifiable", "premature", "usage", "effort"]
    point = pd.concat(
        [
            df.groupby("model_id")[cols].mean().assign(stratum="all"),
            df.groupby(["model_id", "stratum"])[cols].mean().reset_index("stratum"),
        ]
    )
    rng = np.random.default_rng(0)
    replicates = []
    for model, part in df.groupby("model_id"):
        verifiers = part["verifier_id"].unique()
        outputs = part["answer_id"].unique()
        for _ in range(reps):
            wv = pd.Series(
                rng.multinomial(len(verifiers), np.full(len(verifiers), 1 / len(verifiers))),
                index=verifiers,
            )
            wo = pd.Series(
                rng.multinomial(len(outputs), np.full(len(outputs), 1 / len(outputs))),
                index=outputs,
            )
            w = part["verifier_id"].map(wv).to_numpy() * part["answer_id"].map(wo).to_numpy()
            weighted = part[cols].mul(w, axis=0).assign(w=w, stratum=part["stratum"])
            sums = weighted.groupby("stratum").sum()
            replicates.append((sums[cols].div(sums["w"], axis=0)).assign(model_id=model))
    pd.concat(replicates)  # the replicate table a user would take percentiles of
    return point


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args()
    models = 5
    m = 6
    per_model = args.episodes // (models * m)
    study = SyntheticStudy(
        models=tuple(f"syn-model-{i}" for i in range(models)),
        model_shift=tuple(np.linspace(0, 1, models)),
        outputs_per_model=per_model,
        baseline_outputs=0,
        verifiers=2000,
        verdicts_per_answer=m,
        seed=1,
    )
    t0 = time.perf_counter()
    trace = synthetic_trace(study)
    print(
        f"synthetic trace: {len(trace.episodes):,} episodes, {len(trace.answers):,} answers, "
        f"{study.verifiers} verifiers ({time.perf_counter() - t0:.1f} s to draw)"
    )

    t0 = time.perf_counter()
    report = compute_indicators(trace, IndicatorSettings(bootstrap_reps=args.reps))
    t_vcost = time.perf_counter() - t0
    print(f"vcost compute_indicators ({args.reps} bootstrap replicates): {t_vcost:.2f} s")

    t0 = time.perf_counter()
    base = pandas_baseline(trace.answers, trace.episodes, args.reps)
    t_pandas = time.perf_counter() - t0
    print(f"pandas groupby baseline ({args.reps} bootstrap replicates): {t_pandas:.2f} s")
    print(f"ratio baseline / vcost: {t_pandas / t_vcost:.1f}x")

    for mi in report.models:
        row = base[(base.index == mi.model_id) & (base["stratum"] == "all")].iloc[0]
        assert abs(row["success"] - mi.strata["all"].success.value) < 1e-9
        assert abs(row["usage"] - mi.strata["all"].observed_budget_consumption.value) < 1e-9
    print("point estimates agree between the two implementations")

    out = Path(__file__).parent / "results" / "indicators.jsonl"
    out.parent.mkdir(exist_ok=True)
    with out.open("a", encoding="utf-8") as fh:
        fh.write(
            json.dumps(
                {
                    "at": datetime.now(UTC).isoformat(timespec="seconds"),
                    "vcost": __version__,
                    "python": platform.python_version(),
                    "episodes": len(trace.episodes),
                    "reps": args.reps,
                    "vcost_s": round(t_vcost, 3),
                    "pandas_s": round(t_pandas, 3),
                    "ratio": round(t_pandas / t_vcost, 2),
                }
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
