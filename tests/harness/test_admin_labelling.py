"""Labelling progress on the admin page, against a real server on SQLite and PostgreSQL: per
labeller items done of items assigned, disputes open, adjudicated and still disputed, as the
labellers work over HTTP; never a label's value, a note, an output or an item id."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

from _harness_support import Client, copy_study, invite
from click.testing import CliRunner

from vcost.cli import cli
from vcost.harness import StudyMaterial
from vcost.harness._labelling import invite_labeller, labelling_progress
from vcost.reliability import GoldItem, GoldSet, Stratum
from vcost.store import Store

ADMIN = "admin-token-for-the-admin-labelling-0123"
SETTINGS = f'[harness]\nrealism_count = 2\nrun_per_minute = 30\nadmin_token = "{ADMIN}"\n'

# item -> (ann's task label, bob's task label, cy's decision or None)
PLAN = {
    "A/reference": ("yes", "yes", None),  # agreed
    "B/planted/0": ("no", "no", None),  # agreed
    "C/planted/1": ("yes", "no", "no"),  # disputed, then adjudicated
    "D/planted/2": ("yes", "unsure", "unsure"),  # disputed, still disputed after adjudication
}


def _gold(study: Path) -> GoldSet:
    tasks = sorted(StudyMaterial.load(study).tasks)
    items = [
        GoldItem(item_id, tasks[n % len(tasks)], tasks[n % len(tasks)], Stratum.NEAR_MISS,
                 f"def answer_{n}():\n    return {n}  # OUTPUT-{n}\n")
        for n, item_id in enumerate(PLAN)
    ]  # fmt: skip
    return GoldSet.sealed("admin-labelling-gold", "code", items)


def _status(base: str) -> dict[str, Any]:
    request = urllib.request.Request(
        base + "/admin/status.json", headers={"Authorization": f"Bearer {ADMIN}"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        data: dict[str, Any] = json.loads(response.read())
    return data


def _summary(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, tuple[str, int, int]]]:
    (gold,) = data["labelling"]
    people = {p["labeller"]: (p["role"], p["done"], p["assigned"]) for p in gold["labellers"]}
    counts = {k: gold[k] for k in ("items", "double_labelled", "disputed_items",
                                   "disputes_open", "adjudicated", "still_disputed")}  # fmt: skip
    return counts, people


def _label_all(client: Client, gold: GoldSet, column: int, note: str) -> None:
    page = client.get("/label")
    while 'name="item"' in page.body:
        handle = re.search(r'name="item" value="([0-9a-f]{20})"', page.body)
        assert handle
        (item_id,) = [i.item_id for n, i in enumerate(gold.items) if f"OUTPUT-{n}" in page.body]
        value = PLAN[item_id][column]
        if value is None:
            break
        page = client.post(
            "/label",
            {"item": handle.group(1), "execution": "yes" if column < 2 else "",
             "task": value, "business": "", "note": f"{note} {item_id}"},
        )  # fmt: skip
        assert page.status == 200, page.body[:400]


def _never_shown(text: str, gold: GoldSet, values: tuple[str, ...]) -> None:
    for item in gold.items:
        assert item.item_id not in text
        assert item.output.strip() not in text
    notes = ("ANN-SECRET-NOTE", "BOB-SECRET-NOTE", "CY-SECRET-NOTE", "OUTPUT-", gold.canary)
    for secret in (*notes, *values):
        assert secret not in text, secret


def test_the_admin_page_shows_labelling_progress_only(
    demo_study: Path, store_url: str, start_server: Any, tmp_path: Path
) -> None:
    study = copy_study(demo_study, tmp_path / "study", settings=SETTINGS)
    invite(study, store_url)  # prepares the store
    gold = _gold(study)
    with Store.open(store_url) as store:
        assert labelling_progress(store) == ()
        tokens = {
            "ann": invite_labeller(store, gold, "ann"),
            "bob": invite_labeller(store, gold, "bob"),
            "cy": invite_labeller(store, gold, "cy", role="adjudicator"),
        }
    server = start_server(study, store_url)
    counts, people = _summary(_status(server.base))
    assert counts == {"items": 4, "double_labelled": 0, "disputed_items": 0,
                      "disputes_open": 0, "adjudicated": 0, "still_disputed": 0}  # fmt: skip
    assert people == {"ann": ("primary", 0, 4), "bob": ("primary", 0, 4),
                      "cy": ("adjudicator", 0, 0)}  # fmt: skip

    clients = {name: Client(server.base) for name in tokens}
    for name in tokens:
        assert clients[name].get(f"/l/{tokens[name]}").status == 200
    _label_all(clients["ann"], gold, 0, "ANN-SECRET-NOTE")
    counts, people = _summary(_status(server.base))
    assert people["ann"] == ("primary", 4, 4)
    assert counts["double_labelled"] == 0
    assert counts["disputed_items"] == 0  # one labeller's labels dispute nothing yet

    _label_all(clients["bob"], gold, 1, "BOB-SECRET-NOTE")
    counts, people = _summary(_status(server.base))
    assert people == {"ann": ("primary", 4, 4), "bob": ("primary", 4, 4),
                      "cy": ("adjudicator", 0, 2)}  # fmt: skip
    assert counts == {"items": 4, "double_labelled": 4, "disputed_items": 2,
                      "disputes_open": 2, "adjudicated": 0, "still_disputed": 0}  # fmt: skip

    _label_all(clients["cy"], gold, 2, "CY-SECRET-NOTE")
    data = _status(server.base)
    counts, people = _summary(data)
    assert people["cy"] == ("adjudicator", 2, 2)
    assert counts == {"items": 4, "double_labelled": 4, "disputed_items": 2,
                      "disputes_open": 0, "adjudicated": 1, "still_disputed": 1}  # fmt: skip
    _never_shown(json.dumps(data), gold, ("unsure", '"yes"', '"no"'))

    admin = Client(server.base)
    page = admin.post("/admin/login", {"token": ADMIN}, csrf=False)
    assert page.status == 200
    page = admin.get("/admin")
    assert "<h2>Labelling</h2>" in page.body
    section = page.body.split("<h2>Labelling</h2>", 1)[1].split("<h2>Exports</h2>", 1)[0]
    assert "admin-labelling-gold" in section
    assert "<td>ann</td><td>primary</td><td>4 / 4</td>" in section
    assert "<td>cy</td><td>adjudicator</td><td>2 / 2</td>" in section
    assert "open: 0; adjudicated: 1; still disputed after adjudication: 1" in section
    _never_shown(page.body, gold, ("unsure",))
    _never_shown(section, gold, ("yes", "no<", ">no"))
    lowered = page.body.lower()
    for leak in ("accept", "reject", "passed", "accuracy"):
        assert leak not in lowered, leak
    # a labeller's login opens no admin page
    assert clients["ann"].get("/admin/status.json").status in (401, 403)
    # the same counts from the command line
    result = CliRunner().invoke(cli, ["label", "status", "--study", str(study), "--db", store_url])
    assert result.exit_code == 0, result.output
    assert (
        "admin-labelling-gold (code): 4 items, 4 labelled twice; disputes 2: 0 open, "
        "1 adjudicated, 1 still disputed" in result.output
    )
    assert "  bob (primary): 4 / 4" in result.output
    assert "SECRET-NOTE" not in result.output
