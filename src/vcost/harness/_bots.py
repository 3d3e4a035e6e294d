"""Simulated participants (``vcost bots``): the whole study over HTTP, before launch.

::

    logins = mint_bot_logins(harness, 3)                  # walkthrough logins (mode = test)
    reports = run_bots(base_url, logins, harness.material, BotSettings(speed=300))
    lost = events_lost(harness.store, reports)            # acknowledged but not stored: 0

Each bot is a thread with its own cookie jar that walks the pages a person meets (consent,
screening, practice, every session's do and check items, the questionnaires, realism ratings,
the debrief), reading each page's ``data-page`` and CSRF token like a browser would. On an item
it sends activity batches (content-free counts, like static/harness.js), presses Run, then
submits or gives a verdict.

- **Logins are walkthrough (test) logins**, so bot data is labelled ``mode = test`` and never
  reaches the trace tables or any analysis; each bot meets a panel place's assignments.
- **Speed.** ``speed`` is a factor on real time: a bot spends a random 10-50 % of an item's
  budget divided by ``speed`` on it (``speed = 1``: as slow as a person; the default 300 turns
  a 10-minute budget into 0.2-1 s).
- **Errors.** The bots read the study folder, so they know the references and ground truth; with
  probability ``error_rate`` a do item gets a stub instead of the reference and a check verdict
  is flipped. The report counts what each bot did on purpose, so a pre-launch run shows whether
  the harness recorded exactly that.
"""

from __future__ import annotations

import http.cookiejar
import json
import random
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import sqlalchemy as sa

from vcost.harness._state import Harness
from vcost.harness._study import StudyMaterial
from vcost.store import Store
from vcost.store import _schema as s
from vcost.tasks import CodeTask

__all__ = [
    "BotLogin",
    "BotReport",
    "BotSettings",
    "events_lost",
    "mint_bot_logins",
    "run_bots",
]

CLIENT_KINDS = ("keys", "mouse", "scroll", "focus", "blur")


@dataclass(frozen=True)
class BotSettings:
    """How the bots behave (module docstring)."""

    speed: float = 300.0
    error_rate: float = 0.1
    seed: int = 0
    runs_per_item: int = 1
    batch_seconds: float = 1.0
    timeout_seconds: float = 600.0


@dataclass(frozen=True)
class BotLogin:
    bot: str
    participant_id: str
    plays_as: str
    token: str


@dataclass
class BotReport:
    """What one bot did."""

    bot: str
    participant_id: str
    plays_as: str
    final_page: str = ""
    pages: int = 0
    do_items: int = 0
    check_items: int = 0
    stub_submissions: int = 0
    verdicts: int = 0
    flipped_verdicts: int = 0
    runs: int = 0
    runs_limited: int = 0
    batches: int = 0
    events_sent: int = 0
    events_acked: int = 0
    questionnaires: int = 0
    ratings: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    @property
    def completed(self) -> bool:
        return self.final_page == "final-done" and not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "completed": self.completed}


def mint_bot_logins(harness: Harness, count: int) -> list[BotLogin]:
    """``count`` walkthrough logins, spread over the panel places."""
    panel = harness.material.participants
    out = []
    for n in range(count):
        slot = panel[n % len(panel)]
        pid, token = harness.test_login(slot)
        out.append(BotLogin(f"bot-{n + 1:02d}", pid, slot, token))
    return out


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _Browser:
    """A cookie jar, the last page's CSRF token, redirects followed by hand."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect()
        )
        self.csrf = ""

    def _send(self, request: urllib.request.Request) -> tuple[int, str, str]:
        try:
            with self.opener.open(request, timeout=120) as response:
                status, body = response.status, response.read().decode()
                location = response.headers.get("location", "")
        except urllib.error.HTTPError as error:
            status, body = error.code, error.read().decode()
            location = error.headers.get("location", "")
        return status, body, location

    def page(self, method: str, path: str, data: dict[str, str] | None = None) -> tuple[int, str]:
        body = None
        if data is not None:
            body = urllib.parse.urlencode({**data, "csrf": self.csrf}).encode()
        request = urllib.request.Request(self.base + path, data=body, method=method)
        if body is not None:
            request.add_header("Content-Type", "application/x-www-form-urlencoded")
        for _ in range(10):
            status, text, location = self._send(request)
            if status not in (301, 302, 303, 307) or not location:
                break
            if not location.startswith("/"):  # an external completion URL
                return status, f'<body data-page="external">{location}</body>'
            request = urllib.request.Request(self.base + location)
        found = re.search(r'name="csrf" content="([0-9a-f]*)"', text)
        if found and found.group(1):
            self.csrf = found.group(1)
        return status, text

    def api(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        request = urllib.request.Request(
            self.base + path,
            data=json.dumps({**body, "csrf": self.csrf}).encode(),
            method="POST",
        )
        request.add_header("Content-Type", "application/json")
        status, text, _ = self._send(request)
        try:
            return status, json.loads(text)
        except ValueError:
            return status, None


def _page_name(html: str) -> str:
    found = re.search(r'<body data-page="([^"]*)"', html)
    return found.group(1) if found else "unknown"


class _Bot:
    def __init__(
        self, base: str, login: BotLogin, material: StudyMaterial, settings: BotSettings
    ) -> None:
        self.browser = _Browser(base)
        self.login = login
        self.material = material
        self.settings = settings
        self.rng = random.Random(f"{settings.seed}/{login.bot}")
        self.report = BotReport(login.bot, login.participant_id, login.plays_as)
        self.batch = 0

    def _events(self, item_id: str | None, elapsed_ms: int) -> None:
        self.batch += 1
        events = [
            {"id": f"{self.login.bot}-{self.batch}-{k}", "kind": kind, "t": elapsed_ms,
             "n": self.rng.randint(1, 20)}
            for k, kind in enumerate(self.rng.sample(CLIENT_KINDS, 2))
        ]  # fmt: skip
        status, body = self.browser.api(
            "/api/events", {"batch": f"{self.login.bot}-b{self.batch}", "item_id": item_id,
                            "events": events}
        )  # fmt: skip
        self.report.batches += 1
        self.report.events_sent += len(events)
        if status == 200 and isinstance(body, dict) and body.get("ok"):
            self.report.events_acked += int(body.get("added", 0))
        else:
            self.report.errors.append(f"events: HTTP {status}")

    def _run(self, item_id: str, code: str) -> None:
        status, _ = self.browser.api("/api/run", {"item_id": item_id, "code": code, "tests": ""})
        if status == 429:
            self.report.runs_limited += 1
        elif status == 200:
            self.report.runs += 1
        elif status != 409:  # 409: the item ended meanwhile
            self.report.errors.append(f"run: HTTP {status}")

    def _work(self, html: str, item_id: str, code: str) -> None:
        """Spend the bot's time on an item: activity batches, Run, as a person would."""
        remaining = re.search(r'data-remaining-ms="(\d+)"', html)
        left_s = int(remaining.group(1)) / 1000 if remaining else 60.0
        budget_s = left_s
        spend = min(left_s * 0.9, budget_s * self.rng.uniform(0.1, 0.5) / self.settings.speed)
        start = time.monotonic()
        runs = 0
        while True:
            elapsed = time.monotonic() - start
            self._events(item_id, int(elapsed * 1000))
            if runs < self.settings.runs_per_item:
                self._run(item_id, code)
                runs += 1
            if elapsed >= spend:
                break
            time.sleep(min(self.settings.batch_seconds, max(0.0, spend - elapsed)))

    def _item(self, html: str, block: str) -> tuple[int, str]:
        item_id = re.search(r'data-item="([^"]+)"', html)
        if item_id is None:
            raise RuntimeError("a task page without its item id")
        item = item_id.group(1)
        pid = self.login.participant_id
        assignment = next(
            (a for a in self.material.assignments_of(self.login.plays_as)
             if item in (f"ep-{a.assignment_id}", f"test-{pid}-{a.assignment_id}")),
            None,
        )  # fmt: skip
        if assignment is None:
            raise RuntimeError(f"item {item} is not one of {self.login.plays_as}'s")
        task = self.material.task(assignment.task_id)
        if block == "do":
            self.report.do_items += 1
            code = task.reference
            if self.rng.random() < self.settings.error_rate:
                self.report.stub_submissions += 1
                code = (
                    f"def {task.entry_point}(*args):\n    return None\n"
                    if isinstance(task, CodeTask)
                    else "answer = None\n"
                )
            self._work(html, item, code)
            return self.browser.page("POST", "/task/submit", {"item_id": item, "code": code})
        self.report.check_items += 1
        assert assignment.answer_id is not None
        answer = self.material.answer(assignment.answer_id)
        self._work(html, item, answer.code)
        right = "correct" if answer.ground_truth == "correct" else "incorrect"
        choice = right
        if self.rng.random() < self.settings.error_rate:
            choice = "incorrect" if right == "correct" else "correct"
            self.report.flipped_verdicts += 1
        levels = [round(c * 100) for c in self.material.confidence_levels]
        self.report.verdicts += 1
        return self.browser.page(
            "POST",
            "/task/verdict",
            {"item_id": item, "verdict": choice, "confidence": str(self.rng.choice(levels)),
             "reason": "bot"},
        )  # fmt: skip

    def run(self) -> BotReport:
        start = time.monotonic()
        try:
            status, html = self.browser.page("GET", f"/i/{self.login.token}")
            while time.monotonic() - start < self.settings.timeout_seconds:
                page = _page_name(html)
                self.report.pages += 1
                self.report.final_page = page
                if status >= 400 or page in ("error", "unknown"):
                    self.report.errors.append(f"{page}: HTTP {status}")
                    break
                if page.startswith("final-") or page == "external":
                    break
                status, html = self._step(page, html)
            else:
                self.report.errors.append("timed out")
        except Exception as error:  # a bot reports, never raises
            self.report.errors.append(f"{type(error).__name__}: {error}")
        self.report.seconds = round(time.monotonic() - start, 3)
        return self.report

    def _step(self, page: str, html: str) -> tuple[int, str]:
        b = self.browser
        if page == "consent":
            return b.page("POST", "/consent", {"agree": "yes"})
        if page == "screening":
            task = self.material.screening_task
            code = task.reference if task is not None else ""
            self._events(None, 0)
            return b.page("POST", "/screening", {"code": code})
        if page == "session":
            return b.page("POST", "/session", {})
        if page in ("task-do", "task-check"):
            return self._item(html, page.removeprefix("task-"))
        if page == "pause":
            return b.page("POST", "/pause", {})
        if page == "questionnaire":
            self.report.questionnaires += 1
            trust = str(self.rng.randint(1, 5))
            return b.page("POST", "/questionnaire", {"trust": trust, "experience": "bot"})
        if page == "realism":
            fields = sorted(set(re.findall(r'name="(rating_\d+)"', html)))
            self.report.ratings += len(fields)
            return b.page("POST", "/realism", {f: str(self.rng.randint(1, 5)) for f in fields})
        if page == "debrief":
            return b.page("POST", "/debrief", {"comment": "a bot"})
        raise RuntimeError(f"unexpected page {page!r}")


def run_bots(
    base: str,
    logins: Sequence[BotLogin],
    material: StudyMaterial,
    settings: BotSettings | None = None,
) -> list[BotReport]:
    """Run every bot concurrently (one thread each) against the server at ``base``."""
    chosen = settings or BotSettings()
    bots = [_Bot(base, login, material, chosen) for login in logins]
    reports: list[BotReport | None] = [None] * len(bots)

    def go(n: int) -> None:
        reports[n] = bots[n].run()

    threads = [threading.Thread(target=go, args=(n,), daemon=True) for n in range(len(bots))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [r for r in reports if r is not None]


def events_lost(store: Store, reports: Sequence[BotReport]) -> int:
    """Client events the server acknowledged that the store does not hold (should be 0)."""
    t = s.harness_events
    ids = [r.participant_id for r in reports]
    with store.engine.connect() as conn:
        stored = conn.execute(
            sa.select(sa.func.count())
            .select_from(t)
            .where(t.c.participant_id.in_(ids), t.c.batch_id.is_not(None))
        ).scalar_one()
    return max(0, sum(r.events_acked for r in reports) - int(stored))
