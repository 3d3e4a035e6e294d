"""Re-keying participant ids, removing free text, and the held-out tasks' rows.

**Re-keying (a vcost choice, docs/release.md).** Each person's id becomes
``p-`` + the first 12 hex digits of HMAC-SHA256(key, original id). With the same key the
same person gets the same new id in every release (a corrected release keeps its ids; a
researcher holding the key can find a withdrawing participant's rows); without the key the
mapping cannot be recomputed, and it is never written. Every id a person is known by is
re-keyed: harness participant ids and panel places (``plays_as``), human verifiers, raters and
the ids of allocation places. Ids that *contain* a person's id (episode, assignment, item,
event, batch, response, rating and move ids, session keys) keep their shape with the person's
part replaced, so every join still works. AI checkers keep their model ids (RQ3, RQ4).

A person's id is replaced wherever it stands as a token (not next to a letter or a digit) in
any text or JSON cell of any released table, free text included; the release then scans every
byte it wrote, so an id that survives anywhere stops it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from vcost.errors import InputError
from vcost.harness._export import _responses_long
from vcost.harness._export import codebook_rows as export_codebook
from vcost.release._source import Source, Table
from vcost.trace import Trace
from vcost.trace_io import TABLES as TRACE_COLUMNS

__all__ = [
    "FREE_TEXT_COLUMNS",
    "FREE_TEXT_JSON",
    "FREE_TEXT_KEYS",
    "NEW_ID_PREFIX",
    "Rekey",
    "anonymise",
    "drop_free_json",
    "drop_test_logins",
    "key_fingerprint",
    "new_id",
    "people_of",
    "values_of",
]

NEW_ID_PREFIX = "p-"
_HEX_DIGITS = 12

FREE_TEXT_COLUMNS: Mapping[str, tuple[str, ...]] = {
    "episodes": ("reason",),
    "harness_items": ("reason", "draft", "tests", "submitted"),
}
"""Columns that hold what a person typed freely: emptied by ``--drop-free-text``."""

FREE_TEXT_JSON: Mapping[str, tuple[str, ...]] = {
    "harness_responses": ("value",),
    "harness_events": ("payload",),
    "events": ("payload",),
    "verifiers": ("extra",),
}
"""JSON columns that may hold what a person typed (responses, activity, verifier metadata)."""

FREE_TEXT_KEYS = frozenset({"comment", "code", "notes", "note", "reason", "feedback", "text"})
"""Fields of the :data:`FREE_TEXT_JSON` values (questionnaire and debrief comments, the
screening code, ...) that ``--drop-free-text`` sets to null at any depth; ratings, scores and
choices stay. JSON the researcher wrote (deviations, task metadata) is left as it is."""


def new_id(key: bytes, original: str) -> str:
    """The released id of a person: ``p-`` + 12 hex digits of HMAC-SHA256(key, id)."""
    digest = hmac.new(key, original.encode("utf-8"), hashlib.sha256).hexdigest()
    return NEW_ID_PREFIX + digest[:_HEX_DIGITS]


def key_fingerprint(key: bytes) -> str:
    """A short public fingerprint of a key: tells whether two releases used the same key."""
    return hashlib.sha256(b"vcost release key fingerprint\0" + key).hexdigest()[:16]


class Rekey:
    """Replaces every original id (as a token) by its new id in text, JSON and columns."""

    def __init__(self, originals: Iterable[str], key: bytes) -> None:
        self.mapping = {o: new_id(key, o) for o in sorted(set(originals))}
        seen: dict[str, str] = {}
        for original, new in self.mapping.items():
            if new in seen:
                raise InputError(
                    f"participants {seen[new]!r} and {original!r} get the same new id",
                    hint="use another key",
                )
            seen[new] = original
        alternatives = "|".join(re.escape(o) for o in sorted(self.mapping, key=len, reverse=True))
        self.pattern = (
            re.compile(f"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])")
            if self.mapping
            else None
        )

    def _swap(self, match: re.Match[str]) -> str:
        return self.mapping[match.group(0)]

    def text(self, value: str) -> str:
        """``value`` with every original id replaced."""
        return value if self.pattern is None else self.pattern.sub(self._swap, value)

    def series(self, values: pd.Series[Any]) -> pd.Series[Any]:
        """A text column with every original id replaced (missing values stay missing)."""
        if self.pattern is None or not len(values):
            return values
        return values.str.replace(self.pattern, self._swap, regex=True)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _empty_free(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: None if k in FREE_TEXT_KEYS else _empty_free(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_empty_free(v) for v in value]
    return value


def drop_free_json(values: pd.Series[Any]) -> pd.Series[Any]:
    """A JSON-text column with the free-text fields (:data:`FREE_TEXT_KEYS`) set to null."""
    out = [
        v if pd.isna(v) else _canonical(_empty_free(json.loads(v)))
        for v in values.astype(object).tolist()
    ]
    return pd.Series(out, dtype=values.dtype, index=values.index)


# --------------------------------------------------------------------------------------------
# Whole tables


def values_of(frame: pd.DataFrame, column: str) -> set[str]:
    """The distinct non-empty values of a column (none if the column is absent)."""
    if column not in frame.columns:
        return set()
    return {str(v) for v in frame[column].dropna().tolist() if str(v)}


def people_of(source: Source) -> tuple[set[str], set[str]]:
    """(every person's id, crowd-platform ids that must not appear either)."""
    v = source.trace.verifiers
    kinds = v["kind"].astype(str)
    models = values_of(v[kinds == "model"], "verifier_id")
    people = values_of(v[kinds == "person"], "verifier_id") | values_of(
        source.trace.episodes, "verifier_id"
    )
    for name, table in source.tables.items():
        for column in ("participant_id", "plays_as", "rater_id", "verifier_id"):
            if column == "verifier_id" and name != "assignments":
                continue
            people |= values_of(table.frame, column)
    external: set[str] = set()
    participants = source.tables.get("harness_participants")
    if participants is not None:
        for raw in participants.frame["external"].dropna().tolist():
            for name, value in json.loads(raw).items():
                if name != "STUDY_ID" and isinstance(value, str | int) and str(value):
                    external.add(str(value))
    return people - models, external


def drop_test_logins(tables: dict[str, Table]) -> set[str]:
    """Remove the rows of test and walkthrough logins from every table; their ids."""
    participants = tables.get("harness_participants")
    if participants is None:
        return set()
    frame = participants.frame
    tests = set(frame.loc[frame["mode"] == "test", "participant_id"].dropna())
    for table in tables.values():
        if tests and "participant_id" in table.frame.columns:
            keep = ~table.frame["participant_id"].isin(tests).fillna(False)
            table.frame = table.frame[keep].reset_index(drop=True)
    return {str(t) for t in tests}


def _is_text(series: pd.Series[Any]) -> bool:
    return isinstance(series.dtype, pd.StringDtype)


def _transform(frame: pd.DataFrame, name: str, drop: bool, rekey: Rekey) -> pd.DataFrame:
    """Free text emptied (when ``drop``), then every person's id replaced in every text cell."""
    out = frame.copy()
    for column in out.columns:
        if drop and column in FREE_TEXT_COLUMNS.get(name, ()):
            out[column] = pd.Series(pd.NA, index=out.index, dtype=out[column].dtype)
        elif drop and column in FREE_TEXT_JSON.get(name, ()):
            out[column] = drop_free_json(out[column])
        if _is_text(out[column]):
            out[column] = rekey.series(out[column])
    return out


def anonymise(source: Source, rekey: Rekey, held_out: set[str], drop: bool) -> Source:
    """The released rows: ids re-keyed, free text emptied when ``drop``, crowd-platform ids
    (``harness_participants.external``) left out, held-out tasks' metadata emptied, and
    ``responses_long`` derived from the result."""
    trace_frames = {
        name: _transform(getattr(source.trace, name), name, drop, rekey) for name in TRACE_COLUMNS
    }
    tables: dict[str, Table] = {}
    for name, table in source.tables.items():
        frame, kinds = table.frame, dict(table.kinds)
        if name == "tasks":
            frame = frame.copy()
            frame.loc[frame["task_id"].isin(held_out).fillna(False), "extra"] = pd.NA
        if name == "harness_participants":
            frame = frame.drop(columns=["external"])
            kinds.pop("external")
        tables[name] = Table(_transform(frame, name, drop, rekey), kinds)
    if "harness_responses" in tables:
        long = _responses_long(tables["harness_responses"].frame)
        kinds = {
            r["column"]: r["type"] for r in export_codebook() if r["table"] == "responses_long"
        }
        tables["responses_long"] = Table(long, kinds)
    return Source(Trace(**trace_frames), tables, source.description, source.folder, source.ignored)
