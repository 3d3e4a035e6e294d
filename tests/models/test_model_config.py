"""ModelConfig and the models TOML file; retry timing rules (pure, no server)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from pydantic import ValidationError

from vcost.errors import InputError
from vcost.models import ModelConfig, RetryPolicy, load_models, request_hash
from vcost.models._retry import failure_from_status, parse_retry_after

GOOD = """\
[defaults]
max_tokens = 512
timeout_s = 30

[[models]]
name = "gpt"
provider = "openai"
model = "gpt-4o"
snapshot = "gpt-4o-2024-08-06"
family = "gpt-4o"
temperature = 0.0
seed = 1
input_price_per_mtok = 2.5
output_price_per_mtok = 10.0

[[models]]
name = "claude"
provider = "anthropic"
model = "claude-sonnet-4-5"
max_tokens = 2048
system_prompt = "You are careful."

[[models]]
name = "local"
provider = "openai"
model = "qwen2.5-coder:7b"
base_url = "http://127.0.0.1:11434/v1"
api_key_env = "OLLAMA_KEY"
concurrency = 1
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(text)
    return path


def test_load_models_reads_every_field_and_default(tmp_path: Path) -> None:
    models = load_models(_write(tmp_path, GOOD))
    assert list(models) == ["gpt", "claude", "local"]
    gpt, claude, local = models["gpt"], models["claude"], models["local"]
    assert gpt.model_id == "gpt-4o-2024-08-06"
    assert gpt.api_key_env == "OPENAI_API_KEY"
    assert claude.api_key_env == "ANTHROPIC_API_KEY"
    assert local.api_key_env == "OLLAMA_KEY"
    assert (gpt.max_tokens, claude.max_tokens) == (512, 2048)  # defaults, then the entry
    assert gpt.timeout_s == 30
    assert claude.temperature is None  # not sent unless asked for
    assert gpt.cost_usd(1_000_000, 100_000) == pytest.approx(2.5 + 1.0)
    assert claude.cost_usd(10, 10) is None
    assert local.concurrency == 1


def test_config_is_frozen() -> None:
    config = ModelConfig(name="m", provider="openai", model="x")
    with pytest.raises(ValidationError):
        config.model = "y"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("replace", "field", "line"),
    [
        ('provider = "openai"', 'provider = "gemini"', 7),
        ("seed = 1", "colour = 1", 12),
        ("temperature = 0.0", "temperature = -1", 11),
        ('model = "claude-sonnet-4-5"', 'model = "c"\ntemperature = 1.5', 16),  # the entry
    ],
)
def test_a_bad_field_names_file_line_and_field(
    tmp_path: Path, replace: str, field: str, line: int
) -> None:
    path = _write(tmp_path, GOOD.replace(replace, field, 1))  # line numbers count from 1
    with pytest.raises(InputError) as info:
        load_models(path)
    error = info.value
    assert error.source == str(path)
    assert error.line == line
    assert str(path) in str(error)


def test_missing_required_field(tmp_path: Path) -> None:
    path = _write(tmp_path, '[[models]]\nname = "a"\nprovider = "openai"\n')
    with pytest.raises(InputError) as info:
        load_models(path)
    assert info.value.field == "model"
    assert info.value.line == 1


def test_duplicate_names(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD.replace('name = "claude"', 'name = "gpt"'))
    with pytest.raises(InputError, match="used twice") as info:
        load_models(path)
    assert info.value.line == 17


def test_toml_syntax_error_has_a_line(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD.replace('family = "gpt-4o"', "family = "))
    with pytest.raises(InputError, match="not valid TOML") as info:
        load_models(path)
    assert info.value.line == 10


@pytest.mark.parametrize(
    "text", ["", "[defaults]\nmax_tokens = 3\n", 'title = "x"\n[[models]]\nname = "a"\n']
)
def test_files_without_models_or_with_stray_keys(tmp_path: Path, text: str) -> None:
    with pytest.raises(InputError):
        load_models(_write(tmp_path, text))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_models(tmp_path / "nope.toml")


def test_request_hash_covers_what_decides_the_reply() -> None:
    base = ModelConfig(name="m", provider="openai", model="x", temperature=0.0, seed=1)
    msgs = [{"role": "user", "content": "hi"}]
    h = request_hash(msgs, base)
    assert len(h) == 64
    assert h == request_hash(msgs, base.model_copy(update={"name": "alias", "base_url": "u"}))
    assert h == request_hash(msgs, base.model_copy(update={"stream": True, "timeout_s": 1}))
    for update in ({"temperature": 0.5}, {"seed": 2}, {"max_tokens": 9}, {"system_prompt": "s"}):
        assert h != request_hash(msgs, base.model_copy(update=update))
    assert h != request_hash(msgs, base, repeat=1)
    assert h != request_hash([{"role": "user", "content": "hi!"}], base)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after-ms": "1500", "Retry-After": "9"}, 1.5),
        ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # in the past
        ({"Retry-After": "soon"}, None),
        ({}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    assert parse_retry_after(headers) == seconds


def test_backoff_doubles_with_equal_jitter_and_caps() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0, rng=random.Random(0))
    for retry, full in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)]:
        for _ in range(20):
            assert full / 2 <= policy.delay(retry, None) <= full
    assert policy.delay(1, 5.0) == 5.0
    assert RetryPolicy(max_retry_after_s=10).delay(1, 3600.0) == 10.0


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (401, {"error": {"code": "invalid_api_key"}}, "auth"),
        (403, {"type": "error", "error": {"type": "permission_error"}}, "auth"),
        (404, {"type": "error", "error": {"type": "not_found_error"}}, "unknown_model"),
        (400, {"code": "model_not_found", "message": "no"}, "unknown_model"),  # vLLM-style
        (429, {"error": {"code": "rate_limit_exceeded"}}, "rate_limit"),
        (429, {"code": "insufficient_quota"}, "quota_exhausted"),
        (529, {"type": "error", "error": {"type": "overloaded_error"}}, "server"),
        (408, None, "server"),
        (422, "bad", "bad_request"),
    ],
)
def test_failure_classification(status: int, body: object, kind: str) -> None:
    failure = failure_from_status(status, body, {})
    assert failure.kind == kind
    assert failure.retryable == (kind in ("rate_limit", "server"))


def test_importing_vcost_models_does_not_import_the_sdks() -> None:
    """The SDKs take seconds to import; replay and config loading must not pay for them."""
    import subprocess
    import sys

    code = (
        "import sys, vcost.models; "
        "print(sorted(m for m in ('openai', 'anthropic', 'httpx2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
