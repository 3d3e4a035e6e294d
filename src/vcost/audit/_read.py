"""Read per-item evaluation results: CSV/JSONL, lm-evaluation-harness samples, Inspect logs.

Every reader yields the same rows: ``model, benchmark, item, subject, correct, confidence``
plus where each row came from (``source``, ``line``) so later checks can name the file and line.
``correct`` is the item's score in [0, 1] (1/0, true/false, or partial credit); ``confidence``
the model's probability that its answer is correct, NaN when the log has none.

CSV and JSONL (``format="csv"`` / ``"jsonl"``)
    One row per model x item with the columns ``model`` (or ``model_id``), ``benchmark`` (or
    ``task``), ``item`` (or ``item_id``), ``correct``, and optionally ``confidence`` and
    ``subject``. ``.gz`` files are read transparently.
lm-evaluation-harness (``format="lm-eval"``)
    The ``samples_<task>_<date>.jsonl`` files that ``lm_eval --log_samples`` writes into
    ``<output_path>/<model>/``: one JSON object per document and filter with ``doc_id``,
    ``filter``, ``metrics`` and the metric values (``acc``, ``exact_match``, ...). For
    multiple-choice tasks ``filtered_resps`` holds ``[loglikelihood, is_greedy]`` per choice; the
    confidence is the softmax probability of the highest-likelihood choice (the answer ``acc``
    scores). The model name comes from ``results_*.json`` beside the samples (``model_name``,
    or ``pretrained=`` in ``config.model_args``), else from the directory name. With the
    ``group_subtasks`` of that file a subtask (``mmlu_anatomy``) becomes a subject of its top
    group (``mmlu``).
Inspect AI (``format="inspect"``)
    An eval log as JSON (``.json``) or the zip format (``.eval``: ``header.json`` and
    ``samples/<id>_epoch_<n>.json``), read without importing inspect_ai. ``eval.model`` and
    ``eval.task`` name the model and benchmark; each sample's score (the first scorer, or the one
    named by ``metric``) maps ``C`` -> 1, ``I`` -> 0, ``P`` -> 0.5, ``N`` -> 0, booleans and
    numbers in [0, 1] as themselves; several epochs are averaged. ``confidence`` and ``subject``
    are taken from the score's or the sample's metadata when present.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final, Literal, get_args

import numpy as np
import pandas as pd

from vcost.errors import InputError
from vcost.inspect_log import read_inspect_log

__all__ = [
    "COLUMNS",
    "LOG_FORMATS",
    "EvalResults",
    "LogFormat",
    "read_results",
]

LogFormat = Literal["auto", "csv", "jsonl", "lm-eval", "inspect"]
LOG_FORMATS: Final[tuple[str, ...]] = get_args(LogFormat)
COLUMNS: Final = ("model", "benchmark", "item", "subject", "correct", "confidence")

_ALIASES: Final[dict[str, tuple[str, ...]]] = {
    "model": ("model", "model_id"),
    "benchmark": ("benchmark", "task"),
    "item": ("item", "item_id"),
    "correct": ("correct",),
    "confidence": ("confidence",),
    "subject": ("subject",),
    "synthetic": ("synthetic",),
}
_REQUIRED: Final = ("model", "benchmark", "item", "correct")
_TRUE: Final = frozenset({"1", "true", "yes", "correct", "c"})
_FALSE: Final = frozenset({"0", "false", "no", "incorrect", "i"})
_LM_EVAL_METRICS: Final = ("acc", "exact_match", "pass@1", "acc_norm", "em", "f1")
_LM_EVAL_FILE: Final = re.compile(
    r"^samples_(?P<task>.+?)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl(\.gz)?$"
)
_INSPECT_VALUES: Final = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


@dataclass(frozen=True, eq=False)
class EvalResults:
    """Per-item results: one row per model x benchmark x item.

    ``frame`` has the columns ``model, benchmark, item, subject`` (text; subject ``""`` when
    there is none), ``correct`` and ``confidence`` (float; confidence NaN when missing), and
    ``source``, ``line`` (where the row was read). ``notes`` record what a reader chose or left
    out (a filter, a metric, epochs averaged). ``synthetic`` names the files that mark their
    rows as synthetic (a true ``synthetic`` column in CSV/JSONL): reports label such data.
    """

    frame: pd.DataFrame
    sources: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())
    synthetic: tuple[str, ...] = field(default=())

    @property
    def models(self) -> tuple[str, ...]:
        """Model names, sorted."""
        return tuple(sorted(self.frame["model"].unique()))

    @property
    def benchmarks(self) -> tuple[str, ...]:
        """Benchmark names, sorted."""
        return tuple(sorted(self.frame["benchmark"].unique()))

    @classmethod
    def from_records(
        cls,
        records: Iterable[Mapping[str, Any]],
        *,
        source: str = "<records>",
        notes: Sequence[str] = (),
    ) -> EvalResults:
        """Build from mappings with the six columns (``subject``/``confidence`` optional)."""
        rows = [
            _row(record, source=source, line=None, where=f"record {i + 1}")
            for i, record in enumerate(records)
        ]
        return _finish(rows, (source,), list(notes))


@dataclass(frozen=True)
class _Row:
    model: str
    benchmark: str
    item: str
    subject: str
    correct: float
    confidence: float
    source: str
    line: int | None
    synthetic: bool = False


# --------------------------------------------------------------------------- value parsing


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _score(value: Any, *, source: str, line: int | None, field: str) -> float:
    """A score in [0, 1] from 1/0, true/false, C/I/P/N or a number."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in _TRUE:
            return 1.0
        if text.lower() in _FALSE:
            return 0.0
        if text in _INSPECT_VALUES:
            return _INSPECT_VALUES[text]
        try:
            number = float(text)
        except ValueError:
            raise InputError(
                f"{text!r} is not a score",
                source=source,
                line=line,
                field=field,
                hint="use 1/0, true/false, or a number in [0, 1]",
            ) from None
    elif isinstance(value, int | float):
        number = float(value)
    else:
        raise InputError(
            f"{value!r} is not a score" if value is not None else "the score is missing",
            source=source,
            line=line,
            field=field,
            hint="use 1/0, true/false, or a number in [0, 1]",
        )
    if not 0.0 <= number <= 1.0:
        raise InputError(
            f"score {number:g} is outside [0, 1]",
            source=source,
            line=line,
            field=field,
            hint="use 1/0 for correct/incorrect or partial credit in [0, 1]",
        )
    return number


def _confidence(value: Any, *, source: str, line: int | None, field: str) -> float:
    if value is None or (isinstance(value, str) and not value.strip()):
        return math.nan
    if isinstance(value, bool):
        raise InputError(
            "confidence must be a probability, not true/false",
            source=source,
            line=line,
            field=field,
        )
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(
            f"confidence {value!r} is not a number", source=source, line=line, field=field
        ) from None
    if not 0.0 <= number <= 1.0:  # rejects NaN written out as text too
        raise InputError(
            f"confidence {number:g} is outside [0, 1]",
            source=source,
            line=line,
            field=field,
            hint="confidence is the model's probability that its answer is correct; "
            "convert percentages or log-probabilities first, or leave the cell empty",
        )
    return number


def _pick(record: Mapping[str, Any], name: str) -> tuple[str, Any] | None:
    for alias in _ALIASES[name]:
        if alias in record:
            return alias, record[alias]
    return None


def _row(record: Mapping[str, Any], *, source: str, line: int | None, where: str) -> _Row:
    values: dict[str, Any] = {}
    for name in _REQUIRED:
        found = _pick(record, name)
        if found is None or _text(found[1]) == "":
            raise InputError(
                f"{where} has no '{name}'",
                source=source,
                line=line,
                field=name,
                hint=f"each row needs {', '.join(_REQUIRED)}; confidence and subject are optional",
            )
        values[name] = found
    conf = _pick(record, "confidence")
    subject = _pick(record, "subject")
    marker = _pick(record, "synthetic")
    return _Row(
        model=_text(values["model"][1]),
        benchmark=_text(values["benchmark"][1]),
        item=_text(values["item"][1]),
        subject=_text(subject[1]) if subject else "",
        correct=_score(values["correct"][1], source=source, line=line, field=values["correct"][0]),
        confidence=(
            _confidence(conf[1], source=source, line=line, field=conf[0]) if conf else math.nan
        ),
        source=source,
        line=line,
        synthetic=_synthetic(marker[1], source=source, line=line) if marker else False,
    )


def _synthetic(value: Any, *, source: str, line: int | None) -> bool:
    """The optional ``synthetic`` marker: true/1/yes, false/0/no or empty (not marked)."""
    text = _text(value).lower()
    if text in ("", "0", "false", "no"):
        return False
    if text in ("1", "true", "yes"):
        return True
    raise InputError(
        f"synthetic marker {text!r} is not true or false",
        source=source,
        line=line,
        field="synthetic",
        hint="use true/false (or 1/0); a true value labels the audit report SYNTHETIC",
    )


# --------------------------------------------------------------------------- files


def _open(path: Path) -> IO[str]:
    try:
        if path.suffix == ".gz":
            return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
        return path.open(encoding="utf-8-sig", newline="")
    except OSError as error:
        raise InputError(f"cannot read the file: {error.strerror}", source=path) from None


def _json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with _open(path) as handle:
        try:
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                try:
                    value = json.loads(text)
                except json.JSONDecodeError as error:
                    raise InputError(
                        f"not valid JSON: {error.msg} at column {error.colno}",
                        source=path,
                        line=number,
                    ) from None
                if not isinstance(value, dict):
                    raise InputError("each line must be a JSON object", source=path, line=number)
                yield number, value
        except (UnicodeDecodeError, EOFError, gzip.BadGzipFile) as error:
            raise InputError(f"cannot decode the file: {error}", source=path) from None


def _read_csv(path: Path) -> list[_Row]:
    rows: list[_Row] = []
    with _open(path) as handle:
        reader = csv.reader(handle)
        try:
            header = [cell.strip() for cell in next(reader)]
        except StopIteration:
            raise InputError(
                "the file is empty", source=path, line=1, hint=f"expected a header with {COLUMNS}"
            ) from None
        except (csv.Error, UnicodeDecodeError) as error:
            raise InputError(f"not a readable CSV file: {error}", source=path, line=1) from None
        for name in _REQUIRED:
            if not any(alias in header for alias in _ALIASES[name]):
                raise InputError(
                    f"the header has no '{name}' column",
                    source=path,
                    line=1,
                    field=name,
                    hint=f"columns: {', '.join(COLUMNS)} (confidence and subject optional)",
                )
        try:
            for cells in reader:
                line = reader.line_num
                if not any(cell.strip() for cell in cells):
                    continue
                if len(cells) != len(header):
                    raise InputError(
                        f"expected {len(header)} cells as in the header, found {len(cells)}",
                        source=path,
                        line=line,
                    )
                record = dict(zip(header, cells, strict=True))
                rows.append(_row(record, source=str(path), line=line, where="the row"))
        except (csv.Error, UnicodeDecodeError) as error:
            raise InputError(
                f"not a readable CSV file: {error}", source=path, line=reader.line_num
            ) from None
    return rows


def _read_jsonl(path: Path) -> list[_Row]:
    return [
        _row(record, source=str(path), line=line, where="the object")
        for line, record in _json_lines(path)
    ]


# --------------------------------------------------------------------------- lm-evaluation-harness


@dataclass(frozen=True)
class _LmEvalRun:
    model: str | None
    parents: dict[str, str]  # subtask -> group


def _lm_eval_run(directory: Path) -> _LmEvalRun:
    """Model name and task groups from the ``results_*.json`` files in ``directory``."""
    model: str | None = None
    parents: dict[str, str] = {}
    for path in sorted(directory.glob("results_*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if not isinstance(data, dict):
            continue
        name = data.get("model_name")
        config = data.get("config")
        if not name and isinstance(config, dict):
            args = config.get("model_args")
            if isinstance(args, str):
                match = re.search(r"(?:pretrained|model)=([^,]+)", args)
                name = match.group(1) if match else None
            elif isinstance(args, dict):
                name = args.get("pretrained") or args.get("model")
        if isinstance(name, str) and name and model is None:
            model = name
        groups = data.get("group_subtasks")
        if isinstance(groups, dict):
            for group, subtasks in groups.items():
                if isinstance(subtasks, list):
                    for sub in subtasks:
                        if isinstance(sub, str) and sub != group:
                            parents.setdefault(sub, str(group))
    return _LmEvalRun(model=model, parents=parents)


def _softmax_top(loglikelihoods: Sequence[float]) -> float:
    x = np.asarray(loglikelihoods, dtype=np.float64)
    z = np.exp(x - x.max())
    return float(z.max() / z.sum())


def _choice_loglikelihoods(value: Any) -> list[float] | None:
    """[[ll, is_greedy], ...] (one pair per choice) -> [ll, ...]; None if not that shape."""
    if not isinstance(value, list) or len(value) < 2:
        return None
    out: list[float] = []
    for pair in value:
        if isinstance(pair, list) and pair and len(pair) <= 2:
            head = pair[0]
        else:
            return None
        try:
            number = float(head)
        except (TypeError, ValueError):
            return None
        if not math.isfinite(number):
            return None
        out.append(number)
    return out


def _read_lm_eval(
    path: Path,
    *,
    metric: str | None,
    filter_name: str | None,
    model: str | None,
    notes: list[str],
) -> list[_Row]:
    match = _LM_EVAL_FILE.match(path.name)
    task = match.group("task") if match else path.name.split(".")[0].removeprefix("samples_")
    run = _lm_eval_run(path.parent)
    model_name = model or run.model or path.parent.name.replace("__", "/")
    root = task
    while root in run.parents:
        root = run.parents[root]
    benchmark, subject = (root, task) if root != task else (task, "")
    rows: list[_Row] = []
    chosen_metric = metric
    chosen_filter = filter_name
    skipped_filters: set[str] = set()
    for line, record in _json_lines(path):
        flt = str(record.get("filter", "none"))
        if chosen_filter is None:
            chosen_filter = flt
        if flt != chosen_filter:
            skipped_filters.add(flt)
            continue
        if chosen_metric is None:
            listed = record.get("metrics")
            candidates: list[str] = [m for m in _LM_EVAL_METRICS if m in record]
            if isinstance(listed, list):
                candidates += [m for m in listed if isinstance(m, str) and m in record]
            if not candidates:
                raise InputError(
                    "no per-sample metric found (looked for "
                    f"{', '.join(_LM_EVAL_METRICS)} and the 'metrics' list)",
                    source=path,
                    line=line,
                    hint="name the metric with --metric",
                )
            chosen_metric = candidates[0]
        if chosen_metric not in record:
            raise InputError(
                f"the sample has no metric '{chosen_metric}'",
                source=path,
                line=line,
                field=chosen_metric,
            )
        if "doc_id" not in record:
            raise InputError("the sample has no 'doc_id'", source=path, line=line, field="doc_id")
        confidence = math.nan
        if chosen_metric == "acc":
            lls = _choice_loglikelihoods(record.get("filtered_resps"))
            if lls is not None:
                confidence = _softmax_top(lls)
        rows.append(
            _Row(
                model=model_name,
                benchmark=benchmark,
                item=_text(record["doc_id"]),
                subject=subject,
                correct=_score(
                    record[chosen_metric], source=str(path), line=line, field=chosen_metric
                ),
                confidence=confidence,
                source=str(path),
                line=line,
            )
        )
    if skipped_filters:
        notes.append(
            f"{path.name}: used filter '{chosen_filter}', left out "
            f"{', '.join(sorted(skipped_filters))}"
        )
    if rows and chosen_metric not in (None, "acc"):
        notes.append(f"{path.name}: metric '{chosen_metric}' (no confidence: not a choice task)")
    return rows


# --------------------------------------------------------------------------- Inspect AI


def _inspect_score(
    sample: Mapping[str, Any], *, metric: str | None, source: str, where: str
) -> tuple[float, Mapping[str, Any]]:
    scores = sample.get("scores")
    if not isinstance(scores, dict) or not scores:
        single = sample.get("score")  # logs before scores became a dict
        if isinstance(single, dict):
            scores = {"score": single}
        else:
            raise InputError(
                "the sample has no scores",
                source=source,
                field=f"{where}.scores",
                hint="score the log first (inspect score LOG)",
            )
    name = metric if metric is not None else next(iter(scores))
    if name not in scores:
        raise InputError(
            f"no scorer '{name}' (the log has {', '.join(map(str, scores))})",
            source=source,
            field=f"{where}.scores",
        )
    score = scores[name]
    if not isinstance(score, dict) or "value" not in score:
        raise InputError(
            "the score has no value", source=source, field=f"{where}.scores.{name}.value"
        )
    value = score["value"]
    if isinstance(value, dict):
        raise InputError(
            f"the score of '{name}' holds several values ({', '.join(map(str, value))})",
            source=source,
            field=f"{where}.scores.{name}.value",
            hint="pass --metric with a scorer whose value is one score",
        )
    return (
        _score(value, source=source, line=None, field=f"{where}.scores.{name}.value"),
        score,
    )


def _metadata_value(
    score: Mapping[str, Any], sample: Mapping[str, Any], keys: Sequence[str]
) -> Any:
    for holder in (score.get("metadata"), sample.get("metadata")):
        if isinstance(holder, dict):
            for key in keys:
                if key in holder:
                    return holder[key]
    return None


def _read_inspect(
    path: Path, *, metric: str | None, model: str | None, notes: list[str]
) -> list[_Row]:
    header, samples = read_inspect_log(path)
    spec = header.get("eval") if isinstance(header.get("eval"), dict) else {}
    assert isinstance(spec, dict)
    model_name = model or _text(spec.get("model")) or "unknown-model"
    task = _text(spec.get("task")) or path.stem
    benchmark = task.rsplit("/", 1)[-1]
    status = header.get("status")
    if status not in (None, "success"):
        notes.append(f"{path.name}: log status '{status}': results may be partial")
    if not samples:
        raise InputError(
            "the log has no samples", source=path, hint="write logs with samples included"
        )
    by_item: dict[str, list[tuple[float, float, str]]] = {}
    source = str(path)
    epochs = 0
    for where, sample in samples:
        if "id" not in sample:
            raise InputError("the sample has no id", source=source, field=f"{where}.id")
        value, score = _inspect_score(sample, metric=metric, source=source, where=where)
        conf = _confidence(
            _metadata_value(score, sample, ("confidence",)),
            source=source,
            line=None,
            field=f"{where}.metadata.confidence",
        )
        subject = _text(_metadata_value(score, sample, ("subject", "category")))
        by_item.setdefault(_text(sample["id"]), []).append((value, conf, subject))
        epochs = max(epochs, int(sample.get("epoch") or 1))
    if epochs > 1:
        notes.append(f"{path.name}: {epochs} epochs per sample, scores averaged per item")
    rows = []
    for item, results in by_item.items():
        confs = [c for _, c, _ in results if not math.isnan(c)]
        rows.append(
            _Row(
                model=model_name,
                benchmark=benchmark,
                item=item,
                subject=results[0][2],
                correct=float(np.mean([v for v, _, _ in results])),
                confidence=float(np.mean(confs)) if confs else math.nan,
                source=source,
                line=None,
            )
        )
    return rows


# --------------------------------------------------------------------------- dispatch


def _sniff(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".eval"):
        return "inspect"
    if _LM_EVAL_FILE.match(path.name):
        return "lm-eval"
    if name.endswith((".csv", ".csv.gz")):
        return "csv"
    if name.endswith(".json"):
        return "inspect"
    if name.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
        for _, record in _json_lines(path):
            return "lm-eval" if "doc_id" in record and "model" not in record else "jsonl"
        return "jsonl"
    raise InputError(
        "cannot tell the log format from the file name",
        source=path,
        hint="name it .csv, .jsonl, samples_<task>_<date>.jsonl, .json or .eval, or pass --format",
    )


def _expand(path: Path, fmt: str) -> list[tuple[Path, str]]:
    if not path.exists():
        raise InputError("no such file or directory", source=path)
    if path.is_file():
        return [(path, _sniff(path) if fmt == "auto" else fmt)]
    found: list[tuple[Path, str]] = []
    if fmt in ("auto", "lm-eval"):
        found += [(p, "lm-eval") for p in sorted(path.rglob("samples_*.jsonl*"))]
    if fmt in ("auto", "inspect") and not found:
        found += [(p, "inspect") for p in sorted(path.rglob("*.eval"))]
        found += [
            (p, "inspect")
            for p in sorted(path.rglob("*.json"))
            if not p.name.startswith("results_") and p.name != "logs.json"
        ]
    if fmt in ("auto", "csv") and not found:
        found += [(p, "csv") for p in sorted(path.rglob("*.csv"))]
    if fmt in ("auto", "jsonl") and not found:
        found += [(p, "jsonl") for p in sorted(path.rglob("*.jsonl"))]
    if not found:
        raise InputError(
            "the directory holds no evaluation logs",
            source=path,
            hint="expected samples_*.jsonl (lm-eval), *.eval/*.json (Inspect), *.csv or *.jsonl",
        )
    return found


def _finish(rows: list[_Row], sources: tuple[str, ...], notes: list[str]) -> EvalResults:
    if not rows:
        raise InputError("no results found", source=sources[0] if len(sources) == 1 else None)
    seen: dict[tuple[str, str, str], _Row] = {}
    for row in rows:
        key = (row.model, row.benchmark, row.item)
        first = seen.get(key)
        if first is not None:
            where = first.source if first.line is None else f"{first.source}:{first.line}"
            raise InputError(
                f"model '{row.model}' has a second result for item '{row.item}' of "
                f"'{row.benchmark}' (first at {where})",
                source=row.source,
                line=row.line,
                field="item",
                hint="one row per model, benchmark and item",
            )
        seen[key] = row
    frame = pd.DataFrame(
        {
            "model": [r.model for r in rows],
            "benchmark": [r.benchmark for r in rows],
            "item": [r.item for r in rows],
            "subject": [r.subject for r in rows],
            "correct": np.array([r.correct for r in rows], dtype=np.float64),
            "confidence": np.array([r.confidence for r in rows], dtype=np.float64),
            "source": [r.source for r in rows],
            "line": pd.array([r.line for r in rows], dtype="Int64"),
        }
    )
    marked = tuple(dict.fromkeys(r.source for r in rows if r.synthetic))
    return EvalResults(frame=frame, sources=sources, notes=tuple(notes), synthetic=marked)


def read_results(
    paths: str | Path | Sequence[str | Path],
    *,
    format: LogFormat = "auto",  # the CLI option's name
    metric: str | None = None,
    filter: str | None = None,  # lm-eval's word
    model: str | None = None,
) -> EvalResults:
    """Read per-item results from files or directories of one or more supported formats.

    ``metric`` picks the lm-eval metric or the Inspect scorer, ``filter`` the lm-eval filter
    (default: the first one in each file), ``model`` overrides the model name of lm-eval and
    Inspect logs. A directory is searched recursively for lm-eval samples, else Inspect logs,
    else CSV, else JSONL files. Every problem names the file, line (or JSON path) and field.
    """
    if format not in LOG_FORMATS:
        raise InputError(f"unknown format {format!r}; expected one of {', '.join(LOG_FORMATS)}")
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    if not items:
        raise InputError("no log files given")
    files: list[tuple[Path, str]] = []
    for item in items:
        files += _expand(Path(item), format)
    rows: list[_Row] = []
    notes: list[str] = []
    for path, fmt in files:
        if fmt == "csv":
            rows += _read_csv(path)
        elif fmt == "jsonl":
            rows += _read_jsonl(path)
        elif fmt == "lm-eval":
            rows += _read_lm_eval(path, metric=metric, filter_name=filter, model=model, notes=notes)
        else:
            rows += _read_inspect(path, metric=metric, model=model, notes=notes)
    return _finish(rows, tuple(str(p) for p, _ in files), notes)
