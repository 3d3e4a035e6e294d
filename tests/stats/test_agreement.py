"""Tests for vcost.stats.agreement: Krippendorff's alpha, Fleiss' and Cohen's kappa.

Each test's docstring names where its expected values come from.
"""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from vcost.errors import StatsError
from vcost.stats import (
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    krippendorff_alpha_counts,
    percent_agreement,
)

LEVELS = ("nominal", "ordinal", "interval", "ratio")
nan = math.nan

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with four
# observers, twelve units and missing values (observers are rows there; transposed here to
# units x raters).
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
).T

# Fleiss' kappa example of the Wikipedia article "Fleiss' kappa": 10 subjects, 14 raters,
# 5 categories, given as counts per category (also statsmodels' test table).
WIKIPEDIA_FLEISS_COUNTS = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)

# Fleiss (1971), Psychological Bulletin 76:378-382: 30 patients, 6 psychiatrists, 5 diagnoses,
# as the `diagnoses` data set of R's irr package (rows patients, columns raters).
FLEISS_1971_DIAGNOSES = np.array(
    [
        [4, 4, 4, 4, 4, 4],
        [2, 2, 2, 5, 5, 5],
        [2, 3, 3, 3, 3, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4],
        [1, 1, 3, 3, 3, 3],
        [3, 3, 3, 3, 5, 5],
        [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4],
        [5, 5, 5, 5, 5, 5],
        [1, 4, 4, 4, 4, 4],
        [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3],
        [1, 4, 4, 4, 4, 4],
        [2, 2, 4, 4, 4, 5],
        [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5],
        [1, 1, 1, 1, 1, 2],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 4, 4, 4, 4, 4],
        [2, 2, 4, 5, 5, 5],
        [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5],
        [2, 2, 2, 2, 2, 4],
        [1, 1, 1, 1, 5, 5],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3],
        [5, 5, 5, 5, 5, 5],
    ]
)


def _counts_to_ratings(counts: np.ndarray) -> np.ndarray:
    """Expand a (units, categories) count table into (units, raters) labels 1..C."""
    return np.array([np.repeat(np.arange(1, counts.shape[1] + 1), row) for row in counts], float)


def _table_to_pairs(table: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Expand a two-rater contingency table (rows rater A, columns rater B) into two vectors."""
    a: list[int] = []
    b: list[int] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [i] * count
            b += [j] * count
    return np.array(a, float), np.array(b, float)


def _random_ratings(
    rng: np.random.Generator, *, values: np.ndarray, missing: float = 0.2
) -> np.ndarray:
    units = int(rng.integers(5, 60))
    raters = int(rng.integers(2, 7))
    # Correlated ratings: a unit's "true" value plus noise, so alpha is not always near 0.
    truth = rng.integers(0, values.size, units)
    noise = rng.integers(-1, 2, (units, raters)) * (rng.uniform(size=(units, raters)) < 0.4)
    ratings = values[np.clip(truth[:, None] + noise, 0, values.size - 1)].astype(float)
    ratings[rng.uniform(size=ratings.shape) < missing] = nan
    return ratings


# --------------------------------------------------------------------------- Krippendorff


def test_krippendorff_2011_nominal() -> None:
    """Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", nominal data with
    missing values: alpha = 0.743."""
    assert round(krippendorff_alpha(KRIPPENDORFF_2011), 3) == 0.743


@pytest.mark.parametrize(
    ("level", "expected"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011_all_levels(level: str, expected: float) -> None:
    """The same data at all four levels: 0.743 / 0.815 / 0.849 / 0.797 as commonly cited for it
    (Krippendorff 2011; Hayes & Krippendorff 2007 macro), and equal to 1e-12 to the
    independent `krippendorff` package (krippendorff.alpha on the raters x units array)."""
    value = krippendorff_alpha(KRIPPENDORFF_2011, level=level)  # type: ignore[arg-type]
    assert round(value, 3) == expected
    reference = krippendorff.alpha(reliability_data=KRIPPENDORFF_2011.T, level_of_measurement=level)
    assert value == pytest.approx(reference, abs=1e-12)


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_against_package_random(level: str) -> None:
    """krippendorff.alpha(reliability_data=ratings.T, level_of_measurement=level) on 60 random
    data sets with about 20% missing ratings and non-integer, unequally spaced values."""
    rng = np.random.default_rng(21)
    values = np.array([0.0, 0.5, 1.0, 2.5, 4.0, 7.0, 7.5])
    checked = 0
    for _ in range(60):
        ratings = _random_ratings(rng, values=values)
        pairable = ratings[(~np.isnan(ratings)).sum(axis=1) >= 2]
        if np.unique(pairable[~np.isnan(pairable)]).size < 2:
            continue
        ours = krippendorff_alpha(ratings, level=level)  # type: ignore[arg-type]
        theirs = krippendorff.alpha(reliability_data=ratings.T, level_of_measurement=level)
        assert ours == pytest.approx(theirs, abs=1e-10)
        checked += 1
    assert checked > 50


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_counts_form(level: str) -> None:
    """krippendorff_alpha_counts on per-unit value counts equals krippendorff_alpha on the
    ratings they summarise, and the `krippendorff` package's value_counts input."""
    rng = np.random.default_rng(22)
    values = np.array([1.0, 2.0, 3.0, 5.0, 8.0])
    for _ in range(30):
        ratings = _random_ratings(rng, values=values)
        counts = np.stack([(ratings == v).sum(axis=1) for v in values], axis=1)
        direct = krippendorff_alpha(ratings, level=level)  # type: ignore[arg-type]
        from_counts = krippendorff_alpha_counts(counts, level=level, values=values)  # type: ignore[arg-type]
        if math.isnan(direct):
            assert math.isnan(from_counts)
            continue
        assert from_counts == pytest.approx(direct, abs=1e-12)
        theirs = krippendorff.alpha(
            value_counts=counts, value_domain=values, level_of_measurement=level
        )
        assert from_counts == pytest.approx(theirs, abs=1e-10)
    # Column order does not matter once values are given; shuffled columns give the same alpha.
    ratings = _random_ratings(np.random.default_rng(5), values=values)
    counts = np.stack([(ratings == v).sum(axis=1) for v in values], axis=1)
    order = np.array([3, 0, 4, 1, 2])
    assert krippendorff_alpha_counts(
        counts[:, order],
        level=level,
        values=values[order],  # type: ignore[arg-type]
    ) == pytest.approx(krippendorff_alpha_counts(counts, level=level, values=values))  # type: ignore[arg-type]


def test_krippendorff_many_distinct_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """Interval, ratio and ordinal data with hundreds of distinct values (e.g. times): against
    the `krippendorff` package on 120 units, with the expected-disagreement sum forced into
    small chunks; and on 800 units (over two thousand values, the default chunking) against the
    library's coincidence-matrix form krippendorff_alpha_counts."""
    from vcost.stats import agreement

    rng = np.random.default_rng(23)

    def make(units: int) -> np.ndarray:
        truth = rng.uniform(1, 100, units)
        ratings = np.abs(np.round(truth[:, None] + rng.normal(0, 5, (units, 3)), 3))
        ratings[rng.uniform(size=ratings.shape) < 0.1] = nan
        return ratings

    small = make(120)
    with monkeypatch.context() as patch:
        patch.setattr(agreement, "_CHUNK", 7)
        for level in ("interval", "ratio", "ordinal"):
            ours = krippendorff_alpha(small, level=level)  # type: ignore[arg-type]
            theirs = krippendorff.alpha(reliability_data=small.T, level_of_measurement=level)
            assert ours == pytest.approx(theirs, abs=1e-10)
    large = make(800)
    values = np.unique(large[~np.isnan(large)])
    assert values.size > 2 * agreement._CHUNK
    counts = np.stack([(large == v).sum(axis=1) for v in values], axis=1)
    for level in ("interval", "ratio", "ordinal"):
        ours = krippendorff_alpha(large, level=level)  # type: ignore[arg-type]
        via_counts = krippendorff_alpha_counts(counts, level=level, values=values)  # type: ignore[arg-type]
        assert ours == pytest.approx(via_counts, abs=1e-10)


def test_krippendorff_perfect_agreement_is_one() -> None:
    """Every pairable unit unanimous, with variation across units: D_o = 0, alpha = 1."""
    ratings = np.array([[1, 1, nan], [2, 2, 2], [3, nan, 3], [1, 1, 1]], float)
    for level in LEVELS:
        assert krippendorff_alpha(ratings, level=level) == 1.0  # type: ignore[arg-type]


def test_krippendorff_undefined_is_nan() -> None:
    """Documented: alpha is undefined (NaN) when the pairable values do not vary (D_e = 0;
    Krippendorff 2011) or when no unit has two ratings. A unit with a lone rating is ignored:
    here only units 1 and 2 are pairable and both have value 1."""
    no_variation = np.array([[1, 1], [1, 1], [3, nan]], float)
    no_pairs = np.array([[1, nan], [nan, 2], [3, nan]], float)
    for level in LEVELS:
        assert math.isnan(krippendorff_alpha(no_variation, level=level))  # type: ignore[arg-type]
        assert math.isnan(krippendorff_alpha(no_pairs, level=level))  # type: ignore[arg-type]
    assert math.isnan(krippendorff_alpha_counts(np.array([[2, 0], [0, 1]])))


def test_krippendorff_drops_lone_ratings() -> None:
    """Adding a unit with a single rating changes nothing (only pairable values count)."""
    base = KRIPPENDORFF_2011[:11]
    assert krippendorff_alpha(base) == pytest.approx(krippendorff_alpha(KRIPPENDORFF_2011))


@pytest.mark.parametrize(
    ("ratings", "kwargs", "message"),
    [
        (np.array([1.0, 2.0]), {}, "2-D"),
        (np.array([[1.0], [2.0]]), {}, "at least two raters"),
        (np.array([[1.0, np.inf], [2.0, 2.0]]), {}, "finite"),
        (np.array([[1.0, -1.0], [2.0, 2.0]]), {"level": "ratio"}, "non-negative"),
        (np.array([[1.0, 1.0], [2.0, 2.0]]), {"level": "nominalish"}, "level of measurement"),
        ([["a", "b"], ["a", "a"]], {}, "numeric codes"),
    ],
)
def test_krippendorff_bad_arguments(ratings: object, kwargs: dict[str, str], message: str) -> None:
    """StatsError with what is expected."""
    with pytest.raises(StatsError, match=message):
        krippendorff_alpha(ratings, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Fleiss


def test_fleiss_wikipedia_example() -> None:
    """Wikipedia, "Fleiss' kappa", worked example: 10 subjects x 14 raters x 5 categories,
    P_bar = 0.378, P_e = 0.213, kappa = 0.210."""
    ratings = _counts_to_ratings(WIKIPEDIA_FLEISS_COUNTS)
    assert ratings.shape == (10, 14)
    assert round(fleiss_kappa(ratings), 3) == 0.210
    assert round(percent_agreement(ratings), 3) == 0.378


def test_fleiss_1971_diagnoses() -> None:
    """Fleiss (1971): 30 patients x 6 psychiatrists x 5 diagnoses, kappa = 0.430; R irr
    kappam.fleiss(diagnoses) gives 0.4302445 (as recorded in statsmodels' test suite)."""
    assert fleiss_kappa(FLEISS_1971_DIAGNOSES) == pytest.approx(0.4302445, abs=1e-7)


def test_fleiss_against_statsmodels_random() -> None:
    """statsmodels.stats.inter_rater.fleiss_kappa on aggregate_raters(data) for 50 random
    complete data sets; also with the raters of each unit scattered over columns (NaN
    elsewhere), which Fleiss' design allows."""
    rng = np.random.default_rng(31)
    for _ in range(50):
        units, raters = int(rng.integers(3, 40)), int(rng.integers(2, 8))
        ratings = rng.integers(0, int(rng.integers(2, 6)), (units, raters)).astype(float)
        if np.unique(ratings).size < 2:
            continue
        table, _ = aggregate_raters(ratings.astype(int))
        expected = sm_fleiss_kappa(table, method="fleiss")
        assert fleiss_kappa(ratings) == pytest.approx(expected, abs=1e-12)
        scattered = np.full((units, raters + 3), nan)
        for u in range(units):
            columns = rng.choice(raters + 3, raters, replace=False)
            scattered[u, columns] = ratings[u]
        assert fleiss_kappa(scattered) == pytest.approx(expected, abs=1e-12)


def test_fleiss_unequal_ratings_refused() -> None:
    """Fleiss' kappa has no rule for missing ratings: a clear StatsError pointing to alpha."""
    with pytest.raises(StatsError, match="same number of ratings") as info:
        fleiss_kappa(np.array([[1, 2, 2], [1, 1, nan]], float))
    assert "krippendorff_alpha" in str(info.value)


def test_fleiss_single_category_is_nan() -> None:
    """All ratings in one category: P_e = 1, kappa undefined -> NaN (documented)."""
    assert math.isnan(fleiss_kappa(np.ones((4, 3))))


# --------------------------------------------------------------------------- Cohen


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ([[20, 5], [10, 15]], 0.4),
        ([[45, 15], [25, 15]], 0.1304),
        ([[25, 35], [5, 35]], 0.2593),
    ],
)
def test_cohen_wikipedia_examples(table: list[list[int]], expected: float) -> None:
    """Wikipedia, "Cohen's kappa": the 50-application example (p_o = 0.7, p_e = 0.5,
    kappa = 0.4) and the two "same agreement, different kappa" tables (p_o = 0.60 in both;
    p_e = 0.54 -> 0.1304 and p_e = 0.46 -> 0.2593; hand-checked arithmetic)."""
    a, b = _table_to_pairs(table)
    assert round(cohen_kappa(a, b), 4) == expected


def test_cohen_sas_example() -> None:
    """SAS PROC FREQ output for the 3x3 table [[0,4,1],[0,8,0],[0,1,5]] (reproduced in
    statsmodels' test suite): simple kappa 0.4842, weighted kappa (Cicchetti-Allison = linear)
    0.4701."""
    a, b = _table_to_pairs([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    assert round(cohen_kappa(a, b), 4) == 0.4842
    assert round(cohen_kappa(a, b, weights="linear"), 4) == 0.4701


def _independent_kappa(a: np.ndarray, b: np.ndarray, weights: str | None) -> float:
    """Plain-loop Cohen's kappa, written independently of the library."""
    labels = sorted(set(a.tolist()) | set(b.tolist()))
    c = len(labels)
    pos = {v: i for i, v in enumerate(labels)}
    p = [[0.0] * c for _ in range(c)]
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        p[pos[x]][pos[y]] += 1 / len(a)
    rows = [sum(p[i]) for i in range(c)]
    cols = [sum(p[i][j] for i in range(c)) for j in range(c)]

    def w(i: int, j: int) -> float:
        if weights is None:
            return 0.0 if i == j else 1.0
        return abs(i - j) if weights == "linear" else (i - j) ** 2

    observed = sum(w(i, j) * p[i][j] for i in range(c) for j in range(c))
    expected = sum(w(i, j) * rows[i] * cols[j] for i in range(c) for j in range(c))
    return 1 - observed / expected


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_against_statsmodels_and_loop(weights: str | None) -> None:
    """statsmodels.stats.inter_rater.cohens_kappa(table, wt=weights) and an independent loop
    implementation, on 60 random rater pairs."""
    rng = np.random.default_rng(41)
    for _ in range(60):
        size = int(rng.integers(5, 80))
        k = int(rng.integers(2, 6))
        a = rng.integers(0, k, size)
        b = np.where(rng.uniform(size=size) < 0.6, a, rng.integers(0, k, size))
        labels = np.union1d(a, b)
        if labels.size < 2:
            continue
        table = np.array([[np.sum((a == x) & (b == y)) for y in labels] for x in labels])
        got = cohen_kappa(a, b, weights=weights)  # type: ignore[arg-type]
        ref = cohens_kappa(table, wt=weights, return_results=False)
        assert got == pytest.approx(ref, abs=1e-12)
        assert got == pytest.approx(_independent_kappa(a, b, weights), abs=1e-12)


def test_cohen_declared_categories_and_missing() -> None:
    """Unused scale points matter for weighted kappa when declared; NaN pairs are dropped.
    Checked against the loop implementation on the equivalent relabelled data."""
    a = np.array([1, 1, 3, 3, 5, nan])
    b = np.array([1, 3, 3, 5, 5, 1])
    # Declaring the scale 1, 2, 3, 5 puts the observed 1, 3, 5 at positions 0, 2, 3 instead of
    # 0, 1, 2; the reference is statsmodels on the 4x4 table that keeps the unused category.
    declared = [1, 2, 3, 5]
    got = cohen_kappa(a, b, weights="linear", categories=declared)
    a2 = np.array([0, 0, 2, 2, 3], float)
    b2 = np.array([0, 2, 2, 3, 3], float)
    table = np.array([[np.sum((a2 == x) & (b2 == y)) for y in range(4)] for x in range(4)])
    assert got == pytest.approx(cohens_kappa(table, wt="linear", return_results=False))
    assert cohen_kappa(a, b) == pytest.approx(_independent_kappa(a[:5], b[:5], None))
    with pytest.raises(StatsError, match="not listed in categories"):
        cohen_kappa(a, b, categories=[1, 3])


def test_cohen_errors_and_undefined() -> None:
    """Mismatched lengths and unknown weights raise; one shared category -> NaN."""
    with pytest.raises(StatsError, match="equal length"):
        cohen_kappa([1, 2], [1, 2, 3])
    with pytest.raises(StatsError, match="unknown weights"):
        cohen_kappa([1, 2], [1, 2], weights="cubic")  # type: ignore[arg-type]
    with pytest.raises(StatsError, match="no unit is rated by both"):
        cohen_kappa([1, nan], [nan, 2])
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))


# --------------------------------------------------------------------------- percent agreement


def test_percent_agreement() -> None:
    """Hand-computed: unit 1 has 3 ratings with 1 agreeing pair of 3 (1/3), unit 2 two equal
    ratings (1), unit 3 a single rating (left out): mean (1/3 + 1) / 2 = 2/3. Two raters:
    the plain share of agreeing units."""
    ratings = np.array([[1, 1, 2], [3, 3, nan], [1, nan, nan]], float)
    assert percent_agreement(ratings) == pytest.approx(2 / 3)
    assert percent_agreement(np.array([[1, 1], [1, 2], [2, 2], [3, 1]], float)) == 0.5
    assert math.isnan(percent_agreement(np.array([[1, nan], [nan, 2]], float)))


# --------------------------------------------------------------------------- properties


@st.composite
def rating_matrices(draw: st.DrawFn, complete: bool = False) -> np.ndarray:
    units = draw(st.integers(2, 12))
    raters = draw(st.integers(2, 5))
    cells = st.sampled_from([0.0, 1.0, 2.0, 3.0, 5.0])
    if not complete:
        cells = st.one_of(cells, st.just(nan))
    values = draw(st.lists(cells, min_size=units * raters, max_size=units * raters))
    return np.array(values).reshape(units, raters)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-9)


@given(ratings=rating_matrices(), data=st.data(), level=st.sampled_from(LEVELS))
def test_alpha_invariant_under_permutations(
    ratings: np.ndarray, data: st.DataObject, level: str
) -> None:
    """Alpha does not depend on the order of raters (columns) or units (rows)."""
    cols = data.draw(st.permutations(range(ratings.shape[1])))
    rows = data.draw(st.permutations(range(ratings.shape[0])))
    base = krippendorff_alpha(ratings, level=level)  # type: ignore[arg-type]
    permuted = krippendorff_alpha(ratings[np.ix_(rows, cols)], level=level)  # type: ignore[arg-type]
    assert _same(base, permuted)


@given(ratings=rating_matrices(), level=st.sampled_from(LEVELS))
def test_alpha_at_most_one(ratings: np.ndarray, level: str) -> None:
    """alpha <= 1 whenever defined (D_o >= 0)."""
    value = krippendorff_alpha(ratings, level=level)  # type: ignore[arg-type]
    assert math.isnan(value) or value <= 1.0 + 1e-12


@given(ratings=rating_matrices())
def test_alpha_invariances_by_level(ratings: np.ndarray) -> None:
    """Nominal: any relabelling; ordinal: any increasing map; interval: affine maps;
    ratio: positive scaling. Each leaves alpha unchanged."""
    relabel = {0.0: 7.0, 1.0: -2.0, 2.0: 0.5, 3.0: 11.0, 5.0: 3.0}
    relabelled = np.vectorize(lambda x: relabel.get(x, nan))(ratings)
    assert _same(krippendorff_alpha(ratings), krippendorff_alpha(relabelled))
    assert _same(
        krippendorff_alpha(ratings, level="ordinal"),
        krippendorff_alpha(np.exp(ratings) + ratings**3, level="ordinal"),
    )
    assert _same(
        krippendorff_alpha(ratings, level="interval"),
        krippendorff_alpha(-3.0 * ratings + 10.0, level="interval"),
    )
    assert _same(
        krippendorff_alpha(ratings, level="ratio"),
        krippendorff_alpha(2.5 * ratings, level="ratio"),
    )


@given(ratings=rating_matrices(complete=True))
def test_alpha_and_fleiss_relation_on_complete_data(ratings: np.ndarray) -> None:
    """With complete data (N units x r raters, n = N r values) both coefficients share
    D_o = 1 - P_bar, and Krippendorff's D_e is Fleiss' times n/(n - 1), so
    1 - alpha = (1 - kappa) (n - 1)/n exactly."""
    kappa = fleiss_kappa(ratings)
    alpha = krippendorff_alpha(ratings)
    assume(not math.isnan(kappa))
    n = ratings.size
    assert 1 - alpha == pytest.approx((1 - kappa) * (n - 1) / n, abs=1e-12)


@given(
    ratings=rating_matrices(complete=True), weights=st.sampled_from([None, "linear", "quadratic"])
)
def test_cohen_symmetric_and_bounded(ratings: np.ndarray, weights: str | None) -> None:
    """Swapping the two raters leaves kappa unchanged; kappa <= 1."""
    a, b = ratings[:, 0], ratings[:, 1]
    k1 = cohen_kappa(a, b, weights=weights)  # type: ignore[arg-type]
    k2 = cohen_kappa(b, a, weights=weights)  # type: ignore[arg-type]
    assert _same(k1, k2)
    assert math.isnan(k1) or k1 <= 1.0 + 1e-12


@given(ratings=rating_matrices(complete=True))
def test_percent_agreement_is_fleiss_p_bar(ratings: np.ndarray) -> None:
    """With complete data percent agreement is Fleiss' P_bar: kappa (1 - P_e) + P_e."""
    kappa = fleiss_kappa(ratings)
    assume(not math.isnan(kappa))
    _, counts = np.unique(ratings, return_counts=True)
    shares = counts / counts.sum()
    p_e = float(np.sum(shares**2))
    assert percent_agreement(ratings) == pytest.approx(kappa * (1 - p_e) + p_e, abs=1e-12)
