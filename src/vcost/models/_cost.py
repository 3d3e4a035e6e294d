"""Cost control: a projected cost before any paid call, and a cap that stops a run cleanly.

**Projection** (:func:`project_cost`). For each request that will reach a model (those already
in the cassette replay for free and are counted apart), the input tokens are *estimated* from the
messages actually built — one token per 4 characters (rounded up) of each message and of the
system prompt, plus 4 tokens of chat framing per message: the rule of thumb OpenAI documents for
English text; code and other languages run denser, so treat it as a rough figure, not a quote —
and the output tokens are the model's declared ``expected_output_tokens``, or else its
``max_tokens`` (the most a call can cost, so the projection is an upper bound on output). Prices
come from the models file (``input_price_per_mtok`` / ``output_price_per_mtok``, USD per million
tokens). A model without both prices is *unpriced*: its calls are projected at an unknown cost
(``cost_usd`` None), and a cap (``max_usd``) refuses to start until the prices are declared (0 for
a free local server).

A conversation of up to ``rounds`` calls (a checker running test code) is projected at its worst
case: every round happens, and each later call sends the earlier input, the reply and up to
``extra_input_tokens`` of tool output again.

**Cap** (:class:`CostMeter`, :class:`MeteredClient`). The meter adds up ``cost_usd`` of every
call actually made in this run (replays from the cassette cost nothing). Once the total passes
``max_usd`` no new call starts: the client raises :class:`BudgetStopError` in place of the
call, which the stages count as *not started* and never write to their logs, so a rerun (with a
higher cap) resumes exactly there. Calls already in flight when the cap is passed finish and are
kept (they are paid for), so the spend can pass the cap by at most the calls in flight.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vcost.errors import VcostError
from vcost.models._cassette import CassetteClient, ShippedCassetteClient
from vcost.models._client import Completion, Messages, ModelClient, Request, request_hash
from vcost.models._config import ModelConfig
from vcost.models._errors import ModelError

__all__ = [
    "BudgetStopError",
    "CostLimitError",
    "CostMeter",
    "CostProjection",
    "MeteredClient",
    "ModelProjection",
    "check_projection",
    "estimate_input_tokens",
    "project_cost",
    "recorded_in",
]

#: characters per token in the estimate (OpenAI's rule of thumb for English text)
CHARS_PER_TOKEN = 4
#: tokens of chat framing counted per message
MESSAGE_OVERHEAD_TOKENS = 4


def estimate_input_tokens(messages: Messages, config: ModelConfig) -> int:
    """Estimated input tokens of one call: ceil(chars / 4) of each message and of the system
    prompt, plus 4 framing tokens per message (module docstring)."""
    texts = [m["content"] for m in messages]
    if config.system_prompt is not None:
        texts.append(config.system_prompt)
    return sum(math.ceil(len(t) / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS for t in texts)


@dataclass(frozen=True)
class ModelProjection:
    """One model's share of a projection: calls to make, calls the cassette replays, tokens
    and USD of the calls to make (``cost_usd`` None when the model is unpriced)."""

    name: str
    calls: int
    replayed: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    input_price_per_mtok: float | None
    output_price_per_mtok: float | None

    def to_dict(self) -> dict[str, object]:
        return dict(vars(self))


@dataclass(frozen=True)
class CostProjection:
    """The projected cost of a run, per model and in total (see the module docstring)."""

    models: tuple[ModelProjection, ...]
    #: the fraction of the listed prices charged (0.5 for provider batches)
    price_factor: float = 1.0

    @property
    def calls(self) -> int:
        return sum(m.calls for m in self.models)

    @property
    def replayed(self) -> int:
        return sum(m.replayed for m in self.models)

    @property
    def unpriced(self) -> list[str]:
        """Models with calls to make but no prices."""
        return [m.name for m in self.models if m.calls and m.cost_usd is None]

    @property
    def cost_usd(self) -> float | None:
        """Total USD of the calls to make; None when some model with calls is unpriced."""
        if self.unpriced:
            return None
        return sum(m.cost_usd or 0.0 for m in self.models)

    def describe(self) -> str:
        """One line for the terminal, e.g. ``projected cost: $0.0123 for 12 call(s) ...``."""
        total = "unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        parts = [
            f"{m.name} {m.calls} call(s) "
            f"~{m.input_tokens:,} in + {m.output_tokens:,} out tokens = "
            + ("unpriced" if m.cost_usd is None else f"${m.cost_usd:.4f}")
            for m in self.models
            if m.calls
        ]
        text = f"projected cost: {total} for {self.calls} call(s)"
        if self.replayed:
            text += f" ({self.replayed} more replayed from the cassette, free)"
        if self.price_factor != 1.0:
            text += f" at {self.price_factor:.0%} of the listed prices (provider batch)"
        if parts:
            text += ": " + "; ".join(parts)
        if self.unpriced:
            text += f" [no prices for {', '.join(self.unpriced)}: declare input_price_per_mtok "
            text += "and output_price_per_mtok]"
        return text

    def to_dict(self) -> dict[str, object]:
        return {
            "calls": self.calls,
            "replayed": self.replayed,
            "cost_usd": self.cost_usd,
            "unpriced": self.unpriced,
            "price_factor": self.price_factor,
            "models": [m.to_dict() for m in self.models],
        }


def recorded_in(client: ModelClient) -> Callable[[str], bool]:
    """Whether a request hash will replay for free from ``client``'s cassette (never, for a
    client without one or one that records every call anew)."""
    if isinstance(client, CassetteClient) and client.cassette.mode != "record":
        cassette = client.cassette
        return lambda key: key in cassette
    if isinstance(client, ShippedCassetteClient):
        return client.replays
    return lambda _key: False


def project_cost(
    requests: Sequence[Request],
    *,
    recorded: Callable[[str], bool] | None = None,
    rounds: int = 1,
    extra_input_tokens: int = 0,
    price_factor: float = 1.0,
) -> CostProjection:
    """The projected cost of ``requests`` (module docstring). ``recorded(request_hash)`` says
    which requests replay for free; ``rounds`` is the most calls one request can become;
    ``price_factor`` scales the listed prices (0.5: a provider batch)."""
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    totals: dict[str, list[int]] = {}
    configs: dict[str, ModelConfig] = {}
    for request in requests:
        config = request.config
        configs.setdefault(config.name, config)
        row = totals.setdefault(config.name, [0, 0, 0, 0])
        if recorded is not None and recorded(
            request_hash(request.messages, config, request.repeat)
        ):
            row[1] += 1
            continue
        output = config.expected_output_tokens or config.max_tokens
        first = estimate_input_tokens(request.messages, config)
        row[0] += rounds
        # round r re-sends the first input plus r earlier replies and tool outputs
        row[2] += sum(first + r * (output + extra_input_tokens) for r in range(rounds))
        row[3] += rounds * output
    models = []
    for name, (calls, replayed, tokens_in, tokens_out) in totals.items():
        config = configs[name]
        priced = (
            config.input_price_per_mtok is not None and config.output_price_per_mtok is not None
        )
        cost = (
            (
                tokens_in * (config.input_price_per_mtok or 0.0)
                + tokens_out * (config.output_price_per_mtok or 0.0)
            )
            / 1_000_000
            * price_factor
            if priced
            else None
        )
        models.append(
            ModelProjection(
                name,
                calls,
                replayed,
                tokens_in,
                tokens_out,
                cost,
                config.input_price_per_mtok,
                config.output_price_per_mtok,
            )
        )
    return CostProjection(tuple(models), price_factor)


class CostLimitError(VcostError):
    """A run refused before any call: its projection passes ``--max-usd``, or a model it would
    call has no prices, so no cap can be kept."""

    http_status = 402


def check_projection(projection: CostProjection, max_usd: float | None) -> None:
    """Refuse (:class:`CostLimitError`) a run whose projection passes ``max_usd``."""
    if max_usd is None:
        return
    if projection.unpriced:
        raise CostLimitError(
            f"--max-usd {max_usd:g} cannot be kept: no prices for {', '.join(projection.unpriced)}",
            hint="declare input_price_per_mtok and output_price_per_mtok for each model in the "
            "models file (0 for a free local server)",
        )
    cost = projection.cost_usd or 0.0
    if cost > max_usd:
        raise CostLimitError(
            f"the projected cost ${cost:.4f} of {projection.calls} call(s) passes "
            f"--max-usd {max_usd:g}; nothing was called",
            hint="raise --max-usd, run fewer models, tasks or repeats, or lower max_tokens "
            "(or declare expected_output_tokens) in the models file",
        )


class BudgetStopError(ModelError):
    """Raised in place of a call once this run's spend has passed ``--max-usd``: the call was
    not made (and is not logged; a rerun makes it)."""


class CostMeter:
    """This run's spend on calls actually made (thread-safe), against an optional cap.
    ``spent_usd``: the spend it starts from (a job on a cluster worker starts from the run's
    spend when the job was submitted, so it stops where the run would)."""

    def __init__(self, max_usd: float | None = None, *, spent_usd: float = 0.0) -> None:
        if max_usd is not None and max_usd < 0:
            raise ValueError("max_usd must not be negative")
        self.max_usd = max_usd
        self._lock = threading.Lock()
        self._spent = spent_usd
        self.calls = 0
        self.stopped = 0

    @property
    def spent_usd(self) -> float:
        with self._lock:
            return self._spent

    @property
    def exhausted(self) -> bool:
        """True once the spend has passed the cap: no new call starts."""
        with self._lock:
            return self.max_usd is not None and self._spent > self.max_usd

    def add(self, completion: Completion) -> None:
        """Count one finished call (a replay from the cassette costs nothing)."""
        if completion.from_cassette:
            return
        with self._lock:
            self.calls += 1
            self._spent += completion.cost_usd or 0.0

    def add_usd(self, amount: float) -> None:
        """Count a call paid outside a client (a batch result)."""
        with self._lock:
            self.calls += 1
            self._spent += amount

    def stop(self, config: ModelConfig) -> BudgetStopError:
        with self._lock:
            self.stopped += 1
            spent = self._spent
        return BudgetStopError(
            f"not called: this run has spent ${spent:.4f}, past --max-usd {self.max_usd:g}",
            model_name=config.name,
            provider=config.provider,
            model=config.model_id,
            hint="rerun with a higher --max-usd to resume",
        )

    def describe(self) -> str:
        """``$0.0123`` or ``$0.0123 of $1.00`` for the progress bar."""
        spent = f"${self.spent_usd:.4f}"
        return spent if self.max_usd is None else f"{spent} of ${self.max_usd:.2f}"


class MeteredClient:
    """A :class:`~vcost.models.ModelClient` that counts each call's cost on a
    :class:`CostMeter` and raises :class:`BudgetStopError` instead of calling once it is exhausted.
    Calls the inner client replays from its cassette are always made (they are free)."""

    def __init__(self, inner: ModelClient, meter: CostMeter) -> None:
        self.inner = inner
        self.meter = meter
        self._recorded = recorded_in(inner)

    def complete(self, messages: Messages, *, config: ModelConfig, repeat: int = 0) -> Completion:
        if self.meter.exhausted and not self._recorded(request_hash(messages, config, repeat)):
            raise self.meter.stop(config)
        completion = self.inner.complete(messages, config=config, repeat=repeat)
        self.meter.add(completion)
        return completion
