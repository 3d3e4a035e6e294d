"""A client that sends each call to the adapter for its config's provider."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from vcost.models._anthropic import AnthropicClient
from vcost.models._client import Completion, Messages, Request, complete_many
from vcost.models._config import ModelConfig
from vcost.models._errors import ModelError
from vcost.models._openai import OpenAIClient
from vcost.models._retry import RetryPolicy

if TYPE_CHECKING:
    import httpx2

__all__ = ["RoutingClient"]


class RoutingClient:
    """:class:`~vcost.models.ModelClient` for any provider: OpenAI-compatible or Anthropic."""

    def __init__(
        self, *, retry: RetryPolicy | None = None, http_client: httpx2.Client | None = None
    ) -> None:
        self.openai = OpenAIClient(retry=retry, http_client=http_client)
        self.anthropic = AnthropicClient(retry=retry, http_client=http_client)

    def complete(self, messages: Messages, *, config: ModelConfig, repeat: int = 0) -> Completion:
        adapter = self.anthropic if config.provider == "anthropic" else self.openai
        return adapter.complete(messages, config=config, repeat=repeat)

    def complete_hashed(
        self, checked: list[dict[str, str]], key: str, config: ModelConfig, repeat: int
    ) -> Completion:
        """See :meth:`vcost.models.OpenAIClient.complete_hashed`."""
        adapter = self.anthropic if config.provider == "anthropic" else self.openai
        return adapter.complete_hashed(checked, key, config, repeat)

    def complete_many(
        self, requests: Sequence[Request], *, concurrency: int | None = None
    ) -> list[Completion | ModelError]:
        """See :func:`vcost.models.complete_many`."""
        return complete_many(self, requests, concurrency=concurrency)

    def close(self) -> None:
        self.openai.close()
        self.anthropic.close()
