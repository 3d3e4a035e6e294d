"""``vcost card`` and ``vcost drift``: grader cards from files, and drift checks on an anchor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import click

from vcost.errors import InputError
from vcost.reliability import (
    GraderCard,
    adjudicate,
    apply_drift,
    build_card,
    check_drift,
    error_rates,
    escalation_guarantee,
    family_bias,
    freeze_anchor,
    load_policy,
    ppi_pass_rate,
    read_anchor,
    read_escalations,
    read_exploit_audit,
    read_export_log,
    read_gold,
    read_labels,
    read_verdicts,
    write_card,
)
from vcost.reliability._verifiers import VerifierRun

__all__ = ["card", "drift"]

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _lam(text: str) -> float | Literal["tune"]:
    if text.strip().lower() == "tune":
        return "tune"
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise InputError(
            f"--ppi-lambda must be `tune` or a number in [0, 1], not {text!r}",
            field="--ppi-lambda",
        )
    return value


def _audit(path: Path | None) -> dict[str, object] | None:
    """The audit JSON `vcost exploit` writes, checked (:func:`read_exploit_audit`)."""
    return None if path is None else read_exploit_audit(path)


@click.command()
@click.option("--gold", "gold_path", required=True, type=_FILE, help="Gold set (JSONL or CSV).")
@click.option("--labels", "label_paths", required=True, multiple=True, type=_FILE,
              help="Label files (repeat): primary labellers and adjudicators.")  # fmt: skip
@click.option("--run", "run_path", required=True, type=_FILE, help="Verifier run (JSONL).")
@click.option("--policy", "policy_path", required=True, type=_FILE, help="Card policy TOML.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--anchor", "anchor_path", type=_FILE, help="Frozen anchor (drift monitoring).")
@click.option("--exploit-audit", "audit_path", type=_FILE,
              help="The audit JSON `vcost exploit` wrote; it counts for training reward only "
              "when it names this run's verifier and this gold set.")  # fmt: skip
@click.option("--export-log", "export_path", type=click.Path(path_type=Path),
              help="The gold set's export log (JSONL).")  # fmt: skip
@click.option("--adjudication-log", type=click.Path(path_type=Path),
              help="Append adjudication decisions to this JSONL file.")  # fmt: skip
@click.option("--ppi-verdicts", "ppi_path", type=_FILE,
              help="The verifier's verdicts on outputs without gold labels (JSONL): the card "
              "shows their pass rate by prediction-powered inference.")  # fmt: skip
@click.option("--ppi-abstain", type=click.FloatRange(0.0, 1.0), default=0.0, show_default=True,
              help="What an abstention counts as in the pass rate (0: not a pass).")  # fmt: skip
@click.option("--ppi-lambda", default="1", show_default=True,
              help="1: classical PPI; `tune`: PPI++; or a number in [0, 1].")  # fmt: skip
@click.option("--claimed-agreement", type=float,
              help="A selective judge's claimed agreement with humans on the items it does not "
              "escalate (e.g. 0.95): the card says whether the gold set supports it.")  # fmt: skip
@click.option("--escalation", "escalation_path", type=_FILE,
              help="Items the judge escalated (JSONL or CSV: item_id, escalated); default: "
              "its abstentions. Needs --claimed-agreement.")  # fmt: skip
@click.option("--family-run", "family_paths", multiple=True, type=_FILE,
              help="More runs (other judges) pooled with --run for the same-family vs "
              "cross-family comparison (repeatable).")  # fmt: skip
def card(
    gold_path: Path,
    label_paths: tuple[Path, ...],
    run_path: Path,
    policy_path: Path,
    out: Path,
    anchor_path: Path | None,
    audit_path: Path | None,
    export_path: Path | None,
    adjudication_log: Path | None,
    ppi_path: Path | None,
    ppi_abstain: float,
    ppi_lambda: str,
    claimed_agreement: float | None,
    escalation_path: Path | None,
    family_paths: tuple[Path, ...],
) -> None:
    """Write a grader card (card.json, card.md, card.html) for a verifier run on a gold set.

    With --ppi-verdicts the card adds the downstream pass rate by prediction-powered
    inference; with --claimed-agreement, the escalation-guarantee check; when the run's
    verdicts carry model families (a judge run), the same-family vs cross-family comparison."""
    if escalation_path is not None and claimed_agreement is None:
        raise InputError(
            "--escalation needs the claimed agreement to check",
            field="--claimed-agreement",
            hint="add --claimed-agreement 0.95 (the judge's claim)",
        )
    lam = _lam(ppi_lambda)
    policy = load_policy(policy_path)
    gold = read_gold(gold_path, task_class=policy.task_class)
    adjudication = adjudicate(
        gold,
        read_labels(label_paths, level=policy.label_level),
        level=policy.label_level,
        log=adjudication_log,
    )
    ids = {i.item_id for i in gold.items}
    run = VerifierRun.read(run_path, items=ids)
    estimate = error_rates(
        gold, adjudication, run, alpha=policy.alpha, target_bound=policy.target_bound
    )
    downstream = None
    if ppi_path is not None:
        production = read_verdicts(
            ppi_path, identity=run.identity, exclude={i.item_id for i in gold.items}
        )
        downstream = ppi_pass_rate(
            adjudication, run, production, abstain=ppi_abstain, alpha=policy.alpha, lam=lam
        )
    escalation = None
    if claimed_agreement is not None:
        escalated = read_escalations(escalation_path, run=run) if escalation_path else None
        try:
            escalation = escalation_guarantee(
                adjudication, run, claimed=claimed_agreement, escalated=escalated,
                alpha=policy.alpha,
            )  # fmt: skip
        except InputError as error:
            raise InputError(
                error.message,
                source=escalation_path,
                field="--claimed-agreement" if error.field == "claimed" else "escalated",
                hint=error.hint,
            ) from None
    runs = [run, *(VerifierRun.read(p, items=ids) for p in family_paths)]
    bias = None
    if any(v.family_relation for r in runs for v in r.verdicts):
        bias = family_bias(gold, adjudication, runs, alpha=policy.alpha)
    elif family_paths:
        raise InputError(
            "no verdict in --run or --family-run carries model families",
            source=family_paths[0],
            field="judge_family",
            hint="tag each verdict with judge_family and answer_family (JudgeVerifier does)",
        )
    result = build_card(
        gold=gold,
        adjudication=adjudication,
        run=run,
        estimate=estimate,
        policy=policy,
        exploit_audit=_audit(audit_path),
        anchor=read_anchor(anchor_path) if anchor_path else None,
        anchor_source=str(anchor_path or ""),
        export_log=read_export_log(export_path) if export_path else (),
        downstream=downstream,
        escalation=escalation,
        family_bias=bias,
    )
    paths = write_card(result, out)
    for tier in result.eligibility:
        mark = "granted" if tier.granted else "not granted: " + "; ".join(tier.reasons)
        click.echo(f"{tier.tier}: {mark}")
    if downstream is not None:
        ppi = downstream.ppi
        low, high = ppi.clipped()
        click.echo(
            f"downstream pass rate ({ppi.method}): {ppi.estimate:.1%} [{low:.1%}, {high:.1%}] "
            f"from {downstream.unlabelled} verdicts and {downstream.labelled} gold labels "
            f"(raw verifier rate {ppi.naive:.1%})"
        )
    if escalation is not None:
        click.echo(
            f"escalation guarantee (claimed {escalation.claimed:g}): {escalation.status}: "
            + "; ".join(escalation.reasons)
        )
    if bias is not None:
        shown = "favours its own family" if bias.self_preference else "no self-preference shown"
        click.echo(f"same-family vs cross-family: {shown}")
        for line in bias.reasons():
            click.echo(f"  {line}")
    aside = adjudication.set_aside()
    if aside:
        click.echo(f"{len(aside)} item(s) set aside (no usable gold label); see the card")
    if adjudication.unknown_items:
        shown = ", ".join(adjudication.unknown_items[:5])
        more = len(adjudication.unknown_items) - 5
        click.echo(
            f"warning: labels for {len(adjudication.unknown_items)} item(s) not in the gold set "
            f"were not used: {shown}{f' and {more} more' if more > 0 else ''}",
            err=True,
        )
    click.echo(f"labels from {adjudication.label_source}")
    click.echo(f"card -> {paths['json']}, {paths['markdown']}, {paths['html']}")


@click.command()
@click.option("--gold", "gold_path", required=True, type=_FILE, help="Gold set (JSONL or CSV).")
@click.option("--labels", "label_paths", required=True, multiple=True, type=_FILE)
@click.option("--policy", "policy_path", required=True, type=_FILE, help="Card policy TOML.")
@click.option("--anchor", "anchor_path", required=True, type=click.Path(path_type=Path),
              help="Anchor file: read, or written with --freeze.")  # fmt: skip
@click.option("--freeze", type=int, help="Freeze a new anchor of this many items and stop.")
@click.option("--force", is_flag=True,
              help="With --freeze: replace an anchor file that already exists (a new anchor: "
              "cards pinned to the old one no longer match it).")  # fmt: skip
@click.option("--baseline", type=_FILE, help="Verifier run the card was issued on.")
@click.option("--candidate", type=_FILE, help="New run (new version, or periodic re-run).")
@click.option("--card", "card_path", type=_FILE, help="A card.json to update with the result.")
@click.option("--seed", default=0, show_default=True)
def drift(
    gold_path: Path,
    label_paths: tuple[Path, ...],
    policy_path: Path,
    anchor_path: Path,
    freeze: int | None,
    force: bool,
    baseline: Path | None,
    candidate: Path | None,
    card_path: Path | None,
    seed: int,
) -> None:
    """Freeze an anchor subset, or compare a new run with the baseline on it.

    A shift beyond the policy's drift tolerance suspends billing and training-reward eligibility
    on the card (rewritten next to --card) until the verifier is recertified. The anchor is
    pinned: --freeze refuses to replace an existing anchor file unless --force is given.
    """
    if force and freeze is None:
        raise InputError("--force is for replacing an anchor with --freeze", field="--force")
    if freeze is not None and anchor_path.exists() and not force:
        raise InputError(
            "an anchor file already exists here: the frozen anchor is pinned by its digest, "
            "and freezing again would replace it",
            source=anchor_path,
            field="--anchor",
            hint="give another --anchor path, or add --force to replace it (then recertify: "
            "cards and runs pinned to the old anchor no longer match it)",
        )
    policy = load_policy(policy_path)
    gold = read_gold(gold_path, task_class=policy.task_class)
    adjudication = adjudicate(
        gold, read_labels(label_paths, level=policy.label_level), level=policy.label_level
    )
    if freeze is not None:
        anchor = freeze_anchor(gold, adjudication, size=freeze, seed=seed)
        anchor.write(anchor_path)
        click.echo(f"anchor of {len(anchor.item_ids)} items frozen -> {anchor_path}")
        return
    if baseline is None or candidate is None:
        raise InputError("give --baseline and --candidate runs (or --freeze N)", field="candidate")
    if policy.drift_tolerance is None:
        raise InputError(
            "the policy declares no drift tolerance", source=policy_path, field="drift.tolerance"
        )
    check = check_drift(
        gold,
        adjudication,
        read_anchor(anchor_path),
        VerifierRun.read(baseline, items={i.item_id for i in gold.items}),
        VerifierRun.read(candidate, items={i.item_id for i in gold.items}),
        tolerance=policy.drift_tolerance,
    )
    click.echo(f"drift: {check.status}")
    for reason in check.reasons:
        click.echo(f"  {reason}")
    if card_path is not None:
        try:
            data = json.loads(card_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise InputError(f"not JSON: {error.msg}", source=card_path) from None
        updated = apply_drift(GraderCard.from_dict(data), check, policy)
        paths = write_card(updated, card_path.parent, stem=card_path.stem)
        granted = ", ".join(updated.granted())
        click.echo(f"card updated ({granted}) -> {paths['json']}")
