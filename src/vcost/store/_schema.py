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

import sqlalchemy as sa

__all__ = [
    "TRACE_TABLES",
    "answers",
    "assignments",
    "deviations",
    "episodes",
    "events",
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
