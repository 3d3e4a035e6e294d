"""`vcost release` end to end: a simulated panel and a store filled through the harness's state
API, on SQLite and PostgreSQL.

Every check reads the files the release wrote: the original ids are looked for in every byte
of every file, the codebook is compared with the columns the CSV headers hold, the manifest's
SHA-256 values are recomputed with hashlib, and the new ids are recomputed with the standard
library's ``hmac`` (RFC 2104 HMAC-SHA256), independently of vcost's code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from _release_support import (
    KEY,
    MARKERS,
    OTHER_KEY,
    PROLIFIC,
    Filled,
    assert_codebook_covers,
    assert_manifest_matches,
    data,
    files_of,
    found_in,
    hmac_id,
)

from vcost.harness import export_study
from vcost.release import make_release
from vcost.store import Store
from vcost.tasks import BUNDLED_BANK, TaskRole, load_bank
from vcost.trace import Trace
from vcost.trace_io import assert_trace_equal, read_trace

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
