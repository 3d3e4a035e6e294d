"""The study report's words: the opening summary, the RQ1-RQ2 and H1-H3 sections, the methods
(with vcost's declared choices) and the limitations, and the header lines.

The summary states each headline finding as a sentence with its 95 % interval, in the order of
the study design's hypotheses, so it can be pasted into a results section. Sections are
``(title, text, table)``; the renderer formats the tables.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from vcost.analysis.study import StudyAnalysis
from vcost.report._study_extra import (
    Section,
    acceptance_sections,
    arm_sections,
    mixed_sections,
    model_sections,
    realism_sections,
    trend_sections,
    vce_sections,
)
from vcost.report._study_format import ci, count, est, fmt, p_value
from vcost.spec._analysis_plan import ANALYSES, DECLARED_CHOICES, LIMITATIONS

__all__ = ["meta_lines", "sections", "summary", "unit_word"]


def unit_word(a: StudyAnalysis) -> str:
    """The cost unit as a word for column headers ("minutes" for human-minutes)."""
    unit = str(a.meta.get("cost_unit", ""))
    return {"human-minutes": "minutes", "human-seconds": "seconds"}.get(unit, unit)


def _e(e: Any) -> str:
    return ci(e.value, e.lower, e.upper)


def _ph(a: StudyAnalysis) -> dict[str, Any]:
    return {r["mode"]: r for r in a.per_hour.to_dict("records")} if len(a.per_hour) else {}


def summary(a: StudyAnalysis) -> list[str]:
    """The headline findings as sentences with intervals (module doc)."""
    out: list[str] = []
    people = len(a.meta.get("people", []))
    unit = unit_word(a)
    r = a.ratio
    if r is not None and fmt(r.overall.value):
        out.append(
            f"Across {count(people)} people and {count(r.attempts)} attempts, checking an AI "
            f"answer took "
            f"{fmt(r.overall.value)} times as long as doing the task (verification ratio "
            f"{_e(r.overall)}, censored survival model; below 1 means checking was faster)."
        )
        if r.rise:
            last, rise = list(r.rise.items())[-1]
            first = next(iter(r.by_difficulty))
            verdict = (
                "rose" if rise.lower > 1 else "fell" if rise.upper < 1 else "did not clearly change"
            )
            out.append(
                f"H1: the ratio {verdict} with difficulty: {fmt(r.by_difficulty[first].value)} on "
                f"{first} and {fmt(r.by_difficulty[last].value)} on {last} tasks; {last} over "
                f"{first} {_e(rise)}."
            )
    be = a.break_even_by
    if len(be):
        row = be.iloc[0]
        saves = "saved" if row["saving"] > 0 else "cost"
        out.append(
            f"Delegating {saves} {fmt(abs(row['saving']))} {unit} per task on average (time "
            f"saved {ci(row['saving'], row['saving_lower'], row['saving_upper'])}; a check not "
            "ending in an accept means redoing the task)."
        )
        if len(be) > 1:
            hard = be.iloc[-1]
            out.append(
                f"On {hard['difficulty']} tasks the saving was "
                f"{ci(hard['saving'], hard['saving_lower'], hard['saving_upper'])} {unit}."
            )
    ph = _ph(a)
    if ph and fmt(ph["doing"]["value"]) and fmt(ph["delegating"]["value"]):
        d, g = ph["doing"], ph["delegating"]
        out.append(
            f"Correct answers per hour: {ci(d['value'], d['lower'], d['upper'])} when doing, "
            f"{ci(g['value'], g['lower'], g['upper'])} when delegating (at the study's mix)."
        )
    fa, fr = a.error_rates.get("false_accept"), a.error_rates.get("false_reject")
    if fa is not None and fa.n:
        text = (
            f"RQ2: {count(fa.value * fa.n)} of {count(fa.n)} checks of wrong answers accepted them "
            f"(false-accept rate {_e(fa)})"
        )
        if fr is not None and fr.n:
            text += (
                f"; {count(fr.value * fr.n)} of {count(fr.n)} checks of correct answers rejected "
                f"them "
                f"(false-reject rate {_e(fr)})"
            )
        out.append(text + ", Clopper-Pearson intervals.")
    sub = a.by_subtlety
    if len(sub) > 1:
        parts = [f"{row.error_level} {ci(row.rate, row.lower, row.upper)} (n = {count(row.checks)})"
                 for row in sub.itertuples()]  # fmt: skip
        out.append("H2: false-accept rate by subtlety: " + "; ".join(parts) + ".")
    t = a.h3_test
    if t is not None and fmt(t.ratio.value):
        side = "faster" if t.ratio.value < 1 else "slower"
        out.append(
            f"H3: false accepts took {fmt(t.ratio.value)} times as long as correct rejects "
            f"({_e(t.ratio)}; one-sided {p_value(t.p_faster)} for faster; {count(t.false_accepts)} "
            f"false accepts, {count(t.correct_rejects)} correct rejects): wrong answers were "
            f"accepted "
            f"{side}"
            + (" and the interval excludes 1." if t.supported else ", but the interval includes 1.")
        )
    for pat in a.patterns.to_dict("records"):
        clear = (
            ""
            if pat["clear_of_null"] is None or pd.isna(pat["clear_of_null"])
            else (f" ({count(pat['clear_of_null'])} with the interval clear of no effect)")
        )
        showing, people_n = count(pat["showing"]), count(pat["people"])
        out.append(f"{pat['pattern']}: {showing} of {people_n} people{clear}.")
    pc = a.premature_closures
    if pc and pc["per_wrong_verdict"].n:
        out.append(
            f"Premature closures (wrong verdicts at full confidence): {count(pc['count'])}, "
            f"{_e(pc['per_wrong_verdict'])} of the {count(pc['per_wrong_verdict'].n)} wrong "
            f"verdicts."
        )
    if a.pilot:
        out.insert(0, "PILOT: fewer than 3 people took part in both blocks; by the study "
                      "design's rule the human part is a pilot.")  # fmt: skip
    return out


def _ratio_section(a: StudyAnalysis) -> Section:
    r = a.ratio
    if r is None:
        return ("RQ1 / H1: verification ratio", "No verification ratio (see the notes).", None)
    text = (
        f"Check time over do time on matched tasks from a log-normal accelerated-failure-time "
        f"model in which timed-out attempts count as 'at least this long' ({count(r.censored)} of "
        f"{count(r.attempts)} attempts timed out). Overall (geometric mean over difficulty "
        f"labels): "
        f"{est(r.overall)}. Intervals: cluster bootstrap over {r.resample} ({count(r.replicates)} "
        f"replicates), standard error with the few-cluster correction. 'Rise over the easiest' "
        f"is H1's contrast: the ratio at that label divided by the ratio at the easiest label "
        f"(above 1: the ratio rises). Weibull model, as a sensitivity check: "
        f"{fmt(r.weibull_overall)}."
    )
    rows = []
    for d, e in r.by_difficulty.items():
        rise = r.rise.get(d)
        rows.append({"difficulty": d, "verification ratio": _e(e),
                     "rise over the easiest": _e(rise) if rise else "",
                     "Wald interval": ci(e.value, r.wald_by_difficulty[d].lower,
                                         r.wald_by_difficulty[d].upper),
                     "Weibull ratio": fmt(r.weibull_by_difficulty.get(d, float("nan"))),
                     "attempts": e.n})  # fmt: skip
    return ("RQ1 / H1: verification ratio", text, pd.DataFrame(rows))


def _delegation_sections(a: StudyAnalysis) -> list[Section]:
    be = a.break_even_by
    table = None
    if len(be):
        table = be.drop(columns=["decided"]).copy()
    ph = _ph(a)
    per_hour = "not estimable"
    if ph:
        per_hour = (f"doing {ci(ph['doing']['value'], ph['doing']['lower'], ph['doing']['upper'])}"
                    f", delegating {ci(ph['delegating']['value'], ph['delegating']['lower'], ph['delegating']['upper'])}")  # fmt: skip  # noqa: E501
    return [
        (
            "Break-even and correct answers per hour",
            "Delegating saves time only if check time + share not accepted x do time < do time "
            "(a check not ending in an accept means redoing the task). Mean efforts over all "
            "attempts, timeouts at their limit; the correct-only saving takes the times from "
            "passed do attempts and correct verdicts only (secondary). Intervals: cluster "
            "bootstrap over tasks with the few-cluster correction (for correct answers per "
            "hour on the log scale: a rate cannot be negative). Correct answers per hour "
            f"(timed-out do attempts count as failures, in both): {per_hour}.",
            table,
        ),
        (
            "Break-even per person",
            "Each person's own break-even, over their tasks and per difficulty label; "
            "intervals from resampling that person's tasks.",
            a.person_break_even.drop(columns=["decided"]) if len(a.person_break_even) else None,
        ),
        (
            "Break-even per task",
            "Point values only: a task has a handful of attempts on each side, too few for an "
            "interval.",
            a.break_even,
        ),
    ]


def _h3_section(a: StudyAnalysis) -> Section:
    t = a.h3_test
    test = "not estimable"
    if t is not None:
        test = (
            f"{_e(t.ratio)} (one-sided {p_value(t.p_faster)} for faster; {count(t.false_accepts)} "
            f"false "
            f"accepts, {count(t.correct_rejects)} correct rejects; {t.method})"
            + (f"; {t.note}" if t.note else "")
        )
    text = (
        "Time of false accepts over time of correct rejects within a person and difficulty: "
        f"{test}. With person effects in the model, dividing by each person's own do time gives "
        "the same ratio. The table gives medians, raw and relative to each person's median do "
        "time, with order-statistic 95% intervals (none below 6 values)."
    )
    return ("H3: false accepts vs correct rejects", text, a.h3)


def _outcome_section(a: StudyAnalysis) -> Section:
    pc = a.premature_closures
    ttc = a.time_to_correct
    text = (
        f"Premature closures (wrong verdicts at top confidence): {count(pc['count'])}; per check "
        f"{est(pc['per_check'])}, per wrong verdict {est(pc['per_wrong_verdict'])} "
        f"(Clopper-Pearson). Time to a correct verdict (conditional on one): median "
        f"{ci(ttc['median'], ttc['lower'], ttc['upper'])} {unit_word(a)}, "
        f"n = {count(ttc['n'])} (order-statistic interval)."
    )
    return ("Outcome decomposition", text, a.decomposition)


def _methods(a: StudyAnalysis) -> Section:
    rows = [{"analysis": n, "estimator": h, "whose choice": "study design"} for n, h in ANALYSES]
    rows += [{"analysis": n, "estimator": h, "whose choice": "vcost (declared)"}
             for n, h in DECLARED_CHOICES]  # fmt: skip
    return (
        "Methods and declared choices",
        "The pre-registered analyses and how each is estimated; the rows marked 'vcost "
        "(declared)' are estimator choices the study design leaves open, made by vcost and "
        "printed in the pre-registration document as well.",
        pd.DataFrame(rows),
    )


def sections(a: StudyAnalysis) -> list[Section]:
    """Every section after the summary, in reading order."""
    rates = a.error_rates
    return [
        _ratio_section(a),
        (
            "H1: how many people show each pattern",
            "Each person is a replication (small-N design): per hypothesis, how many people show "
            "it by their point estimates, and how many with their interval clear of no effect.",
            a.patterns,
        ),
        (
            "Per-person ratios",
            "Each person's ratio with intervals from resampling that person's tasks (few-cluster "
            "correction for the tasks in each cell).",
            a.people,
        ),
        *_delegation_sections(a),
        (
            "Per-task ratios",
            "Adjusted for who did the task; Wald interval, pooled scale.",
            a.tasks,
        ),
        ("Timeout share", "Attempts stopped by the budget (check) or cap (do).", a.timeouts),
        (
            "Raw medians of finished attempts (secondary)",
            "They leave out timed-out attempts, so they understate both times.",
            a.medians,
        ),
        *(
            [
                (
                    "Correct-only verification ratio (secondary)",
                    "The same model on passed do attempts and correct verdicts only: "
                    f"{est(a.correct_only.overall)}.",
                    pd.DataFrame(
                        [
                            {
                                "difficulty": d,
                                "ratio": e.value,
                                "lower": e.lower,
                                "upper": e.upper,
                                "attempts": e.n,
                            }
                            for d, e in a.correct_only.by_difficulty.items()
                        ]
                    ),
                )
            ]
            if a.correct_only is not None
            else []
        ),
        *mixed_sections(a),
        (
            "RQ2 / H2: errors that get through",
            f"False-accept rate {est(rates['false_accept'])}; false-reject rate "
            f"{est(rates['false_reject'])} (Clopper-Pearson). By subtlety:",
            a.by_subtlety,
        ),
        ("False accepts by error type", "Descriptive, with counts.", a.by_error_type),
        *acceptance_sections(a),
        (
            "Outcomes per 100 delegated tasks",
            "At assumed real-world error rates, using the measured rates for wrong and correct "
            "answers; each interval is the Clopper-Pearson interval of its rate times the fixed "
            "count. People may check differently when errors are rarer.",
            a.per_100,
        ),
        _h3_section(a),
        _outcome_section(a),
        (
            "Flags and headline results with and without flagged attempts",
            f"Possible guesses: {count(a.flags['possible_guesses'])}; inactivity gaps: "
            f"{count(a.flags['inactivity_gaps'])}. Nobody is excluded.",
            a.headline,
        ),
        *trend_sections(a),
        *vce_sections(a),
        *arm_sections(a),
        *model_sections(a),
        *realism_sections(a),
        (
            "Model configurations",
            "The generation-side configuration of every model whose answers or verdicts were "
            "analysed (prompt hash: SHA-256 of the prompt version and system prompt).",
            pd.DataFrame(a.meta.get("model_configurations", [])),
        ),
        _methods(a),
        ("Limitations", " ".join(LIMITATIONS), None),
    ]


def config_line(c: dict[str, Any]) -> str:
    if c.get("source") == "not given":
        return f"model {c['name']} ({c['role']}): configuration not given"

    def value(key: str) -> str:
        return "-" if c.get(key) is None else str(c[key])

    parts = [f"{value('provider')} {value('model')}"]
    if c.get("snapshot"):
        parts.append(f"snapshot {c['snapshot']}")
    parts.append(
        f"temperature {value('temperature')}, max_tokens {value('max_tokens')}, "
        f"seed {value('seed')}"
    )
    if c.get("prompt_version") is None:
        parts.append("prompt version not recorded")
    else:
        parts.append(f"prompt {c['prompt_version']} (hash {value('prompt_hash')})")
    return f"model {c['name']} ({c['role']}): " + "; ".join(parts) + f" [{c.get('source')}]"


def spec_line(m: dict[str, Any]) -> str:
    s = m.get("study") or {}
    if not s:
        return "spec: none given (defaults: 95% Clopper-Pearson, tau = 1)"
    return f"spec: {s['name']}, version {s['version']}; {s['hash_kind']} {s['hash']}"


def meta_lines(a: StudyAnalysis) -> list[str]:
    m = a.meta
    dev = "; ".join(f"{d['field']}: {d['old']} -> {d['new']}" for d in m["deviations"]) or "none"
    return [
        spec_line(m),
        f"deviations: {dev}",
        f"date: {m['date']}; vcost {m['vcost_version']}; cost unit {m['cost_unit']}",
        f"models: {', '.join(m['models'])}",
        *(config_line(c) for c in m.get("model_configurations", [])),
    ]
