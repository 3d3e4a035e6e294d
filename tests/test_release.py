"""`vcost release` end to end: a simulated panel and a store filled through the harness's state
API, on SQLite and PostgreSQL.

Every check reads the files the release wrote: the original ids are looked for in every byte
of every file, the codebook is compared with the columns the CSV headers hold, the manifest's
SHA-256 values are recomputed with hashlib, and the new ids are recomputed with the standard
library's ``hmac`` (RFC 2104 HMAC-SHA256), independently of vcost's code.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import stat
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from vcost.cli import cli
from vcost.errors import InputError
from vcost.harness import ClientEvent, Harness, export_study, make_demo_study, open_study
from vcost.release import key_fingerprint, make_release, new_id
from vcost.release._anonymise import Rekey
from vcost.simulate import PanelStudy, simulate_panel
from vcost.spec import example_text
from vcost.store import Store
from vcost.store import _schema as s
from vcost.tasks import BUNDLED_BANK, TaskRole, load_bank
from vcost.trace import Trace
from vcost.trace_io import assert_trace_equal, read_trace, write_trace

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
PROLIFIC = {
    "PROLIFIC_PID": "5f0c1d2e3a4b5c6d7e8f9a0b",
    "STUDY_ID": "6a7b8c9d0e1f",
    "SESSION_ID": "sess-9f8e7d6c5b4a",
}
MARKERS = (
    "REASON-TEXT",
    "COMMENT-TEXT",
    "DEBRIEF-TEXT",
    "DRAFT-CODE",
    "OWN-TESTS",
    "SCREEN-CODE",
    "SUBMITTED-CODE",
)


def hmac_id(key: bytes, original: str) -> str:
    """The documented scheme, computed with the standard library (RFC 2104)."""
    return "p-" + hmac.new(key, original.encode(), hashlib.sha256).hexdigest()[:12]


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def found_in(folder: Path, needles: set[str]) -> dict[str, set[str]]:
    """File -> which needles occur in its bytes."""
    out: dict[str, set[str]] = {}
    for name, data in files_of(folder).items():
        hits = {n for n in needles if n.encode() in data}
        if hits:
            out[name] = hits
    return out


def data(folder: Path, table: str) -> pd.DataFrame:
    return pd.read_csv(folder / "data" / f"{table}.csv", dtype=str, keep_default_na=False)


def assert_codebook_covers(folder: Path) -> None:
    codebook = pd.read_csv(folder / "codebook.csv", dtype=str, keep_default_na=False)
    documented = set(zip(codebook["table"], codebook["column"], strict=True))
    actual = set()
    for path in (folder / "data").glob("*.csv"):
        header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
        actual |= {(path.stem, column) for column in header}
    assert actual == documented
    assert (codebook["description"] != "").all()
    assert (codebook["type"].isin(["str", "int", "float", "bool", "datetime", "json"])).all()


def assert_manifest_matches(folder: Path) -> dict[str, object]:
    manifest = json.loads((folder / "manifest.json").read_text())
    listed = manifest["files"]
    on_disk = set(files_of(folder)) - {"manifest.json"}
    assert set(listed) == on_disk
    for name, entry in listed.items():
        content = (folder / name).read_bytes()
        assert hashlib.sha256(content).hexdigest() == entry["sha256"], name
        assert len(content) == entry["bytes"]
    assert manifest["format"] == "vcost-release/1"
    assert manifest["vcost"]["version"]
    assert re.fullmatch(r"[0-9a-f]{40}", manifest["vcost"]["git_commit"] or "0" * 40)
    return dict(manifest)


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


@dataclass
class Filled:
    url: str
    people: tuple[str, ...]
    test_login: str
    counts: dict[str, dict[str, int]]


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


# --------------------------------------------------------------------------------------------
# A simulated panel


def test_panel_release_from_store_and_folder(
    panel: tuple[Trace, Path], spec_file: Path, store_url: str, tmp_path: Path
) -> None:
    trace, folder = panel
    with Store.open(store_url) as store:
        store.import_trace(trace)
    from_store = make_release(store_url, tmp_path / "a", spec=spec_file, key=KEY)
    from_folder = make_release(folder, tmp_path / "b", spec=spec_file, key=KEY)

    people = set(trace.verifiers["verifier_id"])
    for release in (from_store, from_folder):
        assert found_in(release.folder, people) == {}
        assert release.participants == 4
        assert_codebook_covers(release.folder)
        assert_manifest_matches(release.folder)
    assert from_store.manifest["source"] == {
        "kind": "store",
        "backend": store_url.split(":")[0].split("+")[0],
    }
    # the same input and key give the same bytes, whichever way the trace came
    for table in ("answers", "verifiers", "episodes", "events"):
        a = (tmp_path / "a" / "data" / f"{table}.csv").read_bytes()
        assert a == (tmp_path / "b" / "data" / f"{table}.csv").read_bytes()

    # the released trace is the original with each person's id replaced by HMAC(key, id)
    mapping = {v: hmac_id(KEY, v) for v in people}
    expected_episodes = trace.episodes.copy()
    expected_episodes["verifier_id"] = (
        expected_episodes["verifier_id"].map(mapping).astype(trace.episodes["verifier_id"].dtype)
    )
    expected_episodes["reason"] = expected_episodes["reason"].str.replace(
        r"syn-v\d{3}", lambda m: mapping[m.group(0)], regex=True
    )
    expected_verifiers = trace.verifiers.copy()
    expected_verifiers["verifier_id"] = (
        expected_verifiers["verifier_id"].map(mapping).astype(trace.verifiers["verifier_id"].dtype)
    )
    expected = Trace(trace.answers, expected_episodes, expected_verifiers, trace.events)
    assert_trace_equal(read_trace(tmp_path / "a" / "data"), expected)
    assert "REASON-TEXT" in (tmp_path / "a" / "data" / "episodes.csv").read_text()


def test_panel_release_without_free_text(
    panel: tuple[Trace, Path], spec_file: Path, tmp_path: Path
) -> None:
    trace, folder = panel
    release = make_release(folder, tmp_path / "r", spec=spec_file, key=KEY, drop_free_text=True)
    assert found_in(release.folder, {"REASON-TEXT"}) == {}
    released = read_trace(release.folder / "data")
    assert released.episodes["reason"].isna().all()
    for column in ("effort", "budget", "confidence", "verdict", "termination", "passed"):
        pd.testing.assert_series_equal(released.episodes[column], trace.episodes[column])
    assert release.manifest["free_text"] == "removed"
    codebook = pd.read_csv(release.folder / "codebook.csv", dtype=str, keep_default_na=False)
    note = codebook.loc[(codebook["table"] == "episodes") & (codebook["column"] == "reason")]
    assert note["release"].item() == "emptied (--drop-free-text)"


# --------------------------------------------------------------------------------------------
# A store filled through the harness


def _spare_texts(study: Path) -> tuple[set[str], set[str]]:
    """(the spare tasks rated, distinctive lines of every spare task's text and answers)."""
    realism = json.loads((study / "realism.json").read_text())["answers"]
    bank = {t.id: t for t in load_bank(BUNDLED_BANK)}
    spare = {a["task_id"] for a in realism if bank[a["task_id"]].role == TaskRole.SPARE}
    # realism_count = 2 >= the 2 spare tasks: each rater rates one version of every spare task
    rated = {a["task_id"] for a in realism}
    lines = set()
    for task_id in spare:
        task = bank[task_id]
        lines.add(task.title)
        lines |= {line.strip() for line in task.spec_text.splitlines() if len(line.strip()) > 40}
        lines |= {
            line.strip() for line in task.reference.splitlines() if line.strip().startswith("def ")
        }
        lines |= {
            line.strip()
            for a in realism
            if a["task_id"] == task_id
            for line in a["code"].splitlines()
            if len(line.strip()) > 30
        }
    return rated & spare, lines


def test_harness_release(filled: Filled, study: Path, spec_file: Path, tmp_path: Path) -> None:
    answers = [study / "selection.json", study / "realism.json"]
    kept = make_release(
        filled.url,
        tmp_path / "kept",
        spec=study / "study.toml",
        bank="bundled",
        answers=answers,
        key=KEY,
    )
    dropped = make_release(
        filled.url,
        tmp_path / "dropped",
        spec=study / "study.toml",
        bank="bundled",
        answers=answers,
        key=KEY,
        drop_free_text=True,
    )
    originals = {
        *filled.people,
        filled.test_login,
        PROLIFIC["PROLIFIC_PID"],
        PROLIFIC["SESSION_ID"],
    }
    spare, spare_lines = _spare_texts(study)
    assert spare
    assert spare_lines

    for release in (kept, dropped):
        out = release.folder
        # no original id, crowd id or held-out text anywhere, in any byte of any file
        assert found_in(out, originals) == {}
        assert found_in(out, spare_lines) == {}
        assert_codebook_covers(out)
        manifest = assert_manifest_matches(out)
        assert release.participants == 2
        assert manifest["participants"]["test_logins_left_out"] == 1  # type: ignore[index]

        # the same person has the same new id in every table, with the same number of rows
        new = {pid: hmac_id(KEY, pid) for pid in filled.people}
        participants = data(out, "harness_participants")
        assert sorted(participants["participant_id"]) == sorted(new.values())
        assert (participants["participant_id"] == participants["plays_as"]).all()
        assert set(participants["mode"]) == {"study"}
        assert "external" not in participants
        assert set(data(out, "verifiers")["verifier_id"]) == set(new.values())
        assert set(data(out, "assignments")["verifier_id"]) == set(new.values())
        episodes, items = data(out, "episodes"), data(out, "harness_items")
        ratings = data(out, "ratings")
        for pid, released in new.items():
            assert (episodes["verifier_id"] == released).sum() == filled.counts["episodes"][pid]
            assert (ratings["rater_id"] == released).sum() == filled.counts["ratings"][pid]
            assert (items["participant_id"] == released).sum() == filled.counts["items"][pid]
        # ids containing a person's id still join
        joined = episodes.merge(items, left_on="episode_id", right_on="episode_id")
        assert len(joined) == len(episodes)
        assert (joined["verifier_id"] == joined["participant_id"]).all()
        assignments = data(out, "assignments").set_index("assignment_id")["verifier_id"]
        assert (items["assignment_id"].map(assignments) == items["participant_id"]).all()
        sessions = data(out, "harness_sessions")
        assert all(
            k.startswith(p + "/")
            for k, p in zip(sessions["session_key"], sessions["participant_id"], strict=True)
        )
        assert set(data(out, "events")["episode_id"]) <= set(episodes["episode_id"])

        # held-out spare tasks: no text, but their ratings and answers' error types stay
        assert release.held_out == tuple(sorted(spare))
        material = data(out, "task_material").set_index("task_id")
        for task_id in spare:
            assert not (out / "tasks" / task_id).exists()
            assert material.loc[task_id, "held_out"] == "true"
            assert material.loc[task_id, "text_released"] == "false"
            assert material.loc[task_id, "title"] == ""
            assert (ratings["task_id"] == task_id).sum() == 2  # 1 version x 2 raters
        spare_ratings = ratings[ratings["task_id"].isin(spare)]
        assert sorted(spare_ratings["value"]) == ["2.0", "2.0", "3.0", "3.0"]
        assert set(data(out, "answers").query("task_id in @spare")["ground_truth"]) == {
            "correct",
            "incorrect",
        }
        texts = data(out, "answer_texts")
        assert len(texts) > 0
        assert not set(texts["task_id"]) & spare
        for task_id in material.index[material["text_released"] == "true"]:
            for path in (BUNDLED_BANK / task_id).iterdir():
                assert (out / "tasks" / task_id / path.name).read_bytes() == path.read_bytes()

    # free text: kept (ids inside it re-keyed) or gone; numbers and choices stay either way
    assert set(MARKERS) <= set().union(*found_in(kept.folder, set(MARKERS)).values())
    assert found_in(dropped.folder, set(MARKERS)) == {}
    comments = data(kept.folder, "responses_long").query("field == 'comment'")["value"]
    assert f'"COMMENT-TEXT I am {hmac_id(KEY, "P01")}"' in set(comments)
    for release in (kept, dropped):
        long = data(release.folder, "responses_long")
        assert set(long.query("field == 'trust'")["value"]) == {"4"}
        assert set(long.query("field == 'experience'")["value"]) == {'"1-3 years"'}
        assert set(data(release.folder, "harness_items")["confidence"]) >= {"0.75"}
    assert set(data(dropped.folder, "harness_items")["reason"]) == {""}

    # the export's csv/ folder gives the same release as the store it came from
    with Store.open(filled.url) as store:
        export_study(store, tmp_path / "export", formats=("csv",))
    again = make_release(
        tmp_path / "export" / "csv",
        tmp_path / "again",
        spec=study / "study.toml",
        bank="bundled",
        answers=answers,
        key=KEY,
    )
    assert again.warnings == kept.warnings
    assert files_of(again.folder / "data") == files_of(kept.folder / "data")
    # another key, other ids
    other = make_release(filled.url, tmp_path / "other", spec=study / "study.toml", key=OTHER_KEY)
    assert set(data(other.folder, "verifiers")["verifier_id"]) == {
        hmac_id(OTHER_KEY, p) for p in filled.people
    }
    assert (
        other.manifest["participants"]["key_fingerprint"]
        != kept.manifest["participants"]["key_fingerprint"]
    )


# --------------------------------------------------------------------------------------------
# Overwriting, atomicity, bad input


def test_refuses_to_overwrite(panel: tuple[Trace, Path], spec_file: Path, tmp_path: Path) -> None:
    _, folder = panel
    out = tmp_path / "release"
    make_release(folder, out, spec=spec_file, key=KEY)
    before = files_of(out)
    with pytest.raises(InputError, match="not empty"):
        make_release(folder, out, spec=spec_file, key=OTHER_KEY)
    assert files_of(out) == before
    make_release(folder, out, spec=spec_file, key=OTHER_KEY, overwrite=True)
    verifiers = set(data(out, "verifiers")["verifier_id"])
    assert verifiers == {hmac_id(OTHER_KEY, f"syn-v{i:03d}") for i in range(4)}

    other = tmp_path / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("keep me")
    with pytest.raises(InputError, match="not a vcost release"):
        make_release(folder, other, spec=spec_file, overwrite=True)
    assert (other / "mine.txt").read_text() == "keep me"
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not a folder"):
        make_release(folder, tmp_path / "file", spec=spec_file)
    with pytest.raises(InputError, match="overlap"):
        make_release(folder, folder / "release", spec=spec_file)
    assert not [p for p in tmp_path.iterdir() if ".building-" in p.name or ".old-" in p.name]


def test_a_failed_build_writes_nothing(
    panel: tuple[Trace, Path], spec_file: Path, tmp_path: Path
) -> None:
    """A spec naming a participant would release the id: refused, nothing left behind, and an
    earlier release in the folder stays as it was."""
    _, folder = panel
    leaky = tmp_path / "leaky.toml"
    leaky.write_text("# pilot run by syn-v001\n" + spec_file.read_text(), encoding="utf-8")
    with pytest.raises(InputError, match=r"would be released in study\.toml"):
        make_release(folder, tmp_path / "new", spec=leaky)
    assert not (tmp_path / "new").exists()
    out = tmp_path / "old"
    make_release(folder, out, spec=spec_file)
    before = files_of(out)
    with pytest.raises(InputError, match="would be released"):
        make_release(folder, out, spec=leaky, overwrite=True)
    assert files_of(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["leaky.toml", "old"]


def test_an_id_glued_to_text_stops_the_release(
    panel: tuple[Trace, Path], spec_file: Path, tmp_path: Path
) -> None:
    """An id next to a letter is not a token, so it is not replaced: the byte scan refuses the
    release unless that free text is dropped."""
    trace, _ = panel
    episodes = trace.episodes.copy()
    episodes["reason"] = episodes["reason"].str.replace("from ", "from X", regex=False)
    folder = tmp_path / "trace"
    write_trace(Trace(trace.answers, episodes, trace.verifiers, trace.events), folder)
    with pytest.raises(InputError, match=r"would be released in data/episodes\.csv"):
        make_release(folder, tmp_path / "r", spec=spec_file)
    assert not (tmp_path / "r").exists()
    make_release(folder, tmp_path / "r", spec=spec_file, drop_free_text=True)
    assert found_in(tmp_path / "r", set(trace.verifiers["verifier_id"])) == {}


def test_bad_input(
    panel: tuple[Trace, Path], spec_file: Path, tmp_path: Path, postgres_schema_url: str
) -> None:
    _, folder = panel
    out = tmp_path / "out"
    with pytest.raises(InputError, match="no such spec file"):
        make_release(folder, out, spec=tmp_path / "missing.toml")
    with pytest.raises(InputError, match="no such trace folder, and not a store URL"):
        make_release(tmp_path / "nowhere", out, spec=spec_file)
    (tmp_path / "vcost.db").write_text("")
    with pytest.raises(InputError, match=r"sqlite:///"):
        make_release(tmp_path / "vcost.db", out, spec=spec_file)
    missing_db = tmp_path / "missing.db"
    with pytest.raises(InputError, match="no such store file"):
        make_release(f"sqlite:///{missing_db}", out, spec=spec_file)
    assert not missing_db.exists()  # a release never creates a store
    with pytest.raises(InputError, match="no vcost store"):
        make_release(postgres_schema_url, out, spec=spec_file)
    with pytest.raises(InputError, match="unsupported database"):
        make_release("mysql://host/db", out, spec=spec_file)
    empty = tmp_path / "empty.db"
    Store.open(f"sqlite:///{empty}").close()
    with pytest.raises(InputError, match="holds no study data"):
        make_release(f"sqlite:///{empty}", out, spec=spec_file)
    (tmp_path / "blank").mkdir()
    with pytest.raises(InputError, match="not a trace folder"):
        make_release(tmp_path / "blank", out, spec=spec_file)
    with pytest.raises(InputError, match="needs the task bank"):
        make_release(folder, out, spec=spec_file, answers=[tmp_path / "selection.json"])
    with pytest.raises(InputError, match="not a task bank folder"):
        make_release(folder, out, spec=spec_file, bank=tmp_path / "nobank")
    with pytest.raises(InputError, match="16 bytes"):
        make_release(folder, out, spec=spec_file, key=b"short")
    odd = tmp_path / "odd"
    odd.mkdir()
    for name in ("answers", "verifiers", "episodes", "events"):
        (odd / f"{name}.csv").write_bytes((folder / f"{name}.csv").read_bytes())
    (odd / "ratings.csv").write_text("rating_id,rater_id,value,mood\nr1,syn-v000,3,happy\n")
    with pytest.raises(InputError, match=r"ratings\.csv: field 'mood': not a column"):
        make_release(odd, out, spec=spec_file)
    (odd / "ratings.csv").write_text("rating_id,rater_id,scale,value\nr1,syn-v000,s,three\n")
    with pytest.raises(InputError, match=r"ratings\.csv:2: field 'value': expected a number"):
        make_release(odd, out, spec=spec_file)
    assert not out.exists()


def test_now_is_not_a_date_time_in_a_released_table(
    panel: tuple[Trace, Path], spec_file: Path, tmp_path: Path
) -> None:
    """A user put a ratings.csv whose `at` says `now` beside a trace and ran `vcost release`:
    refused with file, line and field (not released as the time of the release), exit code 2,
    no release folder."""
    _, folder = panel
    odd = tmp_path / "odd"
    odd.mkdir()
    for name in ("answers", "verifiers", "episodes", "events"):
        (odd / f"{name}.csv").write_bytes((folder / f"{name}.csv").read_bytes())
    (odd / "ratings.csv").write_text(
        "rating_id,rater_id,scale,value,at\nr1,syn-v000,s,3,2026-03-02T09:00:00Z\n"
        "r2,syn-v000,s,3,now\n"
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["release", str(odd), "--spec", str(spec_file), "--out", str(out)]
    )
    assert result.exit_code == 2, result.output
    assert "ratings.csv:3: field 'at': expected an ISO 8601 date-time, got 'now'" in result.output
    assert not out.exists()


def test_cli(panel: tuple[Trace, Path], spec_file: Path, tmp_path: Path) -> None:
    _, folder = panel
    key_file = tmp_path / "secret" / "release.key"
    args = [
        "release",
        str(folder),
        "--spec",
        str(spec_file),
        "--out",
        str(tmp_path / "r"),
        "--key-file",
        str(key_file),
        "--drop-free-text",
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "new release key written" in result.output
    assert "participants re-keyed: 4" in result.output
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = bytes.fromhex(key_file.read_text().strip())
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["participants"]["key_fingerprint"] == key_fingerprint(key)
    first = data(tmp_path / "r", "verifiers")["verifier_id"].tolist()
    assert first == [hmac_id(key, f"syn-v{i:03d}") for i in range(4)]

    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 2
    assert "not empty" in again.output
    again = CliRunner().invoke(cli, [*args, "--overwrite"])
    assert again.exit_code == 0, again.output
    assert data(tmp_path / "r", "verifiers")["verifier_id"].tolist() == first

    bad = CliRunner().invoke(
        cli,
        ["release", str(folder), "--spec", str(tmp_path / "no.toml"), "--out", str(tmp_path / "x")],
    )
    assert bad.exit_code == 2
    assert "no such spec file" in bad.output
    bad = CliRunner().invoke(
        cli,
        ["release", str(tmp_path / "no"), "--spec", str(spec_file), "--out", str(tmp_path / "x")],
    )
    assert bad.exit_code == 2
    assert "not a store URL" in bad.output
    inside = CliRunner().invoke(
        cli,
        [
            "release",
            str(folder),
            "--spec",
            str(spec_file),
            "--out",
            str(tmp_path / "x"),
            "--key-file",
            str(tmp_path / "x" / "k"),
        ],
    )
    assert inside.exit_code == 2
    assert "must not be inside the release" in inside.output
    assert not (tmp_path / "x").exists()


# --------------------------------------------------------------------------------------------
# Re-keying


def test_new_id_is_hmac_sha256() -> None:
    """RFC 4231 test case 2 ("Jefe", "what do ya want for nothing?") checks the primitive."""
    digest = hmac.new(b"Jefe", b"what do ya want for nothing?", hashlib.sha256).hexdigest()
    assert digest.startswith("5bdcc146bf60754e6a042426089575c7")
    assert new_id(b"Jefe", "what do ya want for nothing?") == "p-5bdcc146bf60"
    assert Rekey(["P1"], KEY).text("P1 P10 xP1 P1/s1 P1-a") == " ".join(
        [hmac_id(KEY, "P1"), "P10", "xP1", hmac_id(KEY, "P1") + "/s1", hmac_id(KEY, "P1") + "-a"]
    )


_ID = st.text(alphabet="ABCPabcp0123456789_-", min_size=2, max_size=8).filter(
    lambda s: s[0].isalnum() and s[-1].isalnum()
)


@given(ids=st.sets(_ID, min_size=1, max_size=6), data=st.data())
def test_rekeying_replaces_every_id_token(ids: set[str], data: st.DataObject) -> None:
    """Composite ids built from person ids (as the harness builds them) keep no original id as
    a token, and each id maps to one new id everywhere."""
    rekey = Rekey(ids, KEY)
    order = data.draw(st.lists(st.sampled_from(sorted(ids)), min_size=1, max_size=6))
    separators = data.draw(
        st.lists(
            st.sampled_from(["/", " ", ":", "/server-"]), min_size=len(order), max_size=len(order)
        )
    )
    text = "".join(f"{sep}{i}" for sep, i in zip(separators, order, strict=True))
    out = rekey.text(text)
    expected = "".join(f"{sep}{hmac_id(KEY, i)}" for sep, i in zip(separators, order, strict=True))
    assert out == expected
    assert len(set(rekey.mapping.values())) == len(ids)
