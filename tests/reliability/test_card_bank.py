"""The bank-card pipeline of bench/bench_card.py on three bundled tasks, end to end in the real
sandbox: planting with differential testing, machine labellers, hidden tests, rates, card.

The mutants are chosen so the card has something to find: ``round(pay, 2)`` → ``round(pay, 3)``
in m-overtime-pay and ``len(ordered) // 2`` → ``(len(ordered) - 1) // 2`` in m-sensor-spikes
pass every written hidden test, and only differential testing finds an input where they differ
from the reference (planting the whole bank shows it: docs/planted-errors.md, "Differential
testing"). Such a mutant must reach the card as a false accept of the hidden tests.
"""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from vcost.cli import cli
from vcost.reliability import GraderCard
from vcost.sandbox import Sandbox

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_card.py"
#: task -> the (operator, line) of the mutants kept; None keeps the first three mutants
KEEP: dict[str, set[tuple[str, int]] | None] = {
    "m-overtime-pay": {("int-constant", 21)},
    "m-sensor-spikes": {("len-minus-one", 3)},
    "e-electricity-bill": None,
}


def _bench() -> ModuleType:
    name = "bench_card_under_test"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve the module's annotations through it
    spec.loader.exec_module(module)
    return module


def _select(task: Any, found: list[Any]) -> list[Any]:
    keep = KEEP[task.id]
    if keep is None:
        return found[:3]
    return [m for m in found if (m.operator, m.line) in keep]


@pytest.fixture(scope="module")
def bank_card(tmp_path_factory: pytest.TempPathFactory) -> Any:
    bench = _bench()
    tasks = bench.code_tasks(ids=list(KEEP))
    with Sandbox("auto") as box:
        return bench.run_pipeline(
            tasks,
            sandbox=box,
            out=tmp_path_factory.mktemp("card-bank"),
            workers=2,
            oracle_examples=300,
            exploit_budget=4,
            select=_select,
        )


def test_a_mutant_only_differential_testing_finds_is_a_false_accept(bank_card: Any) -> None:
    build = bank_card.build
    by_id = build.gold.by_id()
    labels = bank_card.adjudication.labels()
    verdicts = bank_card.run.by_item()
    false_accepts = {fa["item_id"] for fa in bank_card.false_accepts()}
    differential = {r.item_id: r.task for r in bank_card.labels if r.labeller == "differential"}
    # round(pay, 2) -> round(pay, 3) used to pass every written test (the bank's declared 1e-9
    # tolerance hid it); since issue 14 m-overtime-pay's hidden tests reject it, so it is no
    # longer a false accept. Whatever differential testing still finds is one.
    rounding = [
        i for i in build.gold.items
        if i.task_id == "m-overtime-pay" and "round(pay, 3)" in i.output
    ]  # fmt: skip
    flagged = [
        i for i in build.gold.items
        if i.item_id in build.found_inputs or differential[i.item_id] == "no"
    ]  # fmt: skip
    passing = [i for i in flagged if verdicts[i.item_id].verdict == "accept"]
    assert not [i for i in rounding if i in passing]
    for item in passing:  # found by differential testing, passed by the hidden tests
        assert labels[item.item_id] == "failure"
        assert item.item_id in false_accepts
    for item_id in build.distinguished:  # found while planting: a near miss, by construction
        assert by_id[item_id].stratum == "near-miss"
        assert by_id[item_id].category.endswith("/distinguished")
        assert item_id in false_accepts
    # on the card: the overall false-accept rate counts them, and so does their category
    rates = {(r["kind"], r["group"]): r for r in bank_card.card.estimate["rates"]}
    overall = rates[("false-accept", "all")]
    assert overall["errors"] == len(false_accepts) == len(passing)
    for item in passing:
        assert rates[("false-accept", f"category:{item.category}")]["errors"] >= 1
    assert {"clopper_pearson", "korn_graubard", "cluster_bootstrap"} <= set(overall)
    # the references are accepted and labelled successes: no false reject among them
    for item in build.gold.items:
        if item.stratum == "clear-success":
            assert labels[item.item_id] == "success"
            assert verdicts[item.item_id].verdict == "accept"


def test_the_card_names_program_labellers_and_no_person(bank_card: Any) -> None:
    bench = _bench()
    programs = set(bench.LABELLERS)
    assert programs == {"construction", "differential", "witness-rerun"}
    assert {r.labeller for r in bank_card.labels} <= programs
    assert {r.labeller for r in bank_card.labels if r.role == "primary"} == {
        "construction",
        "differential",
    }
    card = bank_card.card
    named = card.labelling["labellers"]
    assert {d["name"] for d in named} == programs
    assert {d["kind"] for d in named} == {"program"}
    assert "not people" in card.labelling["label_source"]
    assert any("NOT FROM PEOPLE" in n for n in card.notes)
    assert any("NOT FROM PEOPLE" in n for n in card.gold["notes"])
    # every disagreement went to the adjudicator and nothing was left in dispute
    assert set(bank_card.disputed) == {
        r.item_id for r in bank_card.labels if r.labeller == "witness-rerun"
    }
    assert bank_card.adjudication.set_aside() == []
    # the rendered card shows who labelled and the gold set's notes
    from vcost.reliability import render_markdown

    page = render_markdown(card)
    assert "label source | programs (construction and differential testing), not people" in page
    assert "labeller: differential" in page
    assert "NOT FROM PEOPLE" in page.split("## Labels")[0].split("Gold set datasheet")[1]


def test_the_card_is_written_and_recomputed_from_its_files(bank_card: Any, tmp_path: Path) -> None:
    paths = bank_card.paths
    html = paths["html"].read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>")
    assert "vcost-hidden-tests" in html
    assert "LABELS ARE NOT FROM PEOPLE" in html
    assert "LABELS ARE NOT FROM PEOPLE" in paths["markdown"].read_text(encoding="utf-8")
    card = GraderCard.from_dict(json.loads(paths["json"].read_text("utf-8")))
    assert card.labelling["labellers"] == bank_card.card.labelling["labellers"]
    # `vcost card` on the files the pipeline wrote gives the same rates and tiers
    labels = [
        a for k, p in sorted(paths.items()) if k.startswith("labels-") for a in ("--labels", str(p))
    ]
    result = CliRunner().invoke(
        cli,
        ["card", "--gold", str(paths["gold"]), *labels, "--run", str(paths["run"]),
         "--policy", str(_bench().POLICY), "--exploit-audit", str(paths["audit"]),
         "--anchor", str(paths["anchor"]), "--out", str(tmp_path / "again")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    again = GraderCard.from_dict(json.loads((tmp_path / "again" / "card.json").read_text("utf-8")))
    assert again.estimate["rates"] == bank_card.card.estimate["rates"]
    assert again.granted() == bank_card.card.granted()


def test_the_summary_the_bench_records(bank_card: Any) -> None:
    bench = _bench()
    figures = bench.summary(bank_card)
    json.dumps(figures)  # what bench/results/card.jsonl appends: plain JSON
    assert figures["items"] == len(bank_card.build.gold.items)
    assert sum(figures["items_by_stratum"].values()) == figures["items"]
    assert figures["accepted_but_failure"] == len(figures["false_accepts"]) >= 1
    assert figures["rates"]["false-accept all"]["errors"] == len(figures["false_accepts"])
    assert sum(figures["labelling"]["disputes"].values()) == len(bank_card.disputed)
    out = io.StringIO()
    bench.print_summary(Console(file=out, width=200), bank_card, figures)
    text = out.getvalue()
    assert str(bank_card.paths["html"]) in text
    assert "tier dashboard: granted" in text
