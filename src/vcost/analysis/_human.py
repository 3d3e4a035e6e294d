"""The human part of a trace: people's check episodes as a trace of their own.

The study's protocol quantities (success within budget, VCE, RQ3) are over the *human* verifier
population (Crescitelli et al. 2026, Sec. 5: "V denotes a population of human verifiers"), so
AI-checker episodes in the same trace (verifier kind ``model``, effort in tokens) are left out
here; RQ4 reads them separately. A trace without a verifiers table is taken as all people, as
:func:`vcost.analysis.analyse_study` does.
"""

from __future__ import annotations

import pandas as pd

from vcost.indicators import IndicatorSettings
from vcost.trace import Trace, VerifierKind

__all__ = ["human_checks", "people_of", "settings_for"]


def people_of(trace: Trace) -> set[str] | None:
    """Ids of the people in the verifiers table (``None``: no verifiers table, all count)."""
    v = trace.verifiers
    if v is None or v.empty or "kind" not in v:
        return None
    return set(v.loc[v["kind"].astype(str) == VerifierKind.PERSON.value, "verifier_id"].astype(str))


def human_checks(trace: Trace) -> Trace:
    """The trace restricted to people's check episodes (events left out)."""
    ep = trace.episodes
    keep = ep["block"].astype(str) == "check"
    people = people_of(trace)
    if people is not None:
        keep &= ep["verifier_id"].astype(str).isin(people)
    verifiers = trace.verifiers
    if people is not None:
        verifiers = verifiers[verifiers["verifier_id"].astype(str).isin(people)]
    return Trace(
        answers=trace.answers,
        episodes=ep[keep].reset_index(drop=True),
        verifiers=verifiers.reset_index(drop=True),
        events=trace.events.iloc[0:0] if trace.events is not None else pd.DataFrame(),
    )


def settings_for(
    q: float, alpha: float, method: str, *, reps: int, seed: int, unit: str
) -> IndicatorSettings:
    """Indicator settings carrying the analysis' q, alpha, interval method and bootstrap."""
    return IndicatorSettings(
        cost_unit=unit,
        q=q,
        alpha=alpha,
        interval_method=method,  # type: ignore[arg-type]
        bootstrap_reps=reps,
        seed=seed,
    )
