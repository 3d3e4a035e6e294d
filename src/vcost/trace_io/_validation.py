"""Validation rules: every contract rule as one boolean mask over a table's rows."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from vcost.trace import (
    HUMAN_CONFIDENCE_LEVELS,
    Block,
    Column,
    GroundTruth,
    Role,
    Termination,
    Trace,
    VerifierKind,
)
from vcost.trace_io._coercion import _coerce, _empty_column, _isin, _Mask
from vcost.trace_io._contract import (
    _CHECK_TERMINATIONS,
    _DO_TERMINATIONS,
    _ENUM_WORDS,
    _ROUNDING,
    _STR,
    _TYPE_WORDS,
    EFFORT_TOLERANCE,
    TABLES,
)
from vcost.trace_io._problems import _fmt, _Problems, _show, _Source


@dataclass
class _Table:
    source: _Source
    frame: pd.DataFrame
    raw: pd.DataFrame
    bad: dict[str, _Mask]
    missing_columns: set[str]

    def __len__(self) -> int:
        return len(self.frame)

    def col(self, name: str) -> pd.Series[Any]:
        return self.frame[name]

    def ok(self, name: str) -> _Mask:
        """Rows where column ``name`` was not rejected for its type or value."""
        return ~self.bad[name]


class _Validator:
    def __init__(self, title: str, confidence_levels: Sequence[float] | None) -> None:
        self.problems = _Problems(title)
        self.levels = None if confidence_levels is None else np.asarray(confidence_levels, float)
        if self.levels is not None and ((self.levels < 0) | (self.levels > 1)).any():
            raise ValueError(f"confidence levels must lie in [0, 1], got {confidence_levels}")

    # -- structure and types ----------------------------------------------------------------

    def table(self, source: _Source, frame: pd.DataFrame | None) -> _Table:
        columns = TABLES[source.table]
        if frame is None:
            frame = pd.DataFrame({c.name: pd.Series([], dtype=object) for c in columns})
        frame = frame.reset_index(drop=True)
        known = [c.name for c in columns]
        seen: set[str] = set()
        for name in frame.columns:
            if not isinstance(name, str) or name not in known:
                guess = difflib.get_close_matches(str(name), known, n=1)
                hint = f"; did you mean '{guess[0]}'?" if guess else f"; known: {', '.join(known)}"
                self.problems.add(source, f"unknown column '{name}'{hint}")
            elif name in seen:
                self.problems.add(source, f"duplicate column '{name}'")
            seen.add(str(name))
        missing_columns = set()
        typed: dict[str, pd.Series[Any]] = {}
        bad: dict[str, _Mask] = {}
        n = len(frame)
        for column in columns:
            if column.name not in seen:
                if column.required:
                    self.problems.add(source, f"missing required column '{column.name}'")
                missing_columns.add(column.name)
                typed[column.name] = _empty_column(column, n)
                bad[column.name] = np.zeros(n, dtype=bool)
                continue
            raw = frame.loc[:, column.name]
            if isinstance(raw, pd.DataFrame):  # duplicate column: take the first
                raw = raw.iloc[:, 0]
            values, wrong = _coerce(raw, column)
            typed[column.name], bad[column.name] = values, wrong
            self._report_bad(source, column, raw, wrong)
            if column.required:
                empty = values.isna().to_numpy(dtype=bool) & ~wrong
                self.problems.rows(source, empty, column.name, lambda i: "empty required value")
        result = pd.DataFrame(typed)
        return _Table(source, result, frame, bad, missing_columns)

    def _report_bad(
        self, source: _Source, column: Column, raw: pd.Series[Any], mask: _Mask
    ) -> None:
        if not mask.any():
            return
        values = raw.reset_index(drop=True)
        if column.choices:
            word = _ENUM_WORDS.get(column.name, column.name)

            def unknown(i: int) -> str:
                expected = self._expected(column, i)
                return f"unknown {word} {_show(values.iloc[i])}; expected one of {expected}"

            self.problems.rows(source, mask, column.name, unknown)
        else:
            wanted = _TYPE_WORDS[column.dtype]
            self.problems.rows(
                source,
                mask,
                column.name,
                lambda i: f"bad type: expected {wanted}, got {_show(values.iloc[i])}",
            )

    _episode_blocks: pd.Series[Any] | None = None

    def _expected(self, column: Column, i: int) -> str:
        if column.name == "termination" and self._episode_blocks is not None:
            block = self._episode_blocks.iloc[i]
            if block == Block.CHECK.value:
                return ", ".join(_CHECK_TERMINATIONS)
            if block == Block.DO.value:
                return ", ".join(_DO_TERMINATIONS)
        return ", ".join(column.choices)

    # -- rules -------------------------------------------------------------------------------

    def unique(self, table: _Table, id_column: str) -> None:
        ids = table.col(id_column)
        duplicated = (ids.duplicated(keep="first") & ids.notna()).to_numpy(dtype=bool)

        def message(i: int) -> str:
            value = ids.iloc[i]
            first = int(np.flatnonzero((ids == value).to_numpy(dtype=bool))[0])
            return f"duplicate {id_column} {_show(value)} (first at {table.source.where(first)})"

        self.problems.rows(table.source, duplicated, id_column, message)

    def answers(self, answers: _Table) -> None:
        self.unique(answers, "answer_id")
        role, truth = answers.col("role"), answers.col("ground_truth")
        wrong_baseline = (role == Role.BASELINE.value) & truth.notna()
        wrong_baseline &= truth != GroundTruth.CORRECT.value
        self.problems.rows(
            answers.source,
            wrong_baseline,
            "ground_truth",
            lambda i: (
                "a baseline answer is known-correct: ground_truth must be 'correct', "
                f"got {_show(truth.iloc[i])}"
            ),
        )

    def verifiers(self, verifiers: _Table) -> None:
        self.unique(verifiers, "verifier_id")

    def episodes(self, episodes: _Table, answers: _Table, verifiers: _Table) -> pd.DataFrame:
        src = episodes.source
        ep = episodes.frame
        self.unique(episodes, "episode_id")
        block, term, verdict = ep["block"], ep["termination"], ep["verdict"]
        is_check = (block == Block.CHECK.value).to_numpy(dtype=bool)
        is_do = (block == Block.DO.value).to_numpy(dtype=bool)
        is_verdict_end = (term == Termination.VERDICT.value).to_numpy(dtype=bool)
        has_term = term.notna().to_numpy(dtype=bool)

        # termination allowed in this block
        def wrong_block(kind: str, allowed: tuple[str, ...]) -> Callable[[int], str]:
            return lambda i: (
                f"outcome {_show(term.iloc[i])} is not allowed in a {kind} episode; "
                f"expected one of {', '.join(allowed)}"
            )

        self.problems.rows(
            src,
            is_check & has_term & ~_isin(term, pd.Series(_CHECK_TERMINATIONS)),
            "termination",
            wrong_block("check", _CHECK_TERMINATIONS),
        )
        self.problems.rows(
            src,
            is_do & has_term & ~_isin(term, pd.Series(_DO_TERMINATIONS)),
            "termination",
            wrong_block("do", _DO_TERMINATIONS),
        )

        # verdict iff termination == verdict (check block); never in do episodes
        has_verdict = verdict.notna().to_numpy(dtype=bool)
        self.problems.rows(
            src,
            is_check & is_verdict_end & ~has_verdict & episodes.ok("verdict"),
            "verdict",
            lambda i: "a check that ends in a verdict needs one: accept or reject",
        )
        self.problems.rows(
            src,
            is_check & has_term & ~is_verdict_end & has_verdict,
            "verdict",
            lambda i: (
                f"verdict {_show(verdict.iloc[i])} given, but the outcome is "
                f"{_show(term.iloc[i])}; a verdict goes with termination 'verdict' only"
            ),
        )
        self.problems.rows(
            src,
            is_do & has_verdict,
            "verdict",
            lambda i: "do episodes have no verdict; leave it empty",
        )

        # confidence
        confidence = ep["confidence"]
        conf = confidence.to_numpy(dtype=np.float64)
        has_conf = ~np.isnan(conf)
        self.problems.rows(
            src,
            has_verdict & ~has_conf & episodes.ok("confidence"),
            "confidence",
            lambda i: "a verdict needs a confidence",
        )
        self.problems.rows(
            src,
            has_conf & has_term & ~is_verdict_end,
            "confidence",
            lambda i: (
                f"confidence is given only with a verdict (the outcome is "
                f"{_show(term.iloc[i])}); leave it empty"
            ),
        )
        out_of_range = has_conf & ((conf < 0) | (conf > 1))
        self.problems.rows(
            src,
            out_of_range,
            "confidence",
            lambda i: f"confidence {_fmt(conf[i])} is outside [0, 1]",
        )
        verifier_ids = verifiers.col("verifier_id")
        kinds = verifiers.frame.drop_duplicates("verifier_id").set_index("verifier_id")["kind"]
        episode_kind = ep["verifier_id"].map(kinds.astype(object))
        if self.levels is not None and len(self.levels):
            levels = self.levels
            person = (episode_kind == VerifierKind.PERSON.value).to_numpy(dtype=bool)
            on_level = np.isclose(conf[:, None], levels[None, :], rtol=0, atol=1e-9).any(axis=1)
            allowed = ", ".join(_fmt(x) for x in levels)
            self.problems.rows(
                src,
                has_conf & ~out_of_range & person & ~on_level,
                "confidence",
                lambda i: (
                    f"confidence {_fmt(conf[i])} is not one of the levels a person may "
                    f"report ({allowed}); verifier {_show(ep['verifier_id'].iloc[i])} is a person"
                ),
            )

        # effort and budget
        effort = ep["effort"].to_numpy(dtype=np.float64)
        budget = ep["budget"].to_numpy(dtype=np.float64)
        self.problems.rows(
            src, effort < 0, "effort", lambda i: f"effort {_fmt(effort[i])} is negative"
        )
        self.problems.rows(
            src,
            budget <= 0,
            "budget",
            lambda i: f"budget must be positive, got {_fmt(budget[i])}",
        )
        limit = budget * (1 + EFFORT_TOLERANCE) * (1 + _ROUNDING)
        over = is_check & (budget > 0) & (effort > limit)
        self.problems.rows(
            src,
            over,
            "effort",
            lambda i: (
                f"effort {_fmt(effort[i])} exceeds the budget {_fmt(budget[i])} "
                f"(by more than the {EFFORT_TOLERANCE:.1%} tolerance)"
            ),
        )

        # times and attempt
        started, ended = ep["started_at"], ep["ended_at"]
        backwards = (started.notna() & ended.notna() & (ended < started)).to_numpy(dtype=bool)
        self.problems.rows(
            src,
            backwards,
            "ended_at",
            lambda i: (
                f"ended_at {ended.iloc[i].isoformat()} is before started_at "
                f"{started.iloc[i].isoformat()}"
            ),
        )
        attempt = ep["attempt"]
        self.problems.rows(
            src,
            (attempt < 1).to_numpy(dtype=bool, na_value=False),
            "attempt",
            lambda i: f"attempt must be 1 or more, got {attempt.iloc[i]}",
        )
        passed = ep["passed"]
        self.problems.rows(
            src,
            is_check & passed.notna().to_numpy(dtype=bool),
            "passed",
            lambda i: "passed is for do episodes; leave it empty in a check episode",
        )

        # answers and tasks
        answer_id = ep["answer_id"]
        has_answer = answer_id.notna().to_numpy(dtype=bool)
        self.problems.rows(
            src,
            is_check & ~has_answer & episodes.ok("answer_id"),
            "answer_id",
            lambda i: "a check episode needs an answer_id",
        )
        answer_ids = answers.col("answer_id")
        known_answer = _isin(answer_id, answer_ids)
        self.problems.rows(
            src,
            has_answer & ~known_answer,
            "answer_id",
            lambda i: f"unknown answer {_show(answer_id.iloc[i])}; not in {answers.source.name}",
        )
        tasks_of = answers.frame.drop_duplicates("answer_id").set_index("answer_id")["task_id"]
        answer_task = answer_id.map(tasks_of.astype(object)).astype(_STR)
        task_id = ep["task_id"]
        differs = (task_id.notna() & answer_task.notna() & (task_id != answer_task)).to_numpy(
            dtype=bool
        )
        self.problems.rows(
            src,
            differs,
            "task_id",
            lambda i: (
                f"task {_show(task_id.iloc[i])} differs from the task of answer "
                f"{_show(answer_id.iloc[i])}, {_show(answer_task.iloc[i])}"
            ),
        )
        filled = task_id.where(task_id.notna(), answer_task).astype(_STR)
        self.problems.rows(
            src,
            is_do & filled.isna().to_numpy(dtype=bool) & episodes.ok("task_id") & ~has_answer,
            "task_id",
            lambda i: "a do episode needs a task_id",
        )

        # verifiers
        episode_verifier = ep["verifier_id"]
        if len(verifiers) == 0 and len(episodes) > 0:
            names = pd.unique(episode_verifier.dropna())
            example = ", ".join(repr(str(v)) for v in names[:3])
            self.problems.add(
                verifiers.source,
                f"file missing: the episodes name {len(names)} verifier(s) ({example}"
                f"{', ...' if len(names) > 3 else ''}); add a verifiers file with columns "
                "verifier_id and kind (person or model)",
            )
        else:
            unknown = episode_verifier.notna().to_numpy(dtype=bool) & ~_isin(
                episode_verifier, verifier_ids
            )
            self.problems.rows(
                src,
                unknown,
                "verifier_id",
                lambda i: (
                    f"unknown verifier {_show(episode_verifier.iloc[i])}; "
                    f"not in {verifiers.source.name}"
                ),
            )
        result = ep.copy()
        result["task_id"] = filled
        return result

    def events(self, events: _Table, episodes: _Table) -> None:
        src = events.source
        self.unique(events, "event_id")
        episode_id = events.col("episode_id")
        unknown = episode_id.notna().to_numpy(dtype=bool) & ~_isin(
            episode_id, episodes.col("episode_id")
        )
        self.problems.rows(
            src,
            unknown,
            "episode_id",
            lambda i: f"unknown episode {_show(episode_id.iloc[i])}; not in {episodes.source.name}",
        )
        offset = events.col("offset_ms")
        self.problems.rows(
            src,
            (offset < 0).to_numpy(dtype=bool, na_value=False),
            "offset_ms",
            lambda i: f"offset_ms must not be negative, got {offset.iloc[i]}",
        )

    def run(
        self, sources: Mapping[str, _Source], frames: Mapping[str, pd.DataFrame | None]
    ) -> Trace:
        episodes_raw = frames.get("episodes")
        if episodes_raw is not None and "block" in episodes_raw.columns:
            blocks = episodes_raw["block"]
            if isinstance(blocks, pd.Series):
                self._episode_blocks = blocks.reset_index(drop=True).astype(object)
        tables = {name: self.table(sources[name], frames.get(name)) for name in TABLES}
        self.answers(tables["answers"])
        self.verifiers(tables["verifiers"])
        episodes = self.episodes(tables["episodes"], tables["answers"], tables["verifiers"])
        self.events(tables["events"], tables["episodes"])
        self.problems.raise_if_any()
        return Trace(
            answers=tables["answers"].frame,
            episodes=episodes,
            verifiers=tables["verifiers"].frame,
            events=tables["events"].frame,
        )


def validate_trace(
    trace: Trace, *, confidence_levels: Sequence[float] | None = HUMAN_CONFIDENCE_LEVELS
) -> Trace:
    """Check an in-memory trace against the contract and return it with canonical types.

    Problems name the table and the 1-based row (``episodes: row 3: field 'verdict': ...``).
    ``confidence_levels`` are the levels a person may report; ``None`` skips that rule (a model
    may report any probability in [0, 1] either way). Raises :class:`TraceError` listing every
    problem found (the first :data:`MAX_REPORTED_PROBLEMS` spelled out).
    """
    sources = {name: _Source(name, name, "frame") for name in TABLES}
    frames: dict[str, pd.DataFrame | None] = {
        "answers": trace.answers,
        "verifiers": trace.verifiers,
        "episodes": trace.episodes,
        "events": trace.events,
    }
    return _Validator("trace", confidence_levels).run(sources, frames)
