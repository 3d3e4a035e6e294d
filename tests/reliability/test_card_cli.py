"""`vcost card` and `vcost drift` from files: card written, drift suspends, errors are messages."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

from _reliability_support import agreeing_labels, toy_gold
from click.testing import CliRunner

from vcost.cli import cli
from vcost.reliability import (
    JUDGE_STRATEGIES,
    GoldItem,
    ScriptedAttacker,
    Verdict,
    VerifierIdentity,
    VerifierRun,
    exploit_audit,
    write_gold,
)


def _labels(path: Path) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "labeller", "role", "execution_success", "task_success"])
        for r in agreeing_labels(toy_gold()):
            writer.writerow([r.item_id, r.labeller, r.role, r.execution, r.task])
    return path


def _run(path: Path, version: str, lenient: bool) -> Path:
    verdicts = [
        Verdict(i.item_id, "accept" if i.expected == "success" or lenient else "reject")
        for i in toy_gold().items
    ]
    identity = VerifierIdentity("check", "program", version)
    return VerifierRun(identity, tuple(verdicts), run_at="2026-01-01T00:00:00+00:00").write(path)


class _Strict:
    """Version 1 of `check` (as in `_run`): accepts the gold successes, rejects anything else."""

    identity = VerifierIdentity("check", "program", "1")

    def run(self, items: Sequence[GoldItem]) -> list[Verdict]:
        good = {i.output for i in toy_gold().items if i.expected == "success"}
        return [Verdict(i.item_id, "accept" if i.output in good else "reject") for i in items]


def test_card_and_drift_commands(tmp_path: Path, policy_path: Path) -> None:
    gold = write_gold(toy_gold(), tmp_path / "gold.jsonl")
    labels = _labels(tmp_path / "labels.csv")
    base = _run(tmp_path / "v1.jsonl", "1", lenient=False)
    common = ["--gold", str(gold), "--labels", str(labels), "--policy", str(policy_path)]
    runner = CliRunner()
    anchor = tmp_path / "anchor.json"
    result = runner.invoke(cli, ["drift", *common, "--anchor", str(anchor), "--freeze", "8"])
    assert result.exit_code == 0, result.output
    audit = exploit_audit(_Strict(), toy_gold(), ScriptedAttacker(JUDGE_STRATEGIES), budget=20)
    audit.write(tmp_path / "audit.json")
    audit = tmp_path / "audit.json"
    result = runner.invoke(
        cli,
        ["card", *common, "--run", str(base), "--out", str(tmp_path / "card"),
         "--anchor", str(anchor), "--exploit-audit", str(audit)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "training-reward: granted" in result.output
    new = _run(tmp_path / "v2.jsonl", "2", lenient=True)
    result = runner.invoke(
        cli,
        ["drift", *common, "--anchor", str(anchor), "--baseline", str(base),
         "--candidate", str(new), "--card", str(tmp_path / "card" / "card.json")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "drift: suspended" in result.output
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    granted = [d["tier"] for d in card["eligibility"] if d["granted"]]
    assert granted == ["dashboard", "external"]


def test_bad_policy_is_one_clear_message(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('task_class = "toy"\nalpha = 0.05\n')
    gold = write_gold(toy_gold(), tmp_path / "gold.jsonl")
    labels = _labels(tmp_path / "labels.csv")
    run = _run(tmp_path / "v1.jsonl", "1", lenient=False)
    result = CliRunner().invoke(
        cli,
        ["card", "--gold", str(gold), "--labels", str(labels), "--run", str(run),
         "--policy", str(policy), "--out", str(tmp_path / "card")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "policy.toml" in result.output
    assert "declared_at" in result.output


def test_a_labels_file_without_the_policy_level_column_is_refused(
    tmp_path: Path, policy_path: Path
) -> None:
    """The policy's label level is `task`: a labels file with no `task_success` column (only
    `execution_success`, or the column spelled "Task Success") is not read as all-blank labels
    (every item set aside, a card with no labels, exit 0): `vcost card` and `vcost drift` refuse
    it, naming the file and the missing column and listing the accepted names."""
    gold = write_gold(toy_gold(), tmp_path / "gold.jsonl")
    good = _labels(tmp_path / "labels.csv")
    run = _run(tmp_path / "v1.jsonl", "1", lenient=False)
    lines = good.read_text().splitlines()
    wrong_level = tmp_path / "execution-only.csv"
    wrong_level.write_text(
        "\n".join(",".join(line.split(",")[:4]) for line in lines) + "\n"
    )  # item_id, labeller, role, execution_success
    spelled = tmp_path / "spelled.csv"
    spelled.write_text("\n".join([lines[0].replace("task_success", "Task Success"), *lines[1:]]))
    for bad in (wrong_level, spelled):
        common = ["--gold", str(gold), "--labels", str(bad), "--policy", str(policy_path)]
        for args in (
            ["card", *common, "--run", str(run), "--out", str(tmp_path / "card")],
            ["drift", *common, "--anchor", str(tmp_path / "anchor.json"), "--freeze", "8"],
        ):
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 2, result.output
            assert "Traceback" not in result.output
            assert str(bad) in result.output
            assert "no 'task_success' column" in result.output
            assert "'task_success' or 'task'" in result.output
            assert not (tmp_path / "card").exists()
            assert not (tmp_path / "anchor.json").exists()
    result = CliRunner().invoke(cli, ["card", "--gold", str(gold), "--labels", str(spelled),
                                      "--run", str(run), "--policy", str(policy_path),
                                      "--out", str(tmp_path / "card")])  # fmt: skip
    assert "'Task Success'" in result.output  # the columns found, to spot the misspelling


def test_freezing_over_an_existing_anchor_needs_force(tmp_path: Path, policy_path: Path) -> None:
    """The anchor is pinned by a digest: `vcost drift --freeze` does not silently replace a
    frozen one (a different seed or size would change it); `--force` does."""
    gold = write_gold(toy_gold(), tmp_path / "gold.jsonl")
    labels = _labels(tmp_path / "labels.csv")
    anchor = tmp_path / "anchor.json"
    args = ["drift", "--gold", str(gold), "--labels", str(labels), "--policy", str(policy_path),
            "--anchor", str(anchor), "--freeze"]  # fmt: skip
    first = CliRunner().invoke(cli, [*args, "8"])
    assert first.exit_code == 0, first.output
    frozen = anchor.read_text()
    again = CliRunner().invoke(cli, [*args, "4", "--seed", "1"])
    assert again.exit_code == 2, again.output
    assert "Traceback" not in again.output
    assert str(anchor) in again.output
    assert "already exists" in again.output
    assert "--force" in again.output
    assert anchor.read_text() == frozen
    forced = CliRunner().invoke(cli, [*args, "4", "--seed", "1", "--force"])
    assert forced.exit_code == 0, forced.output
    assert json.loads(anchor.read_text())["digest"] != json.loads(frozen)["digest"]
    assert "--force" in CliRunner().invoke(cli, ["drift", "--help"]).output


def test_label_and_gold_csvs_saved_with_a_byte_order_mark_are_read(
    tmp_path: Path, policy_path: Path
) -> None:
    """Spreadsheet programs save CSV as UTF-8 with a byte-order mark: the gold set and the
    labels read as without it (the first column used to be named '\\ufeffitem_id', so every
    row lacked its item_id), and the card is the same."""
    gold = write_gold(toy_gold(), tmp_path / "gold.csv")
    labels = _labels(tmp_path / "labels.csv")
    run = _run(tmp_path / "v1.jsonl", "1", lenient=False)
    cards = []
    (tmp_path / "bom").mkdir()
    for name, files in (("plain", (gold, labels)), ("bom", tuple(
        tmp_path / "bom" / f.name for f in (gold, labels)
    ))):  # fmt: skip
        for plain, copy in zip((gold, labels), files, strict=True):
            if copy != plain:
                copy.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
        out = tmp_path / f"card-{name}"
        result = CliRunner().invoke(
            cli,
            ["card", "--gold", str(files[0]), "--labels", str(files[1]), "--run", str(run),
             "--policy", str(policy_path), "--out", str(out)],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        card = json.loads((out / "card.json").read_text())
        cards.append({k: v for k, v in card.items() if k not in ("inputs", "issued_at")})
    assert cards[0] == cards[1]
