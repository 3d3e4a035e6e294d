"""The projected cost and the cost meter (vcost.models._cost), against hand-computed values."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from vcost.errors import InputError
from vcost.models import (
    Cassette,
    CassetteClient,
    Completion,
    CostLimitError,
    CostMeter,
    ModelConfig,
    Request,
    RoutingClient,
    Usage,
    check_projection,
    estimate_input_tokens,
    load_models,
    project_cost,
    recorded_in,
    request_hash,
)


def rerecord_inner() -> RoutingClient:
    return RoutingClient()  # never called: only its presence is needed for mode record


def _config(**extra: object) -> ModelConfig:
    values: dict[str, object] = {
        "name": "m", "provider": "openai", "model": "m-id", "max_tokens": 100,
        "system_prompt": "Be brief", "input_price_per_mtok": 2.0, "output_price_per_mtok": 8.0,
    }  # fmt: skip
    values.update(extra)
    return ModelConfig(**values)  # type: ignore[arg-type]


MESSAGES = [{"role": "user", "content": "abcd" * 10}]


def test_input_tokens_are_a_quarter_of_the_characters_plus_framing() -> None:
    """40 characters -> 10 tokens + 4 framing; "Be brief" (8 characters) -> 2 + 4: 20 tokens.
    A 41-character message rounds up to 11."""
    assert estimate_input_tokens(MESSAGES, _config()) == 20
    odd = [{"role": "user", "content": "a" * 41}]
    assert estimate_input_tokens(odd, _config(system_prompt=None)) == 15


def test_projection_by_hand() -> None:
    """3 calls of 20 input and 100 output tokens (max_tokens) at $2 / $8 per million:
    3 * (20 * 2 + 100 * 8) / 1e6 = 0.00252 USD. Declaring expected_output_tokens = 10:
    3 * (20 * 2 + 10 * 8) / 1e6 = 0.00036 USD."""
    config = _config()
    projection = project_cost([Request(MESSAGES, config, r) for r in range(3)])
    assert projection.calls == 3
    assert projection.models[0].input_tokens == 60
    assert projection.models[0].output_tokens == 300
    assert projection.cost_usd == pytest.approx(0.00252)
    declared = _config(expected_output_tokens=10)
    cheaper = project_cost([Request(MESSAGES, declared, r) for r in range(3)])
    assert cheaper.cost_usd == pytest.approx(0.00036)
    assert "$0.0004 for 3 call(s)" in cheaper.describe()


def test_rounds_project_the_worst_case_conversation() -> None:
    """Two rounds with 50 tokens of tool output: inputs 20 and 20 + 100 + 50 = 170, outputs
    2 * 100: (190 * 2 + 200 * 8) / 1e6 = 0.00198 USD."""
    projection = project_cost([Request(MESSAGES, _config())], rounds=2, extra_input_tokens=50)
    assert projection.calls == 2
    assert projection.cost_usd == pytest.approx(0.00198)


def test_an_unpriced_model_has_no_total_and_a_cap_refuses_it() -> None:
    free = _config(name="free", input_price_per_mtok=None)
    projection = project_cost([Request(MESSAGES, free), Request(MESSAGES, _config())])
    assert projection.unpriced == ["free"]
    assert projection.cost_usd is None
    assert "unpriced" in projection.describe()
    check_projection(projection, None)  # no cap: the run goes on, cost unknown
    with pytest.raises(CostLimitError, match="no prices for free"):
        check_projection(projection, 100.0)


def test_a_cap_below_the_projection_refuses() -> None:
    projection = project_cost([Request(MESSAGES, _config())])  # 0.00084 USD
    check_projection(projection, 0.00084)
    with pytest.raises(CostLimitError, match=r"projected cost \$0\.0008 .* passes --max-usd"):
        check_projection(projection, 0.0008)


def _completion(key: str, cost: float) -> Completion:
    return Completion("x", {}, key, Usage(1, 1), 1.0, cost, datetime.now(UTC), "stop", {})


def test_recorded_calls_are_free(tmp_path: Path) -> None:
    """Of two repeats, the one in the cassette replays for free: one call at 0.00084 USD."""
    config = _config()
    Cassette(tmp_path / "c.jsonl", mode="auto").add(
        _completion(request_hash(MESSAGES, config, 0), 0.1)
    )
    recorded = recorded_in(CassetteClient(None, Cassette(tmp_path / "c.jsonl", mode="replay")))
    projection = project_cost([Request(MESSAGES, config, r) for r in range(2)], recorded=recorded)
    assert (projection.calls, projection.replayed) == (1, 1)
    assert projection.cost_usd == pytest.approx(0.00084)
    # a cassette in record mode calls every request again: nothing is free
    again = recorded_in(CassetteClient(None, Cassette(tmp_path / "c.jsonl", mode="replay")))
    assert again(request_hash(MESSAGES, config, 0))
    rerecord = Cassette(tmp_path / "c.jsonl", mode="record")
    assert not recorded_in(CassetteClient(rerecord_inner(), rerecord))(
        request_hash(MESSAGES, config, 0)
    )


def test_meter_counts_paid_calls_only() -> None:
    meter = CostMeter(0.25)
    paid = _completion("k", 0.2)
    meter.add(replace(paid, from_cassette=True))
    assert meter.spent_usd == 0.0
    meter.add(paid)
    assert not meter.exhausted  # 0.2 is within 0.25
    meter.add(paid)
    assert meter.exhausted
    assert meter.calls == 2
    assert meter.describe() == "$0.4000 of $0.25"


def test_expected_output_tokens_is_checked_in_the_models_file(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text(
        '[[models]]\nname = "m"\nprovider = "openai"\nmodel = "x"\nexpected_output_tokens = 0\n'
    )
    with pytest.raises(InputError, match="expected_output_tokens") as caught:
        load_models(path)
    assert caught.value.line == 5
