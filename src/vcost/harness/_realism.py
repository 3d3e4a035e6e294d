"""Which answers a participant rates for realism, and in what order.

The realism question ("how likely is it that an AI wrote this exact answer?", 1-5) is only
meaningful when the rater cannot compare versions: a correct answer next to its planted copy
shows the planted change at a glance. So the design is between raters, as for checking
("each checker sees one"):

- **One version per spare task.** Each participant rates at most one answer of each spare task
  (``realism.json``, else the selection's answers to unallocated spare tasks). Which version is
  a Latin-square rotation: the participant's place in the panel (allocation order) plus the
  task's index among the spare tasks (sorted by id) picks among the task's versions (sorted by
  answer id), so across the panel every version of a task is rated about equally often, and
  each rater meets a mix of kinds. (A place outside the panel uses its seed instead.)
- **At most ``realism_count`` answers**; with more spare tasks than that, a seeded draw picks
  which tasks. With fewer than 4 spare tasks (the study design's rule), answers to tasks the
  participant did themselves are added, one version per task by the same rotation, until
  ``realism_count`` (recorded as the basis ``done-task``).
- **Order randomised per participant**, from a seed derived from the study (spec hash, else
  the allocation id) and the panel place: the same page after a reload or on another worker,
  a different order for each rater. The shown order and the seed are recorded in the
  ``realism`` response (``shown``, ``seed``, ``design``).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vcost.answers import SelectedAnswer
    from vcost.harness._records import Participant
    from vcost.harness._study import StudyMaterial

DESIGN = "one-version-per-task"
MIN_SPARE_TASKS = 4


@dataclass(frozen=True)
class RealismPlan:
    """The answers one participant rates, in the order shown, with why each is there."""

    answers: tuple[tuple[str, str], ...]  # (answer id, "spare" | "done-task"), shown order
    seed: int

    @property
    def record(self) -> dict[str, Any]:
        """What the ``realism`` response records about the design."""
        return {"design": DESIGN, "seed": self.seed, "shown": [a for a, _ in self.answers]}


def _versions(answers: Iterable[SelectedAnswer]) -> dict[str, list[str]]:
    by_task: dict[str, list[str]] = {}
    for a in answers:
        by_task.setdefault(a.task_id, []).append(a.answer_id)
    return {task: sorted(ids) for task, ids in sorted(by_task.items())}


def _seed(material: StudyMaterial, place: str) -> int:
    study = material.spec_hash or material.allocation.allocation_id
    digest = hashlib.sha256(f"vcost-realism/{study}/{place}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _pick(versions: dict[str, list[str]], tasks: Sequence[str], position: int) -> list[str]:
    """The rotation: version (panel position + the task's index among all) mod versions."""
    index = {t: j for j, t in enumerate(versions)}
    return [versions[t][(position + index[t]) % len(versions[t])] for t in tasks]


def realism_plan(material: StudyMaterial, p: Participant) -> RealismPlan:
    """The participant's realism answers (module docstring): deterministic for a panel place."""
    count = material.settings.realism_count
    place = p.plays_as
    seed = _seed(material, place)
    if count == 0:
        return RealismPlan((), seed)
    rng = random.Random(seed)
    panel = list(material.allocation.participants)
    position = panel.index(place) if place in panel else seed % 997
    spare = _versions(material.realism)
    tasks = list(spare)
    if len(tasks) > count:
        tasks = sorted(rng.sample(tasks, count), key=list(spare).index)
    chosen = [(a, "spare") for a in _pick(spare, tasks, position)]
    if len(spare) < MIN_SPARE_TASKS and len(chosen) < count:
        done = {a.task_id for a in material.assignments_of(place) if a.block == "do"}
        own = _versions(a for a in material.answers.values() if a.task_id in done - set(spare))
        extra = list(own)[: count - len(chosen)]
        chosen += [(a, "done-task") for a in _pick(own, extra, position)]
    rng.shuffle(chosen)
    return RealismPlan(tuple(chosen), seed)
