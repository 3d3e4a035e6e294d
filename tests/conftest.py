"""Shared test configuration: Hypothesis profiles (``ci`` is the default, ``dev`` is quicker)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

pytest_plugins = ["browser", "offline_run", "postgres_stores"]

settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# `vcost grade` keeps reference timings in a cache folder: tests use a throw-away one.
if "VCOST_CACHE_DIR" not in os.environ:
    import tempfile

    os.environ["VCOST_CACHE_DIR"] = tempfile.mkdtemp(prefix="vcost-test-cache-")
