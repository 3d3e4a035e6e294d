"""Shared by the release tests: the keys, the markers of free text, and checks that read the
files a release wrote (ids looked for in every byte, the codebook against the CSV headers, the
manifest's SHA-256 recomputed with hashlib, ids recomputed with the standard library's hmac)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

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


@dataclass
class Filled:
    url: str
    people: tuple[str, ...]
    test_login: str
    counts: dict[str, dict[str, int]]
