"""Tests for vcost.audit readers: CSV/JSONL, lm-evaluation-harness samples, Inspect AI logs.

The lm-eval records have the fields ``lm_eval.evaluator.evaluate`` writes with --log_samples
(doc_id, doc, target, arguments, resps, filtered_resps, filter, metrics, doc_hash, prompt_hash,
target_hash and the metric values); the results file has ``model_name``, ``config.model_args``
and ``group_subtasks``. The Inspect logs follow the EvalLog JSON (version 2: eval.task,
eval.model, samples[].id/epoch/scores/metadata) and the .eval zip layout (header.json,
samples/<id>_epoch_<n>.json).
"""

from __future__ import annotations

import gzip
import json
import math
import zipfile
from pathlib import Path

import numpy as np
import pytest

from vcost.audit import EvalResults, read_results
from vcost.errors import InputError

CSV = """model,benchmark,item,subject,correct,confidence
m1,quiz,q1,algebra,1,0.9
m1,quiz,q2,algebra,0,0.8
m1,quiz,q3,geometry,true,
m2,quiz,q1,algebra,0,0.6
m2,quiz,q2,algebra,0.5,0.7
m2,quiz,q3,geometry,no,0.4
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- CSV and JSONL


def test_csv_rows_scores_and_missing_confidence(tmp_path: Path) -> None:
    """1/0, true/no and partial credit become scores; an empty confidence is NaN; each row
    remembers its file and line."""
    results = read_results(write(tmp_path / "r.csv", CSV))
    frame = results.frame
    assert results.models == ("m1", "m2")
    assert results.benchmarks == ("quiz",)
    assert frame["correct"].tolist() == [1.0, 0.0, 1.0, 0.0, 0.5, 0.0]
    assert math.isnan(frame["confidence"].iloc[2])
    assert frame["line"].tolist() == [2, 3, 4, 5, 6, 7]
    assert set(frame["subject"]) == {"algebra", "geometry"}


def test_gzip_and_jsonl_and_aliases(tmp_path: Path) -> None:
    """A .csv.gz reads like the CSV; JSONL takes model_id/task/item_id aliases."""
    gz = tmp_path / "r.csv.gz"
    gz.write_bytes(gzip.compress(CSV.encode()))
    assert read_results(gz).frame["correct"].tolist() == [1.0, 0.0, 1.0, 0.0, 0.5, 0.0]
    lines = [
        {"model_id": "a", "task": "t", "item_id": 1, "correct": True, "confidence": 0.7},
        {"model_id": "b", "task": "t", "item_id": 1, "correct": 0},
    ]
    path = write(tmp_path / "r.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")
    frame = read_results(path).frame
    assert frame["item"].tolist() == ["1", "1"]
    assert frame["correct"].tolist() == [1.0, 0.0]


def test_confidence_outside_unit_interval_names_file_line_field(tmp_path: Path) -> None:
    """Bad input: a confidence of 1.2 is an error naming file, line and field."""
    path = write(
        tmp_path / "bad.csv",
        CSV.replace("m2,quiz,q2,algebra,0.5,0.7", "m2,quiz,q2,algebra,0.5,1.2"),
    )
    with pytest.raises(InputError) as caught:
        read_results(path)
    message = str(caught.value)
    assert f"{path}:6" in message
    assert "field 'confidence'" in message
    assert "1.2 is outside [0, 1]" in message
    assert caught.value.line == 6


@pytest.mark.parametrize(
    ("text", "line", "field", "words"),
    [
        ("model,benchmark,item\nm,b,i\n", 1, "correct", "no 'correct' column"),
        ("model,benchmark,item,correct\nm,b,i,maybe\n", 2, "correct", "'maybe' is not a score"),
        ("model,benchmark,item,correct\nm,b,i,2\n", 2, "correct", "outside [0, 1]"),
        ("model,benchmark,item,correct\nm,b,,1\n", 2, "item", "no 'item'"),
        ("model,benchmark,item,correct\nm,b,i,1\nm,b,i,0\n", 3, "item", "second result"),
        ("model,benchmark,item,correct\nm,b,i\n", 2, None, "expected 4 cells"),
        ("", 1, None, "empty"),
    ],
)
def test_csv_errors(tmp_path: Path, text: str, line: int, field: str | None, words: str) -> None:
    """Each problem names the line and (where there is one) the field."""
    with pytest.raises(InputError) as caught:
        read_results(write(tmp_path / "x.csv", text))
    assert caught.value.line == line
    assert caught.value.field == field
    assert words in str(caught.value)


def test_jsonl_syntax_error_names_line(tmp_path: Path) -> None:
    """A broken JSON line is reported with its line number."""
    good = '{"model": "a", "benchmark": "b", "item": "1", "correct": 1}'
    path = write(tmp_path / "x.jsonl", good + "\n{broken\n")
    with pytest.raises(InputError) as caught:
        read_results(path, format="jsonl")
    assert caught.value.line == 2


def test_unknown_file_kind_and_missing_path(tmp_path: Path) -> None:
    """A name that says nothing about its format, and a path that does not exist."""
    with pytest.raises(InputError, match="pass --format"):
        read_results(write(tmp_path / "log.txt", "x"))
    with pytest.raises(InputError, match="no such file"):
        read_results(tmp_path / "nope.csv")


def test_from_records() -> None:
    """Records in memory go through the same checks."""
    results = EvalResults.from_records(
        [{"model": "a", "benchmark": "b", "item": "1", "correct": 1, "confidence": 0.9}]
    )
    assert results.frame["confidence"].tolist() == [0.9]
    with pytest.raises(InputError, match="record 1 has no 'model'"):
        EvalResults.from_records([{"benchmark": "b", "item": "1", "correct": 1}])


# --------------------------------------------------------------------------- lm-eval


def _lm_eval_sample(doc_id: int, lls: list[float], acc: float) -> dict[str, object]:
    return {
        "doc_id": doc_id,
        "doc": {"question": f"q{doc_id}", "choices": ["a", "b", "c", "d"], "answer": 0},
        "target": 0,
        "arguments": [[f"q{doc_id}", f" {c}"] for c in "abcd"],
        "resps": [[[ll, False]] for ll in lls],
        "filtered_resps": [[ll, False] for ll in lls],
        "filter": "none",
        "metrics": ["acc", "acc_norm"],
        "doc_hash": "d",
        "prompt_hash": "p",
        "target_hash": "t",
        "acc": acc,
        "acc_norm": acc,
    }


@pytest.fixture
def lm_eval_dir(tmp_path: Path) -> Path:
    run = tmp_path / "out" / "org__model-x"
    run.mkdir(parents=True)
    (run / "results_2024-05-01T10-00-00.123456.json").write_text(
        json.dumps(
            {
                "results": {"mmlu": {"acc,none": 0.5}},
                "group_subtasks": {"mmlu": ["mmlu_stem"], "mmlu_stem": ["mmlu_anatomy"]},
                "config": {"model": "hf", "model_args": "pretrained=org/model-x,dtype=float16"},
            }
        )
    )
    samples = [
        _lm_eval_sample(0, [-0.1, -2.0, -3.0, -4.0], 1.0),
        _lm_eval_sample(1, [-1.0, -0.5, -3.0, -4.0], 0.0),
    ]
    (run / "samples_mmlu_anatomy_2024-05-01T10-00-00.123456.jsonl").write_text(
        "".join(json.dumps(s) + "\n" for s in samples)
    )
    return tmp_path / "out"


def test_lm_eval_samples_multiple_choice(lm_eval_dir: Path) -> None:
    """acc is the score; confidence is the softmax probability of the most likely choice; the
    model comes from model_args; the subtask becomes a subject of its top group (mmlu)."""
    results = read_results(lm_eval_dir)
    frame = results.frame
    assert frame["model"].unique().tolist() == ["org/model-x"]
    assert frame["benchmark"].unique().tolist() == ["mmlu"]
    assert frame["subject"].unique().tolist() == ["mmlu_anatomy"]
    assert frame["correct"].tolist() == [1.0, 0.0]
    lls = np.array([-0.1, -2.0, -3.0, -4.0])
    expected = np.exp(lls).max() / np.exp(lls).sum()
    assert frame["confidence"].iloc[0] == pytest.approx(expected)
    assert frame["item"].tolist() == ["0", "1"]


def test_lm_eval_generation_filters_and_model_from_directory(tmp_path: Path) -> None:
    """Two filters per document: the first is used unless --filter names another, and the
    choice is noted; with no results file the model is the directory name with __ -> /."""
    run = tmp_path / "meta-llama__Llama-3-8B"
    run.mkdir()
    rows = []
    for doc_id in range(3):
        for flt, value in (("strict-match", 0.0), ("flexible-extract", 1.0)):
            rows.append(
                {
                    "doc_id": doc_id,
                    "filter": flt,
                    "metrics": ["exact_match"],
                    "filtered_resps": ["42"],
                    "exact_match": value,
                }
            )
    path = run / "samples_gsm8k_2024-06-01T00-00-00.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    results = read_results(path)
    assert results.frame["model"].unique().tolist() == ["meta-llama/Llama-3-8B"]
    assert results.frame["correct"].tolist() == [0.0, 0.0, 0.0]
    assert results.frame["confidence"].isna().all()
    assert any("flexible-extract" in note for note in results.notes)
    flexible = read_results(path, filter="flexible-extract", model="llama")
    assert flexible.frame["correct"].tolist() == [1.0, 1.0, 1.0]
    assert flexible.frame["model"].unique().tolist() == ["llama"]


def test_lm_eval_missing_metric(lm_eval_dir: Path) -> None:
    """--metric naming a metric the samples do not have is an error with file and line."""
    with pytest.raises(InputError) as caught:
        read_results(lm_eval_dir, metric="f1")
    assert caught.value.line == 1
    assert caught.value.field == "f1"


# --------------------------------------------------------------------------- Inspect AI


def _inspect_log(samples: list[dict[str, object]], status: str = "success") -> dict[str, object]:
    return {
        "version": 2,
        "status": status,
        "eval": {
            "task": "inspect_evals/gpqa_diamond",
            "model": "openai/gpt-4o",
            "dataset": {"name": "gpqa"},
        },
        "results": {"scores": []},
        "samples": samples,
    }


def _sample(sid: object, value: object, epoch: int = 1, **meta: object) -> dict[str, object]:
    return {
        "id": sid,
        "epoch": epoch,
        "input": "q",
        "target": "A",
        "scores": {"choice": {"value": value, "answer": "A", "metadata": meta or None}},
        "metadata": {"subject": "physics"},
    }


def test_inspect_json_log(tmp_path: Path) -> None:
    """C/I/P map to 1/0/0.5; the task name's last part is the benchmark; confidence from the
    score metadata; subject from the sample metadata."""
    log = _inspect_log(
        [_sample(1, "C", confidence=0.9), _sample(2, "I", confidence=0.6), _sample(3, "P")]
    )
    path = write(tmp_path / "2024-05-01_gpqa.json", json.dumps(log))
    frame = read_results(path).frame
    assert frame["model"].unique().tolist() == ["openai/gpt-4o"]
    assert frame["benchmark"].unique().tolist() == ["gpqa_diamond"]
    assert frame["correct"].tolist() == [1.0, 0.0, 0.5]
    assert frame["confidence"].iloc[:2].tolist() == [0.9, 0.6]
    assert frame["subject"].unique().tolist() == ["physics"]


def test_inspect_eval_zip_and_epochs(tmp_path: Path) -> None:
    """The .eval zip: header.json plus one file per sample and epoch; epochs are averaged."""
    path = tmp_path / "run.eval"
    header = _inspect_log([])
    header.pop("samples")
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", json.dumps(header))
        for sid, epoch, value in [(1, 1, "C"), (1, 2, "I"), (2, 1, "C"), (2, 2, "C")]:
            archive.writestr(
                f"samples/{sid}_epoch_{epoch}.json", json.dumps(_sample(sid, value, epoch))
            )
    results = read_results(path)
    assert sorted(results.frame["correct"].tolist()) == [0.5, 1.0]
    assert any("2 epochs" in note for note in results.notes)


def test_inspect_errors(tmp_path: Path) -> None:
    """A dict-valued score, a missing scorer and a log without an 'eval' section."""
    multi = _inspect_log([_sample(1, {"accuracy": 1.0, "f1": 0.5})])
    with pytest.raises(InputError, match="several values") as caught:
        read_results(write(tmp_path / "a.json", json.dumps(multi)))
    assert caught.value.field == "samples[0].scores.choice.value"
    with pytest.raises(InputError, match="no scorer 'match'"):
        read_results(
            write(tmp_path / "b.json", json.dumps(_inspect_log([_sample(1, "C")]))), metric="match"
        )
    with pytest.raises(InputError, match="no 'eval' section"):
        read_results(write(tmp_path / "c.json", json.dumps({"samples": []})))
    partial = _inspect_log([_sample(1, "C")], status="error")
    notes = read_results(write(tmp_path / "d.json", json.dumps(partial))).notes
    assert any("partial" in note for note in notes)
