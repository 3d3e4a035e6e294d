"""`vcost bots` against a real server (SQLite and PostgreSQL): simulated participants complete
the demo study over HTTP, the store holds exactly what they did (as test data, never in the
trace), and every acknowledged event is stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _harness_support import rows
from click.testing import CliRunner

from vcost.cli import cli
from vcost.harness import StudyMaterial
from vcost.store import Store
from vcost.store import _schema as s


def test_bots_complete_the_study(
    demo_study: Path, store_url: str, start_server: Any, tmp_path: Path
) -> None:
    server = start_server(demo_study, store_url)
    report_path = tmp_path / "bots.json"
    result = CliRunner().invoke(
        cli,
        ["bots", str(demo_study), "--db", store_url, "--url", server.base, "--bots", "3",
         "--speed", "600", "--error-rate", "0.5", "--seed", "7", "--report", str(report_path)],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "rate-limited" in result.output  # the table shows runs refused by the rate limit
    assert "…" not in result.output  # and cuts nothing off (CliRunner: not a terminal)
    report = json.loads(report_path.read_text())
    assert report["events_lost"] == 0
    bots = report["bots"]
    assert [b["completed"] for b in bots] == [True, True, True]
    material = StudyMaterial.load(demo_study)
    per_bot = len(material.assignments_of("P01"))
    assert all(b["do_items"] + b["check_items"] == per_bot for b in bots)
    assert all(b["events_acked"] == b["events_sent"] > 0 for b in bots)
    with Store.open(store_url) as store:
        ids = {b["participant_id"] for b in bots}
        people = [p for p in rows(store, s.harness_participants) if p["participant_id"] in ids]
        assert {(p["mode"], p["stage"]) for p in people} == {("test", "done")}
        items = [i for i in rows(store, s.harness_items) if i["participant_id"] in ids]
        assert len(items) == 3 * per_bot
        assert all(i["ended_at"] is not None and i["episode_id"] is None for i in items)
        assert {i["termination"] for i in items} <= {"submitted", "verdict"}
        # the verdicts stored are exactly the bots' (flipped ones disagree with ground truth)
        truth = {a: material.answer(a).ground_truth for a in material.answers}
        wrong = sum(
            1
            for i in items
            if i["block"] == "check"
            and (i["verdict"] == "accept") != (truth[i["answer_id"]] == "correct")
        )
        assert wrong == sum(b["flipped_verdicts"] for b in bots)
        assert store.load_trace().episodes.empty  # bots are test logins: never in the trace
