"""`vcost card` tiers read the right bounds: R-matched Korn-Graubard, missing verdicts counted."""

from __future__ import annotations

import json
from pathlib import Path

from _clustered_card import write_files
from click.testing import CliRunner

from vcost.cli import cli


def _card(tmp_path: Path, args: list[str]) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["card", *args, "--out", str(tmp_path / "card")])
    assert result.exit_code == 0, result.output
    card: dict[str, object] = json.loads((tmp_path / "card" / "card.json").read_text())
    return card


def _granted(card: dict[str, object]) -> dict[str, bool]:
    return {d["tier"]: d["granted"] for d in card["eligibility"]}  # type: ignore[attr-defined,index]


def test_tier_threshold_reads_the_r_matched_korn_graubard_upper_bound(tmp_path: Path) -> None:
    """13/50 false accepts over 10 clusters (events 5,3,3,2,0x6): R's svyciprop(method="beta")
    upper bound is 0.591772 (tests/reference/korn_graubard.R); the narrower 0.5797 vcost gave
    before granted a tier whose limit is 0.585."""
    card = _card(tmp_path, write_files(tmp_path, max_fa=0.585))
    (overall,) = [
        r
        for r in card["estimate"]["rates"]  # type: ignore[index]
        if r["kind"] == "false-accept" and r["group"] == "all"
    ]
    assert abs(overall["korn_graubard"][1] - 0.591772270022) < 1e-9
    assert _granted(card)["external"] is False


def test_missing_verdicts_count_against_coverage(tmp_path: Path) -> None:
    """4 of 60 labelled items have no verdict: coverage 56/60 = 0.933, below min_coverage 0.94
    (it once showed 56/56 and granted the tier)."""
    drop = ("t1/5", "t4/0", "t6/1", "t9/2")
    card = _card(tmp_path, write_files(tmp_path, min_coverage=0.94, drop=drop))
    abstention = card["estimate"]["abstention"]  # type: ignore[index]
    assert (abstention["labelled"], abstention["judged"], abstention["missing"]) == (60, 56, 4)
    assert abs(abstention["coverage"] - 56 / 60) < 1e-12
    assert _granted(card)["external"] is False
    reasons = next(d for d in card["eligibility"] if d["tier"] == "external")["reasons"]  # type: ignore[attr-defined]
    assert any("coverage 0.933 below 0.94" in r for r in reasons)


def test_drift_suspends_a_candidate_missing_anchor_verdicts(tmp_path: Path) -> None:
    """A candidate run missing 6 of the 20 anchor verdicts once passed the drift check."""
    args = write_files(tmp_path)
    common = [a for a in args if a not in ("--run", str(tmp_path / "run.jsonl"))]
    runner = CliRunner()
    anchor = tmp_path / "anchor.json"
    frozen = runner.invoke(cli, ["drift", *common, "--anchor", str(anchor), "--freeze", "20"])
    assert frozen.exit_code == 0, frozen.output
    items = json.loads(anchor.read_text())["item_ids"]
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    write_files(candidate, drop=tuple(items[:6]))
    result = runner.invoke(
        cli,
        ["drift", *common, "--anchor", str(anchor), "--baseline", str(tmp_path / "run.jsonl"),
         "--candidate", str(candidate / "run.jsonl")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "drift: suspended" in result.output
    assert "coverage moved 1.000 -> 0.700" in result.output


def test_duplicate_and_unknown_verdicts_are_errors_naming_file_and_line(tmp_path: Path) -> None:
    """A second verdict for one item was resolved last-wins; one for an item outside the gold
    set was ignored. Both are now one message naming the file, the line and the field."""
    args = write_files(tmp_path)
    run = tmp_path / "run.jsonl"
    original = run.read_text()
    lines = original.splitlines()
    run.write_text("\n".join([*lines, lines[1].replace('"reject"', '"accept"')]) + "\n")
    result = CliRunner().invoke(cli, ["card", *args, "--out", str(tmp_path / "c1")])
    assert result.exit_code == 2, result.output
    assert "run.jsonl" in result.output
    assert f"run.jsonl:{len(lines) + 1}:" in result.output
    assert "has a verdict on line 2 already" in result.output
    unknown = lines[1].replace('"t0/0"', '"t99/0"')
    assert unknown != lines[1]
    run.write_text("\n".join([*lines, unknown]) + "\n")
    result = CliRunner().invoke(cli, ["card", *args, "--out", str(tmp_path / "c2")])
    assert result.exit_code == 2, result.output
    assert "'t99/0' is not in the gold set" in result.output
    assert f"run.jsonl:{len(lines) + 1}:" in result.output


def test_label_provenance_and_unknown_labels_survive_a_recomputed_card(tmp_path: Path) -> None:
    """Labels made by programs (labeller_kind = program in the labels file, as the bundled-bank
    card writes them) keep "not people" on a card recomputed with `vcost card`; labels for items
    outside the gold set are named on the terminal and in card.md, not only in card.json."""
    args = write_files(tmp_path)
    labels = tmp_path / "labels.csv"
    rows = labels.read_text().splitlines()
    header = rows[0] + ",labeller_kind"
    body = [r + ",program" for r in rows[1:]] + ["zz/9,ann,primary,yes,yes,program"]
    labels.write_text("\n".join([header, *body]) + "\n")
    result = CliRunner().invoke(cli, ["card", *args, "--out", str(tmp_path / "card")])
    assert result.exit_code == 0, result.output
    assert "labels from programs, not people" in result.output
    assert "1 item(s) not in the gold set were not used: zz/9" in result.output
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    assert card["labelling"]["label_source"] == "programs, not people"
    markdown = (tmp_path / "card" / "card.md").read_text()
    assert "programs, not people" in markdown
    assert "zz/9" in markdown
