"""The report's RQ3, RQ4 and model-configuration sections on a hand-built trace with people and
AI checkers (one checker in the study trace, one in a second trace), end to end through the CLI.

Expected values are counted by hand from the rows below. Exact 95 % Clopper-Pearson intervals
quoted from R: ``binom.test(1, 5)$conf.int`` = 0.005050763 0.716417936, ``binom.test(1, 2)`` =
0.01257912 0.98742088, ``binom.test(1, 4)`` = 0.006309463 0.805879550; 0 of 1 has the closed
form upper bound 1 - 0.025 = 0.975.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from vcost.analysis import StudyAnalysis, analyse_study
from vcost.cli import cli
from vcost.models import ModelConfig, load_models
from vcost.report.study import render_study
from vcost.trace import Trace
from vcost.trace_io import validate_trace, write_trace

ANSWERS = pd.DataFrame(
    {
        "answer_id": ["a1", "a2", "a3", "a4", "b1", "b2"],
        "task_id": ["t1", "t2", "t3", "t4", "t1", "t2"],
        "model_id": ["ma", "ma", "ma", "ma", "mb", "mb"],
        "ground_truth": ["correct", "incorrect", "incorrect", "incorrect", "correct", "incorrect"],
        "source": ["model", "natural", "planted", "planted", "model", "natural"],
        "error_level": [None, "subtle", "obvious", "subtle", None, "obvious"],
    }
)
# answer, verifier, termination, verdict, effort (people in minutes, models in tokens)
HUMAN = [
    ("a1", "p1", "verdict", "accept", 2.0), ("a1", "p2", "verdict", "accept", 4.0),
    ("a2", "p1", "verdict", "accept", 3.0), ("a2", "p2", "verdict", "reject", 6.0),
    ("a3", "p3", "verdict", "reject", 5.0), ("a3", "p1", "verdict", "reject", 7.0),
    ("a4", "p2", "verdict", "reject", 8.0),
    ("b1", "p3", "verdict", "reject", 1.0),
    ("b2", "p2", "verdict", "accept", 2.0), ("b2", "p3", "budget_exhausted", None, 10.0),
    ("b2", "chk2", "verdict", "reject", 300.0),
]  # fmt: skip
AI = [
    ("a1", "accept", "standard"), ("a2", "reject", "standard"), ("a2", "reject", "standard"),
    ("a2", "accept", "paraphrase"), ("a2", "accept", "paraphrase"),
    ("a3", "accept", "standard"), ("a3", "accept", "standard"),
    ("a4", "reject", "standard"), ("b2", "accept", "standard"), ("b2", "accept", "standard"),
]  # fmt: skip
CHK2_CONFIG = {"name": "chk2", "provider": "openai", "model": "judge-small", "snapshot": "js-1",
               "temperature": 0.0, "max_tokens": 800, "seed": 7, "system_prompt": None}  # fmt: skip
MODELS_TOML = """\
[[models]]
name = "mb"
provider = "anthropic"
model = "model-b"
temperature = 0.3
max_tokens = 2000
"""


def _episodes(rows: list[tuple[object, ...]], prefix: str) -> pd.DataFrame:
    return pd.DataFrame(
        [{"episode_id": f"{prefix}{i}", "verifier_id": v, "block": "check", "answer_id": a,
          "effort": eff, "budget": 10.0 if v.startswith("p") else 1000.0, "termination": t,
          "verdict": d, "confidence": 0.75 if d else None}
         for i, (a, v, t, d, eff) in enumerate(rows)]  # type: ignore[misc]
    )  # fmt: skip


def study_trace() -> Trace:
    verifiers = pd.DataFrame(
        {
            "verifier_id": ["p1", "p2", "p3", "chk2"],
            "kind": ["person", "person", "person", "model"],
            "extra": [None, None, None, json.dumps(CHK2_CONFIG)],
        }
    )
    trace = Trace(answers=ANSWERS, episodes=_episodes(HUMAN, "h"), verifiers=verifiers)
    return validate_trace(trace, confidence_levels=None)


def ai_trace() -> Trace:
    rows = [(a, "chk", "verdict", d, 200.0) for a, d, _ in AI]
    episodes = _episodes(rows, "j")
    at = pd.Timestamp("2027-02-20T10:00:00Z")
    events = pd.DataFrame(
        {"event_id": [f"j{i}-end" for i in range(len(AI))],
         "episode_id": [f"j{i}" for i in range(len(AI))], "at": at, "offset_ms": 100,
         "kind": "verdict", "payload": [json.dumps({"perturbation": p}) for *_, p in AI]}
    )  # fmt: skip
    verifiers = pd.DataFrame({"verifier_id": ["chk"], "kind": ["model"]})
    trace = Trace(answers=ANSWERS, episodes=episodes, verifiers=verifiers, events=events)
    return validate_trace(trace, confidence_levels=None)


def _log_records() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    answers = [
        {"v": 1, "status": "ok", "answer_id": f"ma/t{i}/0", "model": "ma", "task_id": f"t{i}",
         "ground_truth": "incorrect" if i == 0 else "correct", "error_type": "boundary",
         "error_level": "subtle", "prompt": "vcost-answer-1",
         "config": {"name": "ma", "provider": "openai", "model": "model-a", "snapshot": "a-0613",
                    "temperature": 0.7, "max_tokens": 1500, "seed": None,
                    "system_prompt": None}}
        for i in range(4)
    ]  # fmt: skip
    judgments = [
        {"v": 1, "status": "ok", "key": "chk/a1/0/standard", "checker": "chk",
         "prompt": "vcost-judge-1", "perturbation": "standard",
         "config": {"name": "chk", "provider": "openai", "model": "judge-big", "snapshot": None,
                    "temperature": 0.0, "max_tokens": 1000, "seed": 3,
                    "system_prompt": "Be strict."}}
    ]  # fmt: skip
    return answers, judgments


def _analyse() -> StudyAnalysis:
    answers, judgments = _log_records()
    return analyse_study(
        study_trace(),
        ai_checks=ai_trace(),
        model_log=[*answers, *judgments],
        models=_models(),
        reps=100,
    )


def _models() -> dict[str, ModelConfig]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "models.toml"
        path.write_text(MODELS_TOML)
        return dict(load_models(path))


def test_rq4_cells_with_checkers_from_both_traces() -> None:
    """a2: people 1/2 miss (>= q), chk 0/2 (its two perturbed accepts left out): only humans.
    a3: people 0/2, chk 2/2: only AI. a4: people 0/1, chk 0/1: neither. b2: people 2/2
    (a false accept and a run-out), chk 2/2 + chk2 0/1 = 2/3: both."""
    a = analyse_study(study_trace(), ai_checks=ai_trace(), reps=40)
    assert a.misses is not None
    cells = a.misses.answers.set_index("answer_id")["cell"].to_dict()
    assert cells == {"a2": "only humans", "a3": "only AI", "a4": "neither", "b2": "both"}
    b2 = a.misses.answers.set_index("answer_id").loc["b2"]
    assert (b2["ai_checks"], b2["ai_misses"], b2["human_misses"]) == (3, 2, 2)
    rates = a.ai_checker_rates.set_index("checker")
    # chk: wrong answers a2 x2, a3 x2, a4, b2 x2 = 7 checks, 4 accepted; a1 accepted: no FR
    assert (rates.loc["chk", "wrong_checks"], rates.loc["chk", "false_accepts"]) == (7, 4)
    assert rates.loc["chk", "fr_upper"] == pytest.approx(0.975)
    assert rates.loc["chk2", "false_accept_rate"] == 0.0
    assert any("2 check(s) of the AI-checker trace left out" in n for n in a.notes)


def test_rq3_per_model_by_hand() -> None:
    """ma: 5 checks of its wrong answers, 1 false accept (a2); natural a2: 1 of 2; success
    6/7 (a1 x2, a2 once, a3 x2, a4); correct verdicts took 2, 4, 6, 5, 7, 8: mean 32/6.
    mb: 2 checks of b2, 1 false accept; success 0/3; no correct verdict. Answers log: ma wrote
    1 wrong answer of 4."""
    a = _analyse()
    pm = a.per_model.set_index("model_id")
    ma, mb = pm.loc["ma"], pm.loc["mb"]
    assert (ma["answers"], ma["wrong_answers"], ma["natural_errors"], ma["planted_errors"]) == (
        4, 3, 1, 2)  # fmt: skip
    assert (ma["wrong_checks"], ma["false_accepts"]) == (5, 1)
    assert ma["false_accept_lower"] == pytest.approx(0.005050763, abs=1e-8)
    assert ma["false_accept_upper"] == pytest.approx(0.716417936, abs=1e-8)
    assert ma["natural_false_accept_rate"] == 0.5
    assert ma["natural_false_accept_lower"] == pytest.approx(0.01257912, abs=1e-7)
    assert ma["success"] == pytest.approx(6 / 7)
    assert ma["correct_verdict_time_conditional_mean"] == pytest.approx(32 / 6)
    assert ma["correct_verdict_time_conditional_median"] == pytest.approx(5.5)
    assert ma["natural_error_rate"] == 0.25
    assert ma["natural_error_rate_upper"] == pytest.approx(0.805879550, abs=1e-8)
    assert (mb["wrong_checks"], mb["false_accepts"], mb["success"]) == (2, 1, 0.0)
    nat = a.natural_errors.set_index("answer_id")
    assert nat.loc["a2", ["checks", "caught", "false_accepts"]].tolist() == [2, 1, 1]
    b2 = nat.loc["b2", ["checks", "caught", "false_accepts", "timeouts"]]
    assert b2.tolist() == [2, 0, 1, 1]


def test_model_configurations_in_html_markdown_and_json(tmp_path: Path) -> None:
    paths = render_study(_analyse(), tmp_path)
    configs = {c["name"]: c for c in json.loads(paths["json"].read_text())["meta"][
        "model_configurations"]}  # fmt: skip
    assert configs["ma"]["source"] == "answers log"
    assert configs["ma"]["snapshot"] == "a-0613"
    assert configs["chk"]["source"] == "judgments log"
    assert configs["chk"]["system_prompt"] == "Be strict."
    assert configs["chk2"]["source"] == "trace verifiers"
    assert configs["mb"]["source"].startswith("models TOML")
    assert configs["mb"]["prompt_version"] == "vcost-answer-1"
    assert configs["chk"]["role"] == "checker"
    assert configs["ma"]["role"] == "answers"
    assert len(configs["ma"]["prompt_hash"]) == 16
    assert configs["ma"]["prompt_hash"] != configs["chk"]["prompt_hash"]
    line = "model ma (answers): openai model-a; snapshot a-0613; temperature 0.7, max_tokens 1500"
    html_text, md = paths["html"].read_text(), paths["markdown"].read_text()
    for text in (html_text, md):
        assert line in text
        assert "model chk (checker): openai judge-big" in text
        assert "model mb (answers): anthropic model-b" in text
        assert "max_tokens 1000, seed 3; prompt vcost-judge-1 (hash " in text  # ints stay ints
        assert "model chk2 (checker): openai judge-small" in text
        assert "prompt version not recorded [trace verifiers]" in text
    head = md.split("## Notes")[0]
    assert "model chk2 (checker)" in head  # in the header block, before any section


def test_without_ai_checks_or_configurations_the_sections_say_so(tmp_path: Path) -> None:
    t = study_trace()
    people_only = Trace(t.answers, t.episodes[t.episodes["verifier_id"] != "chk2"], t.verifiers)
    a = analyse_study(people_only, reps=40)
    assert a.misses is None
    assert a.ai_checker_rates.empty
    assert any("no AI-checker episodes" in n for n in a.notes)
    assert any("model configuration not given for ma, mb" in n for n in a.notes)
    md = render_study(a, tmp_path)["markdown"].read_text()
    assert "## RQ4: human vs AI-checker misses\n\nNot computed" in md
    assert "model ma (answers): configuration not given" in md
    numbers = json.loads((tmp_path / "numbers.json").read_text())
    assert numbers["rq4_misses"] is None
    assert numbers["rq3_per_model"][0]["model_id"] == "ma"


def test_a_second_trace_that_contradicts_ground_truth_is_refused() -> None:
    from vcost.errors import InputError

    ai = ai_trace()
    flipped = ai.answers.copy()
    flipped.loc[flipped["answer_id"] == "a3", "ground_truth"] = "correct"
    with pytest.raises(InputError, match="answer 'a3' is correct in the AI-checker trace"):
        analyse_study(study_trace(), ai_checks=Trace(flipped, ai.episodes, ai.verifiers,
                                                     ai.events), reps=40)  # fmt: skip


def test_the_report_command_takes_every_optional_input(tmp_path: Path) -> None:
    study = write_trace(study_trace(), tmp_path / "trace")
    ai = write_trace(ai_trace(), tmp_path / "ai")
    answers, judgments = _log_records()
    for name, records in (("answers.jsonl", answers), ("judgments.jsonl", judgments)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "models.toml").write_text(MODELS_TOML)
    ratings = pd.DataFrame({"rater_id": ["r1", "r2", "r1", "r2"],
                            "answer_id": ["a3", "a4", "a2", "b2"],
                            "scale": "ai_written_1_5", "value": [2, 2, 4, 4]})  # fmt: skip
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    out = tmp_path / "report"
    result = CliRunner().invoke(
        cli,
        ["report", str(study), "--ai-checks", str(ai), "--models", str(tmp_path / "models.toml"),
         "--model-log", str(tmp_path / "answers.jsonl"), "--model-log",
         str(tmp_path / "judgments.jsonl"), "--realism", str(tmp_path / "ratings.csv"),
         "--reps", "40", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    numbers = json.loads((out / "numbers.json").read_text())
    assert numbers["rq4_misses"]["cells"] == {"both": 1, "only humans": 1, "only AI": 1,
                                              "neither": 1}  # fmt: skip
    assert numbers["realism"]["report_separately"] is True
    sources = {c["name"]: c["source"] for c in numbers["meta"]["model_configurations"]}
    assert sources == {"ma": "answers log", "mb": "models TOML (this vcost's prompt)",
                       "chk": "judgments log", "chk2": "trace verifiers"}  # fmt: skip
    page = (out / "report.html").read_text()
    assert "RQ4: human vs AI-checker misses" in page
    assert "RQ2 split" in page


def test_a_broken_model_log_is_named_with_its_line(tmp_path: Path) -> None:
    study = write_trace(study_trace(), tmp_path / "trace")
    answers, _ = _log_records()
    log = tmp_path / "answers.jsonl"
    log.write_text(json.dumps(answers[0]) + "\n{not json\n" + json.dumps(answers[1]) + "\n")
    result = CliRunner().invoke(cli, ["analyse", "study", str(study), "--model-log", str(log)])
    assert result.exit_code != 0
    assert f"{log}:2: not a valid answers log record" in result.output
