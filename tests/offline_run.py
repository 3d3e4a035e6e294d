"""Fixtures for offline runs of the model stages: synthetic models behind real local servers.

Two answering models (families ``fam-a`` and ``fam-b``) and two checkers (``fam-a`` and
``fam-c``) speak the OpenAI and Anthropic wire formats over loopback; :class:`SyntheticModel`
plays each one (vcost.rehearsal). Loaded as a pytest plugin from tests/conftest.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from vcost.models import ModelConfig
from vcost.models.testing import API_KEY, KEY_ENV, ProviderServer
from vcost.rehearsal import SyntheticModel
from vcost.sandbox import Sandbox
from vcost.tasks import BUNDLED_BANK, Task, load_bank

TASK_IDS = ("e-electricity-bill", "bottle-deposit-refund", "d-library-late-dvds")


@dataclass
class OfflineModels:
    """Servers, their synthetic models, and the configs that point at them."""

    openai: ProviderServer
    anthropic: ProviderServer
    strong: SyntheticModel
    weak: SyntheticModel
    answerers: dict[str, ModelConfig]
    checkers: dict[str, ModelConfig]

    def stop(self) -> None:
        self.openai.stop()
        self.anthropic.stop()


def config(server: ProviderServer, name: str, family: str, **extra: object) -> ModelConfig:
    values: dict[str, object] = {
        "name": name,
        "provider": server.provider,
        "model": f"{name}-id",
        "family": family,
        "base_url": server.base_url,
        "api_key_env": KEY_ENV,
        "max_tokens": 2000,
        "timeout_s": 10.0,
        "max_retries": 2,
        "input_price_per_mtok": 1.0,
        "output_price_per_mtok": 4.0,
    }
    values.update(extra)
    return ModelConfig(**values)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def bank() -> dict[str, Task]:
    return {t.id: t for t in load_bank(BUNDLED_BANK)}


@pytest.fixture(scope="session")
def few_tasks(bank: dict[str, Task]) -> list[Task]:
    return [bank[i] for i in TASK_IDS]


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    return Sandbox("auto")


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, few_tasks: list[Task]) -> Iterator[OfflineModels]:
    """Fresh servers per test: the openai one plays the strong model, anthropic the weak one."""
    monkeypatch.setenv(KEY_ENV, API_KEY)
    strong = SyntheticModel("strong", few_tasks, p_wrong=0.2, p_miss=0.3)
    weak = SyntheticModel("weak", few_tasks, p_wrong=0.6, p_miss=0.5)
    oa = ProviderServer("openai", strong).start()
    an = ProviderServer("anthropic", weak).start()
    models = OfflineModels(
        oa,
        an,
        strong,
        weak,
        answerers={"strong": config(oa, "strong", "fam-a"), "weak": config(an, "weak", "fam-b")},
        checkers={
            "checker-a": config(oa, "checker-a", "fam-a"),
            "checker-c": config(an, "checker-c", "fam-c"),
        },
    )
    yield models
    models.stop()
