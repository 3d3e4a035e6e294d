"""Inspect AI eval logs, read without importing inspect_ai (it is a large optional dependency).

A log is JSON (``.json``: ``eval``, ``results``, ``samples``) or a zip (``.eval``:
``header.json`` and ``samples/<id>_epoch_<n>.json``, plus ``_journal/start.json``,
``summaries.json`` and ``reductions.json``). Current inspect_ai 0.3.x writes the zip's entries
zstd-compressed (zip method 93), which Python's ``zipfile`` before 3.14 cannot open; such
entries are read here from their local headers and decompressed with ``zstandard`` (CRC
checked); stored and deflated entries go through ``zipfile``. A log still being written has
no ``header.json``: ``_journal/start.json`` stands in for it.

:func:`read_inspect_log` returns the header and the samples as plain dicts;
:func:`sample_completion` a sample's final text; :func:`sample_key` the (task id, epoch) both
imports name a sample by. :mod:`vcost.audit` reads per-item results from them and
:mod:`vcost.judges` model answers and scorer verdicts (docs/judges.md).
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any, BinaryIO

import zstandard

from vcost.errors import InputError

__all__ = ["read_inspect_log", "sample_completion", "sample_key"]


_ZSTD = 93  # APPNOTE 4.4.5: Zstandard
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")


def _entry(archive: zipfile.ZipFile, raw: BinaryIO, info: zipfile.ZipInfo) -> bytes:
    """One entry's bytes: zstd entries decompressed here, the others by ``zipfile``."""
    if info.compress_type != _ZSTD:
        return archive.read(info)
    raw.seek(info.header_offset)
    fields = _LOCAL_HEADER.unpack(raw.read(_LOCAL_HEADER.size))
    if fields[0] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header for {info.filename}")
    raw.seek(info.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10])
    packed = raw.read(info.compress_size)
    try:
        data = zstandard.ZstdDecompressor().decompressobj().decompress(packed)
    except zstandard.ZstdError as error:
        raise zipfile.BadZipFile(f"{info.filename}: zstd: {error}") from None
    if zlib.crc32(data) != info.CRC:
        raise zipfile.BadZipFile(f"{info.filename}: CRC mismatch")
    return data


def _read_zip(path: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    with path.open("rb") as raw, zipfile.ZipFile(raw) as archive:
        infos = {i.filename: i for i in archive.infolist()}
        head_name = "header.json" if "header.json" in infos else "_journal/start.json"
        if head_name not in infos:
            raise InputError(
                "not an Inspect .eval log (no header.json or _journal/start.json)", source=path
            )
        unknown = {i.compress_type for i in infos.values()} - {
            zipfile.ZIP_STORED,
            zipfile.ZIP_DEFLATED,
            _ZSTD,
        }
        if unknown:
            raise InputError(
                f"the .eval log uses zip compression method {min(unknown)}, which vcost cannot "
                "read (stored, deflate and zstd are read)",
                source=path,
                hint="re-save the log with `inspect log convert` or a current inspect_ai",
            )
        header = json.loads(_entry(archive, raw, infos[head_name]))
        samples = [
            (f"{path.name}:{name}", json.loads(_entry(archive, raw, infos[name])))
            for name in sorted(infos)
            if name.startswith("samples/") and name.endswith(".json")
        ]
    return header, samples


def read_inspect_log(
    path: str | Path,
) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """The log header and its samples (each with a 'where' label for messages), from an
    Inspect AI eval log in JSON (``.json``) or zip (``.eval``) format."""
    path = Path(path)
    if zipfile.is_zipfile(path):
        try:
            return _read_zip(path)
        except (zipfile.BadZipFile, json.JSONDecodeError, UnicodeDecodeError, EOFError) as error:
            raise InputError(f"cannot read the .eval log: {error}", source=path) from None
    try:
        with path.open("rb") as stream:
            zip_magic = stream.read(2) == b"PK"
    except OSError as error:
        raise InputError(f"cannot read the file: {error}", source=path) from None
    if zip_magic or path.suffix == ".eval":
        raise InputError(
            "not a zip archive: an Inspect .eval log is one"
            + (" (this one is cut short: no end-of-archive record)" if zip_magic else ""),
            source=path,
            hint="copy the log again once Inspect has finished writing it, or give the .json log",
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read the file: {error}", source=path) from None
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON: {error.msg}", source=path, line=error.lineno) from None
    if not isinstance(data, dict) or "eval" not in data:
        raise InputError(
            "not an Inspect eval log (no 'eval' section)",
            source=path,
            hint="use --format csv/jsonl for per-item result files",
        )
    raw = data.get("samples") or []
    return data, [(f"samples[{i}]", s) for i, s in enumerate(raw) if isinstance(s, dict)]


def sample_key(sample: dict[str, Any]) -> tuple[str, int]:
    """The (task id, epoch) a sample is named by in both imports: ``metadata.task_id`` if it is
    text, else the sample's ``id``; the epoch counts from 1 (Inspect's own numbering)."""
    meta = sample.get("metadata")
    task_id = meta.get("task_id") if isinstance(meta, dict) else None
    if not isinstance(task_id, str):
        task_id = str(sample.get("id", ""))
    epoch = sample.get("epoch")
    return task_id, int(epoch) if isinstance(epoch, int) and epoch >= 1 else 1


def sample_completion(sample: dict[str, Any]) -> str:
    """The model's final text in a sample: ``output.completion``, else the first choice's
    message content (a string, or text parts joined)."""
    output = sample.get("output")
    if not isinstance(output, dict):
        return ""
    completion = output.get("completion")
    if isinstance(completion, str):
        return completion
    choices = output.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ""
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", "")) for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )  # fmt: skip
    return ""
