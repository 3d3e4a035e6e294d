"""`vcost grade` on a local Dask cluster of two worker processes, against the local run.

The same answers (the demo answers, every bundled reference and a broken copy of some of
them) are graded through the CLI locally and on the cluster; the grades must be identical.
Then a worker process is killed (SIGKILL) while it runs a grading job: the run must still
return every grade, identical to the local run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _cluster_support import killing_a_worker

from vcost.tasks import CodeTask, load_bank

ROOT = Path(__file__).parents[2] / "src" / "vcost"
DEMO = ROOT / "examples" / "answers-demo.jsonl"


def answers_file(folder: Path) -> Path:
    """Demo answers + every bundled reference (correct) + broken copies (incorrect)."""
    rows = [json.loads(line) for line in DEMO.read_text().splitlines() if line.strip()]
    for task in load_bank(ROOT / "bank"):
        rows.append({"answer_id": f"ref-{task.id}", "task_id": task.id, "code": task.reference})
        if isinstance(task, CodeTask) and len(rows) % 3 == 0:
            broken = (
                f"{task.reference}\n\ndef {task.entry_point}(*args, **kwargs):\n    return None\n"
            )
            rows.append({"answer_id": f"bad-{task.id}", "task_id": task.id, "code": broken})
    path = folder / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def vcost_grade(answers: Path, *extra: str) -> dict[str, Any]:
    """`vcost grade bundled ANSWERS --json --no-cache ...` in its own process."""
    command = [sys.executable, "-c", "from vcost.cli import main; main()"]
    done = subprocess.run(
        [*command, "grade", "bundled", str(answers), "--json", "--no-cache", *extra],
        capture_output=True,
        text=True,
        timeout=500,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    body: dict[str, Any] = json.loads(done.stdout)
    return body


def comparable(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The grades without ``reruns``: whether a slow test was re-run at a larger limit
    depends on the machine's load at that moment, locally as on a cluster."""
    return [{k: v for k, v in g.items() if k != "reruns"} for g in body["grades"]]


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return answers_file(tmp_path_factory.mktemp("answers"))


@pytest.fixture(scope="module")
def local_grades(answers: Path) -> dict[str, Any]:
    return vcost_grade(answers, "--workers", "2")


def test_cluster_grades_equal_local_grades(answers: Path, local_grades: dict[str, Any]) -> None:
    """--executor dask without --address starts (and ends) a local cluster of 2 processes."""
    on_cluster = vcost_grade(answers, "--executor", "dask", "--workers", "2")
    assert on_cluster["isolation"] == local_grades["isolation"] == "bubblewrap"
    assert comparable(on_cluster) == comparable(local_grades)
    labels = {g["ground_truth"] for g in local_grades["grades"]}
    assert labels == {"correct", "incorrect"}  # the comparison covers both labels


def test_a_worker_killed_mid_run_loses_nothing(
    answers: Path, local_grades: dict[str, Any], cluster: Any
) -> None:
    """The CLI grades on an existing cluster (--address); a watcher SIGKILLs the worker
    process that is running a grading job; the scheduler re-runs that worker's jobs
    elsewhere and the grades are complete and identical to the local run."""
    with killing_a_worker(cluster, "_grade_job") as killed:
        on_cluster = vcost_grade(
            answers, "--executor", "dask", "--address", cluster.scheduler_address
        )
    assert killed, "no worker was killed while grading"
    assert comparable(on_cluster) == comparable(local_grades)
