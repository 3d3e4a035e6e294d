"""The vcost store: every stage's rows in SQLite (default) or PostgreSQL.

::

    from vcost.store import Store
    from vcost.trace_io import read_trace

    with Store.open() as store:                 # $VCOST_DATABASE_URL or ./vcost.db
        report = store.import_trace(read_trace("trace/"), spec_hash="3f2a...")
        trace = store.load_trace(model_id="model-a")

Tables: ``specs``, ``tasks``, ``answers``, ``verifiers``, ``assignments``, ``episodes``,
``events``, ``ratings``, ``deviations`` and ``schema_version`` (see :mod:`._schema`). Writes
append in one transaction; a stored id is never rewritten (see :mod:`._store`).
"""

from __future__ import annotations

from vcost.store._migrations import LATEST_VERSION, MIGRATIONS, Migration
from vcost.store._store import DEFAULT_URL_ENV, ImportReport, Store

__all__ = ["DEFAULT_URL_ENV", "LATEST_VERSION", "MIGRATIONS", "ImportReport", "Migration", "Store"]
