"""`vcost answers import` and `compare-evalplus`: other harnesses' sample files, graded by vcost.

The fixtures in tests/data/imports/ were written for these tests from the formats' published
field descriptions (no file was downloaded): human-eval's ``samples.jsonl`` (task_id +
completion, the completion following the problem's prompt), EvalPlus's samples (``solution``,
a whole program) and its ``eval_results.json`` in both layouts (current: per-sample objects
with ``base_status``/``plus_status``; older: ``base``/``plus`` lists of ``[status, per-test
results]``), bigcode-evaluation-harness's generations JSON (one list per task in dataset order),
and lm-evaluation-harness's ``--log_samples`` JSONL for its humaneval task (``doc``, ``resps``,
``filtered_resps`` with filter ``create_test``). Each holds, per task, a correct sample and a
wrong one (an adjacent-pairs-only has_close_elements, a startswith filter, a strlen cut off
mid-line), so the expected grades are known by construction. Grading runs in the real
sandbox against a bank imported from the installed human-eval package.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vcost.answers import AnswerLog, import_samples, read_samples
from vcost.answers._evalplus import compare_evalplus, read_evalplus_results
from vcost.cli import cli
from vcost.errors import InputError
from vcost.sandbox import Sandbox
from vcost.tasks import load_bank

DATA = Path(__file__).parents[1] / "data" / "imports"
LM_EVAL = DATA / "samples_humaneval_2026-11-30T14-02-11.jsonl"

# (bank task, sample index) -> ground truth, by construction of the fixtures
EXPECTED = {
    ("humaneval-000", 0): "correct",
    ("humaneval-000", 1): "incorrect",
    ("humaneval-007", 0): "correct",
    ("humaneval-007", 1): "incorrect",
    ("humaneval-023", 0): "correct",
    ("humaneval-023", 1): "incorrect",
}


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _grades(run: Path, model: str) -> dict[tuple[str, int], str]:
    return {
        (r["task_id"], r["repeat"]): r["ground_truth"]
        for r in AnswerLog(run / "answers.jsonl").answers()
        if r["model"] == model
    }


def test_human_eval_samples_are_graded_with_their_index_kept(
    humaneval_bank: Path, tmp_path: Path
) -> None:
    out = _invoke(
        "answers", "import", "humaneval", str(DATA / "humaneval_samples.jsonl"),
        "--bank", str(humaneval_bank), "--model", "coder-7b", "--out", str(tmp_path),
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "6 answer(s) written" in out.output
    assert "HumanEval/99" in out.output  # names no bank task: counted and listed
    assert _grades(tmp_path, "coder-7b") == EXPECTED
    records = {r["answer_id"]: r for r in AnswerLog(tmp_path / "answers.jsonl").answers()}
    cut = records["coder-7b/humaneval-023/1"]
    assert cut["extraction"] == "as-is"
    assert "SyntaxError" in cut["reason"]
    assert cut["error_level"] == "obvious"
    assert cut["prompt"] == "import:humaneval:humaneval_samples.jsonl"
    assert "line 6" in cut["request_hash"]
    # the completion is what the model wrote; the graded program is prompt + completion
    assert cut["text"] == "    return len(string\n"
    assert cut["code"].startswith("\n\ndef strlen(string: str) -> int:\n")
    # a rerun resumes: nothing graded twice
    again = _invoke(
        "answers", "import", "humaneval", str(DATA / "humaneval_samples.jsonl"),
        "--bank", str(humaneval_bank), "--model", "coder-7b", "--out", str(tmp_path),
    )  # fmt: skip
    assert "0 answer(s) written, 6 already there" in again.output


def test_a_second_file_under_the_same_model_name_is_refused_not_skipped(
    humaneval_bank: Path, tmp_path: Path
) -> None:
    """Two models' files, both named samples.jsonl (human-eval's default), imported without
    --model into one log: their answer ids (model/task/index) are the same. Resuming used to
    skip the second file's samples as "already there", losing its (wrong) answer; a sample
    whose program differs from the logged one is refused, naming the id and what to do."""
    right, wrong = tmp_path / "a" / "samples.jsonl", tmp_path / "b" / "samples.jsonl"
    for path, completion in ((right, "    return len(string)\n"), (wrong, "    return 0\n")):
        path.parent.mkdir()
        path.write_text(json.dumps({"task_id": "HumanEval/23", "completion": completion}) + "\n")
    run = tmp_path / "run"
    first = _invoke(
        "answers", "import", "humaneval", str(right), "--bank", str(humaneval_bank),
        "--out", str(run),
    )  # fmt: skip
    assert first.exit_code == 0, first.output
    second = CliRunner().invoke(
        cli,
        ["answers", "import", "humaneval", str(wrong), "--bank", str(humaneval_bank),
         "--out", str(run)],
    )  # fmt: skip
    assert second.exit_code == 2, second.output
    assert "samples/humaneval-023/0 is already in the log with other code" in second.output
    assert "--model" in second.output
    assert [r["ground_truth"] for r in AnswerLog(run / "answers.jsonl").answers()] == ["correct"]
    resumed = _invoke(
        "answers", "import", "humaneval", str(right), "--bank", str(humaneval_bank),
        "--out", str(run),
    )  # fmt: skip
    assert "0 answer(s) written, 1 already there" in resumed.output


def test_imported_records_have_exactly_the_generated_records_fields(
    humaneval_bank: Path, tmp_path: Path
) -> None:
    """The answers log of an import is the same format `vcost answers generate` writes."""
    from datetime import UTC, datetime

    from vcost.answers import Labeller, answer_record
    from vcost.models import Completion, Usage

    tasks = load_bank(humaneval_bank)
    log = AnswerLog(tmp_path / "answers.jsonl")
    import_samples(
        DATA / "evalplus_samples.jsonl", "humaneval", tasks, log=log, sandbox=Sandbox("auto"),
        model="coder-ep",
    )  # fmt: skip
    task = next(t for t in tasks if t.id == "humaneval-023")
    generated = answer_record(
        task,
        "m",
        "f",
        0,
        Completion(
            "```python\ndef strlen(s):\n    return len(s)\n```",
            {},
            "h",
            Usage(1, 1),
            1.0,
            None,
            datetime.now(UTC),
            "stop",
            {},
        ),
        Labeller(Sandbox("auto")),
    )
    for record in log.answers():
        assert set(record) == set(generated)
    assert _grades(tmp_path, "coder-ep") == {
        ("humaneval-000", 0): "correct",
        ("humaneval-000", 1): "incorrect",
        ("humaneval-007", 0): "correct",
        ("humaneval-023", 0): "correct",
    }


def test_bigcode_and_lm_eval_files_give_the_same_grades(
    humaneval_bank: Path, tmp_path: Path
) -> None:
    out = _invoke(
        "answers", "import", "bigcode", str(DATA / "bigcode_generations.json"),
        "--bank", str(humaneval_bank), "--model", "coder-bc", "--out", str(tmp_path),
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "6 task id(s) name no task of the bank" in out.output  # HumanEval/1..6
    assert _grades(tmp_path, "coder-bc") == {
        k: v for k, v in EXPECTED.items() if k[0] != "humaneval-023"
    }
    out = _invoke(
        "answers", "import", "lm-eval", str(LM_EVAL), "--bank", str(humaneval_bank),
        "--out", str(tmp_path), "--json",
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    body = json.loads(out.output)
    assert body["written"] == 6
    assert body["unmatched"] == []
    # the model defaults to the file's name without suffixes
    assert _grades(tmp_path, "samples_humaneval_2026-11-30T14-02-11") == EXPECTED


def test_bigcode_start_shifts_the_task_numbers(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    path.write_text(json.dumps([["a", "b"], ["c"]]))
    rows = read_samples(path, "bigcode", start=7)
    assert [(r.task_ref, r.index, r.where) for r in rows] == [
        ("HumanEval/7", 0, "[0][0]"),
        ("HumanEval/7", 1, "[0][1]"),
        ("HumanEval/8", 0, "[1][0]"),
    ]


def test_lm_eval_raw_generations_follow_the_documents_prompt(tmp_path: Path) -> None:
    line = json.loads(LM_EVAL.read_text().splitlines()[0])
    del line["filtered_resps"]
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(line) + "\n")
    rows = read_samples(path, "lm-eval")
    assert [r.prompt is not None and r.program is None for r in rows] == [True, True]
    assert rows[1].completion == line["resps"][0][1]


@pytest.mark.parametrize(
    ("fmt", "text", "where"),
    [
        ("humaneval", '{"task_id": "HumanEval/0", "completion": "x"}\n{"completion": "y"}\n',
         ":2: field 'task_id'"),
        ("humaneval", '{"task_id": "HumanEval/0"}\n', ":1: field 'completion'"),
        ("humaneval", '{"task_id": "HumanEval/0", "solution": 3}\n', ":1: field 'solution'"),
        ("humaneval", '{"task_id": "HumanEval/0", "completion": "x"}\n{oops\n', ":2: not JSON"),
        ("humaneval", '["HumanEval/0", "x"]\n', ":1: a sample must be a JSON object"),
        ("bigcode", '[["ok"], "not a list"]', ": field '[1]'"),
        ("bigcode", '[["ok", 7]]', ": field '[0][1]'"),
        ("bigcode", '[["ok"],\n [', ":2: not JSON"),
        ("lm-eval", '{"doc_id": 0, "doc": {"prompt": "p"}, "resps": [["x"]]}\n',
         ":1: field 'doc.task_id'"),
        ("lm-eval", '{"doc_id": 0, "doc": {"task_id": "HumanEval/0"}, "resps": [[1]]}\n',
         ":1: field 'resps'"),
        ("lm-eval", '{"doc_id": 0, "resps": [["x"]]}\n', ":1: field 'doc'"),
        ("lm-eval",
         '{"doc": {"task_id": "a"}, "filtered_resps": ["x"], "filter": "strict"}\n'
         '{"doc": {"task_id": "a"}, "filtered_resps": ["x"], "filter": "flexible"}\n',
         "field 'filter': the samples were logged with 2 filters"),
    ],
)  # fmt: skip
def test_bad_sample_files_are_named_by_file_line_and_field(
    tmp_path: Path, fmt: str, text: str, where: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_samples(path, fmt)  # type: ignore[arg-type]
    assert f"{path}{where}" in str(caught.value) or where in str(caught.value)
    assert str(path) in str(caught.value)


def test_the_cli_prints_one_clear_message_for_a_bad_file(
    humaneval_bank: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "samples.jsonl"
    bad.write_text('{"task_id": "HumanEval/0", "completion": "x"}\n{"task_id": 3}\n')
    out = CliRunner().invoke(
        cli,
        ["answers", "import", "humaneval", str(bad), "--bank", str(humaneval_bank),
         "--out", str(tmp_path / "run")],
    )  # fmt: skip
    assert out.exit_code == 2
    assert f"error: {bad}:2: field 'task_id': no task id" in out.output
    assert "Traceback" not in out.output
    assert not (tmp_path / "run" / "answers.jsonl").exists()  # nothing half-written


def test_a_completion_without_a_known_prompt_asks_for_the_problems_file(
    humaneval_bank: Path, tmp_path: Path
) -> None:
    problems = tmp_path / "problems.jsonl"
    problems.write_text(
        json.dumps({"task_id": "HumanEval/0", "prompt": "p", "entry_point": "f",
                    "canonical_solution": "", "test": ""}) + "\n"
    )  # fmt: skip
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/7", "completion": "x"}) + "\n")
    with pytest.raises(InputError) as caught:
        import_samples(
            samples, "humaneval", load_bank(humaneval_bank),
            log=AnswerLog(tmp_path / "a.jsonl"), sandbox=Sandbox("auto"), model="m",
            problems=problems,
        )  # fmt: skip
    assert f"{samples}:1: field 'task_id': no prompt for HumanEval/7" in str(caught.value)
    assert "--problems" in str(caught.value)


# ---------------------------------------------------------------- EvalPlus verdicts


def test_both_evalplus_layouts_read_the_same_verdicts() -> None:
    new = read_evalplus_results(DATA / "evalplus_eval_results.json")
    old = read_evalplus_results(DATA / "evalplus_eval_results_v0.json")
    assert [(s.task_id, s.index, s.base_pass, s.plus_pass) for s in new] == [
        (s.task_id, s.index, s.base_pass, s.plus_pass) for s in old
    ]
    assert [(s.task_id, s.index, s.base_pass, s.plus_pass) for s in new] == [
        ("HumanEval/0", 0, True, True),
        ("HumanEval/0", 1, False, False),
        ("HumanEval/7", 0, True, True),
        ("HumanEval/23", 0, True, False),  # plus timed out
    ]


def test_agreement_table_and_disagreements_beside_vcost_grades(
    humaneval_bank: Path, tmp_path: Path
) -> None:
    """Counts by hand: base 3 both pass + 1 both fail of 4 (kappa 1); base+plus: EvalPlus's
    plus timeout on HumanEval/23 makes it fail where vcost passes: 2 + 1 agree of 4, and
    kappa = (0.75 - 0.5) / (1 - 0.5) = 0.5 (p_e = 0.5 * 0.25 + 0.5 * 0.75 = 0.5)."""
    _invoke(
        "answers", "import", "evalplus", str(DATA / "evalplus_samples.jsonl"),
        "--bank", str(humaneval_bank), "--model", "coder-ep", "--out", str(tmp_path),
    )  # fmt: skip
    out = _invoke(
        "answers", "compare-evalplus", str(DATA / "evalplus_eval_results_v0.json"),
        str(tmp_path / "answers.jsonl"), "--model", "coder-ep", "--bank", str(humaneval_bank),
        "--json",
    )  # fmt: skip
    body = json.loads(out.output)
    rows = {r["evalplus_set"]: r for r in body["rows"]}
    assert (rows["base"]["both_pass"], rows["base"]["both_fail"]) == (3, 1)
    assert rows["base"]["kappa"] == pytest.approx(1.0)
    plus = rows["base+plus"]
    assert (plus["both_pass"], plus["both_fail"], plus["vcost_only"]) == (2, 1, 1)
    assert plus["agreement"] == pytest.approx(0.75)
    assert plus["kappa"] == pytest.approx(0.5)
    assert [d["answer_id"] for d in body["disagreements"]] == ["coder-ep/humaneval-023/0"]
    text = _invoke(
        "answers", "compare-evalplus", str(DATA / "evalplus_eval_results.json"),
        str(tmp_path / "answers.jsonl"), "--model", "coder-ep",
    ).output  # fmt: skip
    assert "coder-ep/humaneval-023/0 (base+plus): EvalPlus base pass, plus timeout" in text


def test_compare_matches_samples_by_index_not_by_position_in_the_log() -> None:
    samples = read_evalplus_results(DATA / "evalplus_eval_results.json")
    records = [
        {"model": "m", "task_id": "humaneval-000", "repeat": 1, "ground_truth": "correct",
         "answer_id": "m/humaneval-000/1"},
        {"model": "m", "task_id": "humaneval-000", "repeat": 0, "ground_truth": "correct",
         "answer_id": "m/humaneval-000/0"},
    ]  # fmt: skip
    result = compare_evalplus(samples, records, model="m")
    assert [d.answer_id for d in result.disagreements] == ["m/humaneval-000/1"] * 2
    assert result.unmatched == ("HumanEval/7#0", "HumanEval/23#0")


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"date": "x"}, "field 'eval'"),
        ({"eval": {"HumanEval/0": [{"base_status": "ok"}]}}, 'eval["HumanEval/0"][0].base_status'),
        ({"eval": {"HumanEval/0": {"base": [["success", []]], "plus": []}, "HumanEval/1": {
            "base": [["success", []], "weird"]}}}, 'eval["HumanEval/1"].base[1]'),
        ({"eval": {"HumanEval/0": {"nfiles": 3, "base": [["success", []]]}}},
         'eval["HumanEval/0"]'),
        ({"eval": {"HumanEval/0": {"base": [["success", []]], "plus": [["failed", []]] * 2}}},
         'eval["HumanEval/0"].plus'),
    ],
)  # fmt: skip
def test_bad_eval_results_name_the_entry(tmp_path: Path, data: Any, field: str) -> None:
    path = tmp_path / "eval_results.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as caught:
        read_evalplus_results(path)
    assert str(path) in str(caught.value)
    assert field in str(caught.value)


def test_inspect_logs_go_through_the_same_command(humaneval_bank: Path, tmp_path: Path) -> None:
    """FORMAT inspect calls vcost's existing Inspect reader (vcost.judges.inspect_answers)."""
    code = "```python\ndef strlen(string: str) -> int:\n    return len(string)\n```"
    log = {
        "version": 2, "status": "success", "eval": {"task": "humaneval", "model": "openai/gpt-x"},
        "samples": [{
            "id": "HumanEval/23", "epoch": 1, "input": "...",
            "metadata": {"task_id": "humaneval-023"},
            "output": {"model": "openai/gpt-x", "choices": [{"message": {
                "role": "assistant", "content": [{"type": "text", "text": code}]}}]},
            "scores": {},
        }],
    }  # fmt: skip
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    out = _invoke(
        "answers", "import", "inspect", str(path), "--bank", str(humaneval_bank),
        "--out", str(tmp_path / "run"), "--json",
    )  # fmt: skip
    assert json.loads(out.output)["written"] == 1
    assert _grades(tmp_path / "run", "openai/gpt-x") == {("humaneval-023", 0): "correct"}


def test_a_document_logged_twice_is_refused(humaneval_bank: Path, tmp_path: Path) -> None:
    line = LM_EVAL.read_text().splitlines()[0]
    path = tmp_path / "s.jsonl"
    path.write_text(f"{line}\n{line}\n")
    with pytest.raises(InputError) as caught:
        import_samples(
            path, "lm-eval", load_bank(humaneval_bank), log=AnswerLog(tmp_path / "a.jsonl"),
            sandbox=Sandbox("auto"), model="m",
        )  # fmt: skip
    assert f"{path}:2: field 'task_id': sample 0 of HumanEval/0 appears twice" in str(caught.value)
    assert not (tmp_path / "a.jsonl").exists()


def _write_eval(path: Path, log: dict[str, Any]) -> Path:
    """tests/judges/_eval_zip.py's writer: a current inspect_ai .eval (zstd zip entries)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_eval_zip", Path(__file__).parents[1] / "judges" / "_eval_zip.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.write_eval(path, log)  # type: ignore[no-any-return]


def test_an_inspect_evals_humaneval_log_is_matched_and_graded_as_its_scorer_does(
    humaneval_bank: Path, tmp_path: Path
) -> None:
    """inspect_evals' humaneval task names each sample by its HumanEval id (``HumanEval/23``),
    keeps the problem in ``metadata`` (``prompt``, ``test``, ``entry_point``) and its
    ``verify`` scorer runs ``metadata.prompt`` + the first code block of the reply (the
    whole reply when there is none). The import once matched such samples against bank ids
    only (all three listed as 'not in the bank') and would have graded a body-only reply
    without its function header."""
    from vcost.tasks.humaneval import load_problems

    problems = {p.task_id: p for p in load_problems()}

    def sample(task_id: str, epoch: int, text: str) -> dict[str, Any]:
        p = problems[task_id]
        return {
            "id": task_id, "epoch": epoch, "input": "Read the following function ..." + p.prompt,
            "target": p.canonical_solution,
            "metadata": {"prompt": p.prompt, "test": p.test, "entry_point": p.entry_point},
            "output": {"model": "openai/gpt-x", "completion": text, "choices": [{"message": {
                "role": "assistant", "content": text}, "stop_reason": "stop"}]},
            "scores": {"verify": {"value": "C"}, "model_graded_qa": {"value": "C"}},
        }  # fmt: skip

    whole = "```python\ndef strlen(string: str) -> int:\n    return len(string)\n```"
    body = "    return len(string)\n"  # no fence, no header: the scorer puts the prompt first
    wrong = "```python\n    return len(string) - 1\n```"
    log = {
        "version": 2, "status": "success",
        "eval": {"task": "inspect_evals/humaneval", "model": "openai/gpt-x"},
        "samples": [sample("HumanEval/23", 1, whole), sample("HumanEval/23", 2, body),
                    sample("HumanEval/23", 3, wrong), sample("HumanEval/99", 1, whole)],
    }  # fmt: skip
    path = _write_eval(tmp_path / "humaneval.eval", log)
    out = _invoke(
        "answers", "import", "inspect", str(path), "--bank", str(humaneval_bank),
        "--out", str(tmp_path / "run"), "--json",
    )  # fmt: skip
    body_json = json.loads(out.output)
    assert body_json["written"] == 3
    assert body_json["unmatched"] == ["HumanEval/99"]
    assert _grades(tmp_path / "run", "openai/gpt-x") == {
        ("humaneval-023", 0): "correct",
        ("humaneval-023", 1): "correct",
        ("humaneval-023", 2): "incorrect",
    }
    records = {r["repeat"]: r for r in AnswerLog(tmp_path / "run" / "answers.jsonl").answers()}
    assert records[1]["code"] == problems["HumanEval/23"].prompt + body
    assert records[1]["text"] == body
    # the scorers' trace names the same answers when given the bank (docs/judges.md)
    trace = _invoke(
        "judge", "import-inspect", str(path), "--truth", "verify", "--bank", str(humaneval_bank),
        "--out", str(tmp_path / "trace"),
    )  # fmt: skip
    assert trace.exit_code == 0, trace.output
    episodes = (tmp_path / "trace" / "episodes.csv").read_text()
    for answer_id in (r["answer_id"] for r in records.values()):
        assert answer_id in episodes


def test_inspect_refuses_a_model_name_the_log_already_gives(
    humaneval_bank: Path, tmp_path: Path
) -> None:
    """An Inspect log names its model (eval.model), and `vcost judge import-inspect` names the
    answers by it; --model was silently ignored, so answers landed under another name than
    the one asked for."""
    log = {"version": 2, "status": "success", "eval": {"task": "t", "model": "openai/gpt-x"},
           "samples": []}  # fmt: skip
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    out = CliRunner().invoke(
        cli,
        ["answers", "import", "inspect", str(path), "--bank", str(humaneval_bank), "--model",
         "my-name", "--out", str(tmp_path / "run")],
    )  # fmt: skip
    assert out.exit_code == 2, out.output
    assert "field '--model': an Inspect log names its model (eval.model)" in out.output
    assert not (tmp_path / "run" / "answers.jsonl").exists()


def test_an_evalplus_solution_wins_over_a_completion_on_the_same_line(tmp_path: Path) -> None:
    """EvalPlus's evaluator runs ``solution`` when a sample has one, else prompt + completion;
    the index counts samples per task in file order, whichever field they carry."""
    path = tmp_path / "samples.jsonl"
    rows = [
        {"task_id": "HumanEval/23", "completion": "    return 0\n", "solution": "def strlen(s):\n"
         "    return len(s)\n"},
        {"task_id": "HumanEval/23", "completion": "    return len(string)\n"},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    first, second = read_samples(path, "humaneval")
    assert (first.index, first.program, first.completion) == (0, rows[0]["solution"], None)
    assert (second.index, second.program, second.completion) == (1, None, rows[1]["completion"])
