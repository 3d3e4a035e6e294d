"""Building a release folder: the rows made anonymous, the task texts, codebook and manifest.

Layout (docs/release.md)::

    OUT/README.md          what the release holds and how it was made
    OUT/manifest.json      versions, spec hash, date, options, rows, SHA-256 of every file
    OUT/codebook.csv, codebook.md
    OUT/study.toml         the spec the analysis used (as given; its lock file beside it)
    OUT/data/*.csv         the trace (read_trace reads data/ as it is) and the other tables
    OUT/tasks/<task_id>/   the bank files of every task the data refer to, except held-out ones

Everything is built in a temporary folder beside OUT and renamed into place at the end, so
OUT is either the whole release or untouched.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from vcost.answers import read_selection
from vcost.errors import InputError
from vcost.harness._export import _write
from vcost.release._anonymise import Rekey, anonymise, drop_test_logins, people_of, values_of
from vcost.release._codebook import RELEASE_TABLES, codebook_markdown, codebook_rows
from vcost.release._manifest import (
    MANIFEST_FORMAT,
    check_leaks,
    file_hashes,
    manifest_of,
    readme,
    scan,
    scan_bytes,
)
from vcost.release._source import Source, load_source
from vcost.release._tasks import (
    answer_texts,
    bank_tasks,
    held_out_tasks,
    task_material,
    task_usage,
)
from vcost.spec import StudySpec, lock_path_for
from vcost.store import Store
from vcost.tasks import Task
from vcost.trace_io import TABLES as TRACE_COLUMNS
from vcost.trace_io import write_trace

__all__ = ["Release", "make_release"]


@dataclass(frozen=True)
class Release:
    """What :func:`make_release` wrote (the manifest is also ``manifest.json``)."""

    folder: Path
    manifest: Mapping[str, Any]
    participants: int
    rows: Mapping[str, int]
    held_out: tuple[str, ...]
    warnings: tuple[str, ...]


def _inside(path: Path, folder: Path) -> bool:
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def _check_target(out: Path, overwrite: bool, inputs: Iterable[Path]) -> None:
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder", source=out, hint="choose a folder")
    for path in inputs:
        if _inside(path, out) or (path.is_dir() and _inside(out, path)):
            raise InputError(
                f"the release folder and the input {path} overlap",
                source=out,
                hint="write the release to a folder of its own, outside every input",
            )
    if out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise InputError(
                "the release folder is not empty",
                source=out,
                hint="choose an empty or new folder, or pass --overwrite to replace a release",
            )
        try:
            old = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = None
        if not isinstance(old, dict) or old.get("format") != MANIFEST_FORMAT:
            raise InputError(
                "not a vcost release (no release manifest.json): not overwritten",
                source=out,
                hint="--overwrite only replaces an earlier release; choose another folder",
            )


def _write_tables(
    folder: Path, source: Source, extra: Mapping[str, pd.DataFrame]
) -> dict[str, dict[str, str]]:
    data = folder / "data"
    write_trace(source.trace, data, format="csv")
    layout: dict[str, dict[str, str]] = {
        name: {c.name: c.dtype for c in columns} for name, columns in TRACE_COLUMNS.items()
    }
    for name, table in source.tables.items():
        _write(table.frame, table.kinds, data / f"{name}.csv", "csv")
        layout[name] = dict(table.kinds)
    for name, frame in extra.items():
        kinds = {c: k for c, (k, _) in RELEASE_TABLES[name].items()}
        _write(frame, kinds, data / f"{name}.csv", "csv")
        layout[name] = kinds
    return layout


@dataclass
class _Plan:
    """Everything a release needs, checked and made anonymous, before anything is written."""

    study: StudySpec
    spec_path: Path
    clean: Source
    tables: dict[str, pd.DataFrame]
    tasks: dict[str, Task] | None
    bank_kind: str | None
    released: set[str]
    held_out: set[str]
    missing: list[str]
    people: set[str]
    needles: set[str]
    tests: set[str]
    warnings: list[str]


def _plan(
    source: str | Path | Store,
    spec: str | Path,
    bank: str | Path | None,
    answers: Sequence[str | Path],
    key: bytes | None,
    drop_free_text: bool,
) -> _Plan:
    spec_path = Path(spec)
    if not spec_path.is_file():
        raise InputError(
            "no such spec file",
            source=spec_path,
            field="--spec",
            hint="give the study.toml the analysis used",
        )
    study = StudySpec.load(spec_path)
    if key is not None and len(key) < 16:
        raise InputError("the re-keying key must have at least 16 bytes", field="key")
    tasks, bank_kind = bank_tasks(bank)
    if answers and tasks is None:
        raise InputError(
            "releasing answers' code needs the task bank",
            field="--answers",
            hint="pass --bank, so held-out tasks' answers can be left out",
        )
    selected = [a for path in answers for a in read_selection(path).answers]
    loaded = load_source(source)

    people, external = people_of(loaded)
    tests = drop_test_logins(loaded.tables)
    used, referenced = task_usage(loaded)
    held_out = held_out_tasks(used, referenced, tasks)
    released = {t for t in referenced if tasks is not None and t in tasks and t not in held_out}
    rekey = Rekey(people, key if key is not None else secrets.token_bytes(32))
    clean = anonymise(loaded, rekey, held_out, drop_free_text)
    tables = {"task_material": task_material(referenced, held_out, tasks)}
    if answers:
        tables["answer_texts"] = answer_texts(selected, released, rekey)
    missing = sorted(referenced - set(tasks)) if tasks is not None else []
    return _Plan(
        study=study,
        spec_path=spec_path,
        clean=clean,
        tables=tables,
        tasks=tasks,
        bank_kind=bank_kind,
        released=released,
        held_out=held_out,
        missing=missing,
        people=people,
        needles=people | external,
        tests=tests,
        warnings=_warnings(study, clean, tasks, referenced, held_out, missing),
    )


def _warnings(
    study: StudySpec,
    clean: Source,
    tasks: Mapping[str, Any] | None,
    referenced: set[str],
    held_out: set[str],
    missing: list[str],
) -> list[str]:
    warnings: list[str] = []
    in_data = sorted(values_of(clean.trace.episodes, "spec_hash"))
    if in_data and study.stamp_hash not in in_data:
        warnings.append(
            f"the episodes were stamped with spec hash(es) {', '.join(in_data)}, "
            f"not this spec's {study.stamp_hash}"
        )
    if tasks is None:
        warnings.append("no task bank given: no task text released, held-out set unknown")
    elif missing:
        more = " ..." if len(missing) > 10 else ""
        warnings.append(
            f"{len(missing)} task(s) not in the bank, no text released: "
            f"{', '.join(missing[:10])}{more}"
        )
    if tasks is not None and not held_out and referenced & set(tasks):
        warnings.append("the held-out set is empty: no spare task went unused")
    if clean.ignored:
        warnings.append(f"files in the trace folder not released: {', '.join(clean.ignored)}")
    return warnings


def _build(plan: _Plan, folder: Path, *, key: bytes | None, drop_free_text: bool) -> dict[str, Any]:
    """Write the whole release into ``folder``; returns the manifest."""
    shutil.copyfile(plan.spec_path, folder / "study.toml")
    lock = lock_path_for(plan.spec_path)
    if lock.is_file():
        shutil.copyfile(lock, folder / "study.lock.json")
    layout = _write_tables(folder, plan.clean, plan.tables)
    for task_id in sorted(plan.released):
        assert plan.tasks is not None
        shutil.copytree(
            plan.tasks[task_id].path,
            folder / "tasks" / task_id,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
    rows = codebook_rows(layout, unit=str(plan.study.cost_unit), drop_free_text=drop_free_text)
    pd.DataFrame(rows).to_csv(folder / "codebook.csv", index=False, lineterminator="\n")
    (folder / "codebook.md").write_text(codebook_markdown(rows), encoding="utf-8")

    coincidences = check_leaks(scan(folder, plan.needles))
    if coincidences:
        plan.warnings.append(
            f"{len(coincidences)} released task file(s) happen to contain a string equal to a "
            f"participant id (task text, not participant data): {', '.join(coincidences)}"
        )
    counts = {name: len(getattr(plan.clean.trace, name)) for name in TRACE_COLUMNS}
    counts |= {name: len(t.frame) for name, t in plan.clean.tables.items()}
    counts |= {name: len(frame) for name, frame in plan.tables.items()}
    manifest = manifest_of(
        plan.study,
        plan.clean,
        plan.people - plan.tests,
        drop_free_text=drop_free_text,
        key=key,
        bank=plan.bank_kind,
        released=plan.released,
        held_out=plan.held_out,
        missing=plan.missing,
        answers_code="answer_texts" in plan.tables,
        counts=counts,
        warnings=plan.warnings,
        ids_checked=len(plan.needles),
        tests=len(plan.tests),
        coincidences=len(coincidences),
    )
    text = readme(manifest)
    check_leaks(scan_bytes({"README.md": text.encode("utf-8")}, plan.needles))
    (folder / "README.md").write_text(text, encoding="utf-8")
    manifest["files"] = file_hashes(folder)
    manifest["leak_check"]["files_scanned"] = len(manifest["files"])
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def make_release(
    source: str | Path | Store,
    out: str | Path,
    *,
    spec: str | Path,
    bank: str | Path | None = None,
    answers: Sequence[str | Path] = (),
    key: bytes | None = None,
    drop_free_text: bool = False,
    overwrite: bool = False,
) -> Release:
    """Build the study's data release in ``out`` from a store or a trace folder.

    ``spec``: the study.toml the analysis used; ``bank``: the task bank (``"bundled"`` for
    vcost's) whose texts are released, held-out spares excepted; ``answers``: selection JSON
    files whose answers' code is released (held-out tasks' excepted); ``key``: the re-keying
    key (at least 16 bytes; ``None``: a random one, not kept, so ids differ every time).
    Refuses a non-empty ``out`` unless ``overwrite`` and ``out`` holds an earlier release.
    Raises :class:`InputError` for bad input, and when a participant id would be released.
    """
    target = Path(out)
    inputs = [Path(spec), *map(Path, answers)]
    if bank is not None and str(bank) != "bundled":
        inputs.append(Path(bank))
    if not isinstance(source, Store) and "://" not in str(source):
        inputs.append(Path(source))
    _check_target(target, overwrite, inputs)
    plan = _plan(source, spec, bank, answers, key, drop_free_text)
    parent = target.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}.building-", dir=parent))
    try:
        manifest = _build(plan, building, key=key, drop_free_text=drop_free_text)
        os.chmod(building, 0o755)
        _publish(building, target)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return Release(
        folder=target,
        manifest=manifest,
        participants=len(plan.people - plan.tests),
        rows=manifest["tables"],
        held_out=tuple(sorted(plan.held_out)),
        warnings=tuple(plan.warnings),
    )


def _publish(building: Path, target: Path) -> None:
    """Rename the finished folder into place (an earlier release is replaced only now)."""
    if not target.exists():
        os.replace(building, target)
        return
    if not any(target.iterdir()):
        target.rmdir()
        os.replace(building, target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=building.parent))
    old.rmdir()
    os.replace(target, old)
    try:
        os.replace(building, target)
    except BaseException:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
