"""Opening a study for serving: the store prepared, invitations issued, the app for uvicorn."""

from __future__ import annotations

import gc
import os
import resource
import secrets
from pathlib import Path

from starlette.applications import Starlette

from vcost.allocation import write_assignments
from vcost.harness._app import create_app
from vcost.harness._state import Harness
from vcost.harness._study import StudyMaterial
from vcost.store import Store

__all__ = [
    "ADMIN_ENV",
    "ADMIN_FILE",
    "BASE_URL_ENV",
    "STUDY_ENV",
    "admin_token",
    "app_from_env",
    "open_study",
    "prepare_store",
    "raise_open_files_limit",
]

STUDY_ENV = "VCOST_HARNESS_STUDY"
"""The study folder a worker started by uvicorn (``--workers``) serves."""

BASE_URL_ENV = "VCOST_BASE_URL"
"""The public address `vcost serve --base-url` passes to its workers (https: Secure cookies)."""

ADMIN_ENV = "VCOST_ADMIN_TOKEN"
ADMIN_FILE = "admin-token"


def admin_token(folder: Path, material: StudyMaterial, *, create: bool = False) -> str | None:
    """The researcher side's token: $VCOST_ADMIN_TOKEN, else ``admin_token`` in harness.toml,
    else STUDY_DIR/admin-token (written, mode 0600, with a random token when ``create``)."""
    from_env = os.environ.get(ADMIN_ENV, "").strip()
    if from_env:
        return from_env
    if material.settings.admin_token:
        return material.settings.admin_token
    path = folder / ADMIN_FILE
    if path.is_file():
        return path.read_text(encoding="utf-8").strip() or None
    if not create:
        return None
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token


def default_url(folder: Path) -> str:
    """The store a study folder uses: $VCOST_DATABASE_URL, else STUDY_DIR/vcost.db."""
    return os.environ.get("VCOST_DATABASE_URL") or f"sqlite:///{folder.resolve() / 'vcost.db'}"


def prepare_store(harness: Harness) -> None:
    """Write what the episodes will refer to: assignments, tasks, answers, verifiers (once)."""
    write_assignments(
        harness.store, harness.material.allocation, spec_hash=harness.material.spec_hash
    )
    if harness.material.spec is not None:
        spec = harness.material.spec
        harness.store.add_spec(spec.spec_hash, spec.canonical_json())


def open_study(folder: str | Path, url: str | None = None) -> Harness:
    """Load a study folder, open (and prepare) its store; the caller closes ``harness.store``."""
    root = Path(folder)
    material = StudyMaterial.load(root)
    store = Store.open(url or default_url(root))
    try:
        harness = Harness(store, material)
        prepare_store(harness)
        harness.secret()
    except BaseException:
        store.close()
        raise
    return harness


def raise_open_files_limit(ceiling: int = 1 << 20) -> int:
    """Raise this process's soft limit on open descriptors to its hard limit (capped at
    ``ceiling`` when the hard limit is unlimited) and return it: each participant holds one or
    two connections, and the common soft default of 1,024 would refuse the 1,000th person."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = ceiling if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            return soft
        return target
    return soft


def app_from_env() -> Starlette:
    """The app for a uvicorn worker: the study in $VCOST_HARNESS_STUDY, the store in
    $VCOST_DATABASE_URL (or the study's vcost.db)."""
    raise_open_files_limit()
    folder = Path(os.environ[STUDY_ENV])
    harness = open_study(folder, default_url(folder))
    app = create_app(
        harness,
        admin_token=admin_token(folder, harness.material),
        base_url=os.environ.get(BASE_URL_ENV),
        runs_in_process=True,
    )
    harness.store.checkpoint_in_background()
    settle_heap()
    return app


def settle_heap() -> None:
    """Take what a server process holds once it is set up (modules, the study, templates)
    out of the cyclic garbage collector's sight (:func:`gc.freeze`).

    Under a crowd's load the collector's full pass comes every few seconds, and it walks
    every object the process holds with the whole process stopped: 65-100 ms at 1,000
    participants, which was the whole event-batch p99 (issue 13). Frozen objects are
    never walked (nor freed, which these never would be anyway): the pass takes 7-8 ms."""
    gc.collect()
    gc.freeze()
