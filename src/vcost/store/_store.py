"""The store: a SQLite file (default) or a PostgreSQL database holding every stage's rows.

Rules (DESIGN.md) and how they are kept:

- **Append, never rewrite.** Every write appends rows; a row whose id is already stored is a
  no-op when its content is equal and a :class:`~vcost.errors.TraceError` naming the id when it
  differs. Episodes and events are also append-only in the database itself: triggers refuse
  UPDATE and DELETE. Nothing in this API updates or deletes.
- **One transaction per write.** :meth:`Store.import_trace` checks every row of every table
  before inserting any, inside one transaction; any failure leaves the store as it was.
- **Validated in, validated out.** Imports go through :func:`vcost.trace_io.validate_trace`;
  :meth:`Store.load_trace` returns a trace with the same canonical types as
  :func:`vcost.trace_io.read_trace`, rows in the order they were appended.
- **Schema versions.** Opening a store applies missing migrations (:mod:`._migrations`), unless
  it is opened with ``upgrade=False`` (``vcost db info``: it only reads).
- **Only writers create a store.** ``Store.open(url, create=False)`` refuses a SQLite file that
  does not exist, or a database without vcost's tables, instead of creating an empty store a
  mistyped URL would then report on (commands that only read).

SQLite runs in WAL mode with foreign keys on; write transactions start with ``BEGIN IMMEDIATE``
so concurrent writers queue instead of failing half-way. A PostgreSQL URL may select a schema
with ``?options=-csearch_path%3Dmy_schema``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import pandas as pd
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from vcost import __version__
from vcost.errors import InputError, StoreError, TraceError, VcostError
from vcost.store import _schema as s
from vcost.store._append import (
    TRACE_CONTRACT,
    ImportReport,
    Plan,
    append_trace,
    apply_plans,
    stamp_spec_hash,
)
from vcost.store._checkpoint import Checkpointer
from vcost.store._engine import (
    DEFAULT_URL_ENV,
    NO_STORE_HINT,
    check_sqlite_path,
    create_engine,
    resolve_url,
)
from vcost.store._migrations import LATEST_VERSION, current_version, migrate
from vcost.store._values import to_series
from vcost.store._write_lock import WriteLock
from vcost.trace import (
    Trace,
)
from vcost.trace_io import validate_trace

__all__ = ["DEFAULT_URL_ENV", "ImportReport", "Store"]


# --------------------------------------------------------------------------------------------
# The store


class Store:
    """A vcost database. Open with :meth:`Store.open`; use as a context manager or ``close()``."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        database = engine.url.database if engine.dialect.name == "sqlite" else None
        self._write_lock = WriteLock(None if database in (None, "", ":memory:") else database)
        self._checkpointer: Checkpointer | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    @classmethod
    def open(cls, url: str | None = None, *, create: bool = True, upgrade: bool = True) -> Store:
        """Open (creating and migrating if needed) the store at ``url``.

        Without ``url``: ``$VCOST_DATABASE_URL``, else the SQLite file ``vcost.db`` in the
        current directory. URLs: ``sqlite:///path.db``, ``sqlite://`` (in memory),
        ``postgresql+psycopg://user@host:5432/db`` (``postgresql://`` is read as psycopg).

        ``create=False`` (for commands that only read) refuses, with an :class:`InputError`,
        a URL that names no store: a SQLite file that does not exist (nothing is created) or
        a database without vcost's tables. ``upgrade=False`` leaves the schema as it is
        (compare :attr:`schema_version` with :attr:`latest_schema_version`); the other
        methods expect the current schema. Raises :class:`StoreError` when the database
        cannot be reached or, when upgrading, is newer than this code.
        """
        parsed = resolve_url(url)
        check_sqlite_path(parsed, create=create)
        engine = create_engine(parsed)
        store = cls(engine)
        try:
            if not create:
                with store._errors("open the store"), store._read() as conn:
                    if not sa.inspect(conn).has_table(s.schema_version.name):
                        raise InputError(
                            "the database holds no vcost store (no schema_version table)",
                            source=store.url,
                            hint=f"check the URL; {NO_STORE_HINT}",
                        )
            if upgrade:
                with store._errors("open the store"), store.writing() as conn:
                    migrate(conn, vcost_version=__version__, where=store.url)
        except BaseException:
            store.close()
            raise
        return store

    def close(self) -> None:
        """Release the database connections."""
        if self._checkpointer is not None:
            self._checkpointer.stop()
            self._checkpointer = None
        self._engine.dispose()
        self._write_lock.close()

    @property
    def checkpointing(self) -> bool:
        """Whether a background thread checkpoints the log (:meth:`checkpoint_in_background`)."""
        return self._checkpointer is not None

    def checkpoint_in_background(self, every: float = 1.0) -> None:
        """SQLite: checkpoint the write-ahead log from a thread every ``every`` seconds
        instead of on the commit that fills it (for a server whose commits people wait
        on; see :mod:`vcost.store._checkpoint`). Ended by :meth:`close`. No-op on
        PostgreSQL or an in-memory database."""
        on_file = self._engine.url.database not in (None, "", ":memory:")
        if self._checkpointer is None and self.backend == "sqlite" and on_file:
            self._checkpointer = Checkpointer(self._engine, every)

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.url!r})"

    @property
    def url(self) -> str:
        """The database URL, password hidden."""
        return self._engine.url.render_as_string(hide_password=True)

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return str(self._engine.dialect.name)

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine (for read-only queries of your own)."""
        return self._engine

    @property
    def schema_version(self) -> int:
        """The database's schema version (equals the code's after :meth:`open`)."""
        with self._errors("read the schema version"), self._read() as conn:
            return current_version(conn)

    latest_schema_version = LATEST_VERSION

    # -- plumbing ----------------------------------------------------------------------------

    @contextmanager
    def writing(self) -> Iterator[Connection]:
        """A write transaction, committed when the block ends (rolled back if it raises).

        On SQLite it takes the write lock up front (``BEGIN IMMEDIATE``), so concurrent
        writers queue instead of failing half-way; and writers queue on a lock of the store's
        own first, across threads and processes (:class:`WriteLock`). A waiting writer then
        starts the moment the one before it commits, where SQLite's busy handler would sleep
        between tries (up to 100 ms a try: the tail latency of a busy web harness)."""
        sqlite = self._engine.dialect.name == "sqlite"
        lock = self._write_lock if sqlite else contextlib.nullcontext()
        with lock, self._engine.connect() as conn:
            conn.execution_options(vcost_write=True)
            with conn.begin():
                yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self._engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except VcostError:
            raise
        except sa.exc.IntegrityError as error:
            raise StoreError(
                f"cannot {doing}: the database refused the write ({error.orig})",
                hint="another process may have written the same ids at the same time; retry",
            ) from error
        except sa.exc.SQLAlchemyError as error:
            detail = getattr(error, "orig", None) or error
            raise StoreError(f"cannot {doing} at {self.url}: {detail}") from error
        except OSError as error:  # the write lock's side file (<database>.write-lock)
            raise StoreError(f"cannot {doing} at {self.url}: {error}") from error

    # -- counting ----------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Rows per table (every table the database has but ``schema_version``)."""
        tables = [t for t in s.metadata.sorted_tables if t is not s.schema_version]
        with self._errors("count rows"), self._read() as conn:
            inspector = sa.inspect(conn)  # a store not upgraded may lack the newer tables
            return {
                t.name: int(conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one())
                for t in tables
                if inspector.has_table(t.name)
            }

    # -- appending ---------------------------------------------------------------------------

    def import_trace(
        self,
        trace: Trace,
        *,
        spec_hash: str | None = None,
        confidence_levels: Sequence[float] | None = None,
    ) -> ImportReport:
        """Validate ``trace`` and append it to the store in one transaction.

        Episodes without a ``spec_hash`` are stamped with ``spec_hash`` (episodes stamped with
        another hash are refused); answers and tasks new to the store record it too. Rows whose
        id is already stored with equal content are left alone, so importing the same trace
        twice is a no-op; a stored id with different content raises :class:`TraceError` naming
        it, and nothing is written. The trace must be self-contained (its episodes refer to its
        own answers and verifiers); to append to rows already stored, use :meth:`add_episode`
        and :meth:`add_events`.

        ``confidence_levels``: the levels a person may report (the spec's). By default that rule
        is not applied here, because it is study-specific and :func:`vcost.trace_io.read_trace`
        already applied it when the files were read; every other rule is.
        """
        clean = stamp_spec_hash(
            validate_trace(trace, confidence_levels=confidence_levels), spec_hash
        )
        with self._errors("import the trace"), self.writing() as conn:
            return append_trace(conn, clean, spec_hash)

    def add_episode(
        self,
        *,
        episode_id: str,
        verifier_id: str,
        block: str,
        effort: float,
        budget: float,
        termination: str,
        task_id: str | None = None,
        answer_id: str | None = None,
        attempt: int | None = None,
        started_at: datetime | None = None,
        ended_at: datetime | None = None,
        verdict: str | None = None,
        confidence: float | None = None,
        reason: str | None = None,
        passed: bool | None = None,
        spec_hash: str | None = None,
        confidence_levels: Sequence[float] | None = None,
    ) -> bool:
        """Append one episode whose verifier (and answer, if any) are already stored.

        Validated like a trace row (``confidence_levels`` as in :meth:`import_trace`: pass the
        spec's levels to check a person's confidence). Returns ``True`` if added, ``False`` if
        an equal episode was already stored; a different episode under the same id raises
        :class:`TraceError`.
        """
        row = {
            "episode_id": episode_id,
            "verifier_id": verifier_id,
            "block": block,
            "task_id": task_id,
            "answer_id": answer_id,
            "attempt": attempt,
            "started_at": started_at,
            "ended_at": ended_at,
            "effort": effort,
            "budget": budget,
            "termination": termination,
            "verdict": verdict,
            "confidence": confidence,
            "reason": reason,
            "passed": passed,
            "spec_hash": spec_hash,
        }
        episodes = pd.DataFrame({k: pd.Series([v], dtype=object) for k, v in row.items()})
        with self._errors("add the episode"), self.writing() as conn:
            answers = self._select(conn, "answers", s.answers.c.answer_id == answer_id)
            verifiers = self._select(conn, "verifiers", s.verifiers.c.verifier_id == verifier_id)
            trace = validate_trace(
                Trace(answers=answers, episodes=episodes, verifiers=verifiers),
                confidence_levels=confidence_levels,
            )
            report = append_trace(conn, trace, None)
        return report.added["episodes"] == 1

    def add_events(self, events: pd.DataFrame | Iterable[Mapping[str, Any]]) -> int:
        """Append events of stored episodes; return how many were new.

        ``events`` is a frame or an iterable of mappings with the events columns
        (docs/trace-format.md). All or nothing: one invalid event rejects the batch.
        Re-sending an event already stored (same id, same content) is a no-op.
        """
        if isinstance(events, pd.DataFrame):
            frame = events
        else:
            rows = [dict(e) for e in events]
            names = list(dict.fromkeys(k for r in rows for k in r))
            frame = pd.DataFrame(
                {k: pd.Series([r.get(k) for r in rows], dtype=object) for k in names}
            )
        if len(frame) == 0:
            return 0
        episode_ids = [str(e) for e in pd.unique(frame.get("episode_id", pd.Series()).dropna())]
        with self._errors("add the events"), self.writing() as conn:
            e = s.episodes
            episodes = self._select(conn, "episodes", e.c.episode_id.in_(episode_ids))
            answers = self._select(
                conn,
                "answers",
                s.answers.c.answer_id.in_(
                    sa.select(e.c.answer_id).where(e.c.episode_id.in_(episode_ids))
                ),
            )
            verifiers = self._select(
                conn,
                "verifiers",
                s.verifiers.c.verifier_id.in_(
                    sa.select(e.c.verifier_id).where(e.c.episode_id.in_(episode_ids))
                ),
            )
            trace = validate_trace(
                Trace(answers=answers, episodes=episodes, verifiers=verifiers, events=frame),
                confidence_levels=None,
            )
            report = append_trace(conn, trace, None)
        return report.added["events"]

    def add_spec(
        self,
        spec_hash: str,
        canonical_json: str,
        *,
        locked_at: datetime | None = None,
        vcost_version: str | None = None,
    ) -> bool:
        """Record a locked spec; ``True`` if new, ``False`` if already stored identically."""
        record = {
            "spec_hash": spec_hash,
            "canonical_json": canonical_json,
            "locked_at": locked_at,
            "vcost_version": vcost_version or __version__,
            "created_at": datetime.now(UTC),
        }
        plan = Plan("specs", s.specs, "spec_hash", [record], ("canonical_json",))
        with self._errors("add the spec"), self.writing() as conn:
            try:
                apply_plans(conn, [plan])
            except TraceError as error:
                raise InputError(error.message) from None
        return bool(plan.added)

    def add_rating(
        self,
        *,
        rating_id: str,
        rater_id: str,
        scale: str,
        value: float,
        answer_id: str | None = None,
        task_id: str | None = None,
        at: datetime | None = None,
        spec_hash: str | None = None,
    ) -> bool:
        """Record a rating (e.g. realism, scale ``"ai_written_1_5"``) of a stored answer or task.

        ``True`` if new, ``False`` if already stored identically.
        """
        if answer_id is None and task_id is None:
            raise InputError("a rating needs an answer_id or a task_id", field="answer_id")
        record = {
            "rating_id": rating_id,
            "rater_id": rater_id,
            "answer_id": answer_id,
            "task_id": task_id,
            "scale": scale,
            "value": float(value),
            "at": at,
            "spec_hash": spec_hash,
            "created_at": datetime.now(UTC),
        }
        compare = ("rater_id", "answer_id", "task_id", "scale", "value", "at", "spec_hash")
        plan = Plan("ratings", s.ratings, "rating_id", [record], compare)
        with self._errors("add the rating"), self.writing() as conn:
            apply_plans(conn, [plan])
        return bool(plan.added)

    def add_deviation(
        self,
        *,
        deviation_id: str,
        spec_hash: str,
        field: str,
        description: str,
        old_value: Any = None,
        new_value: Any = None,
        declared_at: datetime | None = None,
    ) -> bool:
        """Record a declared deviation from the stored spec ``spec_hash``.

        ``True`` if new, ``False`` if already stored identically.
        """
        record = {
            "deviation_id": deviation_id,
            "spec_hash": spec_hash,
            "field": field,
            "description": description,
            "old_value": old_value,
            "new_value": new_value,
            "declared_at": declared_at or datetime.now(UTC),
            "created_at": datetime.now(UTC),
        }
        compare = ("spec_hash", "field", "description", "old_value", "new_value")
        plan = Plan("deviations", s.deviations, "deviation_id", [record], compare)
        with self._errors("add the deviation"), self.writing() as conn:
            apply_plans(conn, [plan])
        return bool(plan.added)

    # -- loading -----------------------------------------------------------------------------

    def _select(
        self, conn: Connection, name: str, where: sa.ColumnElement[bool] | None
    ) -> pd.DataFrame:
        table = s.TRACE_TABLES[name]
        columns = TRACE_CONTRACT[name]
        query = sa.select(*(table.c[c.name] for c in columns)).order_by(table.c.seq)
        if where is not None:
            query = query.where(where)
        rows = conn.execute(query).all()
        data = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
        return pd.DataFrame(
            {c.name: to_series(list(v), c) for c, v in zip(columns, data, strict=True)}
        )

    def load_trace(self, *, spec_hash: str | None = None, model_id: str | None = None) -> Trace:
        """The stored trace, or the part of it selected by ``spec_hash`` and/or ``model_id``.

        Episodes: those stamped with ``spec_hash``; with ``model_id``, the check episodes on
        that model's answers and the do episodes on those answers' tasks. Answers: those the
        selected episodes refer to, plus the answers matching the filters directly (model, spec
        stamp). Verifiers and events: those of the selected episodes. Without filters,
        everything. Rows come in the order they were appended, with canonical types.
        """
        e, a, v, ev = s.episodes, s.answers, s.verifiers, s.events
        conditions: list[sa.ColumnElement[bool]] = []
        direct: list[sa.ColumnElement[bool]] = []
        if spec_hash is not None:
            conditions.append(e.c.spec_hash == spec_hash)
            direct.append(a.c.spec_hash == spec_hash)
        if model_id is not None:
            mine = sa.select(a.c.answer_id).where(a.c.model_id == model_id)
            tasks = sa.select(a.c.task_id).where(a.c.model_id == model_id)
            conditions.append(
                sa.or_(e.c.answer_id.in_(mine), sa.and_(e.c.block == "do", e.c.task_id.in_(tasks)))
            )
            direct.append(a.c.model_id == model_id)
        selected = sa.and_(*conditions) if conditions else None
        with self._errors("load the trace"), self._read() as conn:
            if selected is None:
                frames = {name: self._select(conn, name, None) for name in TRACE_CONTRACT}
            else:
                frames = {
                    "episodes": self._select(conn, "episodes", selected),
                    "answers": self._select(
                        conn,
                        "answers",
                        sa.or_(
                            a.c.answer_id.in_(sa.select(e.c.answer_id).where(selected)),
                            sa.and_(*direct),
                        ),
                    ),
                    "verifiers": self._select(
                        conn,
                        "verifiers",
                        v.c.verifier_id.in_(sa.select(e.c.verifier_id).where(selected)),
                    ),
                    "events": self._select(
                        conn,
                        "events",
                        ev.c.episode_id.in_(sa.select(e.c.episode_id).where(selected)),
                    ),
                }
        return validate_trace(
            Trace(
                answers=frames["answers"],
                episodes=frames["episodes"],
                verifiers=frames["verifiers"],
                events=frames["events"],
            ),
            confidence_levels=None,
        )
