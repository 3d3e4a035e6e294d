"""The model configurations behind a study's answers and AI verdicts (temporal validity).

Crescitelli et al. (2026, Sec. 5, "Temporal validity"; Sec. 6, Step 2): every result must carry
"the generation-side configuration ... model snapshot or version identifier, decoding
parameters, and any system-level prompt". :func:`model_configurations` gives one row per model
whose answers (answers' ``model_id``) or verdicts (check episodes of a ``model`` verifier) were
analysed: name, role, provider, model id, snapshot, decoding parameters (temperature, max_tokens,
seed), prompt version and a prompt hash. Sources, first found wins:

1. log records (``vcost answers generate``'s answers log, ``vcost judge``'s judgments log): each
   holds the configuration sent (``config``) and the prompt version (``prompt``);
2. a model verifier's ``extra`` in a trace (:func:`vcost.judges.judgments_trace` puts the
   checker's configuration there);
3. a models TOML (:func:`vcost.models.load_models`): the prompt version is then this vcost's
   (answers: ``vcost.answers.PROMPT_VERSION``, checkers: ``vcost.judges.JUDGE_PROMPT_VERSION``),
   marked as such in ``source``.

The prompt hash (vcost's definition) is the first 16 hex digits of SHA-256 over the canonical
JSON of the prompt version and the system prompt: the prompt template is named by its version,
which vcost changes whenever the template changes. A model with no configuration in any source
gets a row with source ``not given`` and a note.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from vcost.models import ModelConfig

__all__ = ["CONFIG_COLUMNS", "model_configurations", "prompt_hash"]

CONFIG_COLUMNS = [
    "name", "role", "provider", "model", "snapshot", "temperature", "max_tokens", "seed",
    "system_prompt", "prompt_version", "prompt_hash", "source",
]  # fmt: skip


def prompt_hash(prompt_version: str | None, system_prompt: str | None) -> str | None:
    """First 16 hex digits of SHA-256 of the prompt version and system prompt (module doc)."""
    if prompt_version is None and system_prompt is None:
        return None
    text = json.dumps({"prompt": prompt_version, "system_prompt": system_prompt}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _row(name: str, config: Mapping[str, Any], prompt: str | None, source: str) -> dict[str, Any]:
    system = config.get("system_prompt")
    return {
        "name": name,
        "provider": config.get("provider"),
        "model": config.get("model"),
        "snapshot": config.get("snapshot"),
        "temperature": config.get("temperature"),
        "max_tokens": config.get("max_tokens"),
        "seed": config.get("seed"),
        "system_prompt": system,
        "prompt_version": prompt,
        "prompt_hash": prompt_hash(prompt, system),
        "source": source,
    }


def _from_verifiers(verifiers: pd.DataFrame | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if verifiers is None or verifiers.empty or "extra" not in verifiers:
        return out
    for vid, kind, extra in zip(verifiers["verifier_id"], verifiers["kind"], verifiers["extra"],
                                strict=True):  # fmt: skip
        data: Any = extra
        if isinstance(extra, str):
            try:
                data = json.loads(extra)
            except ValueError:
                continue
        if str(kind) == "model" and isinstance(data, dict) and data.get("provider"):
            out[str(vid)] = data
    return out


def model_configurations(
    answerers: Iterable[str],
    checkers: Iterable[str],
    *,
    records: Iterable[Mapping[str, Any]] | None = None,
    verifiers: Iterable[pd.DataFrame | None] = (),
    models: Mapping[str, ModelConfig] | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """One row per analysed model (module doc) and notes for models without a configuration.

    ``answerers``: model ids of the analysed answers; ``checkers``: AI checkers whose verdicts
    were analysed; ``records``: answers/judgments log records; ``verifiers``: trace verifier
    tables; ``models``: a models TOML read by :func:`vcost.models.load_models`.
    """
    from vcost.answers import PROMPT_VERSION
    from vcost.judges import JUDGE_PROMPT_VERSION

    roles: dict[str, list[str]] = {}
    for name in sorted(set(map(str, answerers))):
        roles.setdefault(name, []).append("answers")
    for name in sorted(set(map(str, checkers))):
        roles.setdefault(name, []).append("checker")
    found: dict[str, dict[str, Any]] = {}
    for record in records or ():
        raw = record.get("model") or record.get("checker")
        config = record.get("config")
        if raw is None or not isinstance(config, Mapping) or str(raw) in found:
            continue
        name = str(raw)
        kind = "judgments log" if "checker" in record else "answers log"
        found[name] = _row(name, config, record.get("prompt"), kind)
    for table in verifiers:
        for name, config in _from_verifiers(table).items():
            if name not in found:
                found[name] = _row(name, config, None, "trace verifiers")
    for name, cfg in (models or {}).items():
        if name not in found:
            version = JUDGE_PROMPT_VERSION if roles.get(name) == ["checker"] else PROMPT_VERSION
            found[name] = _row(name, cfg.record(), version, "models TOML (this vcost's prompt)")
    rows, notes = [], []
    for name in sorted(roles):
        row = found.get(name) or {"name": name, "source": "not given"}
        rows.append({**row, "role": ", ".join(roles[name])})
    missing = [r["name"] for r in rows if r["source"] == "not given"]
    if missing:
        notes.append(
            "model configuration not given for "
            + ", ".join(missing[:8])
            + " (pass the models TOML, --models, or the answers/judgments log, --model-log)"
        )
    return pd.DataFrame(rows, columns=CONFIG_COLUMNS, dtype=object), notes
