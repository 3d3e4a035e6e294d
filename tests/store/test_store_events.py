"""Events are an append-only log: added all-or-nothing, never updated, never deleted."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa

from vcost.errors import TraceError
from vcost.store import Store
from vcost.trace import Trace


def event(event_id: str, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "event_id": event_id,
        "episode_id": "ex-e06",
        "at": datetime(2026, 3, 2, 10, 22, tzinfo=UTC),
        "offset_ms": 30_000,
        "kind": "keypress",
        "payload": {"count": 3},
    }
    return {**base, **changes}


def test_add_events_appends_and_is_idempotent(store: Store, example: Trace) -> None:
    store.import_trace(example)
    assert store.add_events([event("ex-v90"), event("ex-v91", kind="run", payload=None)]) == 2
    assert store.add_events([event("ex-v90")]) == 0
    events = store.load_trace().events
    assert list(events["event_id"])[-2:] == ["ex-v90", "ex-v91"]
    assert events.set_index("event_id").loc["ex-v90", "payload"] == '{"count":3}'
    assert store.counts()["events"] == 17


def test_add_events_accepts_a_frame(store: Store, example: Trace) -> None:
    store.import_trace(example)
    frame = example.events.iloc[:3].assign(event_id=["n1", "n2", "n3"])
    assert store.add_events(frame) == 3
    assert store.add_events(frame.iloc[:0]) == 0


def test_changed_event_is_refused(store: Store, example: Trace) -> None:
    store.import_trace(example)
    store.add_events([event("ex-v90")])
    with pytest.raises(TraceError, match="event_id 'ex-v90' is already stored"):
        store.add_events([event("ex-v90", payload={"count": 4})])
    assert store.counts()["events"] == 16


def test_one_bad_event_rejects_the_batch(store: Store, example: Trace) -> None:
    store.import_trace(example)
    batch = [event("ex-v90"), event("ex-v91", episode_id="ex-e404"), event("ex-v92", at=None)]
    with pytest.raises(TraceError) as error:
        store.add_events(batch)
    text = str(error.value)
    assert "events: row 2: field 'episode_id': unknown episode 'ex-e404'" in text
    assert "events: row 3: field 'at': empty required value" in text
    assert store.counts()["events"] == 15


@pytest.mark.parametrize("statement", ["UPDATE {t} SET kind = 'x'", "DELETE FROM {t}"])
@pytest.mark.parametrize("table", ["events", "episodes"])
def test_database_refuses_rewrites(
    store: Store, example: Trace, statement: str, table: str
) -> None:
    store.import_trace(example)
    sql = statement.format(t=table)
    if table == "episodes":
        sql = sql.replace("kind", "reason")
    with pytest.raises(sa.exc.DBAPIError, match="append-only"), store.engine.begin() as conn:
        conn.exec_driver_sql(sql)
    assert store.counts()[table] == {"events": 15, "episodes": 45}[table]


def test_api_offers_no_way_to_rewrite(store: Store) -> None:
    public = {name for name in dir(store) if not name.startswith("_")}
    assert not {n for n in public if n.startswith(("delete", "update", "remove", "replace"))}
