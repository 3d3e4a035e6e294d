"""The model commands end to end through the CLI, against local servers and a cassette."""

from __future__ import annotations

import json
import shutil
from importlib.resources import as_file, files
from pathlib import Path

from click.testing import CliRunner

from offline_run import OfflineModels
from vcost.cli import cli
from vcost.models import ModelConfig


def _toml(path: Path, configs: dict[str, ModelConfig]) -> Path:
    lines = []
    for c in configs.values():
        lines += [
            "[[models]]", f'name = "{c.name}"', f'provider = "{c.provider}"',
            f'model = "{c.model}"', f'family = "{c.family}"', f'base_url = "{c.base_url}"',
            f'api_key_env = "{c.api_key_env}"', "max_tokens = 2000", "max_retries = 1", "",
        ]  # fmt: skip
    path.write_text("\n".join(lines))
    return path


def test_generate_select_judge_then_replay(tmp_path: Path, offline: OfflineModels) -> None:
    runner = CliRunner()
    answerers = _toml(tmp_path / "models.toml", offline.answerers)
    checkers = _toml(tmp_path / "checkers.toml", offline.checkers)
    run = tmp_path / "run"
    tasks = ["--task", "e-electricity-bill", "--task", "bottle-deposit-refund"]

    checked = runner.invoke(cli, ["models", "check", str(answerers)])
    assert checked.exit_code == 0, checked.output
    assert "strong" in checked.output
    assert "weak" in checked.output

    made = runner.invoke(
        cli, ["answers", "generate", "--models", str(answerers), *tasks, "-n", "2", "--out",
              str(run), "--json"],
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    body = json.loads(made.stdout)
    assert body["run"]["written"] == 8
    assert {m["model"] for m in body["models"]} == {"strong", "weak"}

    again = runner.invoke(
        cli, ["answers", "generate", "--models", str(answerers), *tasks, "-n", "2", "--out",
              str(run), "--json"],
    )  # fmt: skip
    assert json.loads(again.stdout)["run"]["skipped"] == 8  # a rerun resumes: nothing redone

    table = runner.invoke(cli, ["answers", "table", str(run / "answers.jsonl")])
    assert "Natural errors per model" in table.output

    selected = runner.invoke(
        cli, ["answers", "select", str(run / "answers.jsonl"), "--out", str(run / "sel.json"),
              "--seed", "2", "--json"],
    )  # fmt: skip
    assert selected.exit_code == 0, selected.output
    assert json.loads(selected.stdout)["counts"]["ground_truth"]["correct"] == 2

    judged = runner.invoke(
        cli, ["judge", "run", str(run / "sel.json"), "--models", str(checkers), "-k", "2",
              "--out", str(run)],
    )  # fmt: skip
    assert judged.exit_code == 0, judged.output
    assert "false accept" in judged.output
    assert (run / "trace-standard" / "episodes.csv").exists()

    own = runner.invoke(
        cli, ["judge", "run", str(run / "sel.json"), "--models", str(checkers), "-k", "2",
              "--out", str(run), "--perturbation", "same-family", "--json"],
    )  # fmt: skip
    assert own.exit_code == 0, own.output
    flips = json.loads(own.stdout)["flips"]
    assert flips
    assert {f["perturbation"] for f in flips} == {"same-family"}
    assert {f["checker"] for f in flips} == {"checker-a"}  # the only checker with a family here

    pairs = runner.invoke(
        cli, ["judge", "pairwise", str(run / "sel.json"), "--models", str(checkers), "-k", "2",
              "--out", str(run)],
    )  # fmt: skip
    assert pairs.exit_code == 0, pairs.output
    assert "Order swap" in pairs.output

    # replay: no server, a fresh run folder, the same cassette
    offline.stop()
    replay = tmp_path / "replay"
    again = runner.invoke(
        cli, ["judge", "run", str(run / "sel.json"), "--models", str(checkers), "-k", "2",
              "--out", str(replay), "--cassette", str(run / "cassette.jsonl"), "--mode",
              "replay"],
    )  # fmt: skip
    assert again.exit_code == 0, again.output
    assert (replay / "trace-standard" / "episodes.csv").read_text() == (
        run / "trace-standard" / "episodes.csv"
    ).read_text()


def test_unknown_model_name_and_missing_cassette(tmp_path: Path, offline: OfflineModels) -> None:
    runner = CliRunner()
    models = _toml(tmp_path / "models.toml", offline.answerers)
    wrong = runner.invoke(
        cli, ["answers", "generate", "--models", str(models), "--model", "nope", "--out",
              str(tmp_path)],
    )  # fmt: skip
    assert wrong.exit_code == 2
    assert "unknown model(s): nope" in wrong.output
    assert "strong, weak" in wrong.output
    replay = runner.invoke(
        cli, ["answers", "generate", "--models", str(models), "--out", str(tmp_path / "r"),
              "--mode", "replay"],
    )  # fmt: skip
    assert replay.exit_code == 2
    assert "cassette does not exist" in replay.output


def test_a_models_file_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    """A models.toml saved by a Windows editor (UTF-8 with a byte-order mark) checks as the
    same file without it; it used to fail as "not valid TOML" at line 1."""
    models = Path(__file__).parents[2] / "src" / "vcost" / "examples" / "ai-checkers"
    bom = tmp_path / "models.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + (models / "models.toml").read_bytes())
    plain = CliRunner().invoke(cli, ["models", "check", str(models / "models.toml")])
    result = CliRunner().invoke(cli, ["models", "check", str(bom)])
    assert result.exit_code == plain.exit_code == 0, result.output
    assert "4 model(s) in" in result.output
    assert "4 model(s) in" in plain.output


def test_a_bad_selection_is_refused_before_any_judging(tmp_path: Path) -> None:
    """A selection with an answer id twice, or a ground truth other than correct/incorrect, is
    refused when the selection is read (naming the file, the answer and the field), not after
    every judgment was made (and, in record mode, paid for): no judgment is written."""
    example = files("vcost") / "examples" / "ai-checkers"
    data = json.loads((example / "selection.json").read_text())
    duplicated = json.loads(json.dumps(data))
    duplicated["answers"].append(duplicated["answers"][0])
    maybe = json.loads(json.dumps(data))
    maybe["answers"][1]["ground_truth"] = "maybe"
    unknown_source = json.loads(json.dumps(data))
    unknown_source["answers"][2]["source"] = "human"
    cases = [
        (duplicated, "row 25: field 'answer_id'", "duplicate answer_id"),
        (maybe, "row 2: field 'ground_truth'", "'maybe'"),
        (unknown_source, "row 3: field 'source'", "'human'"),
    ]
    with as_file(example / "models.toml") as models, as_file(example / "cassette.jsonl") as tape:
        for n, (selection, where, what) in enumerate(cases):
            path = tmp_path / f"sel{n}.json"
            path.write_text(json.dumps(selection))
            out = tmp_path / f"out{n}"
            out.mkdir()
            shutil.copy(tape, out / "cassette.jsonl")
            result = CliRunner().invoke(
                cli,
                ["judge", "run", str(path), "--models", str(models), "--model",
                 "demo-checker-1", "-k", "1", "--out", str(out), "--mode", "replay"],
            )  # fmt: skip
            assert result.exit_code == 2, result.output
            assert "Traceback" not in result.output
            assert f"{path}: {where}" in result.output
            assert what in result.output
            assert "projected cost" not in result.output
            assert not (out / "judgments.jsonl").exists()
