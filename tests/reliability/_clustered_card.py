"""A clustered gold set written to files for `vcost card`: 10 tasks, 5 failures and 1 success
each; the verifier accepts 5,3,3,2,0,0,0,0,0,0 of the failures (13/50 false accepts)."""

from __future__ import annotations

import csv
from pathlib import Path

from vcost.reliability import (
    GoldItem,
    GoldSet,
    Stratum,
    Verdict,
    VerifierIdentity,
    VerifierRun,
    write_gold,
)

ACCEPTED = (5, 3, 3, 2, 0, 0, 0, 0, 0, 0)

POLICY = """\
task_class = "toy"
declared_at = 2020-01-01
label_level = "task"
alpha = 0.05
valid_days = 90
target_bound = 0.05

[tiers.external]
max_false_accept = {max_fa}
min_coverage = {min_coverage}

[drift]
tolerance = 0.1
anchor_items = 8
"""


def clustered_gold() -> GoldSet:
    items = []
    for t in range(len(ACCEPTED)):
        for j in range(6):
            items.append(
                GoldItem(
                    item_id=f"t{t}/{j}",
                    task_id=f"t{t}",
                    cluster=f"t{t}",
                    stratum=Stratum.CLEAR_SUCCESS if j == 5 else Stratum.NEAR_MISS,
                    output=f"def f(): return {t * 10 + j}",
                    expected="success" if j == 5 else "failure",
                )
            )
    return GoldSet.sealed("clustered", "toy", items, canary="VCOST-GOLD-CANARY clustered 0123")


def verdicts(gold: GoldSet) -> list[Verdict]:
    out = []
    for item in gold.items:
        t, j = (int(x) for x in item.item_id[1:].split("/"))
        accept = j == 5 or j < ACCEPTED[t]
        out.append(Verdict(item.item_id, "accept" if accept else "reject", 0.9))
    return out


def write_files(
    folder: Path,
    *,
    max_fa: float = 0.9,
    min_coverage: float = 0.5,
    drop: tuple[str, ...] = (),
) -> list[str]:
    """Gold, labels, a run (minus the verdicts for ``drop``) and a policy: `vcost card` args."""
    gold = clustered_gold()
    write_gold(gold, folder / "gold.jsonl")
    with (folder / "labels.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "labeller", "role", "execution_success", "task_success"])
        for item in gold.items:
            for who in ("ann", "bob"):
                value = "yes" if item.expected == "success" else "no"
                writer.writerow([item.item_id, who, "primary", "yes", value])
    kept = tuple(v for v in verdicts(gold) if v.item_id not in drop)
    identity = VerifierIdentity("check", "program", "1")
    VerifierRun(identity, kept, run_at="2026-01-01T00:00:00+00:00").write(folder / "run.jsonl")
    (folder / "policy.toml").write_text(POLICY.format(max_fa=max_fa, min_coverage=min_coverage))
    return [
        "--gold", str(folder / "gold.jsonl"), "--labels", str(folder / "labels.csv"),
        "--run", str(folder / "run.jsonl"), "--policy", str(folder / "policy.toml"),
    ]  # fmt: skip
