"""The verifier-panel simulator: valid traces, the core-study allocation, labelled defaults."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from vcost.simulate import ASSUMPTIONS, PanelStudy, simulate_panel, synthetic_trace
from vcost.trace_io import validate_trace


def test_panel_trace_is_valid_with_matched_do_and_check() -> None:
    sim = simulate_panel(PanelStudy(seed=1))
    validate_trace(sim.trace)
    ep = sim.trace.episodes
    assert (ep.groupby("verifier_id")["block"].value_counts() == 12).all()
    checks = (
        ep[ep["block"] == "check"].drop(columns="task_id").merge(sim.trace.answers, on="answer_id")
    )
    per_task = checks.groupby("task_id")["ground_truth"].agg(sorted)
    assert all(v == ["correct", "incorrect"] for v in per_task)  # one of each per task
    assert (ep.loc[ep["block"] == "check", "effort"] <= 10.0).all()
    assert (ep.loc[ep["block"] == "do", "effort"] <= 20.0).all()
    assert set(sim.true_ratio) == {"easy", "medium", "hard"}


def test_same_seed_same_trace_and_old_api_still_works() -> None:
    a, b = simulate_panel(PanelStudy(seed=9)), simulate_panel(PanelStudy(seed=9))
    assert a.trace.episodes.equals(b.trace.episodes)
    assert len(synthetic_trace().episodes) > 0


def test_every_default_names_its_source() -> None:
    names = {f.name for f in dataclasses.fields(PanelStudy)}
    for key in ("do_median", "check_ratio", "accept_wrong", "false_reject", "guess_rate"):
        assert key in names
        assert key in ASSUMPTIONS
    assert "Kaufman" in ASSUMPTIONS["accept_wrong"]


def _real_inputs() -> tuple[pd.DataFrame, pd.DataFrame]:
    tasks = pd.DataFrame(
        {"task_id": ["a", "b", "c", "d", "e", "f", "g"],
         "difficulty": ["easy", "easy", "medium", "medium", "hard", "hard", "hard"]}
    )  # fmt: skip
    rows = []
    for t in tasks["task_id"]:
        rows.append({"answer_id": f"{t}-ok", "task_id": t, "model_id": "m1",
                     "ground_truth": "correct"})  # fmt: skip
        for j, level in enumerate(("subtle", "intermediate")):
            rows.append({"answer_id": f"{t}-bad{j}", "task_id": t, "model_id": "m2",
                         "ground_truth": "incorrect", "error_level": level})  # fmt: skip
    return tasks, pd.DataFrame(rows)


def test_panel_on_given_tasks_and_answers_simulates_only_the_people() -> None:
    tasks, answers = _real_inputs()
    sim = simulate_panel(PanelStudy(people=8, seed=2, events=False), tasks=tasks, answers=answers)
    # the odd hard task has no partner and is left out; pairs stay within a difficulty label
    assert list(sim.tasks["task_id"]) == ["a", "b", "c", "d", "e", "f"]
    assert sim.tasks.groupby("pair_id")["difficulty"].nunique().eq(1).all()
    ep = sim.trace.episodes
    checks = (
        ep[ep["block"] == "check"].drop(columns="task_id").merge(sim.trace.answers, on="answer_id")
    )
    assert set(checks["answer_id"]) <= set(answers["answer_id"])
    validate_trace(sim.trace)
    assert set(ep.loc[ep["block"] == "do", "task_id"]) <= set("abcdef")
    # the matched design: nobody checks an answer to a task they did
    done = set(zip(ep.loc[ep["block"] == "do", "verifier_id"],
                   ep.loc[ep["block"] == "do", "task_id"], strict=True))  # fmt: skip
    assert not done & set(zip(checks["verifier_id"], checks["task_id"], strict=True))
    # both wrong answers of a task are used in turn, and both ground truths are checked
    assert set(checks["ground_truth"]) == {"correct", "incorrect"}
    assert checks.loc[checks["ground_truth"] == "incorrect", "answer_id"].nunique() == 12


def test_panel_refuses_tasks_without_both_kinds_of_answer() -> None:
    tasks, answers = _real_inputs()
    with pytest.raises(ValueError, match="without both a correct and an incorrect"):
        simulate_panel(tasks=tasks, answers=answers[answers["answer_id"] != "c-ok"])
    with pytest.raises(ValueError, match="not one of"):
        simulate_panel(tasks=tasks.assign(difficulty="extreme"), answers=answers)


def test_every_person_checks_correct_and_wrong_answers() -> None:
    """Seed 003's core design: each person checks both kinds (a former allocation gave half
    the panel only wrong answers and the other half only correct ones)."""
    for people in (4, 8):
        sim = simulate_panel(PanelStudy(people=people, seed=5, events=False))
        ep = sim.trace.episodes
        checks = ep[ep["block"] == "check"].merge(sim.trace.answers, on="answer_id")
        mix = checks.groupby("verifier_id")["ground_truth"].value_counts().unstack(fill_value=0)
        assert (mix["correct"] > 0).all()
        assert (mix["incorrect"] > 0).all()


def test_realism_ratings_follow_the_declared_means_and_leave_the_trace_alone() -> None:
    """Each person rates every answer they checked; means by kind recover ``realism_mean``
    (a 200-person panel; rounding and clipping to 1-5 shift a mean by well under 0.15 here)."""
    study = PanelStudy(people=200, seed=6, events=False)
    sim = simulate_panel(study)
    ratings = sim.ratings.merge(sim.trace.answers, on="answer_id")
    assert set(ratings["value"]) <= {1, 2, 3, 4, 5}
    checks = sim.trace.episodes[sim.trace.episodes["block"] == "check"]
    assert len(sim.ratings) == len(checks[["verifier_id", "answer_id"]].drop_duplicates())
    kind = ratings["source"].where(ratings["ground_truth"] == "incorrect", "correct")
    means = ratings.groupby(kind)["value"].mean()
    for name, target in study.realism_mean.items():
        assert means[name] == pytest.approx(target, abs=0.15)
    other = simulate_panel(dataclasses.replace(study, realism_mean={"correct": 1.0,
                                                                    "natural": 1.0,
                                                                    "planted": 5.0}))  # fmt: skip
    assert other.trace.episodes.equals(sim.trace.episodes)


def test_every_session_holds_a_correct_and_a_wrong_check() -> None:
    """Seed 003: each session mixes correct and wrong answers to check (sessions of 3 pairs)."""
    from vcost.analysis import attempt_table

    for people, seed in ((4, 0), (8, 3), (20, 7)):
        sim = simulate_panel(PanelStudy(people=people, seed=seed, events=False))
        att = attempt_table(sim.trace)
        checks = att[att["block"] == "check"]
        kinds = checks.groupby(["verifier_id", "session"])["ground_truth"].nunique()
        assert (kinds == 2).all()
