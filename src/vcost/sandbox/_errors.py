"""The sandbox's error and warning types (SandboxError lives in vcost.errors)."""

from __future__ import annotations

from vcost.errors import SandboxError

__all__ = ["SandboxError", "WeakIsolationWarning"]


class WeakIsolationWarning(UserWarning):
    """Untrusted code is about to run without bubblewrap: not a sandbox for untrusted code."""
