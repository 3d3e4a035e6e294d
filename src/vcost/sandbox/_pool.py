"""Warm sandboxes kept between answers: one pool per :class:`~vcost.sandbox.Sandbox`.

A caller takes a warm session (or starts one), runs one answer in it and gives it back; the
session goes back to the pool only if the runner reported itself clean after the answer and
the host saw nothing of the answer left in its cgroup. At most ``keep`` idle sessions are
kept (one per concurrent caller is all that is needed); a session is retired after
``max_answers`` answers. A forked host process never uses (or kills) its parent's sessions.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref

from vcost.sandbox._limits import Limits
from vcost.sandbox._session import Backend, Session

__all__ = ["SessionPool", "idle_cgroups", "keep_spare", "take_spare"]

_pools: weakref.WeakSet[SessionPool] = weakref.WeakSet()
#: A clean warm sandbox of no pool yet: bubblewrap's probe leaves its trial sandbox here, and
#: the first warm bubblewrap Sandbox with the default limits takes it instead of starting one
#: (`vcost grade` would otherwise start a sandbox only to probe). Ended at exit if not taken.
_spares: list[Session] = []
_spares_lock = threading.Lock()


def keep_spare(session: Session) -> None:
    with _spares_lock:
        _spares.append(session)


def take_spare() -> Session | None:
    """The spare sandbox, if there is one started by this process and still alive."""
    while True:
        with _spares_lock:
            session = _spares.pop() if _spares else None
        if session is None:
            return None
        if session.owner == os.getpid() and session.alive():
            return session
        session.close()


def _close_spares() -> None:
    while (session := take_spare()) is not None:
        session.close()


atexit.register(_close_spares)


def idle_cgroups() -> list[str]:
    """The cgroups of every idle warm sandbox of this process (for leftover checks)."""
    with _spares_lock:
        spares = [path for s in _spares for path in s.cgroup_paths]
    return spares + [p for pool in list(_pools) for p in pool.idle_cgroups(every_kind=True)]


class SessionPool:
    def __init__(
        self, backend: Backend, limits: Limits, *, keep: int, max_answers: int = 1000
    ) -> None:
        self.backend = backend
        self.limits = limits
        self.keep = keep
        self.max_answers = max_answers
        self._lock = threading.Lock()
        self._idle: list[Session] = []
        self._pid = os.getpid()
        _pools.add(self)

    def _forget_if_forked(self) -> None:
        """In a forked child the idle sessions are the parent's: forget them, never close."""
        if self._pid != os.getpid():
            self._idle = []
            self._pid = os.getpid()

    def acquire(self, deadline: float) -> Session:
        """A warm session, or a freshly started one (SandboxError if it cannot start)."""
        dead: list[Session] = []
        found: Session | None = None
        with self._lock:
            self._forget_if_forked()
            while self._idle:
                session = self._idle.pop()
                if session.alive():
                    found = session
                    break
                dead.append(session)
        for session in dead:
            session.close()
        if found is not None:
            return found
        session = Session(self.backend, self.limits, mode="calls", deadline=deadline)
        session.start()
        return session

    def release(self, session: Session, *, reusable: bool) -> None:
        keep = reusable and session.alive() and session.answers < self.max_answers
        if keep:
            with self._lock:
                self._forget_if_forked()
                if len(self._idle) < self.keep and session.owner == os.getpid():
                    self._idle.append(session)
                    return
        if session.owner == os.getpid():
            session.close()

    def close(self) -> None:
        """End every idle session (the pool stays usable: later calls start new ones)."""
        with self._lock:
            if self._pid != os.getpid():
                self._forget_if_forked()
                return
            idle, self._idle = self._idle, []
        for session in idle:
            session.close()

    def idle_cgroups(self, *, every_kind: bool = False) -> list[str]:
        """The cgroups of the idle sessions, one per session (its pids cgroup), or with
        ``every_kind`` its memory cgroup too (for tests that look for leftovers)."""
        with self._lock:
            if every_kind:
                return [path for s in self._idle for path in s.cgroup_paths]
            return [path for s in self._idle if (path := s.cgroup_path) is not None]
