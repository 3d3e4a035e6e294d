"""Loading a spec, checking its deviations, locking it and enforcing the lock.

The workflow (docs/spec.md):

1. Write ``study.toml``; ``vcost spec check`` until it validates. Departures from the paper's
   protocol are declared up front as ``[[deviations]]`` with ``kind = "protocol"``.
2. ``vcost spec lock study.toml`` writes ``study.lock.json``: the pre-registration.
3. Any later change to a locked field must be declared as a ``[[deviations]]`` entry (kind
   ``"lock"``, the default) with ``old``, ``new``, a reason and a date; otherwise loading raises
   :class:`~vcost.errors.LockError` naming the field, its line, and the old and new values.
   Several changes to one field form a chain: the first ``old`` is the locked value, each next
   ``old`` the previous ``new``, the last ``new`` the value now in the file.
4. The lock hash stays the one recorded at lock time; episodes are stamped with it.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from vcost import __version__
from vcost.errors import LockError, SpecError
from vcost.spec._locate import KeyLines, Path_, dotted
from vcost.spec._lockfile import Lock, canonical_text, lock_path_for
from vcost.spec._model import StudySpec
from vcost.spec._problems import (
    Problem,
    problems_from_validation,
    show,
    spec_error,
    syntax_problem,
)
from vcost.spec._tables import Deviation

__all__ = ["deviation_record", "load_spec", "lock_spec", "spec_from_text"]


class _Missing:
    def __repr__(self) -> str:
        return "(not set)"


MISSING: Final = _Missing()


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def _comparable(value: Any) -> Any:
    """JSON-ready, with every number a float, so 15 and 15.0 compare equal."""
    value = _jsonable(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()}
    return value


def _same(declared: Any, actual: Any) -> bool:
    """A deviation's ``old``/``new`` (None: not set) against a spec value (MISSING: not set)."""
    if declared is None or actual is MISSING:
        return declared is None and actual is MISSING
    return bool(_comparable(declared) == _comparable(actual))


def _show(value: Any) -> str:
    return "(not set)" if value is MISSING or value is None else show(value)


def _get(data: Mapping[str, Any], path: Path_) -> Any:
    node: Any = data
    for part in path:
        in_table = isinstance(node, Mapping) and isinstance(part, str) and part in node
        in_array = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if not (in_table or in_array):
            return MISSING
        node = node[part]
    return node


def _diff(old: Any, new: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any, Any]]:
    """Changed leaves (arrays are leaves; an added or removed table is one change)."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new)):
            yield from _diff(old.get(key, MISSING), new.get(key, MISSING), (*path, key))
    elif (old is MISSING) != (new is MISSING) or _comparable(old) != _comparable(new):
        yield path, old, new


def _leaves(data: Any, path: Path_ = ()) -> Iterator[str]:
    if isinstance(data, Mapping) and data:
        for key, value in data.items():
            yield from _leaves(value, (*path, key))
    else:
        yield dotted(path)


def deviation_record(deviation: Deviation) -> dict[str, Any]:
    """A deviation as JSON-ready data (how a lock file records protocol deviations)."""
    record = {
        "field": deviation.field,
        "kind": deviation.kind,
        "old": _jsonable(deviation.old),
        "new": _jsonable(deviation.new),
        "reason": deviation.reason,
        "declared_at": deviation.declared_at.isoformat(),
    }
    return {k: v for k, v in record.items() if v is not None}


def _snippet(path: Path_, old: Any, new: Any) -> str:
    parts = [f'field = "{dotted(path)}"']
    if old is not MISSING:
        parts.append(f"old = {show(old)}")
    if new is not MISSING:
        parts.append(f"new = {show(new)}")
    parts += ['reason = "..."', f"declared_at = {date.today().isoformat()}"]
    return ", ".join(parts)


def _check_deviations(
    spec: StudySpec, lines: KeyLines, lock: Lock | None
) -> tuple[list[Problem], bool]:
    """Problems with declared deviations (and the lock); True if any is about the lock."""
    problems: list[Problem] = []
    about_lock = False
    current = spec.canonical_dict()
    reference: Mapping[str, Any] = lock.spec if lock is not None else current
    known = sorted(set(_leaves(current)) | set(_leaves(reference)))

    def at(i: int, key: str) -> int:
        return lines.line_of(("deviations", i, key))

    for i, deviation in enumerate(spec.deviations):
        path = deviation.path
        if path is None or deviation.kind != "protocol":
            continue
        field = f"deviations[{i}]"
        value = _get(reference, path)
        if value is MISSING:
            close = difflib.get_close_matches(deviation.field, known, n=1)
            problems.append(
                Problem(
                    at(i, "field"),
                    f"{field}.field",
                    f"'{deviation.field}' names no field of the spec"
                    + (f"; did you mean '{close[0]}'?" if close else ""),
                    "expected the dotted path of a field that is set",
                )
            )
            continue
        if not _same(deviation.new, value):
            problems.append(
                Problem(
                    at(i, "new"),
                    f"{field}.new",
                    f"new = {_show(deviation.new)} but the spec has "
                    f"{deviation.field} = {_show(value)}",
                    f"expected new = {show(value)}",
                )
            )
        if deviation.old is None:
            problems.append(
                Problem(
                    at(i, "field"),
                    f"{field}.old",
                    "a protocol deviation needs 'old', the value the protocol prescribes",
                    'e.g. old = "confidence-at-least-tau"',
                )
            )
        elif _same(deviation.old, value):
            problems.append(
                Problem(
                    at(i, "old"),
                    f"{field}.old",
                    "old and new are the same value: nothing deviates",
                    "remove the entry, or correct old",
                )
            )

    lock_entries = [(i, d) for i, d in enumerate(spec.deviations) if d.kind == "lock"]
    if lock is None:
        for i, _ in lock_entries:
            problems.append(
                Problem(
                    at(i, "kind"),
                    f"deviations[{i}].kind",
                    "a deviation of kind 'lock' but the spec is not locked",
                    "kind 'lock' records a change made after `vcost spec lock`; declare a "
                    'departure from the paper\'s protocol with kind = "protocol"; when '
                    "re-locking, remove these entries: the new lock holds the current values",
                )
            )
        return problems, False

    recorded = [canonical_text(dict(d)) for d in lock.protocol_deviations]
    declared = [
        canonical_text(deviation_record(d)) for d in spec.deviations if d.kind == "protocol"
    ]
    if recorded != declared:
        about_lock = True
        first = next((i for i, d in enumerate(spec.deviations) if d.kind == "protocol"), None)
        problems.append(
            Problem(
                at(first, "field") if first is not None else 1,
                "deviations",
                "the protocol deviations differ from those recorded when the spec was locked",
                "they are part of the pre-registration: restore them as locked "
                f'({len(recorded)} recorded); record later changes as kind = "lock"',
            )
        )

    groups: dict[Path_, list[tuple[int, Deviation]]] = {}
    for i, deviation in lock_entries:
        if deviation.path is not None:
            groups.setdefault(deviation.path, []).append((i, deviation))

    changes = list(_diff(lock.spec, current))
    changed = {path for path, _, _ in changes}
    for path, old, new in changes:
        entries = groups.get(path)
        name = dotted(path)
        if not entries:
            about_lock = True
            problems.append(
                Problem(
                    lines.line_of(path),
                    name,
                    f"locked field '{name}' changed from {_show(old)} to {_show(new)} without a "
                    "declared deviation",
                    "undo the change, or add a [[deviations]] entry with a reason: "
                    f"{_snippet(path, old, new)}",
                )
            )
            continue
        expect = old
        for n, (i, deviation) in enumerate(entries):
            if not _same(deviation.old, expect):
                about_lock = True
                source = "the locked value" if n == 0 else "the previous deviation's new value"
                problems.append(
                    Problem(
                        at(i, "old") if deviation.old is not None else at(i, "field"),
                        f"deviations[{i}].old",
                        f"old = {_show(deviation.old)} but {source} of '{name}' is {_show(expect)}",
                        f"expected old = {_show(expect)}",
                    )
                )
            expect = MISSING if deviation.new is None else deviation.new
        last_i, last = entries[-1]
        if not _same(last.new, new):
            about_lock = True
            problems.append(
                Problem(
                    at(last_i, "new") if last.new is not None else at(last_i, "field"),
                    f"deviations[{last_i}].new",
                    f"new = {_show(last.new)} but the spec now has {name} = {_show(new)}",
                    f"expected new = {_show(new)}",
                )
            )
    for path, entries in groups.items():
        if path in changed:
            continue
        for i, deviation in entries:
            about_lock = True
            close = difflib.get_close_matches(deviation.field, known, n=1)
            problems.append(
                Problem(
                    at(i, "field"),
                    f"deviations[{i}].field",
                    f"the deviation names '{deviation.field}', which did not change since the lock"
                    + (f"; did you mean '{close[0]}'?" if close else ""),
                    "remove the entry, or name the field that changed",
                )
            )
    return problems, about_lock


def _parse(text: str, source: str | Path | None) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise spec_error([syntax_problem(str(error), text)], source) from None


def spec_from_text(
    text: str, *, source: str | Path | None = None, lock: Lock | None = None
) -> StudySpec:
    """Validate TOML text as a spec; enforce ``lock`` if given. See :meth:`StudySpec.load`."""
    data = _parse(text, source)
    lines = KeyLines(text)
    try:
        spec = StudySpec.model_validate(data)
    except ValidationError as error:
        raise spec_error(problems_from_validation(error, lines, data), source) from None
    problems, about_lock = _check_deviations(spec, lines, lock)
    if problems:
        raise spec_error(problems, source, LockError if about_lock else SpecError)
    spec._source = str(source) if source is not None else None
    spec._lock = lock
    return spec


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")  # a byte-order mark read past
    except FileNotFoundError:
        raise SpecError("no such file", source=path, hint="check the path") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SpecError(f"cannot read the file: {error}", source=path) from None


def load_spec(path: str | Path) -> StudySpec:
    """Read a spec file; if ``<name>.lock.json`` is beside it, enforce that lock."""
    spec_path = Path(path)
    text = _read(spec_path)
    lock_path = lock_path_for(spec_path)
    lock = Lock.read(lock_path) if lock_path.exists() else None
    return spec_from_text(text, source=spec_path, lock=lock)


def lock_spec(path: str | Path, *, force: bool = False, now: datetime | None = None) -> Lock:
    """Lock the spec at ``path``: write ``<name>.lock.json`` beside it and return the lock.

    Refuses (:class:`~vcost.errors.LockError`) if a lock exists, unless ``force``; a forced
    re-lock replaces the pre-registration, so use it only before any data is collected.
    """
    spec_path = Path(path)
    lock_path = lock_path_for(spec_path)
    if lock_path.exists() and not force:
        raise LockError(
            "the spec is already locked",
            source=lock_path,
            hint="change a locked spec through [[deviations]] entries; re-lock with --force "
            "(force=True) only to replace the pre-registration before any data is collected",
        )
    spec = spec_from_text(_read(spec_path), source=spec_path, lock=None)
    lock = Lock(
        spec_hash=spec.spec_hash,
        spec=spec.canonical_dict(),
        locked_at=(now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0),
        vcost_version=__version__,
        spec_file=spec_path.name,
        protocol_deviations=tuple(
            deviation_record(d) for d in spec.deviations if d.kind == "protocol"
        ),
    )
    lock.write(lock_path)
    return replace(lock, path=lock_path)
