"""`vcost tasks import-humaneval` on a local Dask cluster of two worker processes.

Three problems (a seeded sample) converted on local threads and on the cluster: the two bank
folders must be the same, file for file and byte for byte (tests, expected values recorded in
the sandbox, mutation-pass provenance, bank.toml, README).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def import_humaneval(out: Path, *extra: str) -> dict[str, bytes]:
    command = [sys.executable, "-c", "from vcost.cli import main; main()", "tasks"]
    done = subprocess.run(
        [*command, "import-humaneval", str(out), "--limit", "3", "--workers", "2", *extra],
        capture_output=True,
        text=True,
        timeout=500,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_cluster_import_equals_local_import(tmp_path: Path) -> None:
    local = import_humaneval(tmp_path / "local")
    on_cluster = import_humaneval(tmp_path / "dask", "--executor", "dask")
    assert sum(name.endswith("tests.json") for name in local) == 3
    assert on_cluster == local
