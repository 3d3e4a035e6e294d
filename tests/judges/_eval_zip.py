"""Write an Inspect ``.eval`` zip as current inspect_ai 0.3.x does: zstd-compressed entries
(zip method 93, APPNOTE 4.4.5), with header.json, _journal/start.json, summaries.json,
reductions.json and samples/<id>_epoch_<n>.json. Written by hand: Python's zipfile before 3.14
cannot write method 93."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

import zstandard

ZSTD = 93


def write_eval(path: Path, log: dict[str, Any], *, running: bool = False) -> Path:
    """``log`` in Inspect's JSON shape (eval, plan, results, stats, samples) as a .eval zip;
    ``running``: a log still being written (no header.json yet, only the journal)."""
    header = {k: v for k, v in log.items() if k != "samples"}
    samples = log.get("samples", [])
    entries: list[tuple[str, bytes]] = [
        ("_journal/start.json", json.dumps({"version": 2, "eval": log["eval"], "plan": {}})),
    ]  # type: ignore[list-item]
    for s in samples:
        entries.append((f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s)))  # type: ignore[arg-type]
    summaries = [{"id": s["id"], "epoch": s["epoch"], "scores": s.get("scores")} for s in samples]
    entries.append(("_journal/summaries/1.json", json.dumps(summaries)))  # type: ignore[arg-type]
    if not running:
        entries += [
            ("summaries.json", json.dumps(summaries)),  # type: ignore[list-item]
            ("reductions.json", json.dumps([])),
            ("header.json", json.dumps(header)),
        ]
    compressor = zstandard.ZstdCompressor(level=3)
    body = bytearray()
    central = bytearray()
    for name, text in entries:
        data = text.encode() if isinstance(text, str) else text
        packed = compressor.compress(data)
        crc = zlib.crc32(data)
        encoded = name.encode()
        offset = len(body)
        body += struct.pack(
            "<4sHHHHHIIIHH", b"PK\x03\x04", 63, 0, ZSTD, 0, 0x21, crc, len(packed), len(data),
            len(encoded), 0,
        ) + encoded + packed  # fmt: skip
        central += struct.pack(
            "<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 63, 63, 0, ZSTD, 0, 0x21, crc, len(packed),
            len(data), len(encoded), 0, 0, 0, 0, 0, offset,
        ) + encoded  # fmt: skip
    end = struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), len(body), 0
    )
    path.write_bytes(bytes(body + central + end))
    return path
