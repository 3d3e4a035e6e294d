"""Model configurations and the models TOML file.

A models file lists the models a study may call, each under its local alias::

    [defaults]                     # optional: applied under every entry
    max_tokens = 1024
    temperature = 0.0              # leave out to send none (newer Claude models reject it)

    [[models]]
    name = "gpt"                   # local alias, unique in the file
    provider = "openai"            # "openai" (any OpenAI-compatible server) | "anthropic"
    model = "gpt-4o"
    snapshot = "gpt-4o-2024-08-06" # pinned id; sent instead of `model` when set
    input_price_per_mtok = 2.5     # USD per 1M tokens; leave out and cost_usd is None
    output_price_per_mtok = 10.0

    [[models]]
    name = "local"
    provider = "openai"
    model = "qwen2.5-coder:7b"
    base_url = "http://127.0.0.1:11434/v1"   # vLLM, Ollama, llama.cpp, a LiteLLM proxy ...

``temperature`` is only sent when set: Anthropic's SDK no longer has the parameter and models
after Claude Opus 4.6 answer 400 to it, and OpenAI reasoning models refuse non-default values; so
vcost sends it (to Anthropic through ``extra_body``) only when the file asks, and records it.

The API key is read at call time from the environment variable named by ``api_key_env``
(default ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``), never from the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from vcost.errors import InputError

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "OUTPUT_FIELDS",
    "ModelConfig",
    "Provider",
    "config_fingerprint",
    "load_models",
]

Provider = Literal["openai", "anthropic"]

DEFAULT_API_KEY_ENV: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}


#: The configuration fields a model's output depends on: resumable records are keyed by them,
#: not by the local alias (``name``), so a changed id, snapshot or temperature is a new run.
OUTPUT_FIELDS = (
    "provider",
    "model",
    "snapshot",
    "temperature",
    "max_tokens",
    "system_prompt",
    "seed",
)


def config_fingerprint(record: Mapping[str, Any]) -> str:
    """12 hex digits of the SHA-256 of a configuration record's :data:`OUTPUT_FIELDS` (works on
    the ``config`` a log record stores as well as on :meth:`ModelConfig.record`)."""
    fields = {name: record.get(name) for name in OUTPUT_FIELDS}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:12]


class ModelConfig(BaseModel):
    """One model as vcost calls it: where, which id, with which sampling settings and limits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, description="Local alias, unique in a models file.")
    provider: Provider
    model: str = Field(min_length=1, description="The provider's model id.")
    snapshot: str | None = Field(None, description="Pinned model id; sent instead of `model`.")
    family: str | None = None
    base_url: str | None = Field(None, description="Any OpenAI-compatible server for 'openai'.")
    api_key_env: str = Field("", description="Environment variable holding the API key.")
    temperature: float | None = Field(
        None, ge=0.0, le=2.0, description="None: not sent (the model's default)."
    )
    max_tokens: int = Field(1024, gt=0)
    token_limit_param: Literal["max_tokens", "max_completion_tokens"] = Field(
        "max_tokens",
        description="OpenAI only: reasoning models want max_completion_tokens.",
    )
    system_prompt: str | None = None
    seed: int | None = Field(None, description="Sent to OpenAI-compatible servers; recorded.")
    timeout_s: float = Field(60.0, gt=0.0)
    max_retries: int = Field(5, ge=0, le=100)
    concurrency: int = Field(4, ge=1, le=1024)
    stream: bool = False
    input_price_per_mtok: float | None = Field(None, ge=0.0)
    output_price_per_mtok: float | None = Field(None, ge=0.0)
    expected_output_tokens: int | None = Field(
        None, gt=0, description="Output tokens per call in the projected cost (default max_tokens)."
    )

    @model_validator(mode="before")
    @classmethod
    def _default_key_env(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("api_key_env"):
            provider = data.get("provider")
            if isinstance(provider, str) and provider in DEFAULT_API_KEY_ENV:
                return {**data, "api_key_env": DEFAULT_API_KEY_ENV[provider]}
        return data

    @model_validator(mode="after")
    def _provider_limits(self) -> ModelConfig:
        if self.provider == "anthropic" and self.temperature is not None and self.temperature > 1:
            raise ValueError("anthropic models take a temperature between 0 and 1")
        return self

    @property
    def model_id(self) -> str:
        """The id sent to the provider: the pinned snapshot when there is one."""
        return self.snapshot or self.model

    def record(self) -> dict[str, Any]:
        """The configuration as a Completion records it (no credentials, no limits)."""
        return {
            "name": self.name,
            "provider": self.provider,
            "model": self.model,
            "snapshot": self.snapshot,
            "family": self.family,
            "base_url": self.base_url,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "system_prompt": self.system_prompt,
            "seed": self.seed,
            "stream": self.stream,
            "input_price_per_mtok": self.input_price_per_mtok,
            "output_price_per_mtok": self.output_price_per_mtok,
        }

    @property
    def key_missing(self) -> bool:
        """True when a call would fail for want of an API key: its environment variable is
        unset and no ``base_url`` (a local server takes a placeholder key) is given."""
        return self.base_url is None and not os.environ.get(self.api_key_env)

    @property
    def fingerprint(self) -> str:
        """What the model's output depends on, hashed (:func:`config_fingerprint`)."""
        return config_fingerprint(self.record())

    def cost_usd(self, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """Cost of one call in USD, or None when unpriced or the usage is unknown."""
        if (
            self.input_price_per_mtok is None
            or self.output_price_per_mtok is None
            or input_tokens is None
            or output_tokens is None
        ):
            return None
        return (
            input_tokens * self.input_price_per_mtok + output_tokens * self.output_price_per_mtok
        ) / 1_000_000


def _entry_lines(text: str) -> list[int]:
    """1-based line numbers of each ``[[models]]`` header, in order."""
    return [
        i
        for i, line in enumerate(text.splitlines(), start=1)
        if re.match(r"\s*\[\[\s*models\s*\]\]", line)
    ]


def _field_line(text: str, start: int | None, field: str | None) -> int | None:
    """Best-effort line of ``field = ...`` in the entry starting at ``start``."""
    if start is None:
        return None
    if field is None:
        return start
    lines = text.splitlines()
    for i in range(start, len(lines)):
        line = lines[i]
        if re.match(r"\s*\[", line):
            break
        if re.match(rf"\s*{re.escape(field)}\s*=", line):
            return i + 1
    return start


def load_models(path: str | Path) -> dict[str, ModelConfig]:
    """Read a models TOML file into ``{alias: ModelConfig}``, in file order.

    Raises :class:`vcost.errors.InputError` naming the file, the line (best effort) and the
    field of the first problem.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark read past
    except OSError as exc:
        raise InputError(
            f"cannot read the models file: {exc.strerror or exc}",
            source=path,
            hint="check the path",
        ) from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        raise InputError(
            f"not valid TOML: {exc}",
            source=path,
            line=int(match.group(1)) if match else None,
            hint="fix the TOML syntax",
        ) from exc
    unknown = sorted(set(data) - {"models", "defaults"})
    if unknown:
        raise InputError(
            f"unknown top-level key {unknown[0]!r}",
            source=path,
            field=unknown[0],
            hint="a models file has [defaults] and [[models]] entries only",
        )
    defaults = data.get("defaults", {})
    entries = data.get("models")
    if not isinstance(defaults, dict):
        raise InputError("[defaults] must be a table", source=path, field="defaults")
    if not isinstance(entries, list) or not entries:
        raise InputError(
            "no [[models]] entries",
            source=path,
            field="models",
            hint="add at least one [[models]] table with name, provider and model",
        )
    heads = _entry_lines(text)
    models: dict[str, ModelConfig] = {}
    for index, entry in enumerate(entries):
        start = heads[index] if index < len(heads) else None
        try:
            config = ModelConfig.model_validate({**defaults, **entry})
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or None
            raise InputError(
                f"models[{index}]: {first['msg']}",
                source=path,
                line=_field_line(text, start, field),
                field=field,
                hint="see docs/models.md for the fields a model entry takes",
            ) from exc
        if config.name in models:
            raise InputError(
                f"models[{index}]: the name {config.name!r} is used twice",
                source=path,
                line=_field_line(text, start, "name"),
                field="name",
                hint="give each model a unique local alias",
            )
        models[config.name] = config
    return models
