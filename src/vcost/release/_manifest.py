"""The release's checks and records: the byte scan for ids, file hashes, the manifest, README.

The manifest records what the analysis code was (vcost's version, the git commit when vcost
runs from a checkout, Python and the main libraries), the spec (hashes, cost unit), the date,
what was left out or removed, the tasks held out, the row counts, any warnings and a SHA-256
for every file.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import subprocess
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from vcost import __version__
from vcost.errors import InputError
from vcost.release._anonymise import NEW_ID_PREFIX, key_fingerprint, values_of
from vcost.release._source import Source, Table
from vcost.spec import StudySpec

__all__ = [
    "MANIFEST_FORMAT",
    "check_leaks",
    "file_hashes",
    "manifest_of",
    "readme",
    "scan",
    "scan_bytes",
]

MANIFEST_FORMAT = "vcost-release/1"
"""``format`` in every release's manifest.json (``--overwrite`` only replaces such folders)."""

_LIBRARIES = ("numpy", "pandas", "scipy", "statsmodels", "lifelines", "pyarrow", "sqlalchemy")


def scan_bytes(contents: Mapping[str, bytes], needles: Iterable[str]) -> dict[str, list[str]]:
    """Name -> the needles found in its bytes (exact, case-sensitive)."""
    words = sorted({n.encode("utf-8") for n in needles if n}, key=len, reverse=True)
    if not words:
        return {}
    pattern = re.compile(b"|".join(re.escape(w) for w in words))
    found: dict[str, list[str]] = {}
    for name, data in contents.items():
        hits = {m.group(0).decode("utf-8") for m in pattern.finditer(data)}
        if hits:
            found[name] = sorted(hits)
    return found


def scan(root: Path, needles: Iterable[str]) -> dict[str, list[str]]:
    """Every file under ``root`` (relative name) -> the needles found in its bytes."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = path.relative_to(root).as_posix()
        found |= scan_bytes({name: path.read_bytes()}, needles)
    return found


def check_leaks(found: Mapping[str, list[str]]) -> list[str]:
    """Refuse a participant id anywhere but in a copied task file; list those task files.

    A bank's task files are written before anyone takes part and are copied byte for byte, so
    a string there that equals a participant id (``P1`` as a product code) is a coincidence.
    """
    for where, ids in found.items():
        if not where.startswith("tasks/"):
            raise InputError(
                f"a participant id ({ids[0]!r}) would be released in {where}; nothing written",
                hint="it stands next to a letter or digit, or in text the release copies as "
                "it is (the spec): change that text, or report this as a bug",
            )
    return sorted(found)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _git() -> dict[str, Any]:
    """The commit of the vcost checkout running (``None`` when vcost is not run from one)."""
    here = Path(__file__).resolve().parents[1]

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(here), *args], capture_output=True, text=True, timeout=20, check=True
        )
        return done.stdout.strip()

    try:
        git("ls-files", "--error-unmatch", "__init__.py")
        commit = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--", "."))
    except (OSError, subprocess.SubprocessError):
        return {"git_commit": None, "git_dirty": None}
    return {"git_commit": commit, "git_dirty": dirty}


def _libraries() -> dict[str, str]:
    found = {}
    for name in _LIBRARIES:
        try:
            found[name] = package_version(name)
        except PackageNotFoundError:
            continue
    return found


def manifest_of(
    study: StudySpec,
    clean: Source,
    people: set[str],
    *,
    drop_free_text: bool,
    key: bytes | None,
    bank: str | None,
    released: set[str],
    held_out: set[str],
    missing: list[str],
    answers_code: bool,
    counts: Mapping[str, int],
    warnings: list[str],
    ids_checked: int,
    tests: int,
    coincidences: int,
) -> dict[str, Any]:
    """The manifest (without ``files``, added once every other file is written)."""
    return {
        "format": MANIFEST_FORMAT,
        "created_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "vcost": {"version": __version__, **_git()},
        "python": platform.python_version(),
        "libraries": _libraries(),
        "spec": {
            "file": "study.toml",
            "spec_hash": study.spec_hash,
            "lock_hash": study.lock_hash,
            "stamp_hash": study.stamp_hash,
            "hashes_in_data": sorted(values_of(clean.trace.episodes, "spec_hash")),
            "cost_unit": str(study.cost_unit),
        },
        "source": dict(clean.description),
        "participants": {
            "count": len(people),
            "new_ids": f"{NEW_ID_PREFIX} + first 12 hex digits of HMAC-SHA256(key, id)",
            "key": "given" if key is not None else "random, not kept",
            "key_fingerprint": key_fingerprint(key) if key is not None else None,
            "test_logins_left_out": tests,
        },
        "free_text": "removed" if drop_free_text else "kept",
        "left_out": [
            "harness_participants.external (crowd-platform ids)",
            "harness_participants.token_hash",
            "harness_settings",
            "the rows of test and walkthrough logins",
        ],
        "tasks": {
            "bank": bank,
            "text_released": sorted(released),
            "held_out": sorted(held_out),
            "not_in_bank": missing,
            "realism_fallback": _realism_fallback(clean.tables),
            "answers_code": answers_code,
        },
        "leak_check": {
            "ids_checked": ids_checked,
            "files_scanned": 0,
            "found_outside_task_files": 0,
            "task_files_with_equal_strings": coincidences,
        },
        "tables": dict(counts),
        "warnings": list(warnings),
    }


def readme(manifest: Mapping[str, Any]) -> str:
    tasks = manifest["tasks"]
    held = ", ".join(tasks["held_out"]) or "none"
    lines = [
        "# Study data release",
        "",
        f"Made by vcost {manifest['vcost']['version']} on {manifest['created_at']} from a "
        f"{manifest['source']['kind']}, under the spec `study.toml` "
        f"(hash {manifest['spec']['spec_hash']}).",
        "",
        f"- Participants: {manifest['participants']['count']}, each under a new id "
        f"(`{NEW_ID_PREFIX}` + 12 hex digits of a keyed hash); the mapping is not released.",
        f"- Free text written by participants: {manifest['free_text']}.",
        f"- Held-out tasks (text not released, ratings released): {held}.",
        "- `data/`: the tables (`data/` is a vcost trace: `vcost analyse study data/` reads it).",
        "- `tasks/<task_id>/`: the texts, references and tests of the released tasks.",
        "- `codebook.csv` / `codebook.md`: every column; `manifest.json`: versions and SHA-256 "
        "of every file.",
    ]
    if tasks.get("realism_fallback"):
        lines.append("- Some realism ratings are on answers to tasks people did (too few spares).")
    for warning in manifest["warnings"]:
        lines.append(f"- Note: {warning}")
    return "\n".join(lines) + "\n"


def _realism_fallback(tables: Mapping[str, Table]) -> bool | None:
    responses = tables.get("harness_responses")
    if responses is None:
        return None
    frame = responses.frame
    basis: set[str] = set()
    for raw in frame.loc[frame["kind"] == "realism", "value"].dropna():
        basis |= set(json.loads(raw).get("basis") or ())
    return "done-task" in basis if basis else None


def file_hashes(folder: Path) -> dict[str, dict[str, Any]]:
    """Every file under ``folder`` (relative POSIX name) -> its SHA-256 and size."""
    return {
        p.relative_to(folder).as_posix(): {"sha256": sha256_of(p), "bytes": p.stat().st_size}
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
