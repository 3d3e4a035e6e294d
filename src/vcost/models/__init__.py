"""Model clients: call OpenAI-compatible and Anthropic models, record and replay the calls.

::

    models = vcost.models.load_models("models.toml")
    client = vcost.models.CassetteClient(
        vcost.models.RoutingClient(), vcost.models.Cassette("run.cassette.jsonl", mode="auto")
    )
    completion = client.complete([{"role": "user", "content": "2+2?"}], config=models["gpt"])
    completion.text, completion.usage, completion.cost_usd, completion.request_hash

See docs/models.md.
"""

from __future__ import annotations

from vcost.models._anthropic import AnthropicClient
from vcost.models._batch import BATCH_PRICE_FACTOR, BatchLog, BatchRequestError, BatchRunner
from vcost.models._cassette import (
    Cassette,
    CassetteClient,
    CassetteMode,
    ShippedCassette,
    ShippedCassetteClient,
)
from vcost.models._client import (
    Completion,
    Messages,
    ModelClient,
    Request,
    Usage,
    canonical_request,
    complete_many,
    request_hash,
)
from vcost.models._config import (
    DEFAULT_API_KEY_ENV,
    OUTPUT_FIELDS,
    ModelConfig,
    Provider,
    config_fingerprint,
    load_models,
)
from vcost.models._cost import (
    BudgetStopError,
    CostLimitError,
    CostMeter,
    CostProjection,
    MeteredClient,
    ModelProjection,
    check_projection,
    estimate_input_tokens,
    project_cost,
    recorded_in,
)
from vcost.models._errors import (
    CassetteMissError,
    ModelAuthError,
    ModelError,
    ModelQuotaError,
    ModelRequestError,
    ModelResponseError,
    ModelTimeoutError,
    ModelUnavailableError,
    UnknownModelError,
)
from vcost.models._openai import OpenAIClient
from vcost.models._retry import RetryPolicy
from vcost.models._routing import RoutingClient

__all__ = [
    "BATCH_PRICE_FACTOR",
    "DEFAULT_API_KEY_ENV",
    "OUTPUT_FIELDS",
    "AnthropicClient",
    "BatchLog",
    "BatchRequestError",
    "BatchRunner",
    "BudgetStopError",
    "Cassette",
    "CassetteClient",
    "CassetteMissError",
    "CassetteMode",
    "Completion",
    "CostLimitError",
    "CostMeter",
    "CostProjection",
    "Messages",
    "MeteredClient",
    "ModelAuthError",
    "ModelClient",
    "ModelConfig",
    "ModelError",
    "ModelProjection",
    "ModelQuotaError",
    "ModelRequestError",
    "ModelResponseError",
    "ModelTimeoutError",
    "ModelUnavailableError",
    "OpenAIClient",
    "Provider",
    "Request",
    "RetryPolicy",
    "RoutingClient",
    "ShippedCassette",
    "ShippedCassetteClient",
    "UnknownModelError",
    "Usage",
    "canonical_request",
    "check_projection",
    "complete_many",
    "config_fingerprint",
    "estimate_input_tokens",
    "load_models",
    "project_cost",
    "recorded_in",
    "request_hash",
]
