"""The event writer's group commit stores exactly what a batch stored on its own stores.

:meth:`HarnessEvents.add_batches` stores many requests' batches in one statement;
:meth:`HarnessEvents.add_events` stores one batch. The stored values, as the database holds
them (text of times and JSON on SQLite), must be the same, on SQLite and PostgreSQL. (That
the driver SQL both use stores what SQLAlchemy's own insert stores is
tests/harness/test_harness_insert.py.)"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from vcost.harness import _base, make_demo_study, open_study
from vcost.harness._events import BatchRequest, BatchStored, NotLoggedInError
from vcost.harness._records import ClientEvent, Participant, hash_token

T0 = datetime(2026, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
EVENTS = [
    ClientEvent("e1", "keys", 1500, {"n": 3}),
    ClientEvent("e2", "focus", None, {}),
    ClientEvent("e3", "mouse", 10**9, {"gap_ms": 5, "n": 1}),  # past the batch: clamped
    ClientEvent("e4", "scroll", 0, {"wall_ms": 1714564800123}),
]


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Straight to the first item: no screening."""
    folder = tmp_path_factory.mktemp("study")
    settings = '[harness]\ntitle = "group commit"\nscreening = false\nrealism_count = 0\n'
    make_demo_study(
        folder, participants=1, study_tasks=2, pairs_per_session=1, spares=0, settings=settings
    )
    return folder


def _raw(conn: Any, table: str, participant_id: str) -> list[tuple[Any, ...]]:
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    rows = conn.exec_driver_sql(
        f"SELECT * FROM {table} WHERE participant_id = {mark}", (participant_id,)
    ).mappings()
    out = []
    for row in rows:
        kept = {k: v for k, v in row.items() if k not in ("seq", "participant_id", "item_id")}
        for key in ("event_id", "batch_id"):  # ids carry the item or participant: their tail
            if isinstance(kept.get(key), str):
                kept[key] = kept[key].rsplit("/", 1)[-1]
        out.append(tuple(sorted(kept.items())))
    return sorted(out, key=repr)


def _on_first_item(harness: Any) -> tuple[Participant, str, str]:
    """A new login of the study's participant, consented, on its first item: (participant,
    login token, item id)."""
    _pid, token = harness.test_login(harness.material.participants[0])
    harness.consent(harness.participant(token))
    p = harness.participant(token)
    assert p is not None
    harness.start_session(p)
    item = harness.step(p).item
    assert item is not None
    return p, token, item.item_id


def test_a_group_stores_what_single_batches_store(study: Path, store_url: str) -> None:
    harness = open_study(study, store_url)
    try:
        harness.clock = lambda: T0
        (alone, _, alone_item), (grouped, grouped_token, grouped_item) = [
            _on_first_item(harness) for _ in range(2)
        ]
        later = T0.replace(second=9)
        harness.clock = lambda: later
        assert harness.add_events(alone, "b1", alone_item, EVENTS) == (4, False)
        outcomes = harness.add_batches(
            [
                BatchRequest(hash_token(grouped_token), "b1", grouped_item, EVENTS),
                BatchRequest(hash_token("nobody"), "b1", None, EVENTS),
            ]
        )
        assert outcomes[0] == BatchStored(4, duplicate=False)
        assert isinstance(outcomes[1], NotLoggedInError)
        with harness.store.engine.connect() as conn:
            for table in ("harness_events", "harness_batches"):
                stored_alone = _raw(conn, table, alone.participant_id)
                assert stored_alone, table
                assert _raw(conn, table, grouped.participant_id) == stored_alone, table
    finally:
        harness.store.close()


# one statement; 2 rows a statement (SQLite: PostgreSQL sends one array a column, any size)
@pytest.mark.parametrize("per_statement", [30_000, 20])
def test_a_group_counts_only_the_events_it_stored(
    study: Path, store_url: str, per_statement: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Events stored before (a resend), an id twice in one group (the first copy counts) and
    a batch seen before (a duplicate): each request's count is what it added, as
    :meth:`add_events` would count it, also when the insert is split into many statements."""
    monkeypatch.setattr(_base, "_MAX_PARAMETERS", per_statement)
    harness = open_study(study, store_url)
    try:
        harness.clock = lambda: T0
        p, token, item = _on_first_item(harness)
        e1, e2, e3, e4 = EVENTS
        assert harness.add_events(p, "b1", item, [e1, e2]) == (2, False)
        outcomes = harness.add_batches(
            [
                BatchRequest(hash_token(token), "b2", item, [e1, e3]),  # e1 stored
                BatchRequest(hash_token(token), "b3", item, [e3, e4, e4]),
                BatchRequest(hash_token(token), "b1", item, [e1, e2]),  # seen
            ]
        )
        assert outcomes == [
            BatchStored(1, duplicate=False),
            BatchStored(1, duplicate=False),
            BatchStored(0, duplicate=True),
        ]
        with harness.store.engine.connect() as conn:
            events = _raw(conn, "harness_events", p.participant_id)
            batches = _raw(conn, "harness_batches", p.participant_id)
        client = sorted(dict(e)["event_id"] for e in events if dict(e)["batch_id"] is not None)
        assert client == ["e1", "e2", "e3", "e4"]  # each once (the server's own have no batch)
        assert sorted(dict(b)["batch_id"] for b in batches) == ["b1", "b2", "b3"]
    finally:
        harness.store.close()
