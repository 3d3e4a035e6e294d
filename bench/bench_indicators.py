"""Benchmark: all indicators on a synthetic trace of 1,000,000 check episodes.

Runs vcost's ``compute_indicators`` and, in the same process on the same trace, an honest
vectorised numpy/pandas implementation of the same numbers: groupby for the point indicators,
per-output Clopper-Pearson intervals and VCE states (scipy's beta quantiles on arrays), and the
two-way cluster bootstrap as one matrix product per model and chunk of replicates (verifier x
output multiplicity weights times the episode columns, the textbook vectorisation; no Python
loop over replicates). The older per-replicate pandas loop is kept as ``--loop-baseline`` for
comparison with the figures it produced. Both use the same number of bootstrap replicates, by
default vcost's default (1,000). Both may use a second core (vcost draws the next chunk of
bootstrap multiplicities on a worker thread; numpy's BLAS may thread the baseline's products).
Prints the wall and CPU times (CPU time is steadier on a shared machine), the load average
before and after, and the ratios, checks that the point estimates and the replicate spread
agree, and appends a JSON line to bench/results/indicators.jsonl.

    python bench/bench_indicators.py [--episodes 1000000] [--reps 1000] [--loop-baseline]
                                     [--note "branch, quiet"]
"""

from __future__ import annotations

import argparse
import json
import os
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


def _counts(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """k resamples of n clusters: how often each was drawn (Multinomial(n, 1/n) counts)."""
    draws = rng.integers(0, n, size=(k, n)) + np.arange(k)[:, None] * n
    return np.bincount(draws.ravel(), minlength=k * n).reshape(k, n).astype(np.float32)


def numpy_baseline(answers: pd.DataFrame, episodes: pd.DataFrame, reps: int) -> pd.DataFrame:
    """The same indicators vectorised: the bootstrap is a weights-matrix product per model."""
    df = episodes.merge(answers, on="answer_id")
    df = df[df["role"] == "model"]
    inc = (df["ground_truth"] == "incorrect").to_numpy()
    verdict = (df["termination"] == "verdict").to_numpy()
    accept = (df["verdict"] == "accept").to_numpy()
    right = verdict & (accept != inc)
    conf = df["confidence"].to_numpy(float)
    cols = {
        "success": right,
        "wrong": verdict & ~right,
        "exhausted": (df["termination"] == "budget_exhausted").to_numpy(),
        "unverifiable": (df["termination"] == "unverifiable").to_numpy(),
        "premature": verdict & ~right & (np.nan_to_num(conf) >= 0.9),
        "usage": (df["effort"] / df["budget"]).to_numpy(float),
        "effort": df["effort"].to_numpy(float),
    }
    names = list(cols)
    values = np.column_stack([np.asarray(cols[c], dtype=float) for c in names])
    codes, _ = pd.factorize(df["answer_id"])
    m = np.bincount(codes)
    fail = m - np.bincount(codes, weights=cols["success"].astype(float))
    lower = np.where(fail == 0, 0.0, beta.ppf(0.025, fail, m - fail + 1))
    upper = np.where(fail == m, 1.0, beta.ppf(0.975, fail + 1, m - fail))
    np.select([lower >= 0.5, upper < 0.5], ["confirmed", "not"], "inconclusive")
    rng = np.random.default_rng(0)
    rows = []
    models = df["model_id"].to_numpy()
    for model in pd.unique(models):
        idx = np.flatnonzero(models == model)
        v, _ = pd.factorize(df["verifier_id"].to_numpy()[idx])
        o, _ = pd.factorize(df["answer_id"].to_numpy()[idx])
        y = np.column_stack([values[idx], np.ones(len(idx))])
        strata = {"all": np.ones(len(idx), bool), "gt_incorrect": inc[idx],
                  "gt_correct": ~inc[idx]}  # fmt: skip
        blocks = np.column_stack([y * s[:, None] for s in strata.values()]).astype(np.float32)
        sums = np.empty((reps, blocks.shape[1]))
        for start in range(0, reps, 32):
            k = min(32, reps - start)
            w = _counts(rng, v.max() + 1, k)[:, v] * _counts(rng, o.max() + 1, k)[:, o]
            sums[start : start + k] = w @ blocks
        point = blocks.sum(axis=0, dtype=np.float64)
        width = y.shape[1]
        for j, stratum in enumerate(strata):
            block = slice(j * width, (j + 1) * width)
            p = point[block]
            r = sums[:, block]
            means = r[:, :-1] / r[:, -1:]
            lo, hi = np.quantile(means, [0.025, 0.975], axis=0)
            rows.append({"model_id": model, "stratum": stratum,
                         **dict(zip(names, p[:-1] / p[-1], strict=True)),
                         **{f"{n}_lower": a for n, a in zip(names, lo, strict=True)},
                         **{f"{n}_upper": b for n, b in zip(names, hi, strict=True)}})  # fmt: skip
    return pd.DataFrame(rows).set_index("model_id")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=IndicatorSettings().bootstrap_reps)
    parser.add_argument("--loop-baseline", action="store_true",
                        help="also time the old per-replicate pandas loop (minutes)")  # fmt: skip
    parser.add_argument("--note", default="", help="recorded with the figures (branch, load)")
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

    load_before = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    report = compute_indicators(trace, IndicatorSettings(bootstrap_reps=args.reps))
    t_vcost, c_vcost = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"vcost compute_indicators ({args.reps} bootstrap replicates): {t_vcost:.2f} s "
        f"({c_vcost:.2f} s CPU, both threads)"
    )

    t0, c0 = time.perf_counter(), time.process_time()
    base = numpy_baseline(trace.answers, trace.episodes, args.reps)
    t_numpy, c_numpy = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"vectorised numpy/pandas baseline ({args.reps} replicates): {t_numpy:.2f} s "
        f"({c_numpy:.2f} s CPU, all threads)"
    )
    load_after = os.getloadavg()[0]
    print(f"ratio baseline / vcost: {t_numpy / t_vcost:.2f}x (CPU time: {c_numpy / c_vcost:.2f}x)")
    print(f"load average (1 min) {load_before:.2f} before, {load_after:.2f} after")
    t_loop = None
    if args.loop_baseline:
        t0 = time.perf_counter()
        pandas_baseline(trace.answers, trace.episodes, args.reps)
        t_loop = time.perf_counter() - t0
        print(f"per-replicate pandas loop: {t_loop:.2f} s ({t_loop / t_vcost:.1f}x vcost)")

    for mi in report.models:
        row = base[(base.index == mi.model_id) & (base["stratum"] == "all")].iloc[0]
        s_all = mi.strata["all"]
        assert abs(row["success"] - s_all.success.value) < 1e-9
        assert abs(row["usage"] - s_all.observed_budget_consumption.value) < 1e-9
        width = row["success_upper"] - row["success_lower"]
        ours = s_all.success.upper - s_all.success.lower
        assert abs(width / ours - 1) < 0.25, (width, ours)  # same bootstrap, other draws
    print("point estimates agree; interval widths agree within bootstrap noise")

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
                    "vcost_cpu_s": round(c_vcost, 3),
                    "baseline": "vectorised numpy/pandas",
                    "baseline_s": round(t_numpy, 3),
                    "baseline_cpu_s": round(c_numpy, 3),
                    "ratio": round(t_numpy / t_vcost, 2),
                    "loop_baseline_s": None if t_loop is None else round(t_loop, 3),
                    "load_1m": [round(load_before, 2), round(load_after, 2)],
                    "note": args.note,
                }
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
