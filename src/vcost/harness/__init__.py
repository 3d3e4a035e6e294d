"""The web harness: timed do/check sessions for people (``vcost serve``).

::

    material = StudyMaterial.load("study/")          # spec, bank, selection, allocation
    with Store.open(url) as store:
        harness = Harness(store, material)
        prepare_store(harness)                       # assignments, tasks, answers, verifiers
        token = harness.invite("P01")                # an unguessable invitation link
        app = create_app(harness, admin_token=...)   # ASGI: run with uvicorn
        export_study(store, "export/")               # every table, CSV + Parquet + codebook

Modules: ``_study`` (the study folder, read-only material), ``_state`` (participants,
sessions, items, events and the episodes they become, in the store), ``_runs`` (Run and
grading in the sandbox), ``_app`` (the web app: routes, sweep; its pages in ``_pages``, JSON
endpoints in ``_api``, request plumbing in ``_web``, security headers in ``_middleware``),
``_admin`` (the researcher side: status, data-quality flags), ``_export`` (exports and the
codebook), ``_bots`` (simulated participants, ``vcost bots``), ``_demo`` (a demo study folder).
The design, the rules and what is left: docs/harness.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vcost.harness._admin import StudyStatus, study_status
    from vcost.harness._app import COOKIE, create_app, crowd_url, expire_due, invitation_url
    from vcost.harness._bots import BotReport, BotSettings, mint_bot_logins, run_bots
    from vcost.harness._demo import demo_answers, make_demo_study
    from vcost.harness._export import export_study
    from vcost.harness._serve import app_from_env, open_study, prepare_store
    from vcost.harness._state import ClientEvent, Harness, Item, Participant, Step, hash_token
    from vcost.harness._study import HarnessSettings, StudyMaterial

#: Loaded on first use: importing ``vcost.harness._export`` (the release does) must not pay for
#: the web application.
_LAZY = {
    "BotReport": "vcost.harness._bots",
    "BotSettings": "vcost.harness._bots",
    "COOKIE": "vcost.harness._app",
    "ClientEvent": "vcost.harness._state",
    "Harness": "vcost.harness._state",
    "HarnessSettings": "vcost.harness._study",
    "Item": "vcost.harness._state",
    "Participant": "vcost.harness._state",
    "Step": "vcost.harness._state",
    "StudyMaterial": "vcost.harness._study",
    "StudyStatus": "vcost.harness._admin",
    "app_from_env": "vcost.harness._serve",
    "create_app": "vcost.harness._app",
    "crowd_url": "vcost.harness._app",
    "demo_answers": "vcost.harness._demo",
    "expire_due": "vcost.harness._app",
    "export_study": "vcost.harness._export",
    "hash_token": "vcost.harness._state",
    "invitation_url": "vcost.harness._app",
    "make_demo_study": "vcost.harness._demo",
    "mint_bot_logins": "vcost.harness._bots",
    "open_study": "vcost.harness._serve",
    "prepare_store": "vcost.harness._serve",
    "run_bots": "vcost.harness._bots",
    "study_status": "vcost.harness._admin",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "COOKIE",
    "BotReport",
    "BotSettings",
    "ClientEvent",
    "Harness",
    "HarnessSettings",
    "Item",
    "Participant",
    "Step",
    "StudyMaterial",
    "StudyStatus",
    "app_from_env",
    "create_app",
    "crowd_url",
    "demo_answers",
    "expire_due",
    "export_study",
    "hash_token",
    "invitation_url",
    "make_demo_study",
    "mint_bot_logins",
    "open_study",
    "prepare_store",
    "run_bots",
    "study_status",
]
