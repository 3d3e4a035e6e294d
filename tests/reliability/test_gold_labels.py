"""Gold sets (format, canary, export log) and blind labels (kappa, adjudication, set-asides)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from _reliability_support import agreeing_labels, toy_gold

from vcost.errors import InputError
from vcost.reliability import (
    GoldSet,
    LabelRow,
    Stratum,
    adjudicate,
    export_gold,
    find_canary,
    read_export_log,
    read_gold,
    read_labels,
    write_gold,
    write_labelling_sheet,
)
from vcost.stats import cohen_kappa


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_gold_round_trips_and_every_item_carries_the_canary(tmp_path: Path, suffix: str) -> None:
    gold = toy_gold()
    back = read_gold(write_gold(gold, tmp_path / f"gold{suffix}"), name="toy", task_class="toy")
    assert back.items == gold.items
    assert all(i.canary == gold.canary for i in back.items)
    text = (tmp_path / f"gold{suffix}").read_text()
    assert find_canary(text)[0] == gold.canary


def test_exports_are_logged(tmp_path: Path) -> None:
    gold = toy_gold()
    log = tmp_path / "exports.jsonl"
    export_gold(gold, tmp_path / "copy.jsonl", log=log, recipient="vendor-x", purpose="audit")
    export_gold(gold, tmp_path / "copy2.csv", log=log, recipient="team-y", purpose="certify")
    records = read_export_log(log)
    assert [r["recipient"] for r in records] == ["vendor-x", "team-y"]
    assert all(r["canary"] == gold.canary and r["digest"] == gold.digest() for r in records)
    with pytest.raises(InputError, match="purpose"):
        export_gold(gold, tmp_path / "x.jsonl", log=log, recipient="z", purpose=" ")


def test_bad_gold_rows_name_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "gold.csv"
    path.write_text("item_id,task_id,stratum,output\na,t,near-miss,x\nb,t,sort-of,y\n")
    with pytest.raises(InputError) as error:
        read_gold(path)
    assert "gold.csv:3" in str(error.value)
    assert "stratum" in str(error.value)
    with pytest.raises(InputError, match="canary"):
        GoldSet("g", "c", "VCOST-GOLD-CANARY g 1", (toy_gold().items[0],))


def test_labelling_sheet_is_blind_and_a_verdict_column_is_refused(tmp_path: Path) -> None:
    gold = toy_gold()
    sheet = write_labelling_sheet(gold, tmp_path / "ann.csv", labeller="ann")
    with sheet.open() as handle:
        header = next(csv.reader(handle))
    assert "verdict" not in header
    assert "confidence" not in header
    assert read_labels(sheet) == [
        LabelRow(i.item_id, "ann", "primary") for i in gold.items
    ]  # blank sheet: no labels yet
    leaked = tmp_path / "leaked.csv"
    leaked.write_text("item_id,labeller,task_success,verdict\nt0/0,ann,yes,accept\n")
    with pytest.raises(InputError, match="verdict"):
        read_labels(leaked)


def test_kappa_is_cohens_on_the_first_two_labels() -> None:
    gold = toy_gold()
    rows = agreeing_labels(gold)
    rows[1] = LabelRow(rows[1].item_id, "bob", "primary", task="no")  # bob disagrees once
    adjudication = adjudicate(gold, rows)
    first = [1.0 if r.task == "yes" else 0.0 for r in rows[0::2]]
    second = [1.0 if r.task == "yes" else 0.0 for r in rows[1::2]]
    assert adjudication.kappa == pytest.approx(cohen_kappa(first, second))
    assert adjudication.counts() == {"agreed": 15, "pending": 1}


def test_single_label_disputed_and_pending_items_are_set_aside_and_reported(
    tmp_path: Path,
) -> None:
    """Bad input: one label; disagreement the adjudicator cannot resolve; no adjudicator yet."""
    gold = toy_gold()
    rows = [r for r in agreeing_labels(gold) if not (r.item_id == "t0/0" and r.labeller == "bob")]
    rows = [r for r in rows if r.item_id not in ("t1/2", "t2/2", "t3/1")]
    rows += [
        LabelRow("t1/2", "ann", "primary", task="yes"),
        LabelRow("t1/2", "bob", "primary", task="no"),
        LabelRow("t1/2", "cid", "adjudicator", task="unsure"),
        LabelRow("t2/2", "ann", "primary", task="no"),
        LabelRow("t2/2", "bob", "primary", task="unsure"),
        LabelRow("t2/2", "cid", "adjudicator", task="no"),
        LabelRow("t3/1", "ann", "primary", task="yes"),
        LabelRow("t3/1", "bob", "primary", task="no"),
    ]
    log = tmp_path / "adjudication.jsonl"
    adjudication = adjudicate(gold, rows, log=log)
    status = {i.item_id: i.status for i in adjudication.items}
    assert status["t0/0"] == "single-label"
    assert status["t1/2"] == "disputed"
    assert status["t2/2"] == "adjudicated"
    assert status["t3/1"] == "pending"
    labels = adjudication.labels()
    assert "t0/0" not in labels
    assert "t1/2" not in labels
    assert labels["t2/2"] == "failure"
    aside = {i.item_id for i in adjudication.set_aside()}
    assert aside == {"t0/0", "t1/2", "t3/1"}
    logged = log.read_text().splitlines()
    assert len(logged) == 3  # every item that needed an adjudicator
    assert len(adjudication.items) == len(gold.items)  # nothing dropped


def test_strata_are_the_protocols() -> None:
    assert {s.value for s in Stratum} == {
        "near-miss",
        "plausible-unsupported",
        "partial-success",
        "adversarial-exploit",
        "unusual-valid",
        "on-policy",
        "clear-success",
        "clear-failure",
    }
