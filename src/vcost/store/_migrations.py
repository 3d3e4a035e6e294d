"""Versioned, append-only schema migrations, applied when a store is opened.

Each migration has a number, a name and an ``upgrade(connection)`` function. They are history:
never edit or renumber one that has shipped; append a new one instead (and update
:mod:`._schema` to describe the result). Applied versions are recorded in ``schema_version``;
:func:`migrate` applies the missing ones in order, all in one transaction (SQLite and
PostgreSQL both have transactional DDL), under a lock so two processes opening the same
database at once do not race. A database whose recorded version is newer than this code knows
is refused with a :class:`~vcost.errors.StoreError` rather than used half-understood.

Migration 1 defines its tables here, frozen, instead of reusing :mod:`._schema`: a later change
to the current schema must not change what migration 1 creates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.sql.schema import SchemaItem

from vcost.errors import StoreError
from vcost.store._schema import NAMING, schema_version

__all__ = ["LATEST_VERSION", "MIGRATIONS", "Migration", "current_version", "migrate"]

_LOCK_KEY = 0x76636F7374  # "vcost": a PostgreSQL advisory lock held while migrating


@dataclass(frozen=True)
class Migration:
    """One schema step: ``upgrade`` runs inside the migration transaction."""

    version: int
    name: str
    upgrade: Callable[[Connection], None]


def _m0001_initial(conn: Connection) -> None:
    """Version 1: specs, tasks, answers, verifiers, assignments, episodes, events, ratings,
    deviations; episodes and events are append-only (triggers refuse UPDATE and DELETE)."""
    md = sa.MetaData(naming_convention=NAMING)
    ts = sa.DateTime(timezone=True)
    js = sa.JSON(none_as_null=True)  # PostgreSQL json (not jsonb): numbers kept as written
    seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

    def base(*columns: SchemaItem) -> list[SchemaItem]:
        return [sa.Column("seq", seq, primary_key=True, autoincrement=True), *columns]

    def created() -> sa.Column[object]:
        return sa.Column("created_at", ts, nullable=False)

    sa.Table(
        "specs",
        md,
        *base(
            sa.Column("spec_hash", sa.Text, nullable=False, unique=True),
            sa.Column("canonical_json", sa.Text, nullable=False),
            sa.Column("locked_at", ts),
            sa.Column("vcost_version", sa.Text),
            created(),
        ),
    )
    sa.Table(
        "tasks",
        md,
        *base(
            sa.Column("task_id", sa.Text, nullable=False, unique=True),
            sa.Column("spec_hash", sa.Text),
            sa.Column("extra", js),
            created(),
        ),
    )
    sa.Table(
        "answers",
        md,
        *base(
            sa.Column("answer_id", sa.Text, nullable=False, unique=True),
            sa.Column(
                "task_id", sa.Text, sa.ForeignKey("tasks.task_id"), nullable=False, index=True
            ),
            sa.Column("model_id", sa.Text, nullable=False, index=True),
            sa.Column("ground_truth", sa.Text, nullable=False),
            sa.Column("role", sa.Text),
            sa.Column("source", sa.Text),
            sa.Column("error_level", sa.Text),
            sa.Column("error_type", sa.Text),
            sa.Column("spec_hash", sa.Text),
            created(),
        ),
    )
    sa.Table(
        "verifiers",
        md,
        *base(
            sa.Column("verifier_id", sa.Text, nullable=False, unique=True),
            sa.Column("kind", sa.Text, nullable=False),
            sa.Column("experience", sa.Text),
            sa.Column("model_family", sa.Text),
            sa.Column("extra", js),
            created(),
        ),
    )
    sa.Table(
        "assignments",
        md,
        *base(
            sa.Column("assignment_id", sa.Text, nullable=False, unique=True),
            sa.Column(
                "verifier_id",
                sa.Text,
                sa.ForeignKey("verifiers.verifier_id"),
                nullable=False,
                index=True,
            ),
            sa.Column("block", sa.Text, nullable=False),
            sa.Column("task_id", sa.Text, sa.ForeignKey("tasks.task_id")),
            sa.Column("answer_id", sa.Text, sa.ForeignKey("answers.answer_id")),
            sa.Column("session_id", sa.Text),
            sa.Column("position", sa.Integer),
            sa.Column("budget", sa.Double),
            sa.Column("spec_hash", sa.Text, index=True),
            created(),
        ),
    )
    sa.Table(
        "episodes",
        md,
        *base(
            sa.Column("episode_id", sa.Text, nullable=False, unique=True),
            sa.Column(
                "verifier_id",
                sa.Text,
                sa.ForeignKey("verifiers.verifier_id"),
                nullable=False,
                index=True,
            ),
            sa.Column("block", sa.Text, nullable=False),
            sa.Column("task_id", sa.Text, sa.ForeignKey("tasks.task_id")),
            sa.Column("answer_id", sa.Text, sa.ForeignKey("answers.answer_id"), index=True),
            sa.Column("attempt", sa.Integer),
            sa.Column("started_at", ts),
            sa.Column("ended_at", ts),
            sa.Column("effort", sa.Double, nullable=False),
            sa.Column("budget", sa.Double, nullable=False),
            sa.Column("termination", sa.Text, nullable=False),
            sa.Column("verdict", sa.Text),
            sa.Column("confidence", sa.Double),
            sa.Column("reason", sa.Text),
            sa.Column("passed", sa.Boolean),
            sa.Column("spec_hash", sa.Text, index=True),
            created(),
        ),
    )
    sa.Table(
        "events",
        md,
        *base(
            sa.Column("event_id", sa.Text, nullable=False, unique=True),
            sa.Column(
                "episode_id",
                sa.Text,
                sa.ForeignKey("episodes.episode_id"),
                nullable=False,
                index=True,
            ),
            sa.Column("at", ts, nullable=False),
            sa.Column("offset_ms", sa.BigInteger),
            sa.Column("kind", sa.Text, nullable=False),
            sa.Column("payload", js),
            created(),
        ),
    )
    sa.Table(
        "ratings",
        md,
        *base(
            sa.Column("rating_id", sa.Text, nullable=False, unique=True),
            sa.Column("rater_id", sa.Text, nullable=False),
            sa.Column("answer_id", sa.Text, sa.ForeignKey("answers.answer_id"), index=True),
            sa.Column("task_id", sa.Text, sa.ForeignKey("tasks.task_id")),
            sa.Column("scale", sa.Text, nullable=False),
            sa.Column("value", sa.Double, nullable=False),
            sa.Column("at", ts),
            sa.Column("spec_hash", sa.Text),
            created(),
            sa.CheckConstraint(
                "answer_id IS NOT NULL OR task_id IS NOT NULL", name="rates_something"
            ),
        ),
    )
    sa.Table(
        "deviations",
        md,
        *base(
            sa.Column("deviation_id", sa.Text, nullable=False, unique=True),
            sa.Column(
                "spec_hash", sa.Text, sa.ForeignKey("specs.spec_hash"), nullable=False, index=True
            ),
            sa.Column("field", sa.Text, nullable=False),
            sa.Column("description", sa.Text, nullable=False),
            sa.Column("old_value", js),
            sa.Column("new_value", js),
            sa.Column("declared_at", ts, nullable=False),
            created(),
        ),
    )
    md.create_all(conn)
    for table in ("episodes", "events"):
        _append_only(conn, table)


def _append_only(conn: Connection, table: str) -> None:
    """Refuse UPDATE and DELETE (and, on PostgreSQL, TRUNCATE) on ``table``."""
    if conn.dialect.name == "sqlite":
        for action in ("UPDATE", "DELETE"):
            conn.exec_driver_sql(
                f"CREATE TRIGGER {table}_append_only_{action.lower()} BEFORE {action} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} are append-only'); END"
            )
        return
    conn.execute(
        sa.text(
            "CREATE OR REPLACE FUNCTION vcost_append_only() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'vcost: % are append-only', TG_TABLE_NAME; END $$"
        )
    )
    conn.exec_driver_sql(
        f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
        "FOR EACH ROW EXECUTE FUNCTION vcost_append_only()"
    )
    conn.exec_driver_sql(
        f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION vcost_append_only()"
    )


def _m0002_assignment_allocation(conn: Connection) -> None:
    """Version 2: what an allocation says about each assignment (vcost.allocation).

    ``allocation_id`` (which allocation run), ``session_index`` (0 = practice), ``domain``,
    ``pair_id``, ``block_order`` (do-first / check-first) and ``replaces`` (the assignment this
    one takes over: the reserve rule, a pair moved at the session hard stop), so assignments
    stay append-only.
    """
    for name, kind in (
        ("allocation_id", "TEXT"),
        ("session_index", "INTEGER"),
        ("domain", "TEXT"),
        ("pair_id", "TEXT"),
        ("block_order", "TEXT"),
    ):
        conn.exec_driver_sql(f"ALTER TABLE assignments ADD COLUMN {name} {kind}")
    conn.exec_driver_sql(
        "ALTER TABLE assignments ADD COLUMN replaces TEXT CONSTRAINT "
        "fk_assignments_replaces_assignments REFERENCES assignments (assignment_id)"
    )
    conn.exec_driver_sql("CREATE INDEX ix_assignments_allocation_id ON assignments (allocation_id)")


def _m0003_harness(conn: Connection) -> None:
    """Version 3: the web harness's own state (vcost.harness), next to the trace tables.

    ``harness_participants`` (who holds which unguessable token, hashed; entry, mode, stage),
    ``harness_sessions`` (server start and hard stop of each session), ``harness_items`` (one
    row per assignment met: server start, deadline, end, the pending verdict or submission, the
    draft), ``harness_moves`` (pairs moved or halves dropped at a session hard stop),
    ``harness_events`` (every activity event as received, ids idempotent; copied into
    ``events`` once its episode is written), ``harness_batches`` (event batches received),
    ``harness_responses`` (consent, screening, questionnaires, debrief) and
    ``harness_settings`` (the signing secret shared by the web workers). Only
    ``harness_events`` and ``harness_batches`` are append-only by use; the state rows change as
    a participant moves on. Episodes, events and realism ratings go to the trace tables.
    """
    md = sa.MetaData(naming_convention=NAMING)
    ts = sa.DateTime(timezone=True)
    js = sa.JSON(none_as_null=True)
    seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

    def table(name: str, *columns: SchemaItem) -> None:
        sa.Table(
            name,
            md,
            sa.Column("seq", seq, primary_key=True, autoincrement=True),
            *columns,
            sa.Column("created_at", ts, nullable=False),
        )

    table(
        "harness_participants",
        sa.Column("participant_id", sa.Text, nullable=False, unique=True),
        sa.Column("token_hash", sa.Text, nullable=False, unique=True),
        sa.Column("plays_as", sa.Text, nullable=False, index=True),
        sa.Column("entry", sa.Text, nullable=False),
        sa.Column("mode", sa.Text, nullable=False),
        sa.Column("external", js),
        sa.Column("stage", sa.Text, nullable=False),
        sa.Column("session_index", sa.Integer),
        sa.Column("screening_score", sa.Double),
        sa.Column("updated_at", ts, nullable=False),
    )
    table(
        "harness_sessions",
        sa.Column("session_key", sa.Text, nullable=False, unique=True),
        sa.Column("participant_id", sa.Text, nullable=False, index=True),
        sa.Column("session_index", sa.Integer, nullable=False),
        sa.Column("started_at", ts, nullable=False),
        sa.Column("stop_at", ts, nullable=False),
        sa.Column("ended_at", ts),
        sa.Column("end_reason", sa.Text),
    )
    table(
        "harness_items",
        sa.Column("item_id", sa.Text, nullable=False, unique=True),
        sa.Column("participant_id", sa.Text, nullable=False, index=True),
        sa.Column("assignment_id", sa.Text, nullable=False),
        sa.Column("session_index", sa.Integer, nullable=False),
        sa.Column("block", sa.Text, nullable=False),
        sa.Column("task_id", sa.Text, nullable=False),
        sa.Column("answer_id", sa.Text),
        sa.Column("budget_minutes", sa.Double, nullable=False),
        sa.Column("started_at", ts, nullable=False),
        sa.Column("deadline_at", ts, nullable=False),
        sa.Column("ended_at", ts),
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
    table(
        "harness_moves",
        sa.Column("move_id", sa.Text, nullable=False, unique=True),
        sa.Column("participant_id", sa.Text, nullable=False, index=True),
        sa.Column("assignment_id", sa.Text, nullable=False),
        sa.Column("from_session", sa.Integer, nullable=False),
        sa.Column("to_session", sa.Integer),
        sa.Column("at", ts, nullable=False),
    )
    table(
        "harness_events",
        sa.Column("event_id", sa.Text, nullable=False, unique=True),
        sa.Column("participant_id", sa.Text, nullable=False, index=True),
        sa.Column("item_id", sa.Text, index=True),
        sa.Column("batch_id", sa.Text),
        sa.Column("at", ts, nullable=False),
        sa.Column("offset_ms", sa.BigInteger),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("payload", js),
    )
    table(
        "harness_batches",
        sa.Column("batch_id", sa.Text, nullable=False, unique=True),
        sa.Column("participant_id", sa.Text, nullable=False, index=True),
        sa.Column("events", sa.Integer, nullable=False),
    )
    table(
        "harness_responses",
        sa.Column("response_id", sa.Text, nullable=False, unique=True),
        sa.Column("participant_id", sa.Text, nullable=False, index=True),
        sa.Column("session_index", sa.Integer),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("value", js),
    )
    table(
        "harness_settings",
        sa.Column("key", sa.Text, nullable=False, unique=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    md.create_all(conn)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial schema", _m0001_initial),
    Migration(2, "assignment allocation columns", _m0002_assignment_allocation),
    Migration(3, "web harness state", _m0003_harness),
)
"""Every migration, in order; append only."""

LATEST_VERSION = MIGRATIONS[-1].version
"""The schema version this code writes and reads."""


def current_version(conn: Connection) -> int:
    """The highest applied migration, 0 for an empty database."""
    if not sa.inspect(conn).has_table(schema_version.name):
        return 0
    value = conn.execute(sa.select(sa.func.max(schema_version.c.version))).scalar()
    return int(value or 0)


def migrate(conn: Connection, *, vcost_version: str, where: str) -> list[int]:
    """Apply the missing migrations inside the caller's (write) transaction; return them."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
    schema_version.create(conn, checkfirst=True)
    current = current_version(conn)
    if current > LATEST_VERSION:
        raise StoreError(
            f"the database at {where} has schema version {current}, newer than this vcost "
            f"({vcost_version}) understands (version {LATEST_VERSION})",
            hint="upgrade vcost, or point VCOST_DATABASE_URL at another database",
        )
    applied: list[int] = []
    for migration in MIGRATIONS:
        if migration.version <= current:
            continue
        migration.upgrade(conn)
        conn.execute(
            schema_version.insert().values(
                version=migration.version,
                name=migration.name,
                applied_at=datetime.now(UTC),
                vcost_version=vcost_version,
            )
        )
        applied.append(migration.version)
    return applied
