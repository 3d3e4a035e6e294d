"""Fixtures of the release tests: a spec, a simulated panel, a demo study, and a store filled
through the harness's state API (SQLite and PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from _release_support import (
    PROLIFIC,
    Filled,
)

from vcost.harness import ClientEvent, Harness, make_demo_study, open_study
from vcost.simulate import PanelStudy, simulate_panel
from vcost.spec import example_text
from vcost.store import _schema as s
from vcost.trace import Trace
from vcost.trace_io import read_trace, write_trace

# --------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("spec") / "study.toml"
    path.write_text(example_text("core-study"), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def panel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Trace, Path]:
    """A simulated 4-person panel whose check episodes carry reasons naming the person."""
    trace = simulate_panel(PanelStudy(people=4, seed=3)).trace
    episodes = trace.episodes.copy()
    episodes["reason"] = [
        f"REASON-TEXT from {v}" if block == "check" else None
        for v, block in zip(episodes["verifier_id"], episodes["block"], strict=True)
    ]
    trace = Trace(trace.answers, episodes, trace.verifiers, trace.events)
    folder = tmp_path_factory.mktemp("panel") / "trace"
    write_trace(trace, folder)
    return read_trace(folder), folder


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo study: 2 people, 2 study tasks, 2 practice tasks, realism on spare answers."""
    folder = tmp_path_factory.mktemp("study")
    make_demo_study(
        folder,
        participants=2,
        study_tasks=2,
        pairs_per_session=1,
        spares=2,
        settings='[harness]\ntitle = "t"\nrealism_count = 2\n',
    )
    return folder


def _complete(h: Harness, pid: str, n: int) -> None:
    """One participant from consent to debrief through the state API (no server)."""
    first = h.participant_by_id(pid)
    assert first is not None
    h.consent(first)
    for _ in range(200):
        p = h.participant_by_id(pid)
        assert p is not None
        if p.stage == "screening":
            h.screened(p, 1.0, {"passed_tests": 8, "total": 8, "code": f"SCREEN-CODE {pid}"})
            continue
        step = h.step(p)
        if step.page == "done":
            return
        if step.page == "session_start":
            h.start_session(p)
        elif step.page == "item":
            item = step.item
            assert item is not None
            batch = f"b{n}{len(item.item_id)}{item.assignment_id[-2:]}{item.session_index}"
            h.add_events(p, batch, item.item_id, [ClientEvent("c1", "keys", 100, {"n": 3})])
            if item.block == "do":
                h.save_draft(p, item.item_id, f"DRAFT-CODE {pid}", "OWN-TESTS")
                h.end_item(
                    p,
                    item.item_id,
                    termination="submitted",
                    submitted="SUBMITTED-CODE",
                    passed=True,
                    tests="OWN-TESTS",
                )
            else:
                h.end_item(
                    p,
                    item.item_id,
                    termination="verdict",
                    verdict="accept",
                    confidence=0.75,
                    reason=f"REASON-TEXT by {pid}",
                )
        elif step.page == "questionnaire":
            h.questionnaire_done(
                p,
                step.session_index or 0,
                {"trust": 4, "experience": "1-3 years", "comment": f"COMMENT-TEXT I am {pid}"},
            )
        elif step.page == "realism":
            h.realism_done(p, {a: 2 + n for a, _ in h.realism_answers(p)})
        elif step.page == "debrief":
            h.debrief_done(p, {"comment": "DEBRIEF-TEXT"})
        elif step.page == "pause":
            h.resume(p)
    raise AssertionError(f"{pid} did not finish")


@pytest.fixture
def filled(study: Path, store_url: str) -> Filled:
    """The study's store after an invited person, a crowd entrant and a test login finished."""
    harness = open_study(study, store_url)
    try:
        harness.invite("P01")
        assert harness.enter_crowd(PROLIFIC).token is not None  # takes P02
        test_login, _ = harness.test_login("P01")
        for n, pid in enumerate(("P01", "P02", test_login)):
            _complete(harness, pid, n)
        counts: dict[str, dict[str, int]] = {}
        trace = harness.store.load_trace()
        counts["episodes"] = trace.episodes["verifier_id"].value_counts().to_dict()
        with harness.store.engine.connect() as conn:
            for name, table, column in (
                ("ratings", s.ratings, s.ratings.c.rater_id),
                ("items", s.harness_items, s.harness_items.c.participant_id),
            ):
                rows = conn.execute(
                    sa.select(column, sa.func.count()).select_from(table).group_by(column)
                ).all()
                counts[name] = {str(r[0]): int(r[1]) for r in rows}
    finally:
        harness.store.close()
    return Filled(store_url, ("P01", "P02"), test_login, counts)
