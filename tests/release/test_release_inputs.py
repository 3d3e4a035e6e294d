"""`vcost release`: overwriting, atomicity, bad input and the re-keying of ids."""

from __future__ import annotations

import hashlib
import hmac
import json
import stat
from pathlib import Path

import pytest
from _release_support import (
    KEY,
    OTHER_KEY,
    data,
    files_of,
    found_in,
    hmac_id,
)
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from vcost.cli import cli
from vcost.errors import InputError
from vcost.release import key_fingerprint, make_release, new_id
from vcost.release._anonymise import Rekey
from vcost.store import Store
from vcost.trace import Trace
from vcost.trace_io import write_trace

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
