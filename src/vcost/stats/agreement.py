"""Inter-rater agreement: Krippendorff's alpha, Fleiss' kappa, Cohen's kappa, percent agreement.

Step 4 of the protocol (Crescitelli et al., Section 6) asks for inter-rater agreement "(e.g.,
Krippendorff's alpha) across N >= 3 verifiers per output", reported beside verdict accuracy and
the premature-closure rate, never used as a gate.

Ratings are a 2-D array of shape (units, raters): one row per output (unit), one column per
verifier (rater), NaN where a rater did not rate a unit. Category labels are numbers; map text
labels to numeric codes first (the CLI does this for nominal data).

Undefined results are NaN, not errors: Krippendorff's alpha when fewer than two distinct values
are pairable (no variation, D_e = 0; Krippendorff 2011 calls alpha undefined there) or when no
unit has two ratings; Fleiss' and Cohen's kappa when chance agreement is 1 (every rating in one
category); percent agreement when no unit has two ratings. Arguments that cannot describe
ratings at all (not 2-D, fewer than two raters, infinite values, text) raise
:class:`~vcost.errors.StatsError`.
"""

from __future__ import annotations

import math
from typing import Final, Literal, get_args

import numpy as np
import numpy.typing as npt

from vcost.errors import StatsError

__all__ = [
    "AGREEMENT_LEVELS",
    "AgreementLevel",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
    "krippendorff_alpha_counts",
    "percent_agreement",
]

AgreementLevel = Literal["nominal", "ordinal", "interval", "ratio"]
AGREEMENT_LEVELS: Final[tuple[str, ...]] = get_args(AgreementLevel)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]

# Rows of the expected-disagreement sum computed at a time (bounds memory for many values).
_CHUNK: Final = 512


# --------------------------------------------------------------------------- input


def _as_ratings(ratings: npt.ArrayLike) -> FloatArray:
    """A validated float (units, raters) array with NaN for missing ratings."""
    try:
        data = np.asarray(ratings, dtype=np.float64)
    except (TypeError, ValueError):
        raise StatsError(
            "ratings must be numbers (NaN for missing); map text category labels to numeric "
            "codes first"
        ) from None
    if data.ndim != 2:
        raise StatsError(
            f"ratings must be a 2-D array of shape (units, raters), got {data.ndim} dimension(s)"
        )
    if data.shape[1] < 2:
        raise StatsError(
            f"agreement needs at least two raters (columns), got {data.shape[1]}",
            hint="ratings are shaped (units, raters); transpose if raters are rows",
        )
    if np.any(np.isinf(data)):
        raise StatsError("ratings must be finite numbers or NaN (missing); found an infinity")
    return data


def _pairs_per_unit(data: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per unit: number of agreeing rater pairs and number of pairable rater pairs."""
    present = ~np.isnan(data)
    raters = data.shape[1]
    agree = np.zeros(data.shape[0], dtype=np.float64)
    pairs = np.zeros(data.shape[0], dtype=np.float64)
    for i in range(raters - 1):
        for j in range(i + 1, raters):
            both = present[:, i] & present[:, j]
            pairs += both
            agree += both & (data[:, i] == data[:, j])
    return agree, pairs


# --------------------------------------------------------------------------- Krippendorff


def _delta(
    level: str, a: IntArray, b: IntArray, values: FloatArray, n_c: FloatArray, cum: FloatArray
) -> FloatArray:
    """Squared difference delta^2 between value indices a and b (Krippendorff 2011)."""
    if level == "nominal":
        return np.asarray(a != b, dtype=np.float64)
    if level == "interval":
        return np.asarray((values[a] - values[b]) ** 2, dtype=np.float64)
    if level == "ratio":
        total = values[a] + values[b]
        diff = values[a] - values[b]
        safe = np.where(total == 0.0, 1.0, total)
        return np.asarray(np.where(total == 0.0, 0.0, (diff / safe) ** 2), dtype=np.float64)
    # ordinal: (sum_{g=c}^{k} n_g - (n_c + n_k) / 2)^2 over the ranks of the observed values
    lo = np.minimum(a, b)
    hi = np.maximum(a, b)
    return np.asarray((cum[hi] - cum[lo] + n_c[lo] / 2.0 - n_c[hi] / 2.0) ** 2, dtype=np.float64)


def krippendorff_alpha(ratings: npt.ArrayLike, *, level: AgreementLevel = "nominal") -> float:
    """Krippendorff's alpha reliability coefficient, alpha = 1 - D_o / D_e.

    Follows Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": only pairable
    values count (units with fewer than two ratings are dropped); the coincidence matrix
    o_ck = sum_u (number of c-k pairs in u) / (m_u - 1) and its marginals n_c give

        alpha = 1 - (n - 1) * sum_ck o_ck delta^2_ck / sum_ck n_c n_k delta^2_ck.

    The sum over o is accumulated pair by pair within units (identical to summing the matrix,
    without materialising it), so many distinct values (e.g. interval data) stay cheap.
    Metrics delta^2: nominal [c != k]; ordinal (sum_{g=c..k} n_g - (n_c + n_k)/2)^2 over the
    ranks of the values that occur; interval (c - k)^2; ratio ((c - k)/(c + k))^2, which needs
    non-negative values.

    Returns NaN when alpha is undefined: no unit has two ratings, or the pairable values show no
    variation (one distinct value, D_e = 0).
    """
    if level not in AGREEMENT_LEVELS:
        raise StatsError(
            f"unknown level of measurement {level!r}; expected one of {', '.join(AGREEMENT_LEVELS)}"
        )
    data = _as_ratings(ratings)
    present = ~np.isnan(data)
    m_u = present.sum(axis=1)
    data = data[m_u >= 2]
    m_u = m_u[m_u >= 2]
    present = ~np.isnan(data)
    if data.shape[0] == 0:
        return math.nan
    if level == "ratio" and np.any(data[present] < 0):
        raise StatsError(
            "the ratio level needs non-negative values (a ratio scale has an absolute zero)",
            hint="use level='interval' for values that can be negative",
        )
    values, n_c_int = np.unique(data[present], return_counts=True)
    if values.size < 2:
        return math.nan
    n_c = n_c_int.astype(np.float64)
    n = float(n_c.sum())
    cum = np.cumsum(n_c)
    index = np.zeros(data.shape, dtype=np.intp)
    index[present] = np.searchsorted(values, data[present])

    # Observed: sum_ck o_ck delta_ck = sum_u 2 / (m_u - 1) * sum_{i<j both rated} delta(v_ui, v_uj)
    weight = 2.0 / (m_u - 1.0)
    observed = 0.0
    for i in range(data.shape[1] - 1):
        for j in range(i + 1, data.shape[1]):
            both = present[:, i] & present[:, j]
            if np.any(both):
                d = _delta(level, index[both, i], index[both, j], values, n_c, cum)
                observed += float(np.dot(weight[both], d))

    # Expected: sum_ck n_c n_k delta_ck
    if level == "nominal":
        expected = n * n - float(np.dot(n_c, n_c))
    elif level == "interval":
        centred = values - float(np.dot(n_c, values)) / n
        expected = 2.0 * n * float(np.dot(n_c, centred * centred))
    else:
        expected = 0.0
        columns = np.arange(values.size, dtype=np.intp)
        for start in range(0, values.size, _CHUNK):
            rows = columns[start : start + _CHUNK]
            d = _delta(level, rows[:, None], columns[None, :], values, n_c, cum)
            expected += float(n_c[rows] @ d @ n_c)
    if expected <= 0.0:
        return math.nan
    return 1.0 - (n - 1.0) * observed / expected


def krippendorff_alpha_counts(
    counts: npt.ArrayLike,
    *,
    level: AgreementLevel = "nominal",
    values: npt.ArrayLike | None = None,
) -> float:
    """Krippendorff's alpha from per-unit value counts, by the coincidence matrix.

    ``counts[u, c]`` is how many raters gave unit u the value of column c (whole numbers >= 0).
    ``values`` are the column values (default 0, 1, 2, ...; only their order matters for the
    ordinal level, their size for interval and ratio). Builds the coincidence matrix
    o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1) over units with m_u >= 2 ratings, then
    alpha = 1 - (n - 1) sum o_ck delta^2_ck / sum n_c n_k delta^2_ck, exactly as
    :func:`krippendorff_alpha` on the ratings the counts summarise. NaN when undefined (no unit
    with two ratings, or fewer than two distinct values among the pairable ones).
    """
    if level not in AGREEMENT_LEVELS:
        raise StatsError(
            f"unknown level of measurement {level!r}; expected one of {', '.join(AGREEMENT_LEVELS)}"
        )
    try:
        table = np.asarray(counts, dtype=np.float64)
    except (TypeError, ValueError):
        raise StatsError("counts must be a 2-D array of numbers (units x values)") from None
    if table.ndim != 2:
        raise StatsError(
            f"counts must be a 2-D array of shape (units, values), got {table.ndim} dimension(s)"
        )
    if not np.all(np.isfinite(table)) or np.any(table < 0) or np.any(table != np.floor(table)):
        raise StatsError("counts must be whole numbers >= 0 (raters per unit and value)")
    if values is None:
        column_values = np.arange(table.shape[1], dtype=np.float64)
    else:
        column_values = np.asarray(values, dtype=np.float64)
        if column_values.shape != (table.shape[1],):
            raise StatsError(
                f"values must give one value per column of counts ({table.shape[1]}), got shape "
                f"{column_values.shape}"
            )
        if not np.all(np.isfinite(column_values)) or np.unique(column_values).size != len(
            column_values
        ):
            raise StatsError("values must be distinct finite numbers")
        order = np.argsort(column_values)
        table = table[:, order]
        column_values = column_values[order]
    m_u = table.sum(axis=1)
    table = table[m_u >= 2]
    m_u = m_u[m_u >= 2]
    if table.shape[0] == 0:
        return math.nan
    n_c = table.sum(axis=0)
    used = n_c > 0
    table, column_values, n_c = table[:, used], column_values[used], n_c[used]
    if column_values.size < 2:
        return math.nan
    if level == "ratio" and np.any(column_values < 0):
        raise StatsError(
            "the ratio level needs non-negative values (a ratio scale has an absolute zero)",
            hint="use level='interval' for values that can be negative",
        )
    scaled = table / (m_u - 1.0)[:, None]
    coincidence = scaled.T @ table
    coincidence[np.diag_indices_from(coincidence)] -= scaled.sum(axis=0)
    index = np.arange(column_values.size, dtype=np.intp)
    delta = _delta(level, index[:, None], index[None, :], column_values, n_c, np.cumsum(n_c))
    n = float(n_c.sum())
    expected = float(n_c @ delta @ n_c)
    if expected <= 0.0:
        return math.nan
    return 1.0 - (n - 1.0) * float(np.sum(coincidence * delta)) / expected


# --------------------------------------------------------------------------- kappas


def fleiss_kappa(ratings: npt.ArrayLike) -> float:
    """Fleiss' (1971) kappa for a fixed number of ratings per unit.

    ``ratings`` is (units, raters) of category labels. Every unit must carry the same number
    n >= 2 of ratings; which raters gave them may differ (NaN marks the others), as in Fleiss'
    design. kappa = (P_bar - P_e) / (1 - P_e) with P_bar the mean share of agreeing rater pairs
    per unit and P_e the sum of squared overall category shares. NaN when P_e = 1 (all ratings
    in one category).

    Raises :class:`~vcost.errors.StatsError` when units carry different numbers of ratings:
    Fleiss' kappa has no treatment of missing ratings; use :func:`krippendorff_alpha`.
    """
    data = _as_ratings(ratings)
    if data.shape[0] == 0:
        raise StatsError("fleiss_kappa needs at least one unit (row) of ratings")
    counts = (~np.isnan(data)).sum(axis=1)
    per_unit = int(counts[0])
    if np.any(counts != per_unit):
        distinct = ", ".join(str(int(c)) for c in np.unique(counts))
        raise StatsError(
            f"Fleiss' kappa needs the same number of ratings on every unit; the units carry "
            f"{distinct} ratings",
            hint="use krippendorff_alpha, which handles missing ratings",
        )
    if per_unit < 2:
        raise StatsError(f"Fleiss' kappa needs at least two ratings per unit, got {per_unit}")
    _, category_counts = np.unique(data[~np.isnan(data)], return_counts=True)
    shares = category_counts / float(category_counts.sum())
    chance = float(np.dot(shares, shares))
    if chance >= 1.0:
        return math.nan
    agree, pairs = _pairs_per_unit(data)
    observed = float(np.mean(agree / pairs))
    return (observed - chance) / (1.0 - chance)


def cohen_kappa(
    rater_a: npt.ArrayLike,
    rater_b: npt.ArrayLike,
    *,
    weights: Literal["linear", "quadratic"] | None = None,
    categories: npt.ArrayLike | None = None,
) -> float:
    """Cohen's (1960) kappa for two raters; weighted kappa (Cohen 1968) with ``weights``.

    Units where either rating is NaN are left out (pairwise deletion). Categories are the sorted
    distinct values seen in either rater, or ``categories`` when given (declare the full scale
    there when some scale points were never used: weighted kappa depends on it). Weights use the
    position of a category in that sorted list: linear |i - j|, quadratic (i - j)^2 (the
    normalisation cancels). kappa = 1 - sum w_ij p_ij / sum w_ij p_i. p_.j, which for unweighted
    kappa equals (p_o - p_e) / (1 - p_e). NaN when chance disagreement is 0 (both raters used one
    and the same category throughout).
    """
    if weights not in (None, "linear", "quadratic"):
        raise StatsError(f"unknown weights {weights!r}; expected None, 'linear' or 'quadratic'")
    try:
        a = np.asarray(rater_a, dtype=np.float64)
        b = np.asarray(rater_b, dtype=np.float64)
    except (TypeError, ValueError):
        raise StatsError(
            "ratings must be numbers; map text labels to numeric codes first"
        ) from None
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise StatsError(
            f"rater_a and rater_b must be 1-D and of equal length, got shapes {a.shape} and "
            f"{b.shape}"
        )
    if np.any(np.isinf(a)) or np.any(np.isinf(b)):
        raise StatsError("ratings must be finite numbers or NaN (missing)")
    keep = ~np.isnan(a) & ~np.isnan(b)
    if not np.any(keep):
        raise StatsError("no unit is rated by both raters")
    a, b = a[keep], b[keep]
    seen = np.unique(np.concatenate([a, b]))
    if categories is None:
        labels = seen
    else:
        labels = np.unique(np.asarray(categories, dtype=np.float64))
        missing = np.setdiff1d(seen, labels)
        if missing.size:
            raise StatsError(
                f"ratings use values not listed in categories: {missing.tolist()}",
            )
    size = labels.size
    ia = np.searchsorted(labels, a)
    ib = np.searchsorted(labels, b)
    table = np.bincount(ia * size + ib, minlength=size * size).reshape(size, size)
    observed = table / float(a.size)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    distance = np.abs(np.subtract.outer(np.arange(size), np.arange(size))).astype(np.float64)
    if weights is None:
        w = (distance > 0).astype(np.float64)
    elif weights == "linear":
        w = distance
    else:
        w = distance**2
    chance = float(np.sum(w * expected))
    if chance <= 0.0:
        return math.nan
    return 1.0 - float(np.sum(w * observed)) / chance


def percent_agreement(ratings: npt.ArrayLike) -> float:
    """Mean over units of the share of rater pairs that gave the same rating.

    Units with fewer than two ratings are left out; each remaining unit counts once (so with
    the same number of ratings per unit this is Fleiss' P_bar, and with two raters the plain
    share of units on which they agree). NaN when no unit has two ratings. Not chance-corrected.
    """
    data = _as_ratings(ratings)
    agree, pairs = _pairs_per_unit(data)
    rated = pairs > 0
    if not np.any(rated):
        return math.nan
    return float(np.mean(agree[rated] / pairs[rated]))
