"""`vcost stats` commands: intervals, the VCE rule, precision planning, inter-rater agreement.

Thin wrappers over :mod:`vcost.stats`; ``--json`` prints the numbers as one JSON object, NaN
(undefined) as ``null``. Errors in arguments or input files become one message and exit code 2.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import numpy as np
import numpy.typing as npt
from rich import box
from rich.console import Console
from rich.table import Table

from vcost._files import read_utf8
from vcost.errors import InputError, StatsError
from vcost.stats import (
    classify_vce,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    plan_precision,
)
from vcost.stats.agreement import AGREEMENT_LEVELS
from vcost.stats.intervals import INTERVAL_METHODS, SIDES, binomial_interval

__all__ = ["stats"]

_METHOD_NAMES = {"clopper-pearson": "Clopper-Pearson", "wilson": "Wilson", "jeffreys": "Jeffreys"}
_METRICS = ("krippendorff", "fleiss", "cohen")
_UNIT_HEADERS = ("unit", "unit_id", "id")

_alpha_option = click.option(
    "--alpha",
    type=float,
    default=0.05,
    show_default=True,
    help="Error rate; the confidence level is 1 - alpha.",
)
_method_option = click.option(
    "--method",
    type=click.Choice(INTERVAL_METHODS),
    default="clopper-pearson",
    show_default=True,
    help="Binomial interval method.",
)
_json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


def _clean(value: Any) -> Any:
    """NaN and infinities become None so the output is valid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_clean(item) for item in value]
    return value


def _echo_json(payload: dict[str, Any]) -> None:
    click.echo(json.dumps(_clean(payload), indent=2, allow_nan=False))


def _percent(level: float) -> str:
    return f"{100 * level:.10g}%"


@click.group()
def stats() -> None:
    """Binomial intervals, the VCE rule, precision planning and inter-rater agreement."""


# --------------------------------------------------------------------------- interval


@stats.command("interval")
@click.argument("k", type=int)
@click.argument("n", type=int)
@_alpha_option
@_method_option
@click.option(
    "--sides",
    type=click.Choice(SIDES),
    default="two-sided",
    show_default=True,
    help="'lower': one-sided lower bound (upper end 1); 'upper': one-sided upper bound.",
)
@_json_option
def interval_command(k: int, n: int, alpha: float, method: str, sides: str, as_json: bool) -> None:
    """Confidence interval for the proportion K/N."""
    result = binomial_interval(k, n, method=method, alpha=alpha, sides=sides)  # type: ignore[arg-type]
    if as_json:
        _echo_json(
            {
                "lower": result.lower,
                "upper": result.upper,
                "level": result.level,
                "method": result.method,
                "sides": result.sides,
                "k": k,
                "n": n,
            }
        )
        return
    click.echo(
        f"{k}/{n} = {k / n:.4f}: {_percent(result.level)} {sides} "
        f"{_METHOD_NAMES[method]} interval [{result.lower:.4f}, {result.upper:.4f}]"
    )


# --------------------------------------------------------------------------- vce


@stats.command("vce")
@click.argument("failures", type=int)
@click.argument("m", type=int)
@click.option(
    "--q",
    "q",
    type=float,
    required=True,
    help="Pre-registered threshold on Pr[S_B = 0], e.g. 0.5.",
)
@_alpha_option
@_method_option
@_json_option
def vce_command(failures: int, m: int, q: float, alpha: float, method: str, as_json: bool) -> None:
    """Classify one incorrect output: FAILURES of M verifiers missed it within budget.

    Confirmed when the lower bound of the two-sided interval reaches Q, not a VCE when the
    upper bound falls below Q, inconclusive otherwise.
    """
    result = classify_vce(failures, m, q=q, alpha=alpha, method=method)  # type: ignore[arg-type]
    if as_json:
        _echo_json(
            {
                "state": result.state.value,
                "estimate": result.estimate,
                "lower": result.interval.lower,
                "upper": result.interval.upper,
                "verifiers": result.verifiers,
                "failures": result.failures,
                "q": result.q,
                "level": result.interval.level,
                "method": result.interval.method,
            }
        )
        return
    click.echo(
        f"{failures}/{m} verifiers failed (estimate {result.estimate:.4f}), q = {q:g}: "
        f"{result.state.value} ({_percent(result.interval.level)} {_METHOD_NAMES[method]} "
        f"interval [{result.interval.lower:.4f}, {result.interval.upper:.4f}])"
    )


# --------------------------------------------------------------------------- plan


@stats.command("plan")
@click.option("--q", "q", type=float, required=True, help="Pre-registered threshold, e.g. 0.5.")
@_alpha_option
@_method_option
@click.option("--m-min", type=int, default=3, show_default=True, help="Smallest m in the table.")
@click.option("--m-max", type=int, default=30, show_default=True, help="Largest m in the table.")
@_json_option
def plan_command(
    q: float, alpha: float, method: str, m_min: int, m_max: int, as_json: bool
) -> None:
    """How many verifiers per output: the minima and expected inconclusive shares.

    Rows are m (verifiers per output), columns the true failure probability p; each cell is the
    exact probability that an output ends up inconclusive. The share is not monotone in m.
    """
    if m_min < 1 or m_max < m_min:
        raise StatsError(f"need 1 <= --m-min <= --m-max, got --m-min {m_min} and --m-max {m_max}")
    plan = plan_precision(
        q=q,
        alpha=alpha,
        method=method,  # type: ignore[arg-type]
        m_values=tuple(range(m_min, m_max + 1)),
    )
    if as_json:
        _echo_json(plan.to_dict())
        return
    console = Console(highlight=False)
    console.print(
        f"q = {q:g}, {_percent(1 - alpha)} two-sided {_METHOD_NAMES[method]} intervals.\n"
        f"Smallest m to confirm (m/m failures): {plan.min_verifiers.confirm}; "
        f"to reject (0/m failures): {plan.min_verifiers.reject}."
    )
    table = Table(
        title="Inconclusive share (%): rows m verifiers, columns true failure probability p",
        box=box.SIMPLE_HEAD,
        padding=(0, 0),
        pad_edge=False,
    )
    table.add_column("m", justify="right", style="bold")
    for p in plan.p_values:
        table.add_column(f"{p:g}", justify="right")
    for m, row in zip(plan.m_values, plan.inconclusive, strict=True):
        table.add_row(str(m), *(f"{100 * share:.1f}" for share in row))
    console.print(table)
    console.print(
        "The share is not monotone in m: one more verifier can leave the decided outcomes "
        "unchanged while their probability shrinks. Choose m from the whole table."
    )


# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class _Ratings:
    values: npt.NDArray[np.float64]
    raters: tuple[str, ...]
    labels: tuple[str, ...] | None  # text labels in code order, when they were mapped


def _unit_index(header: list[str], unit_column: str | None, path: Path) -> int | None:
    """The unit-id column: ``--unit-column``, else a first column named as a unit id."""
    if unit_column is not None:
        if unit_column not in header:
            raise InputError(
                f"no column named {unit_column!r} (--unit-column); the header has "
                + ", ".join(header),
                source=path,
                line=1,
            )
        return header.index(unit_column)
    name = header[0].lower() if header else ""
    return 0 if name in _UNIT_HEADERS or name.endswith("_id") else None


def _number(cell: str) -> float | None:
    try:
        number = float(cell)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _label(cell: str) -> tuple[int, float, str]:
    """Sort key and canonical text of a nominal label: 1, 1.0 and 1e0 are the label "1"."""
    number = _number(cell)
    if number is None:
        return (1, 0.0, cell)
    return (0, number, str(int(number)) if number.is_integer() else repr(number))


def _read_ratings(
    path: Path, *, numeric_only: bool, purpose: str, unit_column: str | None = None
) -> _Ratings:
    """Read a units x raters CSV (the agreement command's doc): header row, the unit-id column
    (``unit_column``, else a first column named ``unit``, ``id`` or ``*_id``), one column per
    rater, empty cell = missing. Rater names and unit ids must be unique."""
    reader = csv.reader(io.StringIO(read_utf8(path), newline=""))
    try:
        header = [cell.strip() for cell in next(reader)]
    except StopIteration:
        raise InputError(
            "the file is empty",
            source=path,
            line=1,
            hint="expected a header row naming the rater columns",
        ) from None
    except csv.Error as error:
        raise InputError(f"not a readable CSV file: {error}", source=path, line=1) from None
    seen: dict[str, int] = {}
    for position, name in enumerate(header, start=1):
        if not name:
            raise InputError(f"column {position} has no name", source=path, line=1,
                             hint="name every rater column in the header")  # fmt: skip
        if name in seen:
            raise InputError(
                f"columns {seen[name]} and {position} have the same name {name!r}",
                source=path,
                line=1,
                hint="one column per rater, each named once",
            )
        seen[name] = position
    unit = _unit_index(header, unit_column, path)
    rater_columns = [i for i in range(len(header)) if i != unit]
    raters = tuple(header[i] for i in rater_columns)
    if len(raters) < 2:
        raise InputError(
            f"found {len(raters)} rater column(s); agreement needs at least two",
            source=path,
            line=1,
            hint="one row per unit (output), one column per rater, and the unit ids in a "
            "first column named unit or *_id, or named by --unit-column",
        )
    rows: list[tuple[int, list[str]]] = []
    unit_lines: dict[str, int] = {}
    try:
        for record in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in record):
                continue
            if len(record) != len(header):
                raise InputError(
                    f"expected {len(header)} cells as in the header, found {len(record)}",
                    source=path,
                    line=line,
                )
            cells = [cell.strip() for cell in record]
            if unit is not None:
                unit_id = cells[unit]
                if not unit_id:
                    raise InputError("empty unit id", source=path, line=line,
                                     field=header[unit])  # fmt: skip
                if unit_id in unit_lines:
                    raise InputError(
                        f"duplicate unit id {unit_id!r} (first on line {unit_lines[unit_id]})",
                        source=path,
                        line=line,
                        field=header[unit],
                        hint="one row per unit, with every rater's rating in it",
                    )
                unit_lines[unit_id] = line
            rows.append((line, [cells[i] for i in rater_columns]))
    except csv.Error as error:
        raise InputError(
            f"not a readable CSV file: {error}", source=path, line=reader.line_num
        ) from None
    if not rows:
        raise InputError("the file has a header but no rows of ratings", source=path, line=2)

    values = np.full((len(rows), len(raters)), np.nan, dtype=np.float64)
    first_text: tuple[int, int, str] | None = None
    for r, (line, cells) in enumerate(rows):
        for c, cell in enumerate(cells):
            if not cell:
                continue
            number = _number(cell)
            if number is not None:
                values[r, c] = number
            elif first_text is None:
                first_text = (line, c, cell)
    if first_text is None:
        return _Ratings(values=values, raters=raters, labels=None)
    if numeric_only:
        line, c, cell = first_text
        raise InputError(
            f"column {rater_columns[c] + 1} holds {cell!r}, not a finite number; {purpose} "
            f"needs numeric ratings",
            source=path,
            line=line,
            field=raters[c],
            hint="use --level nominal for text category labels; leave a cell empty when a "
            "rating is missing",
        )
    _refuse_id_like_column(rows, raters, path)
    # Nominal data with text: every non-empty cell is a label, numbers in canonical form (1 and
    # 1.0 are one label); codes in sorted order, numbers first.
    keys = sorted({_label(cell) for _, cells in rows for cell in cells if cell})
    code = {key[2]: float(i) for i, key in enumerate(keys)}
    coded = np.full((len(rows), len(raters)), np.nan, dtype=np.float64)
    for r, (_, cells) in enumerate(rows):
        for c, cell in enumerate(cells):
            if cell:
                coded[r, c] = code[_label(cell)[2]]
    return _Ratings(values=coded, raters=raters, labels=tuple(key[2] for key in keys))


def _refuse_id_like_column(
    rows: list[tuple[int, list[str]]], raters: tuple[str, ...], path: Path
) -> None:
    """A column of text only beside one of numbers only: most likely unit ids, not a rater."""
    kinds: list[set[bool]] = [set() for _ in raters]
    for _, cells in rows:
        for c, cell in enumerate(cells):
            if cell:
                kinds[c].add(_number(cell) is not None)
    text_only = [c for c, k in enumerate(kinds) if k == {False}]
    numbers_only = [c for c, k in enumerate(kinds) if k == {True}]
    if text_only and numbers_only:
        name, other = raters[text_only[0]], raters[numbers_only[0]]
        raise InputError(
            f"column {name!r} holds only text while {other!r} holds only numbers; raters of "
            f"one set of categories do not write them so differently",
            source=path,
            line=1,
            field=name,
            hint=f"if {name!r} holds the unit ids, pass --unit-column {name}; if it is a "
            "rater, write every rater's labels alike",
        )


@stats.command("agreement")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--metric",
    type=click.Choice(_METRICS),
    default="krippendorff",
    show_default=True,
    help="Agreement coefficient.",
)
@click.option(
    "--level",
    type=click.Choice(AGREEMENT_LEVELS),
    default=None,
    help="Level of measurement for Krippendorff's alpha [default: nominal].",
)
@click.option(
    "--weights",
    type=click.Choice(("none", "linear", "quadratic")),
    default="none",
    show_default=True,
    help="Weights for Cohen's kappa.",
)
@click.option(
    "--unit-column",
    metavar="NAME",
    help="The column holding the unit ids [default: the first column when it is named unit, "
    "id or *_id (answer_id, item_id, ...), else none].",
)
@_json_option
def agreement_command(
    file: Path,
    metric: str,
    level: str | None,
    weights: str,
    unit_column: str | None,
    as_json: bool,
) -> None:
    """Inter-rater agreement of the ratings in FILE.

    FILE is a CSV with a header row: one row per unit (output), one column per rater, and
    optionally one column of unit ids: --unit-column NAME, else the first column when it is
    named unit, id or ends in _id (answer_id). Rater names and unit ids must be unique. Only
    an empty cell is a missing rating. Text category labels are allowed for nominal data: when
    any cell is text, cells are compared as labels, numbers in one form (1 and 1.0 are one
    label), coded in sorted order; a text-only column beside number-only ones is refused (unit
    ids under another name?). The ordinal, interval and ratio levels and weighted kappa need
    numbers. Cohen's kappa needs exactly two rater columns.
    """
    if level is not None and metric != "krippendorff" and level != "nominal":
        raise click.UsageError("--level applies to --metric krippendorff only")
    if weights != "none" and metric != "cohen":
        raise click.UsageError("--weights applies to --metric cohen only")
    chosen_level = level or "nominal"
    numeric_only = (metric == "krippendorff" and chosen_level != "nominal") or weights != "none"
    ratings = _read_ratings(
        file,
        unit_column=unit_column,
        numeric_only=numeric_only,
        purpose=f"the {chosen_level} level"
        if metric == "krippendorff"
        else f"{weights}-weighted kappa",
    )
    payload: dict[str, Any] = {
        "metric": metric,
        "level": chosen_level if metric == "krippendorff" else "nominal",
        "units": int(ratings.values.shape[0]),
        "raters": len(ratings.raters),
    }
    try:
        if metric == "krippendorff":
            value = krippendorff_alpha(ratings.values, level=chosen_level)  # type: ignore[arg-type]
        elif metric == "fleiss":
            value = fleiss_kappa(ratings.values)
        else:
            if len(ratings.raters) != 2:
                raise StatsError(
                    f"Cohen's kappa compares exactly two raters; the file has "
                    f"{len(ratings.raters)} rater columns",
                    hint="use --metric krippendorff or --metric fleiss for more raters",
                )
            value = cohen_kappa(
                ratings.values[:, 0],
                ratings.values[:, 1],
                weights=None if weights == "none" else weights,  # type: ignore[arg-type]
            )
            payload["weights"] = None if weights == "none" else weights
    except StatsError as error:
        hint = (
            error.hint.replace("krippendorff_alpha", "--metric krippendorff")
            if error.hint
            else None
        )
        raise InputError(error.message, source=file, hint=hint) from None
    payload = {"value": value, **payload}
    if ratings.labels is not None:
        payload["labels"] = list(ratings.labels)
    if as_json:
        _echo_json(payload)
        return
    names = {
        "krippendorff": f"Krippendorff's alpha ({chosen_level})",
        "fleiss": "Fleiss' kappa",
        "cohen": "Cohen's kappa" + ("" if weights == "none" else f" ({weights} weights)"),
    }
    shown = (
        "undefined (no variation, or no unit with two ratings)"
        if math.isnan(value)
        else f"{value:.4f}"
    )
    click.echo(
        f"{names[metric]} = {shown} over {payload['units']} units and {payload['raters']} raters"
    )
