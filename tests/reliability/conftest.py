"""Shared gold sets, labels and policies for the reliability tests."""

from __future__ import annotations

from pathlib import Path

import pytest

POLICY = """\
task_class = "toy"
declared_at = 2020-01-01
label_level = "task"
alpha = 0.05
valid_days = 90
target_bound = 0.05

[tiers.external]
max_false_accept = 0.9
max_false_reject = 0.9
min_coverage = 0.5

[tiers.billing]
max_false_accept = 0.9

[tiers.training-reward]
max_false_accept = 0.9

[drift]
tolerance = 0.1
anchor_items = 8
"""


@pytest.fixture
def policy_path(tmp_path: Path) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(POLICY)
    return path
