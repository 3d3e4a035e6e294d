"""The researcher side against a real server, on SQLite and PostgreSQL: who gets in (no token,
a wrong token, a participant's token: refused; the admin cookie opens nothing of a
participant's), no results on the admin page while data collection runs (only progress and
data-quality flags), and exports that read back with vcost.trace_io.read_trace and pandas."""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
from _harness_support import Client, copy_study, first_item, invite
from click.testing import CliRunner

from vcost.cli import cli
from vcost.harness._export import EXPORT_TABLES, codebook_rows
from vcost.store import Store
from vcost.trace_io import assert_trace_equal, read_trace

ADMIN = "admin-token-for-the-tests-0123456789"
SETTINGS = f'[harness]\nrealism_count = 2\nrun_per_minute = 30\nadmin_token = "{ADMIN}"\n'


def _bearer(base: str, path: str, token: str) -> tuple[int, bytes]:
    request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _one_session(client: Client, token: str) -> None:
    """Practice, then session 1: a fast 50 % verdict (a possible guess) and a do submission."""
    page, _ = first_item(client, token)
    for _ in range(2):
        item = client.item_id(page.body)
        if "/task/verdict" in page.body:
            page = client.post(
                "/task/verdict",
                {"item_id": item, "verdict": "incorrect", "confidence": "50",
                 "reason": "SECRET-REASON-XYZ"},
            )  # fmt: skip
        else:
            page = client.post("/task/submit", {"item_id": item, "code": "def f():\n    pass\n"})
    assert "After the session" in page.body


def test_admin_access_and_no_results_during_collection(
    demo_study: Path, store_url: str, start_server: Any, tmp_path: Path
) -> None:
    study = copy_study(demo_study, tmp_path / "study", settings=SETTINGS)
    token = invite(study, store_url)
    server = start_server(study, store_url)
    base = server.base

    # nobody, a wrong token, a participant's token: refused everywhere on the admin side
    anonymous = Client(base)
    assert anonymous.get("/admin").status == 403
    assert anonymous.get("/admin/status.json").status == 403
    assert anonymous.get("/admin/anything").status == 403
    assert anonymous.post("/admin/export", {"format": "csv"}, csrf=False).status == 403
    assert anonymous.post("/admin/login", {"token": "x" * 40}, csrf=False).status == 403
    assert anonymous.get("/admin/login?token=" + "y" * 40).status == 403
    assert _bearer(base, "/admin/status.json", "wrong-" + ADMIN)[0] == 403
    assert _bearer(base, "/admin/status.json", token)[0] == 403

    person = Client(base)
    _one_session(person, token)
    assert person.get("/admin").status == 403
    assert person.get("/admin/status.json").status == 403
    assert person.get(f"/admin/login?token={token}").status == 403
    assert person.post("/admin/export", {"format": "csv"}).status == 403

    # the admin signs in; the admin cookie opens nothing of a participant's
    admin = Client(base)
    page = admin.post("/admin/login", {"token": ADMIN}, csrf=False)
    assert page.status == 200
    assert "Study status" in page.body
    assert admin.get("/task").status == 401
    assert admin.get("/api/state").status == 401
    assert admin.get(f"/i/{ADMIN}").status == 404
    assert admin.post("/admin/export", {"format": "csv"}, csrf=False).status == 403
    assert admin.post("/admin/export", {"format": "csv", "csrf": "0" * 64}).status == 403

    # while data collection runs: progress and flags, never results
    page = admin.get("/admin")
    assert page.status == 200
    assert "Data collection is running" in page.body
    lowered = page.body.lower()
    for leak in ("secret-reason-xyz", "accept", "reject", "passed", "accuracy", "verdict_correct"):
        assert leak not in lowered, leak
    status, body = _bearer(base, "/admin/status.json", ADMIN)
    assert status == 200
    data = json.loads(body)
    assert data["collecting"] is True
    (me,) = data["participants"]
    assert (me["participant_id"], me["stage"], me["items_ended"]) == ("P01", "questionnaire", 4)
    assert me["fast_guesses"] == 1  # the 50 % verdict a second after the check began
    text = body.decode().lower()
    for leak in ("secret-reason-xyz", "accept", "reject", '"passed"', '"verdict"'):
        assert leak not in text, leak

    # exports: refused until the researcher confirms while collection runs
    assert admin.post("/admin/export", {"format": "csv"}).status == 409
    request = urllib.request.Request(
        base + "/admin/export",
        data=b"format=parquet&ack=yes",
        headers={"Authorization": f"Bearer {ADMIN}"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        assert response.headers["content-type"] == "application/zip"
        archive = zipfile.ZipFile(io.BytesIO(response.read()))
    unpacked = tmp_path / "zip"
    archive.extractall(unpacked)
    trace = read_trace(unpacked / "parquet")
    assert len(trace.episodes) == 2
    assert (unpacked / "codebook.csv").is_file()

    # signing out ends the cookie session
    assert admin.post("/admin/logout", {}).status == 200
    assert admin.get("/admin").status == 403


def test_export_round_trips(demo_study: Path, start_server: Any, tmp_path: Path) -> None:
    study = copy_study(demo_study, tmp_path / "study", settings=SETTINGS)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    token = invite(study, url)
    server = start_server(study, url)
    client = Client(server.base)
    _one_session(client, token)
    server.stop()

    out = tmp_path / "export"
    result = CliRunner().invoke(
        cli, ["serve", str(study), "--db", url, "--export", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "data collection is still running" in result.output
    with Store.open(url) as store:
        stored = store.load_trace()
    codebook = pd.read_csv(out / "codebook.csv")
    described = set(zip(codebook["table"], codebook["column"], strict=True))
    assert codebook["description"].notna().all()
    for fmt in ("csv", "parquet"):
        trace = read_trace(out / fmt)
        if fmt == "parquet":
            assert_trace_equal(trace, stored)
        else:  # CSV keeps floats to 15-16 significant digits (vcost.trace_io.write_trace)
            for name in ("answers", "verifiers", "episodes", "events"):
                pd.testing.assert_frame_equal(
                    getattr(trace, name), getattr(stored, name), check_exact=False, rtol=1e-12
                )
        for table in EXPORT_TABLES:
            path = out / fmt / f"{table}.{fmt}"
            frame = pd.read_csv(path) if fmt == "csv" else pd.read_parquet(path)
            assert {(table, c) for c in frame.columns} <= described, table
    items = pd.read_parquet(out / "parquet" / "harness_items.parquet")
    assert len(items) == 4
    assert set(items["session_index"]) == {0, 1}
    assert "token_hash" not in pd.read_csv(out / "csv" / "harness_participants.csv").columns
    long = pd.read_csv(out / "csv" / "responses_long.csv")
    assert "score" in set(long.loc[long["kind"] == "screening", "field"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["collecting"] is True
    assert manifest["rows"]["episodes"] == 2
    assert {(r["table"], r["column"]) for r in codebook_rows()} == described
    # a second export into the same folder is refused (nothing half-written)
    again = CliRunner().invoke(cli, ["serve", "--db", url, "--export", str(out)])
    assert again.exit_code == 2
    assert "not empty" in again.output
