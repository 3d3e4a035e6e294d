"""Fixtures for the sandbox tests: real bubblewrap sandboxes, a host canary, leftover checks.

Bubblewrap tests must fail, not skip, in CI (``CI=true``): a CI machine without bubblewrap
would otherwise pass while grading nothing safely. Elsewhere they skip with the reason.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _sandbox_support import Canary, require_bubblewrap

from vcost.sandbox import Isolation, Limits, Sandbox


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    """A bubblewrap sandbox with the default limits."""
    require_bubblewrap()
    return Sandbox(Isolation.BUBBLEWRAP)


@pytest.fixture(scope="session")
def tight() -> Sandbox:
    """A bubblewrap sandbox with a 1 s call limit, so attacks that hang end quickly."""
    require_bubblewrap()
    return Sandbox(Isolation.BUBBLEWRAP, limits=Limits(call_seconds=1.0, wall_seconds=30.0))


@pytest.fixture
def warm() -> Iterator[Sandbox]:
    """A warm bubblewrap sandbox of the test's own, already started (one caller: one idle
    sandbox between answers, reused for the next answer when it was left clean)."""
    require_bubblewrap()
    box = Sandbox(Isolation.BUBBLEWRAP, limits=Limits(call_seconds=2.0, wall_seconds=30.0))
    box.call("def ready():\n    return 1\n", "ready", [[]])
    yield box
    box.close()


@pytest.fixture
def canary() -> Iterator[Canary]:
    """A host file any uid could read, with an old access time; afterwards it must be unread.

    Reading a file whose atime is over a day old updates the atime even under ``relatime``;
    the fixture checks that this holds here (a control file) before relying on it.
    """
    folder = Path(f"/tmp/vcost-canary-{secrets.token_hex(6)}")
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    secret = f"CANARY-{secrets.token_hex(16)}"
    path = folder / "secret.txt"
    path.write_text(secret)
    os.chmod(path, 0o644)
    old = time.time() - 3 * 86400
    control = folder / "control.txt"
    control.write_text("control")
    for item in (path, control):
        os.utime(item, (old, old))
    control.read_text()
    sensitive = os.stat(control).st_atime > old + 1
    atime = os.stat(path).st_atime
    try:
        yield Canary(path, secret, atime, sensitive)
        if sensitive:  # before reading it ourselves
            assert os.stat(path).st_atime == atime, "the canary file was read"
        assert path.read_text() == secret, "the canary file was changed"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
