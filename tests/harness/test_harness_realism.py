"""Realism ratings over HTTP (``vcost serve``): each participant rates at most one version of
each spare task (never a correct answer beside its planted copy), the version rotates across
the panel so every version is rated, and the order is randomised per participant from a
recorded seed, the same after a reload (harness/_realism.py)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from _harness_support import Client, first_item, invite, rows

from vcost.harness import make_demo_study, open_study
from vcost.harness._realism import realism_plan
from vcost.store import Store
from vcost.store import _schema as s

PANEL = ("P01", "P02")


@pytest.fixture(scope="module")
def spare_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two panel places, one session each, 4 spare tasks with a correct and a planted answer."""
    folder = tmp_path_factory.mktemp("realism-study")
    make_demo_study(
        folder,
        participants=2,
        study_tasks=2,
        pairs_per_session=1,
        spares=4,
        settings='[harness]\ntitle = "realism"\nrealism_count = 3\n',
    )
    return folder


def _to_realism(client: Client, token: str) -> str:
    page, _ = first_item(client, token)
    for _ in range(2):
        item = client.item_id(page.body)
        if "/task/verdict" in page.body:
            fields = {"item_id": item, "verdict": "correct", "confidence": "75"}
            page = client.post("/task/verdict", fields)
        else:
            page = client.post("/task/submit", {"item_id": item, "code": "x = 1\n"})
    page = client.post("/questionnaire", {"trust": "3"})
    assert "/realism" in page.body, page.body[:500]
    return page.body


def test_each_rater_sees_one_version_per_spare_task_in_a_recorded_random_order(
    spare_study: Path, tmp_path: Path, store_url: str, start_server: Any
) -> None:
    url = store_url
    tokens = {p: invite(spare_study, url, participant=p) for p in PANEL}
    server = start_server(spare_study, url)
    harness = open_study(spare_study, url)
    material = harness.material
    harness.store.close()
    spare_tasks = {a.task_id for a in material.realism}
    assert len(spare_tasks) == 4
    assert len(material.realism) == 8

    shown: dict[str, list[str]] = {}
    for place, token in tokens.items():
        client = Client(server.base)
        body = _to_realism(client, token)
        again = client.get("/realism").body
        assert again == body  # a reload shows the same answers in the same order
        titles = re.findall(r"<h3>(.*?)</h3>", body)
        fields = sorted(set(re.findall(r'name="(rating_\d+)"', body)))
        assert len(titles) == len(fields) == 3  # realism_count of the 4 spare tasks
        assert len(set(titles)) == 3  # never two versions of one task
        page = client.post("/realism", dict.fromkeys(fields, "4"))
        assert "Thank you: what the study was about" in page.body
        with Store.open(url) as store:
            (response,) = [
                r["value"]
                for r in rows(store, s.harness_responses)
                if r["kind"] == "realism" and r["participant_id"] == place
            ]
        assert response["design"] == "one-version-per-task"
        assert isinstance(response["seed"], int)
        shown[place] = response["shown"]
        # the page's order is the recorded order
        assert titles == [material.task(material.answer(a).task_id).title for a in shown[place]]
        assert set(response["ratings"]) == set(shown[place])

    with Store.open(url) as store:
        ratings = rows(store, s.ratings)
    assert sorted(r["answer_id"] for r in ratings) == sorted(shown["P01"] + shown["P02"])
    # the rotation: where both raters rate a task, they rate different versions of it
    by_task: dict[str, set[str]] = {}
    for answers in shown.values():
        for a in answers:
            by_task.setdefault(material.answer(a).task_id, set()).add(a)
    both = [
        t
        for t in by_task
        if all(t in {material.answer(a).task_id for a in shown[p]} for p in PANEL)
    ]
    assert both
    assert all(len(by_task[t]) == 2 for t in both)


def test_the_plan_balances_versions_over_a_panel_and_orders_each_rater_differently(
    spare_study: Path, tmp_path: Path
) -> None:
    """With every spare task rated (realism_count >= tasks), each version of each task is
    rated by half of an even panel; orders are permutations that differ between raters."""
    harness = open_study(spare_study, f"sqlite:///{tmp_path / 'vcost.db'}")
    try:
        material = harness.material
        settings = material.settings.model_copy(update={"realism_count": 8})
        material = dataclasses.replace(material, settings=settings)
        panel = list(material.allocation.participants)
        counts: dict[str, int] = {}
        orders = []
        for place in panel:
            person = type("P", (), {"plays_as": place})()
            plan = realism_plan(material, person)  # type: ignore[arg-type]
            tasks = [material.answer(a).task_id for a, _ in plan.answers]
            assert sorted(tasks) == sorted({a.task_id for a in material.realism})
            for a, why in plan.answers:
                assert why == "spare"
                counts[a] = counts.get(a, 0) + 1
            assert plan == realism_plan(material, person)  # type: ignore[arg-type]
            orders.append(tasks)
        assert counts == {a.answer_id: len(panel) // 2 for a in material.realism}
        assert len({tuple(o) for o in orders}) == len(orders)
    finally:
        harness.store.close()
