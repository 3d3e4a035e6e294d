"""Inspect AI eval logs, read without importing inspect_ai (it is a large optional dependency).

A log is JSON (``.json``: ``eval``, ``results``, ``samples``) or a zip (``.eval``:
``header.json`` and ``samples/<id>_epoch_<n>.json``). :func:`read_inspect_log` returns the
header and the samples as plain dicts; :mod:`vcost.audit` reads per-item results from them and
:mod:`vcost.judges` model answers and scorer verdicts (docs/judges.md).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from vcost.errors import InputError

__all__ = ["read_inspect_log", "sample_completion"]


def read_inspect_log(
    path: str | Path,
) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """The log header and its samples (each with a 'where' label for messages), from an
    Inspect AI eval log in JSON (``.json``) or zip (``.eval``) format."""
    path = Path(path)
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
                head_name = "header.json" if "header.json" in names else "_journal/start.json"
                if head_name not in names:
                    raise InputError("not an Inspect .eval log (no header.json)", source=path)
                header = json.loads(archive.read(head_name))
                samples = [
                    (f"{path.name}:{name}", json.loads(archive.read(name)))
                    for name in sorted(names)
                    if name.startswith("samples/") and name.endswith(".json")
                ]
        except (zipfile.BadZipFile, json.JSONDecodeError, UnicodeDecodeError) as error:
            raise InputError(f"cannot read the .eval log: {error}", source=path) from None
        return header, samples
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
