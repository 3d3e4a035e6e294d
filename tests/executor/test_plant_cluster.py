"""`vcost plant` on a local Dask cluster of two worker processes, against the local run.

One code task (its mutants classified with differential testing of the equivalent ones, the
reference's search inputs run once on the submitting side and shipped to the workers) and
one data task: every candidate, with its level, reason, found tests, diff and source, must
be the same as when the mutants are classified on local threads.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _cluster_support import killing_a_worker

TASKS = ("--task", "m-overtime-pay", "--task", "d-school-pass-rate")


def vcost_plant(out: Path, *extra: str) -> dict[str, Any]:
    command = [sys.executable, "-c", "from vcost.cli import main; main()", "plant", *TASKS]
    done = subprocess.run(
        [*command, "--json", "--workers", "2", "--out", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=500,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    body: dict[str, Any] = json.loads(out.read_text())
    del body["seconds"]  # wall time differs from run to run
    return body


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return vcost_plant(tmp_path_factory.mktemp("local") / "local.json")


def test_cluster_classifications_equal_local_ones(tmp_path: Path, local: dict[str, Any]) -> None:
    on_cluster = vcost_plant(tmp_path / "dask.json", "--executor", "dask")
    assert on_cluster == local
    levels = {c["level"] for c in local["candidates"]}
    assert {"obvious", "subtle", "equivalent"} <= levels  # the search ran on equivalents
    assert {c["task_id"] for c in local["candidates"]} == {"m-overtime-pay", "d-school-pass-rate"}


def test_a_worker_killed_mid_plant_loses_nothing(
    tmp_path: Path, local: dict[str, Any], cluster: Any
) -> None:
    """A worker SIGKILLed while it classifies a mutant: the same candidates as locally."""
    with killing_a_worker(cluster, "_classify_job") as killed:
        address = cluster.scheduler_address
        on_cluster = vcost_plant(tmp_path / "dask.json", "--executor", "dask", "--address", address)
    assert killed, "no worker was killed while planting"
    assert on_cluster == local
