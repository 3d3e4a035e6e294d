"""An unsealed gold file (no canary in it) has one digest on every read: `vcost drift --freeze`
then `--baseline/--candidate` on the same file works, and `vcost card --anchor` checks it."""

from __future__ import annotations

import json
from pathlib import Path

from _clustered_card import write_files
from click.testing import CliRunner

from vcost.cli import cli
from vcost.reliability import read_gold


def _unseal(path: Path) -> None:
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    kept = [{k: v for k, v in r.items() if k != "canary"} for r in lines if "gold_set" not in r]
    path.write_text("".join(json.dumps(r) + "\n" for r in kept))


def test_unsealed_gold_file_is_reproducible_through_drift_and_card(tmp_path: Path) -> None:
    args = write_files(tmp_path)
    gold = tmp_path / "gold.jsonl"
    _unseal(gold)
    first, second = read_gold(gold), read_gold(gold)
    assert first.canary == second.canary
    assert first.digest() == second.digest()
    common = [a for a in args if a not in ("--run", str(tmp_path / "run.jsonl"))]
    runner = CliRunner()
    anchor = tmp_path / "anchor.json"
    frozen = runner.invoke(cli, ["drift", *common, "--anchor", str(anchor), "--freeze", "20"])
    assert frozen.exit_code == 0, frozen.output
    run = str(tmp_path / "run.jsonl")
    drift = runner.invoke(
        cli, ["drift", *common, "--anchor", str(anchor), "--baseline", run, "--candidate", run]
    )
    assert drift.exit_code == 0, drift.output
    assert "drift: ok" in drift.output
    card = runner.invoke(cli, ["card", *args, "--out", str(tmp_path / "card"), "--anchor",
                               str(anchor)])  # fmt: skip
    assert card.exit_code == 0, card.output
    written = json.loads((tmp_path / "card" / "card.json").read_text())
    assert first.digest() in json.dumps(written)

    # the gold file changes after the anchor was frozen: the card refuses the anchor
    rows = gold.read_text().splitlines()
    changed = json.loads(rows[0])
    changed["output"] += "  # edited"
    gold.write_text("\n".join([json.dumps(changed), *rows[1:]]) + "\n")
    refused = runner.invoke(cli, ["card", *args, "--out", str(tmp_path / "card2"), "--anchor",
                                  str(anchor)])  # fmt: skip
    assert refused.exit_code == 2, refused.output
    assert "anchor was frozen on another version of gold set" in refused.output
    assert "anchor.json" in refused.output


def test_duplicate_gold_id_names_file_and_line(tmp_path: Path) -> None:
    args = write_files(tmp_path)
    gold = tmp_path / "gold.jsonl"
    lines = gold.read_text().splitlines()
    gold.write_text("\n".join([*lines, lines[3]]) + "\n")
    result = CliRunner().invoke(cli, ["card", *args, "--out", str(tmp_path / "card")])
    assert result.exit_code == 2, result.output
    assert f"gold.jsonl:{len(lines) + 1}:" in result.output
    assert "duplicate item_id 't0/2' (first on line 4)" in result.output
