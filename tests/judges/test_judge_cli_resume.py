"""`vcost judge run` resumes by the checker's full configuration, not its alias."""

from __future__ import annotations

import csv
import json

from _judge_cli import JudgeRun, models_file, replying

VERDICT = '{"verdict": "correct", "confidence": 0.9, "reason": "ok"}'


def test_changed_temperature_or_model_id_under_one_alias_is_judged_anew(
    judge_run: JudgeRun,
) -> None:
    judge_run.server.responder = replying(VERDICT)
    cold = models_file(judge_run.folder / "cold.toml", judge_run.server, temperature=0.0)
    first = judge_run.invoke(models=cold)
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["run"]["written"] == 2
    again = judge_run.invoke(models=cold)
    assert json.loads(again.stdout)["run"] == {
        **json.loads(again.stdout)["run"], "written": 0, "skipped": 2,
    }  # fmt: skip

    warm = models_file(judge_run.folder / "warm.toml", judge_run.server, temperature=0.7)
    changed = judge_run.invoke(models=warm)
    assert changed.exit_code == 0, changed.output
    assert json.loads(changed.stdout)["run"]["written"] == 2  # was "2 already there"
    other = models_file(judge_run.folder / "other.toml", judge_run.server, model="judge-2")
    assert json.loads(judge_run.invoke(models=other).stdout)["run"]["written"] == 2

    # the trace holds the current configuration only, never a mix
    trace = judge_run.folder / "run" / "trace-standard"
    episodes = list(csv.DictReader((trace / "episodes.csv").open()))
    assert len(episodes) == 2
    (verifier,) = list(csv.DictReader((trace / "verifiers.csv").open()))
    assert json.loads(verifier["extra"])["model"] == "judge-2"
    # and the older configuration resumes from the log: nothing is called again
    requests = len(judge_run.server.requests)
    back = judge_run.invoke(models=warm)
    assert json.loads(back.stdout)["run"]["skipped"] == 2
    assert len(judge_run.server.requests) == requests


TRICKY = '''\
NOTE = """first
second"""
LIMIT = 50 + \\
    0


def electricity_bill(daily_kwh):
    # the note is two lines long
    if NOTE.count("\\n") != 1:
        return -1
    total = sum(
        k for k in daily_kwh if k > 0  # negatives are meter errors
    )
    fixed = 400 if total < LIMIT else 800
    if total <= 100:
        energy = total * 12
    elif total <= 300:
        energy = 100 * 12 + (total - 100) * 18
    else:
        energy = 100 * 12 + 200 * 18 + (total - 300) * 25
    return fixed + (energy if daily_kwh else -fixed)
'''


def test_length_long_answers_grade_as_the_original(judge_run: JudgeRun) -> None:
    """The code a checker sees under `--perturbation length-long` is graded in the sandbox
    like the original (a blank line once went into a multi-line string's value and after a
    backslash continuation)."""
    from _judge_cli import TASK_ID

    from vcost.answers import Labeller, SelectedAnswer, Selection, render_answer, write_selection
    from vcost.rehearsal import prompt_text
    from vcost.sandbox import Sandbox
    from vcost.tasks import BUNDLED_BANK, load_bank

    (task,) = [t for t in load_bank(BUNDLED_BANK) if t.id == TASK_ID]
    answer = SelectedAnswer(
        answer_id="a0", task_id=TASK_ID, kind="code", source="model", model="m",
        family="fam-x", ground_truth="correct", code=TRICKY, shown=render_answer(TRICKY),
    )  # fmt: skip
    write_selection(Selection("core", 0, (answer,)), judge_run.folder / "sel.json")
    judge_run.server.responder = replying(VERDICT)
    result = judge_run.invoke("--perturbation", "length-long")
    assert result.exit_code == 0, result.output
    (request,) = judge_run.server.requests
    prompt = prompt_text(request["body"])
    shown = prompt.split("# The answer\n\n```python\n", 1)[1].split("\n```\n", 1)[0] + "\n"
    assert shown.count("\n") > TRICKY.count("\n") + 8  # it is longer
    labeller = Labeller(Sandbox("auto"))
    original = labeller.label(task, TRICKY)
    perturbed = labeller.label(task, shown)
    assert original.ground_truth == "correct"
    assert (perturbed.ground_truth, perturbed.passed) == (original.ground_truth, original.passed)
