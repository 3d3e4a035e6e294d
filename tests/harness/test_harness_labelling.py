"""The blind labelling page against a real server (SQLite and PostgreSQL): two labellers label a
gold set over HTTP, an adjudicator resolves one dispute, and vcost.reliability's adjudication of
the stored labels gives the expected statuses and kappa; what each role can and cannot see or
reach; CSRF, bad values and size limits refused."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from _harness_support import Client, copy_study, invite
from click.testing import CliRunner

from vcost.cli import cli
from vcost.errors import InputError
from vcost.harness import StudyMaterial
from vcost.harness._labelling import export_labels, invite_labeller, labels_from_store
from vcost.reliability import (
    GoldItem,
    GoldSet,
    Stratum,
    adjudicate,
    read_gold,
    read_labels,
    write_gold,
)
from vcost.store import Store

ADMIN = "admin-token-for-the-labelling-tests-0123"
SETTINGS = f'[harness]\nrealism_count = 2\nrun_per_minute = 30\nadmin_token = "{ADMIN}"\n'

# item -> (ann's task label, bob's task label); execution: everyone says yes
PLAN = {
    "A/reference": ("yes", "yes"),  # agreed success
    "B/planted/0": ("no", "no"),  # agreed failure
    "C/planted/1": ("yes", "no"),  # disagreement: the adjudicator decides "no"
    "D/planted/2": ("yes", "unsure"),  # disagreement left pending
}


def _gold(study: Path) -> GoldSet:
    tasks = sorted(StudyMaterial.load(study).tasks)
    items = [
        GoldItem(
            item_id=item_id,
            task_id=tasks[n % len(tasks)],
            cluster=tasks[n % len(tasks)],
            stratum=Stratum.CLEAR_SUCCESS if n == 0 else Stratum.NEAR_MISS,
            output=f"def answer_{n}():\n    return {n}  # OUTPUT-{n}\n",
            category=f"planted/off-by-one/CATEGORY-{n}",
            source=f"SOURCE-{n}",
            environment=f"ENV-STATE-{n}: the file system after the run",
        )
        for n, item_id in enumerate(PLAN)
    ]
    return GoldSet.sealed("labelling-test", "code", items)


def _item_of(page: str, gold: GoldSet) -> tuple[str, str]:
    """(item id, the page's opaque handle) of the item on a labelling page."""
    handle = re.search(r'name="item" value="([0-9a-f]{20})"', page)
    assert handle, page[:2000]
    found = [i.item_id for i in gold.items if f"OUTPUT-{gold.items.index(i)}" in page]
    assert len(found) == 1
    return found[0], handle.group(1)


def _bearer(base: str, path: str, token: str) -> int:
    request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def _never_shown(page: str, gold: GoldSet) -> None:
    for item in gold.items:
        assert item.item_id not in page
        assert item.category not in page
        assert item.source not in page
    for secret in (gold.canary, "near-miss", "clear-success", "expected", "confidence"):
        assert secret not in page


def test_labelling_adjudication_and_access(
    demo_study: Path, store_url: str, start_server: Any, tmp_path: Path
) -> None:
    """The whole flow over HTTP, on SQLite and on PostgreSQL (the store_url fixture)."""
    study = copy_study(demo_study, tmp_path / "study", settings=SETTINGS)
    url = store_url
    participant = invite(study, url)
    gold = _gold(study)
    gold_path = write_gold(gold, tmp_path / "gold.jsonl")

    runner = CliRunner()
    tokens: dict[str, str] = {}
    for name, extra in (("ann", []), ("bob", []), ("cy", ["--adjudicator"])):
        result = runner.invoke(
            cli,
            ["label", "invite", str(gold_path), "--labeller", name, "--study", str(study),
             "--db", url, *extra],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        tokens[name] = result.output.strip().rsplit("/l/", 1)[1]

    server = start_server(study, url)
    clients = {name: Client(server.base) for name in tokens}
    handles: dict[str, dict[str, str]] = {"ann": {}, "bob": {}}

    for who, column in (("ann", 0), ("bob", 1)):
        client = clients[who]
        page = client.get(f"/l/{tokens[who]}")
        assert page.status == 200
        assert "0 of 4 items labelled" in page.body
        for _ in PLAN:
            assert "ENV-STATE-" in page.body  # the environment the item carries is shown
            _never_shown(page.body, gold)
            assert "BOB-NOTE" not in page.body  # another labeller's labels never are
            item_id, handle = _item_of(page.body, gold)
            handles[who][item_id] = handle
            page = client.post(
                "/label",
                {"item": handle, "execution": "yes", "task": PLAN[item_id][column],
                 "business": "", "note": f"{who.upper()}-NOTE {list(PLAN).index(item_id)}"},
            )  # fmt: skip
            assert page.status == 200, page.body[:500]
        assert "Every item is labelled" in page.body
        assert "4 of 4" in page.body
        # their own label can be revisited (and shows their note, never the other's)
        again = client.get(f"/label?item={handles[who]['C/planted/1']}")
        assert f"{who.upper()}-NOTE" in again.body
        assert ("BOB-NOTE" in again.body) == (who == "bob")

    # handles are per labeller: ann cannot address bob's item names
    assert handles["ann"]["A/reference"] != handles["bob"]["A/reference"]
    refused = clients["ann"].post(
        "/label", {"item": handles["bob"]["A/reference"], "execution": "yes", "task": "yes"}
    )
    assert refused.status == 404

    # the adjudicator sees only the two disagreements, with both labels, and decides one
    cy = clients["cy"]
    page = cy.get(f"/l/{tokens['cy']}")
    assert "0 of 2 items labelled" in page.body
    _never_shown(page.body, gold)
    item_id, handle = _item_of(page.body, gold)
    assert item_id in ("C/planted/1", "D/planted/2")
    assert "Labeller 1" in page.body
    assert "Labeller 2" in page.body
    assert "ANN-NOTE" in page.body
    assert "BOB-NOTE" in page.body
    listed = re.findall(r'href="/label\?item=([0-9a-f]{20})"', page.body)
    assert len(listed) == 2
    for other in listed:
        if item_id == "C/planted/1":
            break
        page = cy.get(f"/label?item={other}")
        item_id, handle = _item_of(page.body, gold)
    assert item_id == "C/planted/1"
    page = cy.post("/label", {"item": handle, "execution": "", "task": "no", "business": ""})
    assert "1 of 2 items labelled" in page.body

    # access: a labeller reaches no participant or admin page, and vice versa
    ann = clients["ann"]
    assert ann.get("/").status == 401
    assert ann.get("/consent").status == 401
    assert ann.get("/admin/status.json").status in (401, 403)
    assert ann.get("/admin/export").status in (401, 403, 405)
    person = Client(server.base)
    assert person.get(f"/i/{participant}").status == 200
    assert person.get("/label").status == 401
    assert _bearer(server.base, "/label", ADMIN) == 401
    assert Client(server.base).get("/label").status == 401
    assert Client(server.base).get("/l/not-a-token").status == 404

    # CSRF, bad values, size limit
    page = ann.get(f"/label?item={handles['ann']['A/reference']}")
    form = {"item": handles["ann"]["A/reference"], "execution": "yes", "task": "yes"}
    assert ann.post("/label", form, csrf=False).status == 403
    assert ann.post("/label", {**form, "csrf": "0" * 64}).status == 403
    assert ann.post("/label", {**form, "csrf": clients["bob"].csrf}).status == 403
    assert ann.post("/label", {**form, "task": "maybe"}).status == 400
    assert ann.post("/label", {**form, "task": ""}).status == 400  # primaries label the task
    assert ann.post("/label", {**form, "note": "x" * 2001}).status == 413
    assert ann.post("/label", {**form, "note": "x" * 300_000}).status == 413  # body limit

    # the stored labels, read by vcost.reliability as file-based labels are
    with Store.open(url) as store:
        rows = labels_from_store(store, gold)
        exported = export_labels(store, gold, tmp_path / "labels.jsonl")
    assert all("verdict" not in json.loads(line) for line in exported.read_text().splitlines())
    assert read_labels(exported) == rows
    assert len(rows) == 9
    log = tmp_path / "adjudication.jsonl"
    task = adjudicate(read_gold(gold_path), rows, level="task", log=log)
    status = {i.item_id: (i.status, i.label) for i in task.items}
    assert status == {
        "A/reference": ("agreed", "success"),
        "B/planted/0": ("agreed", "failure"),
        "C/planted/1": ("adjudicated", "failure"),
        "D/planted/2": ("pending", None),
    }
    assert task.kappa == pytest.approx(3 / 11)  # p_o = 1/2, p_e = 5/16 (ann first, bob second)
    assert task.kappa_items == 4
    assert task.percent_agreement == pytest.approx(0.5)
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert {r["item_id"]: r["status"] for r in logged} == {
        "C/planted/1": "adjudicated",
        "D/planted/2": "pending",
    }
    execution = adjudicate(gold, rows, level="execution")
    assert {i.status for i in execution.items} == {"agreed"}

    # the CLI export writes the same file
    out = tmp_path / "cli-labels.jsonl"
    result = runner.invoke(
        cli, ["label", "export", str(gold_path), "--study", str(study), "--db", url,
              "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert read_labels(out) == rows


def test_roles_and_reissue(tmp_path: Path) -> None:
    gold = GoldSet.sealed("g", "code", [GoldItem("x", "t", "t", Stratum.CLEAR_SUCCESS, "print(1)")])
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        first = invite_labeller(store, gold, "ann")
        second = invite_labeller(store, gold, "ann")
        assert first != second
        with pytest.raises(InputError, match="already a primary"):
            invite_labeller(store, gold, "ann", role="adjudicator")
        with pytest.raises(InputError, match="not allowed"):
            invite_labeller(store, gold, "ann:bob")
        other = GoldSet.sealed(
            "g", "code", [GoldItem("y", "t", "t", Stratum.CLEAR_SUCCESS, "print(2)")]
        )
        with pytest.raises(InputError, match="different gold set"):
            invite_labeller(store, other, "bob")
        assert labels_from_store(store, gold) == []


def test_labelling_in_a_browser(
    demo_study: Path, start_server: Any, tmp_path: Path, chromium: Any
) -> None:
    """One short look in Chromium: the form works with the mouse, the item's name is hidden."""
    study = copy_study(demo_study, tmp_path / "study", settings=SETTINGS)
    url = f"sqlite:///{study / 'vcost.db'}"
    gold = _gold(study)
    with Store.open(url) as store:
        token = invite_labeller(store, gold, "ann")
    server = start_server(study, url)
    page = chromium.new_page()
    try:
        page.goto(f"{server.base}/l/{token}")
        assert "0 of 4 items labelled" in page.inner_text("#progress")
        assert "OUTPUT-" in page.inner_text("#output")
        page.check("input[name=execution][value=yes]")
        page.check("input[name=task][value=unsure]")
        page.fill("textarea[name=note]", "looked at it in a browser")
        page.click("#save-label")
        page.wait_for_url(f"{server.base}/label")
        assert "1 of 4 items labelled" in page.inner_text("#progress")
        _never_shown(page.content(), gold)
    finally:
        page.close()
    with Store.open(url) as store:
        (row,) = labels_from_store(store, gold)
    assert (row.labeller, row.execution, row.task, row.business) == ("ann", "yes", "unsure", "")
    assert row.note == "looked at it in a browser"
