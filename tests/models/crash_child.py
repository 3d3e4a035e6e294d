"""Run by test_cassette.py in a child process: records prompts q0, q1, ... into a cassette until
the parent kills it with SIGKILL mid-call. Arguments: provider base_url cassette_path."""

from __future__ import annotations

import sys

from vcost.models import Cassette, CassetteClient, ModelConfig, RoutingClient


def main() -> None:
    provider, base_url, path = sys.argv[1:4]
    config = ModelConfig(
        name="crash",
        provider=provider,
        model="test-model",
        base_url=base_url,
        api_key_env="VCOST_TEST_MODEL_KEY",
        max_retries=0,
    )
    client = CassetteClient(RoutingClient(), Cassette(path, mode="auto"))
    for i in range(100):
        client.complete([{"role": "user", "content": f"q{i}"}], config=config)
        print(f"recorded q{i}", flush=True)


if __name__ == "__main__":
    main()
