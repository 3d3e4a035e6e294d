"""`vcost plan SPEC`: study planning by simulation (:func:`vcost.analysis.plan_study`).

The spec gives the decision settings (q, alpha, interval), the check budget and do-time cap
(fixed modes; otherwise pass ``--budget``) and the default panel size (``panel_max``) and
verdicts per answer. Options give the design grid (comma-separated lists, every combination),
the assumed effect sizes (defaults: :data:`vcost.simulate.ASSUMPTIONS`) and the targets.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import replace
from pathlib import Path

import click

from vcost.analysis.plan import Design, PlanTargets, plan_study
from vcost.errors import InputError, VcostError
from vcost.report.plan import plan_markdown, render_plan
from vcost.simulate import PanelStudy
from vcost.spec import StudySpec

__all__ = ["plan"]


def _ints(text: str | None, option: str) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"{option} takes comma-separated integers, got {text!r}") from None


def _floats(text: str | None, option: str) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"{option} takes comma-separated numbers, got {text!r}") from None


def _accept_wrong(text: str | None) -> dict[str, float] | None:
    if text is None:
        return None
    out: dict[str, float] = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise InputError(
                "--accept-wrong takes level=rate pairs (e.g. obvious=0.15,subtle=0.5), "
                f"got {text!r}"
            ) from None
    return out


@click.command()
@click.argument("spec_path", metavar="SPEC",
                type=click.Path(dir_okay=False, exists=True, path_type=Path))  # fmt: skip
@click.option("--people", help="Panel sizes to compare, e.g. 3,4,6,8 (default: the spec's "
              "panel_max, else 4).")  # fmt: skip
@click.option("--tasks", "tasks_", help="Tasks per person (a multiple of 6), e.g. 24,36.")
@click.option("--verdicts", help="Verdicts per answer on the VCE subset (default: the spec's).")
@click.option("--budget", help="Check budgets in the cost unit (default: the spec's fixed one).")
@click.option("--sims", default=200, show_default=True, type=click.IntRange(1, 1_000_000),
              help="Simulated studies per design.")  # fmt: skip
@click.option("--vce-answers", default=12, show_default=True, type=click.IntRange(1, 100_000),
              help="Wrong answers in the VCE subset.")  # fmt: skip
@click.option("--check-ratio", help="Assumed true ratio per difficulty (easy,medium,hard).")
@click.option("--accept-wrong", help="Assumed false-accept rates, e.g. obvious=0.15,subtle=0.5.")
@click.option("--accept-speed", type=float, help="Assumed speed factor of false accepts (H3).")
@click.option("--target-ratio-width", type=float, help="Largest acceptable ratio interval width.")
@click.option("--target-fa-width", type=float,
              help="Largest acceptable false-accept-rate interval width.")  # fmt: skip
@click.option("--target-inconclusive", type=float,
              help="Largest acceptable share of inconclusive VCE classifications.")  # fmt: skip
@click.option("--target-power", type=float, help="Smallest acceptable chance of detecting H1-H3.")
@click.option("--workers", default=0, type=int, help="Processes (default: all cores).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Also write plan.svg, plan.md, plan.json and studies.csv here.")  # fmt: skip
def plan(
    spec_path: Path,
    people: str | None,
    tasks_: str | None,
    verdicts: str | None,
    budget: str | None,
    sims: int,
    vce_answers: int,
    check_ratio: str | None,
    accept_wrong: str | None,
    accept_speed: float | None,
    target_ratio_width: float | None,
    target_fa_width: float | None,
    target_inconclusive: float | None,
    target_power: float | None,
    workers: int,
    seed: int,
    out_dir: Path | None,
) -> None:
    """Simulate studies of each design and recommend the smallest that reaches the targets."""
    spec = StudySpec.load(spec_path)
    budgets = _floats(budget, "--budget")
    if budgets is None:
        try:
            budgets = [float(spec.budget_for())]
        except VcostError as error:
            raise InputError(f"the spec has no single fixed budget ({error})",
                             hint="pass --budget, e.g. --budget 10") from None  # fmt: skip
    base = PanelStudy()
    try:
        cap = spec.do_time_cap_for()
    except VcostError:
        cap = None
    if cap is not None:
        base = replace(base, cap=float(cap))
    if check_ratio is not None:
        base = replace(base, check_ratio=tuple(_floats(check_ratio, "--check-ratio") or ()))
    aw = _accept_wrong(accept_wrong)
    if aw is not None:
        base = replace(base, accept_wrong=aw)
    if accept_speed is not None:
        base = replace(base, accept_speed=accept_speed)
    panel = spec.verifiers.panel_max or 4
    grid = itertools.product(
        _ints(people, "--people") or [panel],
        _ints(tasks_, "--tasks") or [24],
        _ints(verdicts, "--verdicts") or [spec.m],
        budgets,
    )
    designs = [Design(p, t, m, b) for p, t, m, b in grid]
    targets = PlanTargets(target_ratio_width, target_fa_width, target_inconclusive, target_power)
    result = plan_study(
        designs, sims=sims, base=base, vce_answers=vce_answers, q=spec.q, alpha=spec.alpha,
        method=spec.interval_method, seed=seed, workers=workers or (os.cpu_count() or 1),
        targets=targets,
    )  # fmt: skip
    click.echo(plan_markdown(result))
    if out_dir is not None:
        for kind, path in render_plan(result, out_dir).items():
            click.echo(f"{kind}: {path}")
