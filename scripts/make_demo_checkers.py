"""Record the AI-checker example that `vcost demo` replays (src/vcost/examples/ai-checkers/).

Four synthetic models (vcost.rehearsal.SyntheticModel), each behind its own local server
speaking the OpenAI or Anthropic wire format, answer twelve bundled study tasks twice each; the
answers are graded in the sandbox, selected (core design, seed 7), and judged three times by two
checkers, in the standard configuration and paraphrased. Every call goes through a cassette.
Writes models.toml, selection.json and cassette.jsonl. Nothing here is a real model: the
folder's README says so. Rerun after changing a prompt, the bank's task texts or the planting
operators:

    python scripts/make_demo_checkers.py [FOLDER]   # FOLDER defaults to the example's
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from vcost.answers import (
    AnswerLog,
    generate_answers,
    render_answer,
    select_answers,
    write_selection,
)
from vcost.judges import JudgmentLog, judge, perturb
from vcost.models import Cassette, CassetteClient, ModelConfig, RoutingClient
from vcost.models.testing import API_KEY, KEY_ENV, ProviderServer
from vcost.rehearsal import SyntheticModel
from vcost.sandbox import Sandbox
from vcost.tasks import BUNDLED_BANK, load_bank

FOLDER = Path(__file__).resolve().parent.parent / "src" / "vcost" / "examples" / "ai-checkers"
# 12 study tasks, 4 per difficulty label (code and data): enough for a 4-person core panel in
# `vcost demo` to do and check them in matched pairs.
TASKS = (
    "e-electricity-bill", "bottle-deposit-refund", "d-library-late-dvds", "e-gym-peak-hour",
    "m-overtime-pay", "m-parcel-price", "d-call-centre-handle-time", "m-home-battery",
    "h-course-grade", "h-parking-charges", "d-weather-growing-degree-days", "h-loyalty-tiers",
)  # fmt: skip
SEED = 7
N, K = 2, 3
PLACEHOLDER = {"openai": "http://127.0.0.1:9/v1", "anthropic": "http://127.0.0.1:9"}

MODELS = [
    # name, provider, family, role, p_wrong, p_miss
    ("demo-strong", "openai", "alpha", "answerer", 0.15, 0.0),
    ("demo-weak", "anthropic", "beta", "answerer", 0.6, 0.0),
    ("demo-checker-1", "openai", "gamma", "checker", 0.0, 0.25),
    ("demo-checker-2", "anthropic", "alpha", "checker", 0.0, 0.45),
]


def _toml(configs: list[ModelConfig]) -> str:
    lines = [
        "# Synthetic models for `vcost demo`: their replies come from the recorded cassette.",
        "# base_url points nowhere on purpose; replay never calls a server.",
        "",
    ]
    for c in configs:
        lines += [
            "[[models]]",
            f'name = "{c.name}"',
            f'provider = "{c.provider}"',
            f'model = "{c.model}"',
            f'family = "{c.family}"',
            f'base_url = "{PLACEHOLDER[c.provider]}"',
            f"max_tokens = {c.max_tokens}",
            "temperature = 0.7",
            f"input_price_per_mtok = {c.input_price_per_mtok}",
            f"output_price_per_mtok = {c.output_price_per_mtok}",
            "",
        ]
    return "\n".join(lines)


def main(folder: Path = FOLDER) -> None:
    os.environ[KEY_ENV] = API_KEY
    bank = {t.id: t for t in load_bank(BUNDLED_BANK)}
    tasks = [bank[i] for i in TASKS]
    servers, configs, synthetic = [], {}, []
    for name, provider, family, role, p_wrong, p_miss in MODELS:
        model = SyntheticModel(name, tasks, p_wrong=p_wrong, p_miss=p_miss)
        server = ProviderServer(provider, model).start()  # type: ignore[arg-type]
        servers.append(server)
        synthetic.append(model)
        configs[name] = (
            role,
            ModelConfig(
                name=name,
                provider=provider,  # type: ignore[arg-type]
                model=f"{name}-v1",
                family=family,
                base_url=server.base_url,
                api_key_env=KEY_ENV,
                max_tokens=1500,
                temperature=0.7,
                input_price_per_mtok=0.5,
                output_price_per_mtok=1.5,
            ),
        )
    answerers = {n: c for n, (role, c) in configs.items() if role == "answerer"}
    checkers = {n: c for n, (role, c) in configs.items() if role == "checker"}
    folder.mkdir(parents=True, exist_ok=True)
    cassette_path = folder / "cassette.jsonl"
    cassette_path.unlink(missing_ok=True)
    client = CassetteClient(RoutingClient(), Cassette(cassette_path, mode="record"))
    sandbox = Sandbox("auto")
    try:
        with tempfile.TemporaryDirectory() as work:
            log = AnswerLog(Path(work) / "answers.jsonl")
            generate_answers(tasks, answerers, client=client, log=log, sandbox=sandbox, n=N)
            selection = select_answers(log.answers(), tasks, sandbox=sandbox, seed=SEED)
            shown = [
                (render_answer(perturb(a.code, p), number=a.reported), a.ground_truth)
                for a in selection.answers
                for p in ("standard", "paraphrase")
            ]
            for model in synthetic:
                model.know(shown)
            judgments = JudgmentLog(Path(work) / "judgments.jsonl")
            for perturbation in ("standard", "paraphrase"):
                judge(
                    selection,
                    bank,
                    checkers,
                    client=client,
                    log=judgments,
                    k=K,
                    perturbation=perturbation,  # type: ignore[arg-type]
                    concurrency=1,  # one order of requests: the synthetic draws are reproducible
                )
    finally:
        for server in servers:
            server.stop()
    write_selection(selection, folder / "selection.json")
    (folder / "models.toml").write_text(_toml([c for _, c in configs.values()]), encoding="utf-8")
    print(f"wrote {folder}: {len(selection.answers)} selected answers, cassette of "
          f"{len(Cassette(cassette_path, mode='replay'))} calls")  # fmt: skip


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else FOLDER)
