"""Benchmark: the study analysis plus report on a 1,000-person simulated crowd, and `vcost plan`.

1. Draws a SYNTHETIC 1,000-participant crowd study (``simulate_panel``: 24 tasks each, with
   activity events), then times ``analyse_study`` + ``render_study`` (HTML, Markdown, JSON).
   Baseline, same run, same attempts: the verification ratio's cluster bootstrap refitting
   lifelines' ``LogNormalAFTFitter`` once per replicate (weighted by the resampled
   multiplicities) vs vcost's vectorised censored-normal solver, on ``--baseline-reps``
   replicates; the time per replicate of each and their ratio.
2. Times ``plan_study`` on ``--sims`` simulated studies of the 4-person core design (task-
   clustered sandwich intervals, ``--workers`` processes). Baseline, same run: a simulated study
   analysed with the analysis's own ratio interval instead (lifelines point fit + 200-replicate
   vectorised bootstrap), on ``--baseline-studies`` studies; time per study and the ratio.

Appends one JSON line to bench/results/analysis.jsonl.

    python bench/bench_analysis.py [--people 1000] [--reps 200] [--sims 1000] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
import warnings
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from vcost import __version__
from vcost.analysis import analyse_study, attempt_table, censored_lognormal, verification_ratio
from vcost.analysis.plan import Design, plan_study
from vcost.analysis.ratio import _cluster_weights, _design
from vcost.report.study import render_study
from vcost.simulate import PanelStudy, simulate_panel


def lifelines_bootstrap(att, reps: int, seed: int = 0) -> float:  # type: ignore[no-untyped-def]
    """The baseline: one lifelines LogNormalAFTFitter fit per bootstrap replicate (seconds)."""
    from lifelines import LogNormalAFTFitter

    design = _design(att, person=False)
    frame = design.copy()
    frame["_T"] = att["effort"].to_numpy(float)
    frame["_E"] = ~att["censored"].to_numpy(bool)
    w = _cluster_weights(att, "tasks+participants", reps, np.random.default_rng(seed))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(reps):
            sub = frame.assign(_W=w[r])[w[r] > 0]
            LogNormalAFTFitter().fit(sub, duration_col="_T", event_col="_E", weights_col="_W")
    return time.perf_counter() - t0


def numpy_bootstrap(att, reps: int, seed: int = 0) -> float:  # type: ignore[no-untyped-def]
    """vcost's path: every replicate in one vectorised censored-normal solve (seconds)."""
    design = _design(att, person=False)
    x = np.column_stack([design.to_numpy(float), np.ones(len(att))])
    w = _cluster_weights(att, "tasks+participants", reps, np.random.default_rng(seed))
    t0 = time.perf_counter()
    censored_lognormal(np.log(att["effort"].to_numpy(float)), ~att["censored"].to_numpy(bool),
                       x, weights=w)  # fmt: skip
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--baseline-reps", type=int, default=10)
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--baseline-studies", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    result: dict[str, object] = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "vcost": __version__,
        "python": platform.python_version(),
        "people": args.people,
        "reps": args.reps,
        "sims": args.sims,
        "workers": args.workers,
    }

    t0 = time.perf_counter()
    sim = simulate_panel(PanelStudy(people=args.people, seed=1))
    labels = sim.tasks.set_index("task_id")["difficulty"]
    t_sim = time.perf_counter() - t0
    print(f"SYNTHETIC crowd: {args.people} people, {len(sim.trace.episodes):,} episodes, "
          f"{len(sim.trace.events):,} events ({t_sim:.1f} s to draw)")  # fmt: skip

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        analysis = analyse_study(sim.trace, difficulty=labels, reps=args.reps)
        t_analyse = time.perf_counter() - t0
        paths = render_study(analysis, Path(tmp) / "report")
        t_total = time.perf_counter() - t0
        size = paths["html"].stat().st_size
    assert analysis.ratio is not None
    print(f"analyse_study ({args.reps} bootstrap replicates): {t_analyse:.1f} s; + report "
          f"(HTML {size / 1e6:.1f} MB, Markdown, JSON): {t_total:.1f} s")  # fmt: skip
    print(f"  overall ratio {analysis.ratio.overall.value:.3f} "
          f"[{analysis.ratio.overall.lower:.3f}, {analysis.ratio.overall.upper:.3f}], "
          f"truth {sim.true_overall_ratio:.3f}")  # fmt: skip

    att = attempt_table(sim.trace, difficulty=labels)
    att = att[att["block"].isin(["do", "check"]) & att["effort"].gt(0)]
    t_life = lifelines_bootstrap(att, args.baseline_reps)
    t_np = numpy_bootstrap(att, args.reps)
    per_life, per_np = t_life / args.baseline_reps, t_np / args.reps
    print(f"baseline, ratio bootstrap on {len(att):,} attempts: lifelines refit per replicate "
          f"{per_life:.3f} s/replicate ({args.baseline_reps} replicates) vs vectorised solver "
          f"{per_np:.4f} s/replicate ({args.reps} replicates): "
          f"{per_life / per_np:.0f}x")  # fmt: skip

    design = Design(4, 24, 6, 10.0)
    t0 = time.perf_counter()
    plan = plan_study([design], sims=args.sims, workers=args.workers)
    t_plan = time.perf_counter() - t0
    row = plan.summary.iloc[0]
    print(f"plan_study: {args.sims} simulated studies of {design.label} with {args.workers} "
          f"workers: {t_plan:.1f} s (ratio width {row['ratio_width']:.3f}, false-accept width "
          f"{row['fa_width']:.3f}, inconclusive {row['inconclusive_share']:.2f})")  # fmt: skip

    t0 = time.perf_counter()
    for seed in range(args.baseline_studies):
        s = simulate_panel(PanelStudy(seed=seed, events=False))
        a = attempt_table(s.trace, difficulty=s.tasks.set_index("task_id")["difficulty"])
        verification_ratio(a, reps=200, seed=seed, weibull=False)
    per_study_boot = (time.perf_counter() - t0) / args.baseline_studies
    per_study_plan = t_plan * args.workers / args.sims
    print(f"baseline, one simulated study with the analysis's interval (lifelines + 200-replicate "
          f"bootstrap): {per_study_boot:.3f} s/study vs plan's sandwich {per_study_plan:.3f} "
          f"s/study per worker: {per_study_boot / per_study_plan:.1f}x")  # fmt: skip

    result.update(
        episodes=len(sim.trace.episodes),
        simulate_s=round(t_sim, 2),
        analyse_s=round(t_analyse, 2),
        analyse_report_s=round(t_total, 2),
        lifelines_s_per_replicate=round(per_life, 4),
        numpy_s_per_replicate=round(per_np, 5),
        bootstrap_ratio=round(per_life / per_np, 1),
        plan_s=round(t_plan, 2),
        plan_s_per_study_worker=round(per_study_plan, 4),
        baseline_s_per_study=round(per_study_boot, 4),
        plan_ratio=round(per_study_boot / per_study_plan, 1),
    )
    out = Path(__file__).parent / "results" / "analysis.jsonl"
    with out.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(result) + "\n")
    print(f"-> {out}")


if __name__ == "__main__":
    main()
