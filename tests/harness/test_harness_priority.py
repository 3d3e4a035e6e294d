"""Under a crowd's load the server keeps participants' requests ahead of the code it runs
(issue 13): Runs run at the lowest CPU priority, grading at the normal one in a pool of its
own, and the served process hides its start-up heap from the garbage collector's full passes
and checkpoints SQLite's log off the commit path. Checked through `vcost serve` itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from _harness_support import Client, first_item, invite


def test_a_run_is_niced_and_grading_is_not(
    demo_study: Path, store_url: str, start_server: Any
) -> None:
    """A Run's test script sees nice 19 (the lowest priority: it yields the CPU to page
    requests and event batches); the submission of the same code is graded."""
    server = start_server(demo_study, store_url)
    client = Client(server.base)
    page, _ = first_item(client, invite(demo_study, store_url))
    if "/task/submit" not in page.body:  # check first: answer it to reach the do item
        page = client.post(
            "/task/verdict",
            {"item_id": client.item_id(page.body), "verdict": "correct", "confidence": "75"},
        )
    assert "/task/submit" in page.body, page.body[:800]
    item = client.item_id(page.body)
    probe = "import os\nprint('priority', os.nice(0))\n"
    reply = client.post_json("/api/run", {"item_id": item, "code": "x = 1\n", "tests": probe})
    assert reply.status == 200, reply.body
    expected = min(19, os.nice(0) + 19)
    assert f"priority {expected}" in reply.json()["tests"]["stdout"]
    page = client.post("/task/submit", {"item_id": item, "code": "def f():\n    pass\n"})
    assert page.status == 200, page.body[:800]


def _served_process_state(study: Path, url: str) -> list[str]:
    """What `vcost serve`'s worker factory leaves behind in a fresh process."""
    code = (
        "import gc, os\n"
        "from vcost.harness import app_from_env\n"
        "app = app_from_env()\n"
        "print(gc.get_freeze_count(), app.state.ctx.harness.store.checkpointing)\n"
    )
    env = {**os.environ, "VCOST_HARNESS_STUDY": str(study), "VCOST_DATABASE_URL": url}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_served_app_freezes_its_start_up_heap_and_checkpoints_in_the_background(
    demo_study: Path, tmp_path: Path
) -> None:
    frozen, checkpointing = _served_process_state(demo_study, f"sqlite:///{tmp_path / 'v.db'}")
    assert int(frozen) > 10_000  # the modules, the study and the app, out of the GC's walk
    assert checkpointing == "True"
