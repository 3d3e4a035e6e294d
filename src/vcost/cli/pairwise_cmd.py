"""``vcost pairwise``: pairwise judges' outputs read as verifiers: rates and a grader card."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from vcost.reliability import load_policy
from vcost.reliability._pairwise_card import build_pairwise_card, write_pairwise_card
from vcost.reliability._pairwise_rates import PairwiseEstimate, Proportion, pairwise_rates
from vcost.reliability._pairwise_read import PAIRWISE_FORMATS, read_pairwise
from vcost.reliability._verifiers import VerifierIdentity

__all__ = ["pairwise_group"]

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
_LABELS = {
    "judgebench": "JudgeBench labels (objective correctness of the source question's answer)",
    "mt-bench": "MT-Bench human judgments (majority vote; ties and split votes set aside)",
    "rewardbench": "RewardBench-style chosen/rejected pairs (chosen is better)",
}


def _shown(p: Proportion) -> str:
    if not p.n:
        return "—"
    kg = p.korn_graubard
    interval = "" if kg is None else f" [{kg.lower:.1%}, {kg.upper:.1%}]"
    return f"{p.k}/{p.n} = {p.estimate:.1%}{interval}"


def rates_table(estimate: PairwiseEstimate) -> Table:
    """Overall and per-category figures with Korn-Graubard intervals (clustered by question)."""
    level = f"{1 - estimate.alpha:.0%}"
    table = Table(title=f"Pairwise judge {estimate.judge} ({level} Korn-Graubard, by question)")
    for name in ("group", "pairs", "accuracy (both orders)", "consistency", "ties"):
        table.add_column(name, justify="left" if name == "group" else "right")
    table.add_row(
        "all", str(estimate.pairs), _shown(estimate.accuracy), _shown(estimate.consistency),
        str(estimate.ties),
    )  # fmt: skip
    for c in estimate.by_category:
        table.add_row(
            c.category, str(c.pairs), _shown(c.accuracy), _shown(c.consistency), str(c.ties)
        )
    return table


def _options(f: Any) -> Any:
    for option in reversed(
        (
            click.argument("judgments", metavar="FILE", type=_FILE),
            click.option(
                "--format", "fmt", type=click.Choice(PAIRWISE_FORMATS), default="judgebench",
                show_default=True, help="The file's format (docs/pairwise-judges.md).",
            ),
            click.option(
                "--labels", type=_FILE,
                help="mt-bench: the human judgments (MT-Bench format) that label the pairs.",
            ),
            click.option("--reps", default=2000, show_default=True, type=click.IntRange(min=100),
                         help="Cluster bootstrap replicates."),
            click.option("--seed", default=0, show_default=True, type=int),
        )
    ):  # fmt: skip
        f = option(f)
    return f


@click.group("pairwise")
def pairwise_group() -> None:
    """Pairwise judges (JudgeBench, MT-Bench, RewardBench outputs) as verifiers."""


@pairwise_group.command("rates")
@_options
@click.option("--json", "as_json", is_flag=True, help="Print every figure as JSON.")
def rates_cmd(
    judgments: Path, fmt: str, labels: Path | None, reps: int, seed: int, as_json: bool
) -> None:
    """Accuracy in both orders (JudgeBench's net score), consistency, ties, per category."""
    pairs, set_aside = read_pairwise(judgments, fmt, labels=labels)  # type: ignore[arg-type]
    estimate = pairwise_rates(pairs, reps=reps, seed=seed)
    if as_json:
        click.echo(json.dumps({**estimate.to_dict(), "set_aside": set_aside}, indent=2))
        return
    Console().print(rates_table(estimate))
    if set_aside:
        click.echo(f"{len(set_aside)} pair(s) set aside: no strict label", err=True)


@pairwise_group.command("card")
@_options
@click.option("--policy", "policy_path", required=True, type=_FILE, help="Card policy TOML.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--name", help="The judge's name on the card (default: from the file).")
@click.option("--version", "judge_version", default="unknown", show_default=True,
              help="The judge's version (prompt, model snapshot).")  # fmt: skip
@click.option(
    "--run-at",
    help="When the judge ran (ISO date): the thresholds must have been declared before it; "
    "without it only the dashboard tier can be granted.",
)
@click.option("--exploit-audit", "audit_path", type=_FILE,
              help="The audit JSON `vcost exploit` wrote (an audit of another verifier does "
              "not count).")  # fmt: skip
@click.option("--synthetic", is_flag=True, help="Mark the judge as a synthetic stand-in.")
def card_cmd(
    judgments: Path,
    fmt: str,
    labels: Path | None,
    reps: int,
    seed: int,
    policy_path: Path,
    out: Path,
    name: str | None,
    judge_version: str,
    run_at: str | None,
    audit_path: Path | None,
    synthetic: bool,
) -> None:
    """A grader card for a pairwise judge: tiers, flip rates from the swapped order, calibration.

    Writes OUT/card.json, card.md, card.html and OUT/pairwise.json, pairwise.md.
    """
    from vcost.cli.card_cmd import _audit

    pairs, set_aside = read_pairwise(judgments, fmt, labels=labels)  # type: ignore[arg-type]
    policy = load_policy(policy_path)
    estimate = pairwise_rates(pairs, alpha=policy.alpha, reps=reps, seed=seed)
    identity = VerifierIdentity(
        name=name or estimate.judge,
        kind="model-judge",
        version=judge_version,
        model=estimate.judge,
        parser=f"vcost pairwise ({fmt})",
        synthetic=synthetic,
    )
    card = build_pairwise_card(
        pairs,
        estimate,
        policy=policy,
        identity=identity,
        run_at=run_at or "unknown",
        source=judgments,
        label_source=_LABELS[fmt],
        set_aside=set_aside,
        exploit_audit=_audit(audit_path),
        reps=reps,
        seed=seed,
    )
    paths = write_pairwise_card(card, estimate, out)
    Console().print(rates_table(estimate))
    for d in card.eligibility:
        why = "" if d.granted else ": " + "; ".join(d.reasons)
        click.echo(f"  {d.tier}: {'granted' if d.granted else 'not granted'}{why}")
    click.echo(f"card → {paths['html']}; pairwise table → {paths['pairwise_markdown']}")
