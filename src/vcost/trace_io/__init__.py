"""Reading, validating and writing verification-trace files.

A trace on disk is a directory holding one file per table (docs/trace-format.md):

- ``answers.csv`` or ``answers.parquet`` (required);
- ``episodes.csv`` or ``episodes.parquet`` (required);
- ``verifiers.csv`` or ``verifiers.parquet`` (required as soon as there is an episode);
- ``events.csv`` or ``events.parquet`` (optional).

Decisions, written down so the code can be held against them:

- **Verifiers are required, never inferred.** Whether a verifier is a person or a model decides
  which confidences are valid and how the analysis stratifies; guessing "person" would turn a
  model judge's probabilities into errors far from their cause. A trace with episodes and no
  verifiers file gets one clear problem naming the file to add.
- **Validation collects every problem** (vectorised: one boolean mask per rule) and raises one
  :class:`~vcost.errors.TraceError` listing the first :data:`MAX_REPORTED_PROBLEMS`, sorted by
  file and line, each as ``episodes.csv: line 14: field 'termination': ...``. CSV line numbers
  are physical lines (header = line 1, first record = line 2; a quoted value with a line break
  moves the next record down); Parquet files and in-memory frames say ``row N`` (first row = 1).
- **Effort tolerance.** A check episode may not spend more than its budget; because budget
  exhaustion is detected by a clock, effort may exceed the budget by up to
  :data:`EFFORT_TOLERANCE` (0.1 %) of it, that 0.1 % included (compared with a relative slack
  of 1e-12 for floating-point rounding, so 10.01 of a budget of 10 passes). Do episodes are
  not held to their cap (the do-time cap is an instruction; the harness records what
  happened).
- **Missing means empty.** An empty CSV field, an empty string and a null are the same: missing.
- **Canonical types.** :func:`read_trace` and :func:`validate_trace` return frames with every
  contract column, in contract order, typed: enumerations as categoricals with the contract's
  categories, text as pandas' ``str``, ``Int64``, ``float64``, ``boolean``, timestamps as
  ``datetime64[us, UTC]`` (naive times are read as UTC) and JSON as canonical text (sorted keys,
  no spaces). Check episodes without a ``task_id`` take their answer's. These rules make
  read -> write -> read lossless in both formats.

The code is split along these seams: :mod:`._contract` (tables, constants, dtypes),
:mod:`._problems` (where a problem is, and the one error that lists them), :mod:`._coercion`
(a raw column to its canonical dtype), :mod:`._validation` (the rules), :mod:`._reading` (files
to a validated trace) and :mod:`._writing` (a validated trace to files; comparing traces).
"""

from __future__ import annotations

from vcost.trace_io._coercion import _ISO_START as _ISO_START
from vcost.trace_io._contract import (
    EFFORT_TOLERANCE,
    EXAMPLE_TRACE,
    MAX_REPORTED_PROBLEMS,
    TABLES,
    TraceFormat,
    canonical_dtype,
)
from vcost.trace_io._problems import TraceProblem
from vcost.trace_io._reading import read_trace
from vcost.trace_io._validation import _Validator as _Validator
from vcost.trace_io._validation import validate_trace
from vcost.trace_io._writing import _write_valid_trace as _write_valid_trace
from vcost.trace_io._writing import assert_trace_equal, write_trace

__all__ = [
    "EFFORT_TOLERANCE",
    "EXAMPLE_TRACE",
    "MAX_REPORTED_PROBLEMS",
    "TABLES",
    "TraceFormat",
    "TraceProblem",
    "assert_trace_equal",
    "canonical_dtype",
    "read_trace",
    "validate_trace",
    "write_trace",
]
