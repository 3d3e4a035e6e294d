"""Drift monitoring (seed 004, "Drift monitoring"): a frozen anchor subset, re-run and compared.

:func:`freeze_anchor` draws a stratified subset of the labelled gold items once (seeded) and
pins it with a digest; :func:`check_drift` compares a baseline run with a new run (a new
verifier version, or the same version re-run periodically) on the anchor items. A shift of the
false-accept rate, the false-reject rate or the coverage by more than the pre-registered
tolerance (absolute, in proportion points) suspends billing and training-reward eligibility on
the card (:func:`vcost.reliability.apply_drift`) until the verifier is recertified: a new card
from a full gold-set run.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from vcost.errors import InputError
from vcost.reliability._gold import GoldSet
from vcost.reliability._labels import Adjudication
from vcost.reliability._rates import error_rates
from vcost.reliability._verifiers import VerifierRun

__all__ = ["AnchorSet", "DriftCheck", "check_drift", "freeze_anchor", "read_anchor"]


@dataclass(frozen=True)
class AnchorSet:
    """The frozen anchor subset: item ids, the gold set they come from, when and a digest."""

    gold_set: str
    gold_digest: str
    item_ids: tuple[str, ...]
    frozen_at: str
    seed: int

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(sorted(self.item_ids)).encode()).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "item_ids": list(self.item_ids), "digest": self.digest}

    def write(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        return p


def read_anchor(path: str | Path) -> AnchorSet:
    """Read an anchor file; a changed item list (digest mismatch) is an error: it is frozen."""
    p = Path(path)
    if not p.is_file():
        raise InputError("anchor file not found", source=p, hint="freeze one with freeze_anchor")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        anchor = AnchorSet(
            gold_set=str(data["gold_set"]),
            gold_digest=str(data["gold_digest"]),
            item_ids=tuple(str(i) for i in data["item_ids"]),
            frozen_at=str(data["frozen_at"]),
            seed=int(data["seed"]),
        )
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise InputError(f"not an anchor file ({error})", source=p) from None
    if data.get("digest") not in (None, anchor.digest):
        raise InputError(
            "the anchor's item list does not match its digest",
            source=p,
            field="item_ids",
            hint="the anchor subset is frozen: restore it, or freeze a new one and recertify",
        )
    return anchor


def freeze_anchor(
    gold: GoldSet, adjudication: Adjudication, *, size: int, seed: int = 0
) -> AnchorSet:
    """A stratified random subset of ``size`` labelled items (every stratum represented where
    ``size`` allows, the rest in proportion to the strata's sizes)."""
    labels = adjudication.labels()
    by_stratum: dict[str, list[str]] = {}
    for item in gold.items:
        if item.item_id in labels:
            by_stratum.setdefault(str(item.stratum), []).append(item.item_id)
    pool = sum(len(v) for v in by_stratum.values())
    if size < 1 or size > pool:
        raise InputError(
            f"anchor size must be between 1 and the {pool} labelled items, not {size}",
            field="size",
        )
    rng = random.Random(seed)
    for ids in by_stratum.values():
        rng.shuffle(ids)
    chosen: list[str] = []
    order = sorted(by_stratum, key=lambda s: -len(by_stratum[s]))
    quota = {s: min(1, len(by_stratum[s])) if size >= len(order) else 0 for s in order}
    remaining = size - sum(quota.values())
    for s in order:
        share = round(
            remaining * (len(by_stratum[s]) - quota[s]) / max(1, pool - sum(quota.values()))
        )
        quota[s] += min(share, len(by_stratum[s]) - quota[s])
    for s in order:
        chosen += by_stratum[s][: quota[s]]
    leftovers = [i for s in order for i in by_stratum[s][quota[s] :]]
    chosen += leftovers[: size - len(chosen)]
    return AnchorSet(
        gold_set=gold.name,
        gold_digest=gold.digest(),
        item_ids=tuple(sorted(chosen[:size])),
        frozen_at=datetime.now(UTC).isoformat(),
        seed=seed,
    )


@dataclass(frozen=True)
class DriftCheck:
    """Baseline against a new run on the anchor: rates, shifts and the resulting status."""

    baseline_version: str
    candidate_version: str
    anchor_items: int
    anchor_digest: str
    tolerance: float
    shifts: Mapping[str, tuple[float | None, float | None, float | None]]
    changed_verdicts: int
    status: Literal["ok", "suspended"]
    reasons: tuple[str, ...]
    checked_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "baseline_version": self.baseline_version,
            "candidate_version": self.candidate_version,
            "anchor_items": self.anchor_items,
            "anchor_digest": self.anchor_digest,
            "tolerance": self.tolerance,
            "shifts": {
                k: {"baseline": b, "candidate": c, "shift": d}
                for k, (b, c, d) in self.shifts.items()
            },
            "changed_verdicts": self.changed_verdicts,
            "reasons": list(self.reasons),
            "checked_at": self.checked_at,
        }


def _value(x: float) -> float | None:
    return None if x != x else x  # NaN -> None


def check_drift(
    gold: GoldSet,
    adjudication: Adjudication,
    anchor: AnchorSet,
    baseline: VerifierRun,
    candidate: VerifierRun,
    *,
    tolerance: float,
) -> DriftCheck:
    """Compare ``candidate`` with ``baseline`` on the anchor items.

    Suspended when the false-accept rate, the false-reject rate or the coverage moves by more
    than ``tolerance``, or when a rate estimable at baseline is no longer estimable.
    """
    if not 0.0 < tolerance < 1.0:
        raise InputError(f"tolerance must be in (0, 1), not {tolerance!r}", field="tolerance")
    if anchor.gold_digest != gold.digest():
        raise InputError(
            f"the anchor was frozen on another version of gold set {anchor.gold_set!r}",
            field="gold_digest",
            hint="re-run on the gold set the anchor was drawn from, or freeze a new anchor",
        )
    items = list(anchor.item_ids)
    before = error_rates(gold, adjudication, baseline, items=items, reps=200)
    after = error_rates(gold, adjudication, candidate, items=items, reps=200)
    shifts: dict[str, tuple[float | None, float | None, float | None]] = {}
    reasons: list[str] = []
    pairs = {
        "false-accept": (before.rate("false-accept"), after.rate("false-accept")),
        "false-reject": (before.rate("false-reject"), after.rate("false-reject")),
    }
    for name, (b, c) in pairs.items():
        vb = None if b is None else _value(b.rate)
        vc = None if c is None else _value(c.rate)
        shift = None if vb is None or vc is None else vc - vb
        shifts[name] = (vb, vc, shift)
        if vb is not None and vc is None:
            reasons.append(f"{name} rate no longer estimable on the anchor (no judged items)")
        elif shift is not None and abs(shift) > tolerance:
            reasons.append(
                f"{name} rate moved {vb:.3f} -> {vc:.3f} ({shift:+.3f}), beyond the "
                f"tolerance {tolerance:g}"
            )
    cb, cc = _value(before.abstention.coverage), _value(after.abstention.coverage)
    coverage_shift = None if cb is None or cc is None else cc - cb
    shifts["coverage"] = (cb, cc, coverage_shift)
    if coverage_shift is not None and abs(coverage_shift) > tolerance:
        reasons.append(
            f"coverage moved {cb:.3f} -> {cc:.3f} ({coverage_shift:+.3f}), beyond the "
            f"tolerance {tolerance:g}"
        )
    old, new = baseline.by_item(), candidate.by_item()
    changed = sum(1 for i in items if i in old and i in new and old[i].verdict != new[i].verdict)
    return DriftCheck(
        baseline_version=baseline.identity.version,
        candidate_version=candidate.identity.version,
        anchor_items=len(items),
        anchor_digest=anchor.digest,
        tolerance=tolerance,
        shifts=shifts,
        changed_verdicts=changed,
        status="suspended" if reasons else "ok",
        reasons=tuple(reasons),
        checked_at=datetime.now(UTC).isoformat(),
    )
