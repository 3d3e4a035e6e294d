"""The store's current tables (SQLAlchemy Core), used by every query.

This module describes the schema *after* the last migration in :mod:`._migrations`. Migrations
are frozen history: when the schema changes, append a migration that alters the database and
then edit these tables to match (``tests/store`` compares the migrated database with them).

Conventions (DESIGN.md): ``*_id`` natural text ids, unique; ``*_at`` UTC timestamps; ``seq`` an
integer primary key that records insertion order, so a table reads back in the order its rows
were appended; ``created_at`` when the store received the row; ``spec_hash`` the locked spec a
row was produced under (not a foreign key: imported traces may come from elsewhere).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

__all__ = [
    "HARNESS_TABLES",
    "TRACE_TABLES",
    "answers",
    "assignments",
    "deviations",
    "episodes",
    "events",
    "harness_batches",
    "harness_events",
    "harness_items",
    "harness_metadata",
    "harness_moves",
    "harness_participants",
    "harness_responses",
    "harness_sessions",
    "harness_settings",
    "metadata",
    "ratings",
    "schema_version",
    "specs",
    "tasks",
    "verifiers",
]

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_name)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = sa.MetaData(naming_convention=NAMING)

Timestamp = sa.DateTime(timezone=True)
Json = sa.JSON(none_as_null=True)  # PostgreSQL json, not jsonb: keeps numbers exactly as written
Seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _seq() -> sa.Column[int]:
    return sa.Column("seq", Seq, primary_key=True, autoincrement=True)


def _created() -> sa.Column[object]:
    return sa.Column("created_at", Timestamp, nullable=False)


schema_version = sa.Table(
    "schema_version",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("applied_at", Timestamp, nullable=False),
    sa.Column("vcost_version", sa.Text),
)
"""One row per applied migration. Never altered: the migration runner bootstraps with it."""

specs = sa.Table(
    "specs",
    metadata,
    _seq(),
    sa.Column("spec_hash", sa.Text, nullable=False, unique=True),
    sa.Column("canonical_json", sa.Text, nullable=False),
    sa.Column("locked_at", Timestamp),
    sa.Column("vcost_version", sa.Text),
    _created(),
)

tasks = sa.Table(
    "tasks",
    metadata,
    _seq(),
    sa.Column("task_id", sa.Text, nullable=False, unique=True),
    sa.Column("spec_hash", sa.Text),
    sa.Column("extra", Json),
    _created(),
)

answers = sa.Table(
    "answers",
    metadata,
    _seq(),
    sa.Column("answer_id", sa.Text, nullable=False, unique=True),
    sa.Column("task_id", sa.Text, sa.ForeignKey("tasks.task_id"), nullable=False, index=True),
    sa.Column("model_id", sa.Text, nullable=False, index=True),
    sa.Column("ground_truth", sa.Text, nullable=False),
    sa.Column("role", sa.Text),
    sa.Column("source", sa.Text),
    sa.Column("error_level", sa.Text),
    sa.Column("error_type", sa.Text),
    sa.Column("spec_hash", sa.Text),
    _created(),
)

verifiers = sa.Table(
    "verifiers",
    metadata,
    _seq(),
    sa.Column("verifier_id", sa.Text, nullable=False, unique=True),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("experience", sa.Text),
    sa.Column("model_family", sa.Text),
    sa.Column("extra", Json),
    _created(),
)

assignments = sa.Table(
    "assignments",
    metadata,
    _seq(),
    sa.Column("assignment_id", sa.Text, nullable=False, unique=True),
    sa.Column(
        "verifier_id", sa.Text, sa.ForeignKey("verifiers.verifier_id"), nullable=False, index=True
    ),
    sa.Column("block", sa.Text, nullable=False),
    sa.Column("task_id", sa.Text, sa.ForeignKey("tasks.task_id")),
    sa.Column("answer_id", sa.Text, sa.ForeignKey("answers.answer_id")),
    sa.Column("session_id", sa.Text),
    sa.Column("position", sa.Integer),
    sa.Column("budget", sa.Double),
    sa.Column("spec_hash", sa.Text, index=True),
    _created(),
    # migration 2 (vcost.allocation)
    sa.Column("allocation_id", sa.Text, index=True),
    sa.Column("session_index", sa.Integer),
    sa.Column("domain", sa.Text),
    sa.Column("pair_id", sa.Text),
    sa.Column("block_order", sa.Text),
    sa.Column("replaces", sa.Text, sa.ForeignKey("assignments.assignment_id")),
)

episodes = sa.Table(
    "episodes",
    metadata,
    _seq(),
    sa.Column("episode_id", sa.Text, nullable=False, unique=True),
    sa.Column(
        "verifier_id", sa.Text, sa.ForeignKey("verifiers.verifier_id"), nullable=False, index=True
    ),
    sa.Column("block", sa.Text, nullable=False),
    sa.Column("task_id", sa.Text, sa.ForeignKey("tasks.task_id")),
    sa.Column("answer_id", sa.Text, sa.ForeignKey("answers.answer_id"), index=True),
    sa.Column("attempt", sa.Integer),
    sa.Column("started_at", Timestamp),
    sa.Column("ended_at", Timestamp),
    sa.Column("effort", sa.Double, nullable=False),
    sa.Column("budget", sa.Double, nullable=False),
    sa.Column("termination", sa.Text, nullable=False),
    sa.Column("verdict", sa.Text),
    sa.Column("confidence", sa.Double),
    sa.Column("reason", sa.Text),
    sa.Column("passed", sa.Boolean),
    sa.Column("spec_hash", sa.Text, index=True),
    _created(),
)

events = sa.Table(
    "events",
    metadata,
    _seq(),
    sa.Column("event_id", sa.Text, nullable=False, unique=True),
    sa.Column(
        "episode_id", sa.Text, sa.ForeignKey("episodes.episode_id"), nullable=False, index=True
    ),
    sa.Column("at", Timestamp, nullable=False),
    sa.Column("offset_ms", sa.BigInteger),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("payload", Json),
    _created(),
)

ratings = sa.Table(
    "ratings",
    metadata,
    _seq(),
    sa.Column("rating_id", sa.Text, nullable=False, unique=True),
    sa.Column("rater_id", sa.Text, nullable=False),
    sa.Column("answer_id", sa.Text, sa.ForeignKey("answers.answer_id"), index=True),
    sa.Column("task_id", sa.Text, sa.ForeignKey("tasks.task_id")),
    sa.Column("scale", sa.Text, nullable=False),
    sa.Column("value", sa.Double, nullable=False),
    sa.Column("at", Timestamp),
    sa.Column("spec_hash", sa.Text),
    _created(),
    sa.CheckConstraint("answer_id IS NOT NULL OR task_id IS NOT NULL", name="rates_something"),
)

deviations = sa.Table(
    "deviations",
    metadata,
    _seq(),
    sa.Column("deviation_id", sa.Text, nullable=False, unique=True),
    sa.Column("spec_hash", sa.Text, sa.ForeignKey("specs.spec_hash"), nullable=False, index=True),
    sa.Column("field", sa.Text, nullable=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("old_value", Json),
    sa.Column("new_value", Json),
    sa.Column("declared_at", Timestamp, nullable=False),
    _created(),
)

TRACE_TABLES = {
    "answers": answers,
    "verifiers": verifiers,
    "episodes": episodes,
    "events": events,
}
"""The store tables that hold the four trace tables, keyed by trace table name."""


# --------------------------------------------------------------------------------------------
# The web harness's state (migration 3, vcost.harness). A metadata of its own: these tables are
# the harness's working state, not study rows, so ``Store.counts`` and the trace tests leave them
# out; tests/harness compares them with the migrated database.

harness_metadata = sa.MetaData(naming_convention=NAMING)


def _harness_table(name: str, *columns: sa.Column[Any]) -> sa.Table:
    return sa.Table(name, harness_metadata, _seq(), *columns, _created())


harness_participants = _harness_table(
    "harness_participants",
    sa.Column("participant_id", sa.Text, nullable=False, unique=True),
    sa.Column("token_hash", sa.Text, nullable=False, unique=True),
    sa.Column("plays_as", sa.Text, nullable=False, index=True),
    sa.Column("entry", sa.Text, nullable=False),
    sa.Column("mode", sa.Text, nullable=False),
    sa.Column("external", Json),
    sa.Column("stage", sa.Text, nullable=False),
    sa.Column("session_index", sa.Integer),
    sa.Column("screening_score", sa.Double),
    sa.Column("updated_at", Timestamp, nullable=False),
)
"""One row per person in the harness: ``plays_as`` is the allocation participant whose
assignments they meet (themselves, or the slot a test/walkthrough login borrows)."""

harness_sessions = _harness_table(
    "harness_sessions",
    sa.Column("session_key", sa.Text, nullable=False, unique=True),
    sa.Column("participant_id", sa.Text, nullable=False, index=True),
    sa.Column("session_index", sa.Integer, nullable=False),
    sa.Column("started_at", Timestamp, nullable=False),
    sa.Column("stop_at", Timestamp, nullable=False),
    sa.Column("ended_at", Timestamp),
    sa.Column("end_reason", sa.Text),
)

harness_items = _harness_table(
    "harness_items",
    sa.Column("item_id", sa.Text, nullable=False, unique=True),
    sa.Column("participant_id", sa.Text, nullable=False, index=True),
    sa.Column("assignment_id", sa.Text, nullable=False),
    sa.Column("session_index", sa.Integer, nullable=False),
    sa.Column("block", sa.Text, nullable=False),
    sa.Column("task_id", sa.Text, nullable=False),
    sa.Column("answer_id", sa.Text),
    sa.Column("budget_minutes", sa.Double, nullable=False),
    sa.Column("started_at", Timestamp, nullable=False),
    sa.Column("deadline_at", Timestamp, nullable=False),
    sa.Column("ended_at", Timestamp),
    sa.Column("termination", sa.Text),
    sa.Column("verdict", sa.Text),
    sa.Column("confidence", sa.Double),
    sa.Column("reason", sa.Text),
    sa.Column("draft", sa.Text),
    sa.Column("tests", sa.Text),
    sa.Column("submitted", sa.Text),
    sa.Column("passed", sa.Boolean),
    sa.Column("episode_id", sa.Text),
)

harness_moves = _harness_table(
    "harness_moves",
    sa.Column("move_id", sa.Text, nullable=False, unique=True),
    sa.Column("participant_id", sa.Text, nullable=False, index=True),
    sa.Column("assignment_id", sa.Text, nullable=False),
    sa.Column("from_session", sa.Integer, nullable=False),
    sa.Column("to_session", sa.Integer),
    sa.Column("at", Timestamp, nullable=False),
)

harness_events = _harness_table(
    "harness_events",
    sa.Column("event_id", sa.Text, nullable=False, unique=True),
    sa.Column("participant_id", sa.Text, nullable=False, index=True),
    sa.Column("item_id", sa.Text, index=True),
    sa.Column("batch_id", sa.Text),
    sa.Column("at", Timestamp, nullable=False),
    sa.Column("offset_ms", sa.BigInteger),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("payload", Json),
)

harness_batches = _harness_table(
    "harness_batches",
    sa.Column("batch_id", sa.Text, nullable=False, unique=True),
    sa.Column("participant_id", sa.Text, nullable=False, index=True),
    sa.Column("events", sa.Integer, nullable=False),
)

harness_responses = _harness_table(
    "harness_responses",
    sa.Column("response_id", sa.Text, nullable=False, unique=True),
    sa.Column("participant_id", sa.Text, nullable=False, index=True),
    sa.Column("session_index", sa.Integer),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("value", Json),
)

harness_settings = _harness_table(
    "harness_settings",
    sa.Column("key", sa.Text, nullable=False, unique=True),
    sa.Column("value", sa.Text, nullable=False),
)

HARNESS_TABLES = {t.name: t for t in harness_metadata.sorted_tables}
"""The harness's state tables (migration 3), keyed by name."""
