"""The release's codebook: every column of every released table, with its allowed values.

The meanings come from where they are kept already: the trace contract (:mod:`vcost.trace`)
and the export's codebook (:data:`vcost.harness._export.CODEBOOK`); this module adds the
allowed values and units, what the release did to the column, and the two tables only a
release has (``task_material``, ``answer_texts``).
"""

from __future__ import annotations

from collections.abc import Mapping

from vcost.harness._export import CODEBOOK
from vcost.release._anonymise import FREE_TEXT_COLUMNS, FREE_TEXT_JSON, FREE_TEXT_KEYS
from vcost.trace_io import TABLES as TRACE_COLUMNS

__all__ = ["RELEASE_TABLES", "codebook_markdown", "codebook_rows"]

RELEASE_TABLES: Mapping[str, Mapping[str, tuple[str, str]]] = {
    "task_material": {
        "task_id": ("str", "a task the data refer to"),
        "kind": ("str", "code or data (empty: not in the bank given)"),
        "title": ("str", "the task's title (empty for held-out tasks)"),
        "difficulty": ("str", "the difficulty label set when the task was written"),
        "skill": ("str", "the skill the task exercises"),
        "role": ("str", "what the bank wrote it for"),
        "do_minutes": ("float", "the written estimate of the time to do it"),
        "held_out": ("bool", "a spare task nobody did or checked: its text is not released"),
        "text_released": ("bool", "its statement, reference and tests are in tasks/<task_id>/"),
    },
    "answer_texts": {
        "answer_id": ("str", "the answer (an answers row)"),
        "task_id": ("str", "its task"),
        "kind": ("str", "code or data"),
        "code": ("str", "the answer's code as checkers could run it"),
        "shown": ("str", "exactly what a checker saw"),
    },
}
"""Tables only a release has: column -> (type, meaning)."""

_PERSON = "re-keyed person id (HMAC-SHA256, docs/release.md)"
_INSIDE = "re-keyed where it contains a person's id"
_PERSON_COLUMNS = frozenset({"participant_id", "plays_as", "rater_id"})
_COMPOSITE = frozenset(
    {
        "episode_id",
        "event_id",
        "item_id",
        "assignment_id",
        "session_id",
        "session_key",
        "batch_id",
        "response_id",
        "rating_id",
        "move_id",
    }
)
_RESPONSE_KINDS = (
    "consent, screening_started, screening, questionnaire, realism, debrief, withdrawal"
)
_ALLOWED: Mapping[tuple[str, str], str] = {
    ("*", "block"): "do, check",
    ("*", "session_index"): "0 (practice), 1, 2, ...",
    ("*", "confidence"): "0.5, 0.75, 1 (people); a probability in [0, 1] (models)",
    ("*", "budget_minutes"): "minutes",
    ("*", "do_minutes"): "minutes",
    ("assignments", "budget"): "minutes",
    ("assignments", "domain"): "code, data",
    ("assignments", "block_order"): "do-first, check-first",
    ("assignments", "position"): "1, 2, ...",
    ("harness_items", "termination"): "submitted, verdict, unverifiable, budget_exhausted, "
    "withdrawn",
    ("harness_items", "verdict"): "accept, reject",
    ("harness_items", "confidence"): "0.5, 0.75, 1",
    ("harness_participants", "stage"): "consent, screening, sessions, questionnaire, realism, "
    "debrief, done, withdrawn, screened_out",
    ("harness_participants", "entry"): "invitation, crowd (test logins are not released)",
    ("harness_participants", "mode"): "study (test logins are not released)",
    ("harness_participants", "screening_score"): "0 to 1",
    ("harness_sessions", "end_reason"): "completed, hard_stop",
    ("harness_events", "kind"): "keys, mouse, scroll, paste, focus, blur, hidden, visible, idle, "
    "load, start, run, end, late, resume",
    ("harness_responses", "kind"): _RESPONSE_KINDS,
    ("responses_long", "kind"): _RESPONSE_KINDS,
    ("ratings", "scale"): "ai_written_1_5",
    ("ratings", "value"): "1 to 5 on the row's scale",
    ("task_material", "kind"): "code, data",
    ("task_material", "difficulty"): "easy, medium, hard",
    ("task_material", "role"): "study, spare, practice",
}


def _allowed(table: str, column: str, kind: str, unit: str) -> str:
    for trace_column in TRACE_COLUMNS.get(table, ()):
        if trace_column.name == column and trace_column.choices:
            return ", ".join(trace_column.choices)
    if table == "episodes" and column in ("effort", "budget"):
        return f"{unit} (the spec's cost unit u)"
    found = _ALLOWED.get((table, column)) or _ALLOWED.get(("*", column))
    if found:
        return found
    if kind == "datetime":
        return "UTC date-time, ISO 8601 (ends in Z)"
    if column.endswith("_ms"):
        return "milliseconds"
    if kind == "bool":
        return "true, false"
    if kind == "json":
        return "canonical JSON text"
    return ""


def _meaning(table: str, column: str) -> str:
    if table in TRACE_COLUMNS:
        return next(c.doc for c in TRACE_COLUMNS[table] if c.name == column)
    if table in RELEASE_TABLES:
        return RELEASE_TABLES[table][column][1]
    return CODEBOOK[table][column]


def _release_note(table: str, column: str, kind: str, drop_free_text: bool) -> str:
    if column in _PERSON_COLUMNS:
        return _PERSON
    if column == "verifier_id":
        return f"{_PERSON}; AI checkers keep their model id"
    if column in FREE_TEXT_COLUMNS.get(table, ()):
        return (
            "emptied (--drop-free-text)"
            if drop_free_text
            else "free text written by a participant, kept; " + _INSIDE
        )
    if table == "responses_long" and column == "value" and drop_free_text:
        return f"free-text fields ({', '.join(sorted(FREE_TEXT_KEYS))}) emptied; {_INSIDE}"
    if table == "tasks" and column == "extra":
        return "emptied for held-out tasks"
    if column in FREE_TEXT_JSON.get(table, ()) and drop_free_text:
        return f"free-text fields ({', '.join(sorted(FREE_TEXT_KEYS))}) set to null; {_INSIDE}"
    if kind == "json":
        return _INSIDE
    if column in _COMPOSITE:
        return _INSIDE
    return ""


def codebook_rows(
    tables: Mapping[str, Mapping[str, str]], *, unit: str, drop_free_text: bool
) -> list[dict[str, str]]:
    """(table, column, type, description, allowed, release) for every released column.

    ``tables``: table name -> {column: type}, in the order the release writes them.
    """
    rows: list[dict[str, str]] = []
    for table, kinds in tables.items():
        for column, kind in kinds.items():
            rows.append(
                {
                    "table": table,
                    "column": column,
                    "type": kind,
                    "description": _meaning(table, column),
                    "allowed": _allowed(table, column, kind, unit),
                    "release": _release_note(table, column, kind, drop_free_text),
                }
            )
    return rows


def codebook_markdown(rows: list[dict[str, str]]) -> str:
    """The codebook as Markdown, one section per table."""
    lines = [
        "# Codebook",
        "",
        "Every column of every table in `data/` (docs/release.md). Types: str, int, float, "
        "bool, datetime (UTC, ISO 8601 ending in Z), json (canonical JSON text). An empty cell "
        "is a missing value.",
    ]
    table = ""
    for r in rows:
        if r["table"] != table:
            table = r["table"]
            lines += [
                "",
                f"## {table}",
                "",
                "| column | type | description | allowed values / unit | in this release |",
                "|---|---|---|---|---|",
            ]
        cells = [r[k].replace("|", "\\|") for k in ("description", "allowed", "release")]
        lines.append(f"| {r['column']} | {r['type']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
