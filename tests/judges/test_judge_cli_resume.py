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
    assert json.loads(first.output)["run"]["written"] == 2
    again = judge_run.invoke(models=cold)
    assert json.loads(again.output)["run"] == {
        **json.loads(again.output)["run"], "written": 0, "skipped": 2,
    }  # fmt: skip

    warm = models_file(judge_run.folder / "warm.toml", judge_run.server, temperature=0.7)
    changed = judge_run.invoke(models=warm)
    assert changed.exit_code == 0, changed.output
    assert json.loads(changed.output)["run"]["written"] == 2  # was "2 already there"
    other = models_file(judge_run.folder / "other.toml", judge_run.server, model="judge-2")
    assert json.loads(judge_run.invoke(models=other).output)["run"]["written"] == 2

    # the trace holds the current configuration only, never a mix
    trace = judge_run.folder / "run" / "trace-standard"
    episodes = list(csv.DictReader((trace / "episodes.csv").open()))
    assert len(episodes) == 2
    (verifier,) = list(csv.DictReader((trace / "verifiers.csv").open()))
    assert json.loads(verifier["extra"])["model"] == "judge-2"
    # and the older configuration resumes from the log: nothing is called again
    requests = len(judge_run.server.requests)
    back = judge_run.invoke(models=warm)
    assert json.loads(back.output)["run"]["skipped"] == 2
    assert len(judge_run.server.requests) == requests
