"""Synthetic verification traces with known truth: check-only studies and verifier panels.

A synthetic trace is drawn from a crossed random-effects model, so that estimators can be
checked against the truth they should recover (simulation tests) and the indicators can be
benchmarked at scale. Every answer, verifier and episode it makes is labelled synthetic
(ids start with ``syn-``); nothing here is data about real people or models.

The model, per check episode of verifier v on answer o of model k::

    logit Pr[correct verdict within budget] = mu[gt(o)] + skill[v] - difficulty[o]
    skill[v] ~ N(0, verifier_sd),  difficulty[o] ~ N(model_shift[k], answer_sd)

A failure ends as a wrong verdict, budget exhaustion or "unverifiable" in fixed proportions;
effort is log-normal below the budget (equal to it when the budget runs out).

:func:`simulate_panel` draws a *verifier panel* of the study design (seed 003): every person
does some tasks and checks AI answers to the matched partner tasks, in sessions, so a trace has
do AND check episodes (see :class:`PanelStudy` for the model and its assumptions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import expit

from vcost.trace import GroundTruth, Role, Termination, Trace, Verdict, VerifierKind

__all__ = [
    "PanelSimulation",
    "PanelStudy",
    "SyntheticStudy",
    "simulate_check_failures",
    "simulate_panel",
    "synthetic_trace",
    "true_success_probability",
]


@dataclass(frozen=True)
class SyntheticStudy:
    """Parameters of a synthetic study (defaults: a small study in human-minutes, B = 15)."""

    models: Sequence[str] = ("syn-model-a", "syn-model-b")
    model_shift: Sequence[float] = (0.0, 0.8)
    outputs_per_model: int = 40
    wrong_share: float = 0.5
    baseline_outputs: int = 6
    verifiers: int = 12
    verdicts_per_answer: int = 6
    budget: float = 15.0
    mu_correct: float = 1.5
    mu_incorrect: float = 0.3
    verifier_sd: float = 0.7
    answer_sd: float = 0.8
    failure_mix: Sequence[float] = (0.6, 0.3, 0.1)  # wrong verdict, budget exhausted, unverifiable
    median_effort: Sequence[float] = (
        4.0,
        7.0,
    )  # minutes to a verdict on correct, incorrect answers
    overconfidence: float = 0.5  # share of wrong verdicts given at the top confidence level
    confidence_levels: Sequence[float] = (0.5, 0.75, 1.0)
    seed: int = 0
    experience: Sequence[str] = field(default=("junior", "mid", "senior"))


def true_success_probability(mu: float, verifier_sd: float, answer_sd: float) -> float:
    """E[expit(mu + a - b)] for a ~ N(0, sd_v), b ~ N(0, sd_o), by Gauss-Hermite quadrature."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    sd = float(np.hypot(verifier_sd, answer_sd))
    return float(np.sum(weights * expit(mu + sd * nodes)) / np.sqrt(2.0 * np.pi))


def _distinct_draws(rng: np.random.Generator, rows: int, k: int, n: int) -> np.ndarray:
    """``rows`` x ``k`` draws from range(n), distinct within each row."""
    if k > n:
        raise ValueError(f"cannot draw {k} distinct verifiers from {n}")
    if k * 4 > n:  # dense: permute per row
        return np.argsort(rng.random((rows, n)), axis=1)[:, :k]
    draws = rng.integers(0, n, size=(rows, k))
    while True:
        ordered = np.sort(draws, axis=1)
        bad = np.flatnonzero((np.diff(ordered, axis=1) == 0).any(axis=1))
        if bad.size == 0:
            return draws
        draws[bad] = rng.integers(0, n, size=(bad.size, k))


def synthetic_trace(study: SyntheticStudy | None = None) -> Trace:
    """Draw one synthetic trace (check episodes only) from ``study``."""
    s = study or SyntheticStudy()
    rng = np.random.default_rng(s.seed)
    n_models = len(s.models)
    per_model = s.outputs_per_model
    n_out = n_models * per_model + s.baseline_outputs

    model_index = np.repeat(np.arange(n_models), per_model)
    wrong = rng.random(n_models * per_model) < s.wrong_share
    shift = np.asarray(s.model_shift, dtype=float)[model_index]
    difficulty = np.concatenate(
        [
            rng.normal(shift, s.answer_sd),
            rng.normal(0.0, s.answer_sd, s.baseline_outputs),
        ]
    )
    is_incorrect = np.concatenate([wrong, np.zeros(s.baseline_outputs, dtype=bool)])
    answer_ids = np.array([f"syn-a{i:06d}" for i in range(n_out)], dtype=object)
    answers = pd.DataFrame(
        {
            "answer_id": answer_ids,
            "task_id": [f"syn-t{i % max(per_model, 1):05d}" for i in range(n_out)],
            "model_id": np.concatenate(
                [
                    np.asarray(s.models, dtype=object)[model_index],
                    ["reference"] * s.baseline_outputs,
                ]
            ),
            "ground_truth": np.where(is_incorrect, GroundTruth.INCORRECT, GroundTruth.CORRECT),
            "role": [Role.MODEL] * (n_models * per_model) + [Role.BASELINE] * s.baseline_outputs,
        }
    )

    verifier_ids = np.array([f"syn-v{i:05d}" for i in range(s.verifiers)], dtype=object)
    skill = rng.normal(0.0, s.verifier_sd, s.verifiers)
    verifiers = pd.DataFrame(
        {
            "verifier_id": verifier_ids,
            "kind": [VerifierKind.PERSON] * s.verifiers,
            "experience": np.asarray(s.experience, dtype=object)[
                np.arange(s.verifiers) % len(s.experience)
            ],
        }
    )

    m = s.verdicts_per_answer
    who = _distinct_draws(rng, n_out, m, s.verifiers).ravel()
    out = np.repeat(np.arange(n_out), m)
    n_ep = out.size
    inc = is_incorrect[out]
    mu = np.where(inc, s.mu_incorrect, s.mu_correct)
    success = rng.random(n_ep) < expit(mu + skill[who] - difficulty[out])
    mode = rng.choice(3, size=n_ep, p=np.asarray(s.failure_mix) / np.sum(s.failure_mix))
    wrong_verdict = ~success & (mode == 0)
    exhausted = ~success & (mode == 1)
    unverifiable = ~success & (mode == 2)

    median = np.where(inc, s.median_effort[1], s.median_effort[0])
    median = np.where(wrong_verdict, median * 0.5, median)
    effort = np.minimum(median * rng.lognormal(0.0, 0.5, n_ep), s.budget * 0.999)
    effort = np.where(exhausted, s.budget, effort)
    effort = np.where(unverifiable, effort * 0.8, effort)

    says_correct = np.where(success, ~inc, inc)
    levels = np.asarray(s.confidence_levels, dtype=float)
    top = rng.random(n_ep) < np.where(wrong_verdict, s.overconfidence, 0.6)
    confidence = np.where(top, levels[-1], levels[rng.integers(0, len(levels) - 1, n_ep)])
    has_verdict = success | wrong_verdict

    termination = np.full(n_ep, Termination.VERDICT.value, dtype=object)
    termination[exhausted] = Termination.BUDGET_EXHAUSTED.value
    termination[unverifiable] = Termination.UNVERIFIABLE.value
    verdict = np.where(says_correct, Verdict.ACCEPT.value, Verdict.REJECT.value).astype(object)
    verdict[~has_verdict] = None
    start = pd.Timestamp("2026-01-05T09:00:00Z") + pd.to_timedelta(
        np.arange(n_ep) * 20.0, unit="min"
    )
    episodes = pd.DataFrame(
        {
            "episode_id": [f"syn-e{i:07d}" for i in range(n_ep)],
            "verifier_id": verifier_ids[who],
            "block": "check",
            "answer_id": answer_ids[out],
            "attempt": 1,
            "started_at": start,
            "ended_at": start + pd.to_timedelta(effort, unit="min"),
            "effort": effort,
            "budget": s.budget,
            "termination": termination,
            "verdict": verdict,
            "confidence": np.where(has_verdict, confidence, np.nan),
        }
    )
    return Trace(answers=answers, episodes=episodes, verifiers=verifiers)


# --- verifier panels: do and check episodes on matched tasks -----------------------------------

DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")

ASSUMPTIONS: dict[str, str] = {
    "do_median": "vcost assumption, anchored on the study design's target 'about 5-10 minutes "
    "to do by hand' (seed 003, Scope and setting); hard tasks near the top of the range",
    "check_ratio": "vcost assumption: H1's prediction (seed 003) that checking is faster than "
    "doing (ratio below 1) and that the ratio rises with difficulty",
    "accept_wrong": "Kaufman et al. 2026 (cited by seed 003): programmers accepted about half of "
    "the wrong LLM-written assertions -> subtle errors 0.5; obvious errors 0.15 is a vcost "
    "assumption",
    "false_reject": "vcost assumption",
    "do_correct": "vcost assumption; Ipeirotis & Zheng 2025 (cited by seed 003) report 64% of "
    "queries correct when SQL users wrote by hand",
    "accept_speed": "Kaufman et al. 2026 (cited by seed 003): wrong accepts were decided faster "
    "than correct rejects; the factor 0.7 is a vcost assumption",
    "overconfidence": "Kaufman et al. 2026 ('poor and overconfident judges'); the share is a "
    "vcost assumption",
    "speed_sd": "vcost assumption",
    "task_sd": "vcost assumption",
    "time_sd": "vcost assumption",
    "guess_rate": "vcost assumption (seed 003 flags verdicts under 30 s at 50% confidence)",
    "unverifiable": "vcost assumption",
    "idle_rate": "vcost assumption (seed 003 flags activity gaps over 10 minutes)",
    "budget": "seed 003 core study: one fixed check budget of 10 minutes, do-time cap 20",
    "realism_mean": "vcost assumption: on seed 003's 1-5 'how likely is it that an AI wrote this "
    "exact answer' scale, planted errors rated 0.4 below natural ones (under the study's "
    "one-point rule), correct answers highest",
    "realism_sd": "vcost assumption",
}
"""Where each default of :class:`PanelStudy` comes from (an assumption unless a source is named)."""


@dataclass(frozen=True)
class PanelStudy:
    """Parameters of a simulated verifier panel (defaults: the seed 003 core study, 4 people).

    Every default is an assumption; :data:`ASSUMPTIONS` names its source. The model, in
    minutes, for person p and task t of difficulty d (all logs natural)::

        log do_time    = log do_median[d] + speed[p] + task[t] + N(0, time_sd)
        log check_time = log do_median[d] + log check_ratio[d] + ratio_dev[p]
                         + speed[p] + task[t] + N(0, time_sd) + log accept_speed (false accepts)
        speed ~ N(0, speed_sd), task ~ N(0, task_sd), ratio_dev ~ N(0, ratio_sd)

    A do attempt longer than the cap and a check longer than the budget are stopped there
    (right-censored: ``budget_exhausted``). A wrong answer is accepted with probability
    ``accept_wrong[error_level]`` and a correct one rejected with ``false_reject`` (both shifted
    on the logit scale by the person's skill); a wrong verdict is given at 100% confidence with
    probability ``overconfidence`` (premature closure). ``guess_rate`` of checks are guesses:
    a random verdict at 50% confidence within 10-25 seconds. ``idle_rate`` of attempts contain
    an inactivity gap of ``idle_minutes`` (visible in the events). The true verification ratio
    at difficulty d is ``check_ratio[d]`` (population) and ``check_ratio[d] * exp(ratio_dev[p])``
    for person p; with ``accept_speed = 1`` and ``guess_rate = 0`` the log-normal AFT of
    :mod:`vcost.analysis` is correctly specified.
    """

    people: int = 4
    pairs_per_difficulty: int = 4
    difficulties: Sequence[str] = DIFFICULTIES
    pairs_per_session: int = 3
    budget: float = 10.0
    cap: float = 20.0
    do_median: Sequence[float] = (5.0, 7.0, 9.5)
    check_ratio: Sequence[float] = (0.45, 0.6, 0.8)
    speed_sd: float = 0.25
    task_sd: float = 0.2
    ratio_sd: float = 0.0
    time_sd: float = 0.45
    skill_sd: float = 0.5
    do_correct: Sequence[float] = (0.9, 0.75, 0.6)
    accept_wrong: Mapping[str, float] = field(
        default_factory=lambda: {"obvious": 0.15, "subtle": 0.5}
    )
    false_reject: float = 0.1
    accept_speed: float = 0.7
    overconfidence: float = 0.5
    guess_rate: float = 0.03
    unverifiable: float = 0.03
    idle_rate: float = 0.02
    idle_minutes: float = 11.0
    events: bool = True
    realism_mean: Mapping[str, float] = field(
        default_factory=lambda: {"correct": 3.8, "natural": 3.5, "planted": 3.1}
    )
    realism_sd: float = 0.9
    seed: int = 0


@dataclass(frozen=True)
class PanelSimulation:
    """A simulated panel: the trace, the tasks (difficulty, pair) and the truth behind them."""

    trace: Trace
    tasks: pd.DataFrame
    study: PanelStudy
    true_ratio: dict[str, float]
    person_ratio: pd.DataFrame
    ratings: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def true_overall_ratio(self) -> float:
        """Geometric mean of the per-difficulty ratios (the analysis's overall ratio)."""
        return float(np.exp(np.mean(np.log(list(self.true_ratio.values())))))


def _levels(study: PanelStudy, values: Sequence[float], name: str) -> np.ndarray:
    out = np.asarray(values, dtype=float)
    if out.size != len(study.difficulties):
        raise ValueError(f"{name} needs one value per difficulty {tuple(study.difficulties)}")
    return out


ANSWER_COLUMNS = (
    "answer_id", "task_id", "model_id", "ground_truth", "source", "error_level", "error_type",
)  # fmt: skip


def _synthetic_tasks(s: PanelStudy) -> pd.DataFrame:
    n_tasks = 2 * len(s.difficulties) * s.pairs_per_difficulty
    return pd.DataFrame(
        {
            "task_id": [f"syn-t{i:03d}" for i in range(n_tasks)],
            "difficulty": np.repeat(np.asarray(s.difficulties, dtype=object),
                                    2 * s.pairs_per_difficulty),
        }
    )  # fmt: skip


def _synthetic_answers(task_ids: Sequence[str], s: PanelStudy) -> pd.DataFrame:
    """Two answers per task: one correct, one wrong (half natural, half planted)."""
    levels = sorted(s.accept_wrong)
    error_types = ("boundary", "wrong condition", "missed edge case")
    rows: list[tuple[object, ...]] = []
    for t, task in enumerate(task_ids):
        rows.append((f"{task}-c", task, "syn-model-a", "correct", None, None, None))
        rows.append((
            f"{task}-w", task, "syn-model-b" if t % 2 else "syn-model-a", "incorrect",
            "natural" if t % 4 < 2 else "planted", levels[t % len(levels)],
            error_types[(t // 2) % len(error_types)],
        ))  # fmt: skip
    return pd.DataFrame(rows, columns=list(ANSWER_COLUMNS))


def _given_tasks(tasks: pd.DataFrame, s: PanelStudy) -> pd.DataFrame:
    """Real tasks, paired within their difficulty label in the order given (an odd one out is
    left out: it has no partner)."""
    missing = {"task_id", "difficulty"} - set(tasks.columns)
    if missing:
        raise ValueError(f"tasks need the columns task_id and difficulty (missing {missing})")
    unknown = set(tasks["difficulty"]) - set(s.difficulties)
    if unknown:
        raise ValueError(f"task difficulty {sorted(unknown)} is not one of {s.difficulties}")
    kept = []
    for label in s.difficulties:
        ids = tasks.loc[tasks["difficulty"] == label, "task_id"].tolist()
        kept += [(t, label) for t in ids[: len(ids) // 2 * 2]]
    if not kept:
        raise ValueError("no two tasks share a difficulty label: nothing can be paired")
    return pd.DataFrame(kept, columns=["task_id", "difficulty"])


def simulate_panel(
    study: PanelStudy | None = None,
    *,
    tasks: pd.DataFrame | None = None,
    answers: pd.DataFrame | None = None,
) -> PanelSimulation:
    """Draw one verifier panel: do and check episodes on matched tasks (see :class:`PanelStudy`).

    Allocation follows the core study (seed 003): tasks are paired within a difficulty label;
    for each pair a person does one task and checks an AI answer to its partner, alternating
    across people so each task is done by about half the panel and checked by the other half,
    with correct and wrong answers split between its checkers. Pairs are grouped into sessions
    of ``pairs_per_session`` in random order; do-first and check-first alternate across sessions.

    By default tasks and answers are synthetic (``syn-`` ids). Real ones may be given instead:
    ``tasks`` (task_id, difficulty; ``pairs_per_difficulty`` is then ignored) and ``answers``
    (answer_id, task_id, model_id, ground_truth, and optionally source, error_level,
    error_type), with at least one correct and one incorrect answer per task; a check takes the
    task's answers of the drawn ground truth in turn. A wrong answer whose ``error_level`` is
    not a key of ``accept_wrong`` (a natural error's "intermediate") is accepted at the mean of
    the ``accept_wrong`` values. Only the people and their behaviour are simulated then.
    """
    s = study or PanelStudy()
    if s.people < 1 or s.pairs_per_difficulty < 1:
        raise ValueError("a panel needs at least one person and one pair per difficulty")
    rng = np.random.default_rng(s.seed)
    do_median = _levels(s, s.do_median, "do_median")
    ratio = _levels(s, s.check_ratio, "check_ratio")
    do_correct = _levels(s, s.do_correct, "do_correct")
    tasks = _synthetic_tasks(s) if tasks is None else _given_tasks(tasks, s)
    task_ids = tasks["task_id"].to_numpy(dtype=object)
    label_index = {label: i for i, label in enumerate(s.difficulties)}
    task_diff = tasks["difficulty"].map(label_index).to_numpy(dtype=int)
    n_tasks = len(tasks)
    n_pairs = n_tasks // 2
    pair_of_task = np.arange(n_tasks) // 2
    task_effect = rng.normal(0.0, s.task_sd, n_tasks)
    tasks = tasks.assign(pair_id=[f"syn-p{i:03d}" for i in pair_of_task])

    answers = _synthetic_answers(list(task_ids), s) if answers is None else _given_answers(
        answers, list(task_ids)
    )  # fmt: skip
    answers["role"] = Role.MODEL.value
    pool = {
        (task, truth == GroundTruth.INCORRECT.value): group.to_dict("records")
        for (task, truth), group in answers.groupby(["task_id", "ground_truth"], sort=False)
    }
    taken: dict[tuple[str, bool], int] = {}
    mean_accept = float(np.mean(list(s.accept_wrong.values())))

    people = np.array([f"syn-v{i:03d}" for i in range(s.people)], dtype=object)
    speed = rng.normal(0.0, s.speed_sd, s.people)
    skill = rng.normal(0.0, s.skill_sd, s.people)
    ratio_dev = rng.normal(0.0, s.ratio_sd, s.people)
    verifiers = pd.DataFrame(
        {
            "verifier_id": people,
            "kind": VerifierKind.PERSON.value,
            "experience": np.asarray(("junior", "mid", "senior"), dtype=object)[
                np.arange(s.people) % 3
            ],
        }
    )

    episodes: list[dict[str, object]] = []
    events: list[dict[str, object]] = []
    day0 = pd.Timestamp("2027-03-01T09:00:00Z")
    for p in range(s.people):
        order = _mixed_sessions(rng.permutation(n_pairs), p, s.people)
        for k, start in enumerate(range(0, n_pairs, s.pairs_per_session)):
            session_pairs = order[start : start + s.pairs_per_session]
            do_first = (k + p) % 2 == 0
            plan: list[tuple[str, int, int]] = []  # (block, task, pair)
            for pair in session_pairs:
                a, b = 2 * pair, 2 * pair + 1
                do_t, check_t = (a, b) if (p + pair) % 2 == 0 else (b, a)
                plan.append(("do", do_t, pair))
                plan.append(("check", check_t, pair))
            blocks = ("do", "check") if do_first else ("check", "do")
            ordered = [x for blk in blocks for x in plan if x[0] == blk]
            clock = day0 + pd.Timedelta(days=7 * k + p % 7)
            for block, t, pair in ordered:
                d = task_diff[t]
                base = np.log(do_median[d]) + speed[p] + task_effect[t]
                noise = rng.normal(0.0, s.time_sd)
                idle = rng.random() < s.idle_rate
                ep: dict[str, object] = {
                    "episode_id": f"syn-e{len(episodes):05d}",
                    "verifier_id": people[p],
                    "block": block,
                    "attempt": 1,
                }
                if block == "do":
                    t_true = float(np.exp(base + noise)) + (s.idle_minutes if idle else 0.0)
                    effort = min(t_true, s.cap)
                    finished = t_true < s.cap
                    p_ok = float(expit(np.log(do_correct[d] / (1 - do_correct[d])) + skill[p]))
                    ep.update(
                        task_id=task_ids[t],
                        answer_id=None,
                        budget=s.cap,
                        termination="submitted" if finished else "budget_exhausted",
                        verdict=None,
                        confidence=np.nan,
                        passed=bool(finished and rng.random() < p_ok),
                    )
                else:
                    # a task's checkers (people of one parity) alternate correct and wrong, and
                    # so does each person across pairs
                    wrong = _checks_wrong(p, pair) if s.people > 1 else rng.random() < 0.5
                    key = (str(task_ids[t]), bool(wrong))
                    choices = pool[key]
                    answer = choices[taken.get(key, 0) % len(choices)]
                    taken[key] = taken.get(key, 0) + 1
                    guess = rng.random() < s.guess_rate
                    unverifiable = not guess and rng.random() < s.unverifiable
                    if wrong:
                        p_acc = s.accept_wrong.get(str(answer["error_level"]), mean_accept)
                        accept = rng.random() < float(expit(np.log(p_acc / (1 - p_acc)) - skill[p]))
                    else:
                        accept = rng.random() >= float(
                            expit(np.log(s.false_reject / (1 - s.false_reject)) - skill[p])
                        )
                    log_t = base + np.log(ratio[d]) + ratio_dev[p] + noise
                    if wrong and accept:
                        log_t += np.log(s.accept_speed)
                    if guess:
                        accept = bool(rng.random() < 0.5)
                        t_true = float(rng.uniform(10.0, 25.0) / 60.0)
                        idle = False
                    else:
                        t_true = float(np.exp(log_t)) + (s.idle_minutes if idle else 0.0)
                    effort = min(t_true, s.budget)
                    if t_true >= s.budget:
                        termination, verdict, conf = "budget_exhausted", None, np.nan
                    elif unverifiable:
                        termination, verdict, conf = "unverifiable", None, np.nan
                    else:
                        termination = "verdict"
                        verdict = Verdict.ACCEPT.value if accept else Verdict.REJECT.value
                        right = accept != wrong
                        if guess:
                            conf = 0.5
                        elif not right and rng.random() < s.overconfidence:
                            conf = 1.0
                        else:
                            conf = float(rng.choice((0.5, 0.75, 1.0), p=(0.2, 0.4, 0.4)))
                    ep.update(
                        task_id=None,
                        answer_id=answer["answer_id"],
                        budget=s.budget,
                        termination=termination,
                        verdict=verdict,
                        confidence=conf,
                        passed=None,
                    )
                ep.update(
                    started_at=clock,
                    ended_at=clock + pd.Timedelta(minutes=effort),
                    effort=effort,
                )
                if s.events:
                    events.extend(_activity(str(ep["episode_id"]), clock, effort, idle, s, rng))
                episodes.append(ep)
                clock = clock + pd.Timedelta(minutes=effort + 1.0)
    episode_frame = pd.DataFrame(episodes)
    episode_frame["passed"] = episode_frame["passed"].astype(object)
    event_frame = (
        pd.DataFrame(events)
        if events
        else pd.DataFrame(columns=["event_id", "episode_id", "at", "offset_ms", "kind"])
    )
    if events:
        event_frame.insert(0, "event_id", [f"syn-ev{i:06d}" for i in range(len(event_frame))])
    trace = Trace(answers=answers, episodes=episode_frame, verifiers=verifiers, events=event_frame)
    person_ratio = pd.DataFrame(
        {
            "verifier_id": people,
            **{str(name): ratio[i] * np.exp(ratio_dev) for i, name in enumerate(s.difficulties)},
        }
    )
    true_ratio = {str(name): float(ratio[i]) for i, name in enumerate(s.difficulties)}
    ratings = _realism_ratings(episode_frame, answers, s)
    return PanelSimulation(trace, tasks, s, true_ratio, person_ratio, ratings)


def _realism_ratings(episodes: pd.DataFrame, answers: pd.DataFrame, s: PanelStudy) -> pd.DataFrame:
    """After the last session each person rates every answer they checked (seed 003's realism
    question, 1-5): a rounded normal draw around ``realism_mean`` of the answer's kind (correct,
    or the error's source), clipped to 1-5. Drawn from its own stream: the trace is unchanged."""
    rng = np.random.default_rng([s.seed, 1])
    checks = episodes.loc[episodes["block"] == "check", ["verifier_id", "answer_id"]]
    rated = checks.drop_duplicates().merge(answers, on="answer_id")
    kind = rated["source"].where(rated["ground_truth"] == GroundTruth.INCORRECT.value, "correct")
    fallback = float(np.mean(list(s.realism_mean.values())))  # a kind with no declared mean
    mean = kind.map(dict(s.realism_mean)).astype(float).fillna(fallback)
    value = np.clip(np.rint(rng.normal(mean.to_numpy(), s.realism_sd)), 1, 5)
    return pd.DataFrame({
        "rating_id": [f"syn-r{i:05d}" for i in range(len(rated))],
        "rater_id": rated["verifier_id"].to_numpy(), "answer_id": rated["answer_id"].to_numpy(),
        "task_id": rated["task_id"].to_numpy(), "scale": "ai_written_1_5",
        "value": value.astype(int),
    })  # fmt: skip


def _checks_wrong(person: int, pair: int) -> bool:
    """Whether ``person`` checks the wrong answer of ``pair`` (panels of 2 or more)."""
    return (person // 2 + pair) % 2 == 1


def _mixed_sessions(order: np.ndarray, person: int, people: int) -> np.ndarray:
    """The person's pairs in ``order`` (random), rearranged so wrong and correct checks
    alternate: every session of two or more pairs then holds both (seed 003: each session has
    correct and wrong answers to check). One person's checks are drawn at random instead."""
    if people < 2:
        return order
    wrong = [q for q in order if _checks_wrong(person, int(q))]
    right = [q for q in order if not _checks_wrong(person, int(q))]
    first, second = (wrong, right) if len(wrong) >= len(right) else (right, wrong)
    mixed = [q for pair in zip(first, second, strict=False) for q in pair]
    mixed += first[len(second) :] + second[len(first) :]
    return np.asarray(mixed, dtype=order.dtype)


def _given_answers(answers: pd.DataFrame, task_ids: Sequence[str]) -> pd.DataFrame:
    """Real answers for the panel's tasks: every task needs a correct and an incorrect one."""
    missing = {"answer_id", "task_id", "model_id", "ground_truth"} - set(answers.columns)
    if missing:
        raise ValueError(f"answers need the columns {sorted(missing)}")
    out = answers[answers["task_id"].isin(set(task_ids))].copy()
    for column in ANSWER_COLUMNS:
        if column not in out.columns:
            out[column] = None
    have = set(zip(out["task_id"], out["ground_truth"], strict=True))
    short = [t for t in task_ids
             if (t, GroundTruth.CORRECT.value) not in have
             or (t, GroundTruth.INCORRECT.value) not in have]  # fmt: skip
    if short:
        raise ValueError(f"tasks without both a correct and an incorrect answer: {short}")
    return out[list(ANSWER_COLUMNS)].reset_index(drop=True)


def simulate_check_failures(
    study: PanelStudy | None = None, *, verdicts_per_answer: int, answers: int = 12
) -> pd.DataFrame:
    """Failures within budget on a VCE subset: ``answers`` wrong answers, each checked by
    ``verdicts_per_answer`` people drawn afresh from the population of :class:`PanelStudy`.

    The check model is the panel's (same speed, skill, ratio, acceptance, guess and
    "unverifiable" parameters, same budget); a check fails to reach a correct verdict when it
    accepts the wrong answer, runs out of budget or ends "unverifiable" (Crescitelli et al.'s
    S_B = 0). Difficulties and error levels cycle over the answers. One row per answer:
    ``answer_id``, ``difficulty``, ``error_level``, ``verifiers``, ``failures``.
    """
    s = study or PanelStudy()
    m = int(verdicts_per_answer)
    if m < 1 or answers < 1:
        raise ValueError("a VCE subset needs at least one answer and one verdict per answer")
    rng = np.random.default_rng([s.seed, 0x5CE])
    do_median = _levels(s, s.do_median, "do_median")
    ratio = _levels(s, s.check_ratio, "check_ratio")
    n_diff = len(s.difficulties)
    index = np.arange(answers)
    d = index % n_diff
    levels = sorted(s.accept_wrong)
    level = np.asarray(levels, dtype=object)[(index // n_diff) % len(levels)]
    p_level = np.array([s.accept_wrong[str(v)] for v in level], dtype=float)
    task = rng.normal(0.0, s.task_sd, answers)[:, None]
    shape = (answers, m)
    skill = rng.normal(0.0, s.skill_sd, shape)
    speed = rng.normal(0.0, s.speed_sd, shape)
    ratio_dev = rng.normal(0.0, s.ratio_sd, shape)
    accept = rng.random(shape) < expit(np.log(p_level / (1 - p_level))[:, None] - skill)
    log_t = (
        np.log(do_median[d] * ratio[d])[:, None]
        + ratio_dev
        + speed
        + task
        + rng.normal(0.0, s.time_sd, shape)
        + np.where(accept, np.log(s.accept_speed), 0.0)
    )
    guess = rng.random(shape) < s.guess_rate
    accept = np.where(guess, rng.random(shape) < 0.5, accept)
    timeout = ~guess & (np.exp(log_t) >= s.budget)
    unverifiable = ~guess & (rng.random(shape) < s.unverifiable)
    failed = accept | timeout | unverifiable
    return pd.DataFrame(
        {
            "answer_id": [f"syn-vce{i:04d}" for i in index],
            "difficulty": np.asarray(s.difficulties, dtype=object)[d],
            "error_level": level,
            "verifiers": m,
            "failures": failed.sum(axis=1).astype(int),
        }
    )


def _activity(
    episode_id: str,
    start: pd.Timestamp,
    effort: float,
    idle: bool,
    s: PanelStudy,
    rng: np.random.Generator,
) -> list[dict[str, object]]:
    """Activity events: a keypress about every minute, one gap of ``idle_minutes`` if idle."""
    offsets = [0.0]
    gap_at = rng.uniform(0.0, max(effort - s.idle_minutes, 0.0)) if idle else None
    t = 0.0
    while True:
        t += float(rng.uniform(0.3, 1.2))
        if gap_at is not None and t > gap_at:
            t = gap_at + s.idle_minutes
            gap_at = None
        if t >= effort:
            break
        offsets.append(t)
    offsets.append(effort)
    kinds = ["start"] + ["keypress"] * (len(offsets) - 2) + ["end"]
    return [
        {
            "episode_id": episode_id,
            "at": start + pd.Timedelta(minutes=o),
            "offset_ms": round(o * 60_000),
            "kind": k,
        }
        for o, k in zip(offsets, kinds, strict=True)
    ]
