"""The tasks a release speaks of: which are held out, their material, the answers' code.

Held-out tasks (study design, seed 003, "Realism"): the spare tasks used for the realism check
and never done or checked by anyone. A spare that replaced a dropped task (it has do or check
work) is a used task and its text is released; a spare nobody rated is not in the data at all.
The held-out set is therefore "the bank's spare tasks the data refer to that nobody did or
checked", possibly empty; the manifest says which.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from vcost.answers import SelectedAnswer
from vcost.errors import InputError
from vcost.release._anonymise import Rekey, values_of
from vcost.release._codebook import RELEASE_TABLES
from vcost.release._source import Source
from vcost.tasks import BUNDLED_BANK, Task, TaskRole, load_bank

__all__ = ["answer_texts", "bank_tasks", "held_out_tasks", "task_material", "task_usage"]


def bank_tasks(bank: str | Path | None) -> tuple[dict[str, Task] | None, str | None]:
    """The bank's tasks by id (``"bundled"``: vcost's) and which bank it was, or (None, None)."""
    if bank is None:
        return None, None
    root = BUNDLED_BANK if str(bank) == "bundled" else Path(bank)
    if not root.is_dir():
        raise InputError(
            "not a task bank folder",
            source=bank,
            field="--bank",
            hint="give a bank folder, or `bundled` for vcost's",
        )
    try:
        tasks = load_bank(root)
    except (OSError, ValueError, KeyError) as error:
        raise InputError(
            f"cannot load the bank: {error}", source=root, hint="run `vcost tasks check` on it"
        ) from None
    return {t.id: t for t in tasks}, "bundled" if root == BUNDLED_BANK else "given"


def task_usage(source: Source) -> tuple[set[str], set[str]]:
    """(tasks people did or checked, every task the data refer to); AI checkers' episodes do
    not make a task used."""
    t = source.trace
    models = values_of(t.verifiers[t.verifiers["kind"].astype(str) == "model"], "verifier_id")
    episodes = t.episodes[~t.episodes["verifier_id"].isin(models)]
    answer_task = dict(zip(t.answers["answer_id"], t.answers["task_id"], strict=True))
    used = values_of(episodes, "task_id")
    used |= {answer_task[a] for a in episodes["answer_id"].dropna() if a in answer_task}
    for name in ("assignments", "harness_items"):
        if name in source.tables:
            used |= values_of(source.tables[name].frame, "task_id")
    referenced = used | values_of(t.answers, "task_id")
    for name in ("ratings", "tasks"):
        if name in source.tables:
            referenced |= values_of(source.tables[name].frame, "task_id")
    return used, referenced


def task_material(
    referenced: set[str], held_out: set[str], bank: Mapping[str, Task] | None
) -> pd.DataFrame:
    rows = []
    for task_id in sorted(referenced):
        task = bank.get(task_id) if bank else None
        hidden = task_id in held_out
        rows.append(
            {
                "task_id": task_id,
                "kind": task.kind if task else None,
                "title": task.title if task and not hidden else None,
                "difficulty": str(task.difficulty) if task else None,
                "skill": task.skill if task else None,
                "role": str(task.role) if task else None,
                "do_minutes": task.do_minutes if task else None,
                "held_out": hidden if task else None,
                "text_released": bool(task) and not hidden,
            }
        )
    return _typed(rows, "task_material")


def _typed(rows: list[dict[str, Any]], table: str) -> pd.DataFrame:
    dtypes = {"str": "string", "float": "float64", "bool": "boolean"}
    columns = RELEASE_TABLES[table]
    return pd.DataFrame(
        {
            name: pd.Series([r[name] for r in rows], dtype=dtypes[kind])
            for name, (kind, _) in columns.items()
        }
    )


def answer_texts(
    answers: Sequence[SelectedAnswer], released: set[str], rekey: Rekey
) -> pd.DataFrame:
    seen: dict[str, SelectedAnswer] = {}
    for a in answers:
        if a.task_id in released:
            seen.setdefault(a.answer_id, a)
    rows = [
        {
            "answer_id": a.answer_id,
            "task_id": a.task_id,
            "kind": a.kind,
            "code": a.code,
            "shown": a.shown,
        }
        for a in seen.values()
    ]
    frame = _typed(rows, "answer_texts")
    for column in frame.columns:
        frame[column] = rekey.series(frame[column])
    return frame


def held_out_tasks(
    used: set[str], referenced: set[str], bank: Mapping[str, Task] | None
) -> set[str]:
    """The bank's spare tasks the data refer to that nobody did or checked (module docstring)."""
    if bank is None:
        return set()
    return {t for t in referenced if t in bank and bank[t].role == TaskRole.SPARE and t not in used}
