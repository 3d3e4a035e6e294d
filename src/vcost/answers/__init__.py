"""Model answers: generate, grade, label natural errors, select what checkers judge.

::

    log = vcost.answers.AnswerLog("run/answers.jsonl")
    vcost.answers.generate_answers(tasks, models, client=client, log=log, sandbox=sandbox, n=5)
    vcost.answers.natural_error_table(log.answers())
    selection = vcost.answers.select_answers(log.answers(), tasks, sandbox=sandbox, seed=1)

See docs/answers.md.
"""

from __future__ import annotations

from vcost.answers._extract import Extraction, extract_code, extract_number
from vcost.answers._generate import (
    AnswerLog,
    GenerateResult,
    answer_key,
    answer_record,
    generate_answers,
)
from vcost.answers._import_readers import SAMPLE_FORMATS, RawSample, SampleFormat, read_samples
from vcost.answers._import_samples import SampleImport, import_samples, task_index
from vcost.answers._label import Label, Labeller, NaturalLevel
from vcost.answers._prompt import (
    IDENTIFYING,
    PROMPT_VERSION,
    answer_messages,
    blind_code,
    render_answer,
)
from vcost.answers._select import (
    SelectedAnswer,
    Selection,
    Variant,
    read_selection,
    select_answers,
    write_selection,
)
from vcost.answers._table import ModelErrors, natural_error_table

__all__ = [
    "IDENTIFYING",
    "PROMPT_VERSION",
    "SAMPLE_FORMATS",
    "AnswerLog",
    "Extraction",
    "GenerateResult",
    "Label",
    "Labeller",
    "ModelErrors",
    "NaturalLevel",
    "RawSample",
    "SampleFormat",
    "SampleImport",
    "SelectedAnswer",
    "Selection",
    "Variant",
    "answer_key",
    "answer_messages",
    "answer_record",
    "blind_code",
    "extract_code",
    "extract_number",
    "generate_answers",
    "import_samples",
    "natural_error_table",
    "read_samples",
    "read_selection",
    "render_answer",
    "select_answers",
    "task_index",
    "write_selection",
]
