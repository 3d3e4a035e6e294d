"""Tests for vcost.stats.vce: the three-state VCE rule, the envelope, precision planning.

Each test's docstring names where its expected values come from.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from vcost.errors import StatsError
from vcost.stats import (
    MinVerifiers,
    PrecisionPlan,
    VceClassification,
    VceState,
    binomial_interval,
    classify_vce,
    classify_vce_many,
    inconclusive_probability,
    min_verifiers,
    plan_precision,
    smallest_m_for_inconclusive_share,
    vce_envelope,
)

METHODS = ("clopper-pearson", "wilson", "jeffreys")
ORDER = {VceState.NOT: 0, VceState.INCONCLUSIVE: 1, VceState.CONFIRMED: 2}


# --------------------------------------------------------------------------- the paper


def test_paper_three_verifiers_are_all_inconclusive() -> None:
    """Crescitelli et al., Section 5: "with q = 1/2 and conventional two-sided 95% binomial
    intervals ... neither extreme resolves and every output is recorded as inconclusive"."""
    for k in range(4):
        result = classify_vce(k, 3, q=0.5)
        assert result.state is VceState.INCONCLUSIVE
    assert round(classify_vce(3, 3, q=0.5).interval.lower, 4) == 0.2924
    assert round(classify_vce(0, 3, q=0.5).interval.upper, 4) == 0.7076


def test_paper_six_verifiers_resolve_both_extremes() -> None:
    """Crescitelli et al., Section 5: "resolution at q = 1/2 begins at six verifiers per output
    for the two extreme outcomes - six failures out of six give a lower bound of about 0.54, and
    none out of six an upper bound of about 0.46"."""
    confirmed = classify_vce(6, 6, q=0.5)
    rejected = classify_vce(0, 6, q=0.5)
    assert confirmed.state is VceState.CONFIRMED
    assert rejected.state is VceState.NOT
    assert round(confirmed.interval.lower, 4) == 0.5407
    assert round(rejected.interval.upper, 4) == 0.4593
    assert confirmed == VceClassification(
        state=VceState.CONFIRMED,
        estimate=1.0,
        interval=binomial_interval(6, 6),
        failures=6,
        verifiers=6,
        q=0.5,
    )
    for k in range(1, 6):
        assert classify_vce(k, 6, q=0.5).state is VceState.INCONCLUSIVE
    assert min_verifiers(q=0.5) == MinVerifiers(confirm=6, reject=6)
    for m in range(1, 6):
        assert classify_vce(m, m, q=0.5).state is not VceState.CONFIRMED
        assert classify_vce(0, m, q=0.5).state is not VceState.NOT


def test_rule_is_lower_reaches_q_and_upper_below_q() -> None:
    """Section 5's rule read literally: confirmed iff lower >= q, not iff upper < q; checked
    against binomial_interval over every k for m = 1..25, three methods, several q."""
    for method in METHODS:
        for q in (0.1, 0.25, 0.5, 0.8):
            for m in range(1, 26):
                for k in range(m + 1):
                    iv = binomial_interval(k, m, method=method)  # type: ignore[arg-type]
                    expected = (
                        VceState.CONFIRMED
                        if iv.lower >= q
                        else VceState.NOT
                        if iv.upper < q
                        else VceState.INCONCLUSIVE
                    )
                    got = classify_vce(k, m, q=q, method=method)  # type: ignore[arg-type]
                    assert got.state is expected
                    assert got.estimate == k / m


def test_lower_exactly_q_counts_as_reaching_q() -> None:
    """ "Reaches q" is >=: choose q equal to the lower bound of 6/6 itself (0.025**(1/6) as
    computed), so the output is confirmed; the "not" side is strict (<)."""
    lower = binomial_interval(6, 6).lower
    assert classify_vce(6, 6, q=lower).state is VceState.CONFIRMED
    upper = binomial_interval(0, 6).upper
    assert classify_vce(0, 6, q=upper).state is VceState.INCONCLUSIVE


# --------------------------------------------------------------------------- min verifiers


@pytest.mark.parametrize("q", [0.05, 0.2, 0.3, 0.5, 0.6, 0.75, 0.9, 0.97])
@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
def test_min_verifiers_closed_form_clopper_pearson(q: float, alpha: float) -> None:
    """Closed forms: CP lower(m/m) = (alpha/2)**(1/m) >= q iff m >= ln(alpha/2)/ln(q);
    CP upper(0/m) = 1 - (alpha/2)**(1/m) < q iff m > ln(alpha/2)/ln(1 - q)."""
    confirm = math.ceil(math.log(alpha / 2) / math.log(q))
    reject = math.floor(math.log(alpha / 2) / math.log(1 - q)) + 1
    assert min_verifiers(q=q, alpha=alpha) == MinVerifiers(confirm=confirm, reject=reject)


@pytest.mark.parametrize("q", [0.1, 0.3, 0.5, 0.7, 0.9])
def test_min_verifiers_closed_form_wilson(q: float) -> None:
    """Closed forms for Wilson (z = Phi^-1(0.975)): lower(m/m) = m/(m + z^2) >= q iff
    m >= q z^2/(1 - q); upper(0/m) = z^2/(m + z^2) < q iff m > z^2 (1 - q)/q."""
    z2 = sps.norm.ppf(0.975) ** 2
    confirm = max(1, math.ceil(q * z2 / (1 - q)))
    reject = max(1, math.floor(z2 * (1 - q) / q) + 1)
    assert min_verifiers(q=q, method="wilson") == MinVerifiers(confirm=confirm, reject=reject)


@pytest.mark.parametrize("method", METHODS)
def test_min_verifiers_brute_force(method: str) -> None:
    """Independent enumeration with classify_vce, one m at a time."""
    for q in (0.2, 0.5, 0.65):
        confirm = next(
            m
            for m in range(1, 500)
            if classify_vce(m, m, q=q, method=method).state is VceState.CONFIRMED  # type: ignore[arg-type]
        )
        reject = next(
            m
            for m in range(1, 500)
            if classify_vce(0, m, q=q, method=method).state is VceState.NOT  # type: ignore[arg-type]
        )
        assert min_verifiers(q=q, method=method) == MinVerifiers(confirm, reject)  # type: ignore[arg-type]


def test_min_verifiers_limit() -> None:
    """q = 0.999 needs ln(0.025)/ln(0.999) = 3687.3 -> 3688 verifiers to confirm (closed form);
    a max_m below that raises with a hint."""
    assert min_verifiers(q=0.999).confirm == 3688
    with pytest.raises(StatsError, match="max_m"):
        min_verifiers(q=0.999, max_m=1000)


# --------------------------------------------------------------------------- inconclusive share


def _brute_force_inconclusive(p: float, m: int, q: float, alpha: float, method: str) -> float:
    """Enumerate outcomes with math.comb and the scalar classifier."""
    total = 0.0
    for k in range(m + 1):
        state = classify_vce(k, m, q=q, alpha=alpha, method=method).state  # type: ignore[arg-type]
        if state == "inconclusive":
            total += math.comb(m, k) * p**k * (1 - p) ** (m - k)
    return total


def test_inconclusive_probability_against_brute_force() -> None:
    """Independent computation: sum over k of comb(m, k) p^k (1-p)^(m-k) for inconclusive k,
    enumerated with the scalar classify_vce (the library uses the vectorised path and scipy's
    binomial pmf)."""
    rng = np.random.default_rng(11)
    for _ in range(120):
        p = float(rng.uniform())
        m = int(rng.integers(1, 60))
        q = float(rng.uniform(0.05, 0.95))
        alpha = float(rng.choice([0.01, 0.05, 0.1, 0.2]))
        method = str(rng.choice(METHODS))
        expected = _brute_force_inconclusive(p, m, q, alpha, method)
        got = inconclusive_probability(p, m, q=q, alpha=alpha, method=method)  # type: ignore[arg-type]
        assert got == pytest.approx(expected, abs=1e-12)


def test_inconclusive_probability_closed_form_and_non_monotone() -> None:
    """At q = 1/2 (95% CP), m = 6, 7, 8 decide only 0/m ("not") and m/m (confirmed), so the
    inconclusive share is 1 - (1-p)^m - p^m; at p = 0.1 it rises 0.4686 -> 0.5217 -> 0.5695
    with more verifiers, then drops at m = 9 when 1/9 is decided too (1 - 0.9^9 - 9*0.1*0.9^8
    - 0.1^9 - 9 * 0.1^8 * 0.9 = 0.2252). Values computed by hand from those formulas."""
    p = 0.1
    for m in (6, 7, 8):
        expected = 1 - (1 - p) ** m - p**m
        assert inconclusive_probability(p, m, q=0.5) == pytest.approx(expected, abs=1e-14)
    assert round(inconclusive_probability(p, 6, q=0.5), 4) == 0.4686
    assert round(inconclusive_probability(p, 7, q=0.5), 4) == 0.5217
    assert round(inconclusive_probability(p, 8, q=0.5), 4) == 0.5695
    nine = 1 - 0.9**9 - 9 * 0.1 * 0.9**8 - 0.1**9 - 9 * 0.1**8 * 0.9
    assert inconclusive_probability(p, 9, q=0.5) == pytest.approx(nine, abs=1e-14)
    assert round(nine, 4) == 0.2252
    assert inconclusive_probability(p, 7, q=0.5) > inconclusive_probability(p, 6, q=0.5)


@pytest.mark.parametrize("method", METHODS)
def test_non_monotone_step_exists_in_plan(method: str) -> None:
    """Discreteness makes the share non-monotone in m: for each method some p on the default
    grid has share(m + 1) > share(m) for some m."""
    plan = plan_precision(q=0.5, method=method)  # type: ignore[arg-type]
    rises = np.diff(plan.inconclusive, axis=0) > 1e-9
    assert rises.any()


def test_inconclusive_probability_edges() -> None:
    """p = 0 puts all mass on k = 0 and p = 1 on k = m: share is 1 below min_verifiers and 0
    from it on (q = 1/2: min 6). Denormal p behaves like p = 0."""
    assert inconclusive_probability(0.0, 5, q=0.5) == 1.0
    assert inconclusive_probability(0.0, 6, q=0.5) == 0.0
    assert inconclusive_probability(1.0, 5, q=0.5) == 1.0
    assert inconclusive_probability(1.0, 6, q=0.5) == 0.0
    # Regression: scipy's binom.pmf overflows for p below ~1e-307 (found by Hypothesis).
    tiny = 2.2250738585072014e-308
    assert inconclusive_probability(tiny, 4, q=0.5, method="wilson") == pytest.approx(0.0)
    assert inconclusive_probability(5e-324, 3, q=0.5) == 1.0


def test_plan_precision_table() -> None:
    """Table cells equal inconclusive_probability; defaults m = 3..30, p = 0.0..1.0 by 0.1;
    at q = 1/2 rows m = 3..5 are all 1 and the table is symmetric in p <-> 1 - p (the CP
    interval of k is the mirror image of that of m - k). to_dict() is JSON-serialisable."""
    plan = plan_precision(q=0.5)
    assert isinstance(plan, PrecisionPlan)
    assert plan.m_values == tuple(range(3, 31))
    assert plan.p_values == (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    assert plan.inconclusive.shape == (28, 11)
    assert plan.min_verifiers == MinVerifiers(6, 6)
    np.testing.assert_array_equal(plan.inconclusive[:3], 1.0)
    np.testing.assert_allclose(plan.inconclusive, plan.inconclusive[:, ::-1], atol=1e-12)
    for i in (0, 5, 17):
        for j in (1, 4, 9):
            m, p = plan.m_values[i], plan.p_values[j]
            assert plan.inconclusive[i, j] == pytest.approx(
                inconclusive_probability(p, m, q=0.5), abs=1e-15
            )
    data = json.loads(json.dumps(plan.to_dict()))
    assert data["min_verifiers"] == {"confirm": 6, "reject": 6}
    assert data["inconclusive"][3][1] == pytest.approx(1 - 0.9**6 - 0.1**6)
    assert data["level"] == pytest.approx(0.95)


def test_plan_precision_custom_grid_and_errors() -> None:
    """Custom grids are honoured; empty grids, m < 1 and p outside [0, 1] are refused."""
    plan = plan_precision(q=0.3, alpha=0.1, method="wilson", m_values=[10, 40], p_values=[0.1])
    assert plan.inconclusive.shape == (2, 1)
    with pytest.raises(StatsError, match="at least one"):
        plan_precision(q=0.5, m_values=[])
    with pytest.raises(StatsError, match="at least 1"):
        plan_precision(q=0.5, m_values=[0, 3])
    with pytest.raises(StatsError, match=r"\[0, 1\]"):
        plan_precision(q=0.5, p_values=[1.5])


def test_smallest_m_for_inconclusive_share() -> None:
    """Checked against a linear scan of inconclusive_probability; at p = 0.1, q = 1/2 the
    first m with share <= 0.05 is found in the table above (m = 17: 0.0221 at m = 17 while
    m = 15, 16 give 0.0556, 0.0684). p = q never gets below 5% in 200 verifiers -> None."""
    for p, target in ((0.1, 0.05), (0.2, 0.2), (0.9, 0.1), (0.0, 0.0), (0.35, 0.5)):
        got = smallest_m_for_inconclusive_share(p, target, q=0.5)
        expected = next(
            m for m in range(1, 1001) if inconclusive_probability(p, m, q=0.5) <= target
        )
        assert got == expected
    assert smallest_m_for_inconclusive_share(0.1, 0.05, q=0.5) == 17
    assert smallest_m_for_inconclusive_share(0.5, 0.05, q=0.5, max_m=200) is None


# --------------------------------------------------------------------------- vectorised


@pytest.mark.parametrize("method", METHODS)
def test_classify_vce_many_equals_scalar(method: str) -> None:
    """Self-consistency: the vectorised classifier agrees with classify_vce element by element
    (random m in 1..40, uniform k)."""
    rng = np.random.default_rng(7)
    m = rng.integers(1, 41, 2000)
    k = rng.integers(0, m + 1)
    states = classify_vce_many(k, m, q=0.4, alpha=0.1, method=method)  # type: ignore[arg-type]
    assert states.shape == (2000,)
    for i in range(0, 2000, 13):
        expected = classify_vce(int(k[i]), int(m[i]), q=0.4, alpha=0.1, method=method)  # type: ignore[arg-type]
        assert states[i] is expected.state


def test_classify_vce_many_large_and_comparable() -> None:
    """100k outputs classify in one call; elements are VceState members, comparable to the
    enum and to plain strings, and feed vce_envelope directly. Counts cross-checked by a
    per-(k, m) tally of classify_vce."""
    rng = np.random.default_rng(8)
    m = rng.choice([3, 6, 9, 12], 100_000)
    k = rng.binomial(m, 0.55)
    states = classify_vce_many(k, m, q=0.5)
    assert isinstance(states[0], VceState)
    confirmed = states == VceState.CONFIRMED
    assert np.array_equal(confirmed, states == "confirmed")
    expected_confirmed = 0
    for mm in (3, 6, 9, 12):
        for kk in range(mm + 1):
            if classify_vce(kk, mm, q=0.5).state is VceState.CONFIRMED:
                expected_confirmed += int(np.sum((m == mm) & (k == kk)))
    assert int(confirmed.sum()) == expected_confirmed
    envelope = vce_envelope(states)
    assert envelope.outputs == 100_000
    assert envelope.confirmed == expected_confirmed
    assert envelope.not_vce + envelope.inconclusive + envelope.confirmed == 100_000


def test_classify_vce_many_broadcasts_and_validates() -> None:
    """A scalar m broadcasts against an array of failures; bad counts raise StatsError."""
    states = classify_vce_many([0, 3, 6], 6, q=0.5)
    assert list(states) == [VceState.NOT, VceState.INCONCLUSIVE, VceState.CONFIRMED]
    with pytest.raises(StatsError, match="between 0 and its verifiers"):
        classify_vce_many([7], [6], q=0.5)
    with pytest.raises(StatsError, match="at least 1"):
        classify_vce_many([0], [0], q=0.5)
    with pytest.raises(StatsError, match="q must be"):
        classify_vce_many([0], [3], q=1.0)


# --------------------------------------------------------------------------- envelope


def test_vce_envelope_counts_and_rates() -> None:
    """Section 5: r_lower = r_confirmed, r_upper = r_confirmed + r_inconclusive, over the same
    denominator. 2 confirmed, 3 not, 5 inconclusive of 10 -> [0.2, 0.7] (hand count)."""
    states = ["confirmed"] * 2 + [VceState.NOT] * 3 + [VceState.INCONCLUSIVE] * 5
    env = vce_envelope(states)
    assert (env.outputs, env.confirmed, env.not_vce, env.inconclusive) == (10, 2, 3, 5)
    assert env.confirmed_rate == pytest.approx(0.2)
    assert env.inconclusive_rate == pytest.approx(0.5)
    assert (env.lower, env.upper) == (pytest.approx(0.2), pytest.approx(0.7))
    assert vce_envelope(iter(states)) == env
    assert vce_envelope(np.array([str(s) for s in states])) == env


def test_vce_envelope_empty_is_nan() -> None:
    """No outputs: zero counts, NaN rates (documented), not an exception."""
    env = vce_envelope([])
    assert env.outputs == 0
    assert all(
        math.isnan(x) for x in (env.confirmed_rate, env.inconclusive_rate, env.lower, env.upper)
    )


def test_vce_envelope_rejects_unknown_state() -> None:
    """A state outside the three is a StatsError naming the allowed values."""
    with pytest.raises(StatsError, match="confirmed, not, inconclusive"):
        vce_envelope(["confirmed", "maybe"])


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"failures": 1, "verifiers": 3, "q": 0.0}, "q must be"),
        ({"failures": 1, "verifiers": 3, "q": 1.0}, "q must be"),
        ({"failures": 1, "verifiers": 3, "q": 1.5}, "q must be"),
        ({"failures": 4, "verifiers": 3, "q": 0.5}, "between 0 and verifiers = 3"),
        ({"failures": 0, "verifiers": 0, "q": 0.5}, "at least 1"),
        ({"failures": 1, "verifiers": 3, "q": 0.5, "alpha": 2.0}, "alpha"),
        ({"failures": 1, "verifiers": 3, "q": 0.5, "method": "wald"}, "interval method"),
    ],
)
def test_classify_vce_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    """StatsError (a ValueError) with what is expected."""
    with pytest.raises(StatsError, match=message):
        classify_vce(**kwargs)  # type: ignore[arg-type]


def test_inconclusive_probability_bad_arguments() -> None:
    """p outside [0, 1], m < 1, target outside [0, 1] are refused."""
    with pytest.raises(StatsError, match="p must be"):
        inconclusive_probability(1.2, 5, q=0.5)
    with pytest.raises(StatsError, match="m must be"):
        inconclusive_probability(0.2, 0, q=0.5)
    with pytest.raises(StatsError, match="target"):
        smallest_m_for_inconclusive_share(0.2, -0.1, q=0.5)


# --------------------------------------------------------------------------- properties

q_st = st.floats(min_value=0.01, max_value=0.99)
method_st = st.sampled_from(METHODS)
alpha_st = st.sampled_from([0.01, 0.05, 0.1, 0.2])


@given(m=st.integers(1, 120), q=q_st, method=method_st, alpha=alpha_st)
def test_classification_monotone_in_failures(m: int, q: float, method: str, alpha: float) -> None:
    """For fixed m, more failures never move an output from confirmed towards not:
    the state order not < inconclusive < confirmed is non-decreasing in k."""
    states = classify_vce_many(np.arange(m + 1), m, q=q, alpha=alpha, method=method)  # type: ignore[arg-type]
    ranks = [ORDER[s] for s in states]
    assert ranks == sorted(ranks)


@given(
    m=st.integers(1, 80),
    data=st.data(),
    q1=q_st,
    q2=q_st,
    method=method_st,
)
def test_classification_monotone_in_q(
    m: int, data: st.DataObject, q1: float, q2: float, method: str
) -> None:
    """Raising the threshold q never makes an output more confirmed."""
    k = data.draw(st.integers(0, m))
    low, high = sorted((q1, q2))
    a = classify_vce(k, m, q=low, method=method).state  # type: ignore[arg-type]
    b = classify_vce(k, m, q=high, method=method).state  # type: ignore[arg-type]
    assert ORDER[b] <= ORDER[a]


@given(st.lists(st.sampled_from(list(VceState)), max_size=60))
def test_envelope_lower_le_upper(states: list[VceState]) -> None:
    """0 <= lower <= upper <= 1 and counts add up, for any list of states."""
    env = vce_envelope(states)
    assert env.outputs == len(states)
    assert env.confirmed + env.not_vce + env.inconclusive == len(states)
    if states:
        assert 0.0 <= env.lower <= env.upper <= 1.0
        assert env.upper - env.lower == pytest.approx(env.inconclusive_rate)


@given(p=st.floats(0.0, 1.0), m=st.integers(1, 80), q=q_st, method=method_st, alpha=alpha_st)
def test_inconclusive_probability_in_unit_interval(
    p: float, m: int, q: float, method: str, alpha: float
) -> None:
    """A probability: within [0, 1]."""
    value = inconclusive_probability(p, m, q=q, alpha=alpha, method=method)  # type: ignore[arg-type]
    assert 0.0 <= value <= 1.0
