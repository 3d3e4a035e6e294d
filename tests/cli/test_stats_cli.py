"""Tests for `vcost stats` (click CliRunner against the real top-level command)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from vcost.cli import cli
from vcost.stats import (
    clopper_pearson,
    krippendorff_alpha,
    plan_precision,
    wilson,
)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["stats", *args])


def run_json(*args: str) -> dict[str, object]:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


# Krippendorff (2011) example, units x raters, unit ids in the first column, empty = missing.
KRIPPENDORFF_CSV = """unit,A,B,C,D
1,1,1,,1
2,2,2,3,2
3,3,3,3,3
4,3,3,3,3
5,2,2,2,2
6,1,2,3,4
7,4,4,4,4
8,1,1,2,1
9,2,2,2,2
10,,5,5,5
11,,,1,1
12,,3,,
"""


@pytest.fixture
def kripp_csv(tmp_path: Path) -> Path:
    path = tmp_path / "ratings.csv"
    path.write_text(KRIPPENDORFF_CSV)
    return path


# --------------------------------------------------------------------------- interval


def test_interval_json_paper_value() -> None:
    """Crescitelli et al. Section 5: 3/3, two-sided 95% Clopper-Pearson -> lower 0.2924."""
    data = run_json("interval", "3", "3")
    assert data["lower"] == pytest.approx(clopper_pearson(3, 3).lower)
    assert round(float(data["lower"]), 4) == 0.2924  # type: ignore[arg-type]
    assert data["upper"] == 1.0
    assert data["level"] == pytest.approx(0.95)
    assert data["method"] == "clopper-pearson"


def test_interval_options_and_human_output() -> None:
    """Options pass through to the library (Wilson, one-sided upper, alpha 0.1)."""
    data = run_json(
        "interval", "81", "263", "--method", "wilson", "--alpha", "0.1", "--sides", "upper"
    )
    expected = wilson(81, 263, alpha=0.1, sides="upper")
    assert data["lower"] == 0.0
    assert data["upper"] == pytest.approx(expected.upper)
    assert data["level"] == pytest.approx(0.9)
    result = run("interval", "3", "3")
    assert result.exit_code == 0
    assert "[0.2924, 1.0000]" in result.stdout
    assert "95%" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("interval", "5", "3"), "between 0 and n = 3"),
        (("interval", "1", "3", "--alpha", "1.5"), "alpha must be strictly between 0 and 1"),
    ],
)
def test_interval_bad_arguments_exit_2(args: tuple[str, ...], message: str) -> None:
    """Library errors become one message on stderr and exit code 2, no traceback."""
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output


# --------------------------------------------------------------------------- vce


def test_vce_json() -> None:
    """Section 5: 6/6 confirmed (lower 0.5407), 0/6 not (upper 0.4593), 3/3 inconclusive."""
    data = run_json("vce", "6", "6", "--q", "0.5")
    assert data["state"] == "confirmed"
    assert data["estimate"] == 1.0
    assert round(float(data["lower"]), 4) == 0.5407  # type: ignore[arg-type]
    assert data["verifiers"] == 6
    assert run_json("vce", "0", "6", "--q", "0.5")["state"] == "not"
    three = run_json("vce", "3", "3", "--q", "0.5")
    assert three["state"] == "inconclusive"
    assert set(three) >= {"state", "estimate", "lower", "upper", "verifiers"}


def test_vce_human_and_errors() -> None:
    """Readable line; q is required; failures > M is exit code 2."""
    result = run("vce", "2", "3", "--q", "0.5")
    assert result.exit_code == 0
    assert "inconclusive" in result.stdout
    missing_q = run("vce", "2", "3")
    assert missing_q.exit_code == 2
    assert "--q" in missing_q.output
    too_many = run("vce", "4", "3", "--q", "0.5")
    assert too_many.exit_code == 2
    assert "failures must be between 0 and verifiers = 3" in too_many.stderr


# --------------------------------------------------------------------------- plan


def test_plan_json_matches_library() -> None:
    """The JSON is PrecisionPlan.to_dict(); q = 1/2 needs 6 verifiers for either extreme."""
    data = run_json("plan", "--q", "0.5")
    assert data == json.loads(json.dumps(plan_precision(q=0.5).to_dict()))
    assert data["min_verifiers"] == {"confirm": 6, "reject": 6}
    assert data["m_values"] == list(range(3, 31))


def test_plan_human_table() -> None:
    """Rich table with the minima line; custom m range."""
    result = run("plan", "--q", "0.5", "--m-min", "5", "--m-max", "9")
    assert result.exit_code == 0, result.output
    assert "confirm (m/m failures): 6" in result.stdout
    assert "reject (0/m failures): 6" in result.stdout
    assert "46.9" in result.stdout  # m = 6, p = 0.1: 1 - 0.9^6 - 0.1^6 = 0.4686
    bad = run("plan", "--q", "0.5", "--m-min", "9", "--m-max", "5")
    assert bad.exit_code == 2


# --------------------------------------------------------------------------- agreement


def test_agreement_krippendorff_levels(kripp_csv: Path) -> None:
    """Krippendorff (2011) example read from CSV: 0.743 nominal, 0.849 interval."""
    data = run_json("agreement", str(kripp_csv))
    assert round(float(data["value"]), 3) == 0.743  # type: ignore[arg-type]
    assert data["metric"] == "krippendorff"
    assert data["level"] == "nominal"
    assert data["units"] == 12
    assert data["raters"] == 4
    interval = run_json("agreement", str(kripp_csv), "--level", "interval")
    assert round(float(interval["value"]), 3) == 0.849  # type: ignore[arg-type]
    human = run("agreement", str(kripp_csv), "--level", "ordinal")
    assert human.exit_code == 0
    assert "0.8154" in human.stdout


def test_agreement_text_labels_nominal(tmp_path: Path) -> None:
    """Text labels are coded in sorted order for nominal data; the value equals the library's
    on the hand-coded matrix (no = 0, yes = 1)."""
    path = tmp_path / "verdicts.csv"
    path.write_text("unit,v1,v2,v3\na,yes,no,\nb,yes,yes,yes\nc,no,no,no\nd,no,yes,no\n")
    data = run_json("agreement", str(path))
    nan = float("nan")
    expected = krippendorff_alpha([[1, 0, nan], [1, 1, 1], [0, 0, 0], [0, 1, 0]])
    assert data["value"] == pytest.approx(expected)
    assert data["labels"] == ["no", "yes"]
    fleiss = run("agreement", str(path), "--metric", "fleiss")
    assert fleiss.exit_code == 2
    assert str(path) in fleiss.stderr
    assert "--metric krippendorff" in fleiss.stderr


def test_agreement_without_unit_column_and_cohen(tmp_path: Path) -> None:
    """No unit column: every column is a rater. Cohen's kappa on Wikipedia's 50-application
    example (20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no) is 0.4."""
    rows = ["1,1"] * 20 + ["1,0"] * 5 + ["0,1"] * 10 + ["0,0"] * 15
    path = tmp_path / "two.csv"
    path.write_text("A,B\n" + "\n".join(rows) + "\n")
    data = run_json("agreement", str(path), "--metric", "cohen")
    assert data["value"] == pytest.approx(0.4)
    assert data["raters"] == 2
    assert data["units"] == 50
    weighted = run_json("agreement", str(path), "--metric", "cohen", "--weights", "linear")
    assert weighted["value"] == pytest.approx(0.4)  # two categories: linear = unweighted


def test_agreement_cohen_needs_two_raters(kripp_csv: Path) -> None:
    """Cohen's kappa with four rater columns: exit 2 naming the file."""
    result = run("agreement", str(kripp_csv), "--metric", "cohen")
    assert result.exit_code == 2
    assert str(kripp_csv) in result.stderr
    assert "exactly two raters" in result.stderr


def test_agreement_bad_csv_names_file_line_and_column(tmp_path: Path) -> None:
    """A non-numeric cell at an interval level: exit 2, message with file:line and column."""
    path = tmp_path / "bad.csv"
    path.write_text("unit,A,B\n1,1,2\n2,3,oops\n3,1,1\n")
    result = run("agreement", str(path), "--level", "interval")
    assert result.exit_code == 2
    assert f"{path}:3" in result.stderr
    assert "'B'" in result.stderr
    assert "oops" in result.stderr
    assert "Traceback" not in result.output


def test_agreement_ragged_and_empty_csv(tmp_path: Path) -> None:
    """A row with the wrong number of cells and an empty file are input errors (exit 2)."""
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("A,B,C\n1,2,3\n1,2\n")
    result = run("agreement", str(ragged))
    assert result.exit_code == 2
    assert f"{ragged}:3" in result.stderr
    assert "expected 3 cells" in result.stderr
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    result = run("agreement", str(empty))
    assert result.exit_code == 2
    assert "empty" in result.stderr
    one = tmp_path / "one.csv"
    one.write_text("unit,A\n1,2\n")
    result = run("agreement", str(one))
    assert result.exit_code == 2
    assert "at least two" in result.stderr


def test_agreement_undefined_is_null(tmp_path: Path) -> None:
    """No variation: alpha undefined -> JSON null, readable "undefined"."""
    path = tmp_path / "same.csv"
    path.write_text("A,B\n1,1\n1,1\n")
    data = run_json("agreement", str(path))
    assert data["value"] is None
    assert "undefined" in run("agreement", str(path)).stdout


def test_agreement_option_misuse(kripp_csv: Path) -> None:
    """--level only for krippendorff, --weights only for cohen: usage errors (exit 2)."""
    assert (
        run("agreement", str(kripp_csv), "--metric", "fleiss", "--level", "interval").exit_code == 2
    )
    assert run("agreement", str(kripp_csv), "--weights", "linear").exit_code == 2
    assert run("agreement", str(kripp_csv.with_name("missing.csv"))).exit_code == 2


def test_agreement_answer_id_column_is_the_unit_id_not_a_rater(tmp_path: Path) -> None:
    """`answer_id,r1,r2`: the first column is the unit id (a `*_id` name), so two raters.

    Expected value, by hand (Krippendorff 2011, nominal): units (1,1), (1,2), (2,2) give the
    coincidences o11 = 2, o12 = o21 = 1, o22 = 2, n1 = n2 = 3, n = 6, so alpha = 1 - (n - 1)
    (o12 + o21) / (2 n1 n2) = 1 - 5 * 2 / 18 = 4/9 = 0.4444; the `krippendorff` package
    (Castro 2017) gives the same. Counting the ids as a third rater gave 0.0667.
    """
    path = tmp_path / "ratings.csv"
    path.write_text("answer_id,r1,r2\na1,1,1\na2,1,2\na3,2,2\n")
    data = run_json("agreement", str(path))
    assert data["raters"] == 2
    assert data["units"] == 3
    assert data["value"] == pytest.approx(4 / 9)
    krippendorff = pytest.importorskip("krippendorff")
    reference = krippendorff.alpha(reliability_data=[[1, 1, 2], [1, 2, 2]],
                                   level_of_measurement="nominal")  # fmt: skip
    assert data["value"] == pytest.approx(reference)
    named = tmp_path / "named.csv"
    named.write_text("r1,item,r2\n1,a1,1\n1,a2,2\n2,a3,2\n")
    data = run_json("agreement", str(named), "--unit-column", "item")
    assert (data["raters"], data["value"]) == (2, pytest.approx(4 / 9))
    missing = run("agreement", str(named), "--unit-column", "answer")
    assert missing.exit_code == 2
    assert "'answer'" in missing.stderr
    assert "r1, item, r2" in missing.stderr


def test_agreement_refuses_an_undeclared_id_like_text_column(tmp_path: Path) -> None:
    """A text-only column beside number-only ones is most likely the unit ids under another
    name: refused with the hint to name it, never counted as a rater."""
    path = tmp_path / "ratings.csv"
    path.write_text("item,r1,r2\na1,1,1\na2,1,2\na3,2,2\n")
    result = run("agreement", str(path))
    assert result.exit_code == 2
    assert str(path) in result.stderr
    assert "'item'" in result.stderr
    assert "--unit-column item" in result.stderr


def test_agreement_refuses_duplicate_rater_names_and_unit_ids(tmp_path: Path) -> None:
    raters = tmp_path / "raters.csv"
    raters.write_text("unit,r1,r1\nu1,1,1\nu2,1,2\n")
    result = run("agreement", str(raters))
    assert result.exit_code == 2
    assert f"{raters}:1" in result.stderr
    assert "'r1'" in result.stderr
    assert "columns 2 and 3" in result.stderr
    units = tmp_path / "units.csv"
    units.write_text("unit,r1,r2\nu1,1,1\nu2,1,2\nu1,2,2\n")
    result = run("agreement", str(units))
    assert result.exit_code == 2
    assert f"{units}:4" in result.stderr
    assert "duplicate unit id 'u1' (first on line 2)" in result.stderr


def test_agreement_numeric_labels_are_one_category_however_written(tmp_path: Path) -> None:
    """With text labels in the file, 1 and 1.0 (and 2, 2.00) are still one category each: the
    value equals the library's on the hand-coded matrix (1 -> 0, 2 -> 1, unsure -> 2)."""
    path = tmp_path / "mixed.csv"
    path.write_text("unit,r1,r2\na,1,1.0\nb,2,2.00\nc,unsure,unsure\nd,1,2\n")
    data = run_json("agreement", str(path))
    expected = krippendorff_alpha([[0, 0], [1, 1], [2, 2], [0, 1]])
    assert data["value"] == pytest.approx(expected)
    assert data["labels"] == ["1", "2", "unsure"]


def test_agreement_bad_byte_names_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "bytes.csv"
    path.write_bytes(b"unit,r1,r2\nu1,1,1\nu2,1,2\nu3,\xff,2\n")
    result = run("agreement", str(path))
    assert result.exit_code == 2
    assert f"{path}:4" in result.stderr
    assert "UTF-8" in result.stderr
