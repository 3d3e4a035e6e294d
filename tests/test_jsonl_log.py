"""The append-only JSONL log under concurrent writers, torn tails and bad lines."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from vcost.errors import InputError
from vcost.jsonl_log import JsonlLog


def _key(record: dict[str, Any]) -> str:
    return str(record["k"])


def test_concurrent_appends_are_all_durable_and_whole(tmp_path: Path) -> None:
    log = JsonlLog(tmp_path / "log.jsonl", key_of=_key)

    def writer(w: int) -> None:
        for i in range(100):
            log.append({"k": f"{w}-{i}", "pad": "x" * (i * 7)})

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    reread = JsonlLog(log.path, key_of=_key)
    assert len(reread) == 800
    assert reread.get("7-99") == {"k": "7-99", "pad": "x" * 693}
    assert log.path.read_bytes().count(b"\n") == 800


def test_torn_tail_is_ignored_then_trimmed_and_last_key_wins(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"k": "a", "n": 1}\n{"k": "b", "n": 2}\n{"k": "c", "n"')
    log = JsonlLog(path, key_of=_key)
    assert log.keys() == ["a", "b"]
    log.append({"k": "a", "n": 3})
    log.close()
    assert path.read_bytes() == b'{"k": "a", "n": 1}\n{"k": "b", "n": 2}\n{"k":"a","n":3}\n'
    assert JsonlLog(path, key_of=_key).get("a") == {"k": "a", "n": 3}


def test_a_bad_line_in_the_middle_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"k": "a"}\nnot json\n{"k": "b"}\n')
    with pytest.raises(InputError, match=r"log\.jsonl:2: not a valid answers log record"):
        JsonlLog(path, key_of=_key, kind="answers log")


def test_queued_appends_reach_the_file_at_sync_in_order_with_one_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """append(durable=False) only queues (readers of the object see it); a durable append
    writes the queued lines before its own; sync() writes the rest with one fsync."""
    import os

    syncs: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (syncs.append(fd), real_fsync(fd))[1])
    path = tmp_path / "log.jsonl"
    log = JsonlLog(path, key_of=_key)
    log.append({"k": "a"}, durable=False)
    log.append({"k": "b"}, durable=False)
    assert log.get("b") == {"k": "b"}
    assert not path.exists() or path.read_bytes() == b""
    log.append({"k": "c"})
    assert path.read_bytes() == b'{"k":"a"}\n{"k":"b"}\n{"k":"c"}\n'
    assert len(syncs) == 1
    log.append({"k": "d"}, durable=False)
    log.append({"k": "e"}, durable=False)
    assert path.read_bytes().count(b"\n") == 3
    log.sync()
    assert len(syncs) == 2
    assert JsonlLog(path, key_of=_key).keys() == ["a", "b", "c", "d", "e"]
    log.sync()  # nothing new: no second fsync
    assert len(syncs) == 2
    log.append({"k": "f"}, durable=False)
    log.close()  # close writes and syncs what is queued
    assert JsonlLog(path, key_of=_key).keys()[-1] == "f"
