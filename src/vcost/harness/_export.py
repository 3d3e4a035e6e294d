"""Exports of every table a study's store holds, as CSV and Parquet, with a codebook.

::

    export_study(store, "export/")        # export/csv/*.csv, export/parquet/*.parquet,
                                          # export/codebook.csv, codebook.md, manifest.json

Layout and rules (docs/harness.md, "Exports"):

- ``csv/`` and ``parquet/`` hold the same tables. The four trace tables (answers, verifiers,
  episodes, events) are written by :func:`vcost.trace_io.write_trace`, so either folder is a
  trace that :func:`vcost.trace_io.read_trace` and ``vcost trace import`` read as it is; the
  other tables sit beside them under their store names (``harness_items.csv``, ...).
- **Long format**: one row per record, one column per field, JSON fields as canonical JSON
  text; the questionnaire, screening, consent, realism and debrief responses are also
  unfolded into ``responses_long`` (one row per participant x response x field).
- **Left out**: ``harness_participants.token_hash`` (a login credential), ``harness_settings``
  (the signing secret), the surrogate ``seq`` columns, ``schema_version``.
- Test/walkthrough logins stay in the harness tables, labelled by ``mode``; they never reach
  the trace tables (the harness never writes them there).
- ``codebook.csv`` (table, column, type, description) describes every exported column;
  ``manifest.json`` lists the files, their row counts and whether data collection was still
  running when the export was made.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import sqlalchemy as sa

from vcost import __version__
from vcost.errors import InputError
from vcost.store import Store
from vcost.store import _schema as s
from vcost.trace_io import TABLES as TRACE_COLUMNS
from vcost.trace_io import write_trace

__all__ = ["CODEBOOK", "EXPORT_TABLES", "ExportFormat", "ExportManifest", "export_study"]

ExportFormat = Literal["csv", "parquet"]

_COMMON = {
    "created_at": "when the store received the row (UTC)",
    "spec_hash": "the locked spec the row was produced under",
    "participant_id": "the person in the harness: a panel place, or test-... for a walkthrough",
    "session_index": "session number: 0 = practice, 1.. = main sessions",
    "item_id": "the harness item (= the episode id for main-session items of real participants)",
}

CODEBOOK: Mapping[str, Mapping[str, str]] = {
    "tasks": {
        "task_id": "the task (bank id)",
        "spec_hash": _COMMON["spec_hash"],
        "extra": "task metadata as JSON (may be empty)",
        "created_at": _COMMON["created_at"],
    },
    "assignments": {
        "assignment_id": "one allocated do or check of one panel place",
        "verifier_id": "the panel place it is allocated to",
        "block": "do or check",
        "task_id": "the task",
        "answer_id": "the AI answer to check (check blocks)",
        "session_id": "the allocation's session label",
        "position": "order within the session (1 = first)",
        "budget": "check budget or do-time cap in minutes (empty: the spec's)",
        "spec_hash": _COMMON["spec_hash"],
        "created_at": _COMMON["created_at"],
        "allocation_id": "the allocation (hash of its inputs and seed)",
        "session_index": _COMMON["session_index"],
        "domain": "code or data",
        "pair_id": "the matched do/check task pair",
        "block_order": "do-first or check-first within the pair",
        "replaces": "the assignment a reserve replaces (reserve rule)",
    },
    "ratings": {
        "rating_id": "one rating",
        "rater_id": "the panel place that rated",
        "answer_id": "the answer rated",
        "task_id": "the task of the answer",
        "scale": "the scale: ai_written_1_5 = how likely an AI wrote this exact answer (1-5)",
        "value": "the rating on that scale",
        "at": "when it was given (UTC, server clock)",
        "spec_hash": _COMMON["spec_hash"],
        "created_at": _COMMON["created_at"],
    },
    "specs": {
        "spec_hash": "SHA-256 of the canonical spec",
        "canonical_json": "the spec, canonical JSON",
        "locked_at": "when it was locked (UTC)",
        "vcost_version": "the vcost version that stored it",
        "created_at": _COMMON["created_at"],
    },
    "deviations": {
        "deviation_id": "one declared deviation from the locked spec",
        "spec_hash": "the spec it deviates from",
        "field": "the spec field (dotted path)",
        "description": "what changed and why",
        "old_value": "the locked value (JSON)",
        "new_value": "the new value (JSON)",
        "declared_at": "when it was declared (UTC)",
        "created_at": _COMMON["created_at"],
    },
    "harness_participants": {
        "participant_id": _COMMON["participant_id"],
        "plays_as": "the panel place whose assignments they meet",
        "entry": "invitation, crowd (PROLIFIC_PID link) or test",
        "mode": "study, or test (walkthrough: excluded from every analysis)",
        "external": "crowd platform ids as JSON (PROLIFIC_PID, STUDY_ID, SESSION_ID)",
        "stage": "where they are: consent, screening, sessions, questionnaire, realism, "
        "debrief, done, withdrawn, screened_out",
        "session_index": "their current session (0 = practice)",
        "screening_score": "share of the screening task's tests passed (0-1)",
        "updated_at": "last change of stage (UTC)",
        "created_at": "when the link was issued or the crowd entry made (UTC)",
    },
    "harness_sessions": {
        "session_key": "participant_id/session_index",
        "participant_id": _COMMON["participant_id"],
        "session_index": _COMMON["session_index"],
        "started_at": "when the participant started it (UTC, server clock)",
        "stop_at": "its hard stop (UTC)",
        "ended_at": "when it ended (UTC; empty: still running)",
        "end_reason": "completed or hard_stop",
        "created_at": _COMMON["created_at"],
    },
    "harness_items": {
        "item_id": _COMMON["item_id"],
        "participant_id": _COMMON["participant_id"],
        "assignment_id": "the allocated assignment",
        "session_index": _COMMON["session_index"],
        "block": "do or check",
        "task_id": "the task",
        "answer_id": "the AI answer checked (check items)",
        "budget_minutes": "check budget or do-time cap, minutes",
        "started_at": "when the server first served it (UTC)",
        "deadline_at": "started_at + budget (UTC)",
        "ended_at": "when it ended on the server's clock (UTC; empty: open)",
        "termination": "submitted, verdict, unverifiable, budget_exhausted or withdrawn",
        "verdict": "accept (correct) or reject (incorrect); check items",
        "confidence": "confidence of the verdict (0.5, 0.75, 1)",
        "reason": "the optional one-line reason or counterexample",
        "draft": "the last autosaved code (do items)",
        "tests": "the participant's own tests or inputs",
        "submitted": "the code submitted or graded at the cap (do items)",
        "passed": "the submission passed every hidden test (do items, main sessions)",
        "episode_id": "the episode written when it ended (empty: practice or test)",
        "created_at": _COMMON["created_at"],
    },
    "harness_moves": {
        "move_id": "one assignment moved or dropped at a session's hard stop",
        "participant_id": _COMMON["participant_id"],
        "assignment_id": "the assignment",
        "from_session": "the session it was in",
        "to_session": "the session it moved to (empty: dropped)",
        "at": "when (UTC)",
        "created_at": _COMMON["created_at"],
    },
    "harness_events": {
        "event_id": "<item or participant>/<client id> (server events: .../server-<kind>)",
        "participant_id": _COMMON["participant_id"],
        "item_id": "the item it belongs to (empty: outside an item)",
        "batch_id": "the client batch that carried it (empty: a server event)",
        "at": "server time: item start + client offset, clamped to [start, arrival] (UTC)",
        "offset_ms": "the client's monotonic milliseconds since the item started",
        "kind": "keys, mouse, scroll, paste, focus, blur, hidden, visible, idle, load "
        "(client, counts only); start, run, end, late (server)",
        "payload": "counts and raw client clocks as JSON (n, gap_ms, wall_ms, mono_ms, ...)",
        "created_at": "when the server received it (UTC)",
    },
    "harness_batches": {
        "batch_id": "participant_id/client batch id (each stored once)",
        "participant_id": _COMMON["participant_id"],
        "events": "events the batch carried",
        "created_at": "when it was acknowledged (UTC)",
    },
    "harness_responses": {
        "response_id": "participant_id/kind/session_index",
        "participant_id": _COMMON["participant_id"],
        "session_index": "the session a questionnaire follows (empty otherwise)",
        "kind": "consent, screening_started, screening, questionnaire, realism, debrief, "
        "withdrawal",
        "value": "the response as JSON",
        "created_at": _COMMON["created_at"],
    },
    "responses_long": {
        "response_id": "the harness_responses row",
        "participant_id": _COMMON["participant_id"],
        "session_index": "the session a questionnaire follows (empty otherwise)",
        "kind": "the response kind (as in harness_responses)",
        "field": "one field of the response (e.g. trust, experience, score, ratings.<answer>)",
        "value": "its value as JSON text",
        "created_at": _COMMON["created_at"],
    },
}
"""What every exported non-trace column means (the trace tables' come from vcost.trace)."""

_STORE_TABLES: Mapping[str, sa.Table] = {
    "tasks": s.tasks,
    "assignments": s.assignments,
    "ratings": s.ratings,
    "specs": s.specs,
    "deviations": s.deviations,
    "harness_participants": s.harness_participants,
    "harness_sessions": s.harness_sessions,
    "harness_items": s.harness_items,
    "harness_moves": s.harness_moves,
    "harness_events": s.harness_events,
    "harness_batches": s.harness_batches,
    "harness_responses": s.harness_responses,
}
_LEFT_OUT = {"seq", "token_hash"}

EXPORT_TABLES: tuple[str, ...] = (*TRACE_COLUMNS, *_STORE_TABLES, "responses_long")
"""Every table an export holds, in the order written."""


@dataclass(frozen=True)
class ExportManifest:
    """What an export wrote (also ``manifest.json``)."""

    folder: Path
    formats: tuple[str, ...]
    rows: Mapping[str, int]
    collecting: bool | None
    exported_at: datetime
    files: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "formats": list(self.formats),
            "rows": dict(self.rows),
            "collecting": self.collecting,
            "exported_at": self.exported_at.isoformat(),
            "files": list(self.files),
            "vcost_version": __version__,
        }


def _kind(column: sa.Column[Any]) -> str:
    t = column.type
    if isinstance(t, sa.JSON):
        return "json"
    if isinstance(t, sa.DateTime):
        return "datetime"
    if isinstance(t, sa.Boolean):
        return "bool"
    if isinstance(t, sa.Integer):
        return "int"
    if isinstance(t, sa.Float):
        return "float"
    return "str"


def _canonical(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _series(values: list[Any], kind: str) -> pd.Series[Any]:
    if kind == "json":
        return pd.Series([_canonical(v) for v in values], dtype="string")
    if kind == "datetime":
        stamps = [
            pd.NaT if v is None else pd.Timestamp(v.replace(tzinfo=UTC) if v.tzinfo is None else v)
            for v in values
        ]
        return pd.Series(stamps, dtype="datetime64[us, UTC]")
    if kind == "bool":
        return pd.Series(values, dtype="boolean")
    if kind == "int":
        return pd.Series(values, dtype="Int64")
    if kind == "float":
        return pd.Series([float("nan") if v is None else v for v in values], dtype="float64")
    return pd.Series(values, dtype="string")


def _frame(conn: sa.Connection, table: sa.Table) -> tuple[pd.DataFrame, dict[str, str]]:
    columns = [c for c in table.columns if c.name not in _LEFT_OUT]
    order = table.c.seq if "seq" in table.c else columns[0]
    rows = conn.execute(sa.select(*columns).order_by(order)).all()
    kinds = {c.name: _kind(c) for c in columns}
    data = {c.name: _series([r[i] for r in rows], kinds[c.name]) for i, c in enumerate(columns)}
    return pd.DataFrame(data), kinds


def _responses_long(responses: pd.DataFrame) -> pd.DataFrame:
    out: list[dict[str, Any]] = []

    def unfold(prefix: str, value: Any, base: dict[str, Any]) -> None:
        if isinstance(value, dict) and value:
            for key in sorted(value):
                unfold(f"{prefix}.{key}" if prefix else str(key), value[key], base)
        else:
            out.append({**base, "field": prefix or "value", "value": _canonical(value)})

    for r in responses.to_dict("records"):
        base = {
            "response_id": r["response_id"],
            "participant_id": r["participant_id"],
            "session_index": r["session_index"],
            "kind": r["kind"],
            "created_at": r["created_at"],
        }
        raw = r["value"]
        unfold("", None if pd.isna(raw) else json.loads(raw), base)
    kinds = {
        "response_id": "str",
        "participant_id": "str",
        "session_index": "int",
        "kind": "str",
        "field": "str",
        "value": "str",
        "created_at": "datetime",
    }
    return pd.DataFrame(
        {
            name: _series([None if pd.isna(row[name]) else row[name] for row in out], kind)
            for name, kind in kinds.items()
        }
    )


def _write(frame: pd.DataFrame, kinds: Mapping[str, str], target: Path, fmt: str) -> None:
    partial = target.with_name(target.name + ".partial")
    if fmt == "csv":
        text = frame.copy()
        for name, kind in kinds.items():
            if kind == "datetime":
                values = text[name]
                text[name] = values.dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ").astype(object)
                text.loc[values.isna(), name] = None
            elif kind == "bool":
                text[name] = text[name].map({True: "true", False: "false"}).astype(object)
        text.to_csv(partial, index=False, lineterminator="\n", encoding="utf-8")
    else:
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), partial)
    partial.replace(target)


def collecting(store: Store, panel: Sequence[str] | None = None) -> bool:
    """Whether data collection is still running: a panel place without a login, or a
    (non-test) participant not yet done, withdrawn or screened out."""
    t = s.harness_participants
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(t.c.participant_id, t.c.stage, t.c.mode)).all()
    real = [r for r in rows if r[2] != "test"]
    if panel is not None and set(panel) - {r[0] for r in real}:
        return True
    return any(r[1] not in ("done", "withdrawn", "screened_out") for r in real)


def codebook_rows() -> list[dict[str, str]]:
    """(table, column, type, description) for every exported column."""
    rows: list[dict[str, str]] = []
    for table, trace_columns in TRACE_COLUMNS.items():
        for c in trace_columns:
            choices = f" (one of: {', '.join(c.choices)})" if c.choices else ""
            rows.append(
                {"table": table, "column": c.name, "type": c.dtype,
                 "description": c.doc + choices}
            )  # fmt: skip
    for table, sql in _STORE_TABLES.items():
        for col in sql.columns:
            if col.name in _LEFT_OUT:
                continue
            rows.append(
                {"table": table, "column": col.name, "type": _kind(col),
                 "description": CODEBOOK[table][col.name]}
            )  # fmt: skip
    kinds = {"session_index": "int", "created_at": "datetime"}
    for name, doc in CODEBOOK["responses_long"].items():
        rows.append(
            {"table": "responses_long", "column": name, "type": kinds.get(name, "str"),
             "description": doc}
        )  # fmt: skip
    return rows


def _codebook_markdown(rows: list[dict[str, str]]) -> str:
    lines = [
        "# Codebook",
        "",
        "Every column of every exported table (docs/harness.md). Types: str, int, float, "
        "bool, datetime (UTC, ISO 8601 in CSV), json (canonical JSON text).",
    ]
    table = ""
    for r in rows:
        if r["table"] != table:
            table = r["table"]
            lines += ["", f"## {table}", "", "| column | type | description |", "|---|---|---|"]
        description = r["description"].replace("|", "\\|")
        lines.append(f"| {r['column']} | {r['type']} | {description} |")
    return "\n".join(lines) + "\n"


def export_study(
    store: Store,
    folder: str | Path,
    *,
    formats: Sequence[ExportFormat] = ("csv", "parquet"),
    panel: Sequence[str] | None = None,
    overwrite: bool = False,
) -> ExportManifest:
    """Write every table of ``store`` to ``folder`` (module docstring); returns the manifest.

    ``panel``: the allocation's panel places (to tell whether collection still runs).
    An existing non-empty ``folder`` is refused unless ``overwrite``.
    """
    chosen = tuple(dict.fromkeys(formats))
    if not chosen or any(f not in ("csv", "parquet") for f in chosen):
        raise InputError("formats must be csv and/or parquet", field="format")
    root = Path(folder)
    if root.exists() and any(root.iterdir()):
        if not overwrite:
            raise InputError(
                "the export folder is not empty", source=root, hint="choose an empty folder"
            )
        for fmt in ("csv", "parquet"):
            shutil.rmtree(root / fmt, ignore_errors=True)
    trace = store.load_trace()
    frames: dict[str, tuple[pd.DataFrame, dict[str, str]]] = {}
    with store.engine.connect() as conn, conn.begin():
        for name, table in _STORE_TABLES.items():
            frames[name] = _frame(conn, table)
    responses = _responses_long(frames["harness_responses"][0])
    frames["responses_long"] = (
        responses,
        {r["column"]: r["type"] for r in codebook_rows() if r["table"] == "responses_long"},
    )
    files: list[str] = []
    for fmt in chosen:
        target = root / fmt
        write_trace(trace, target, format=fmt, overwrite=True)
        files += [f"{fmt}/{t}.{fmt}" for t in TRACE_COLUMNS]
        for name, (frame, kinds) in frames.items():
            _write(frame, kinds, target / f"{name}.{fmt}", fmt)
            files.append(f"{fmt}/{name}.{fmt}")
    rows = codebook_rows()
    pd.DataFrame(rows).to_csv(root / "codebook.csv", index=False, lineterminator="\n")
    (root / "codebook.md").write_text(_codebook_markdown(rows), encoding="utf-8")
    counts = {
        "answers": len(trace.answers),
        "verifiers": len(trace.verifiers),
        "episodes": len(trace.episodes),
        "events": len(trace.events),
        **{name: len(frame) for name, (frame, _) in frames.items()},
    }
    manifest = ExportManifest(
        folder=root,
        formats=chosen,
        rows=counts,
        collecting=collecting(store, panel),
        exported_at=datetime.now(UTC),
        files=(*files, "codebook.csv", "codebook.md", "manifest.json"),
    )
    (root / "manifest.json").write_text(
        json.dumps(manifest.to_dict(), indent=2) + "\n", encoding="utf-8"
    )
    return manifest
