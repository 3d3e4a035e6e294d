"""The operators added for coverage, each on a tiny task, classified in the real sandbox.

Each task's typical tests stay away from the case an operator breaks, and its edge tests hit it,
so the level each mutant gets is known in advance (the comments say why). A second part checks
the empty-input rule: failing the empty input is obvious, failing an ``edge:empty`` test that
is not the empty input is not.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _plant_support import write_code_task

from vcost.plant import Candidate, Mutant, classify, mutants, prepare
from vcost.sandbox import Sandbox
from vcost.tasks import CodeTask, DataTask, load_task

BUSIEST = """\
OPEN = 6
CLOSE = 22


def busiest(visits):
    counts = {}
    for hour, people in visits:
        if OPEN <= hour < CLOSE and people > 0:
            counts[hour] = counts.get(hour, 0) + people
    best = None
    for hour in sorted(counts):
        if best is None or counts[hour] > counts[best]:
            best = hour
    return best
"""

RANK = """\
def rank(entries, cap):
    totals = {}
    for account, amount in entries:
        if amount is not None and amount != 0:
            totals[account] = totals.get(account, 0) + abs(amount)
    ranked = sorted(totals.items(), key=lambda item: (-item[1], item[0]))
    return [[account, min(total, cap)] for account, total in ranked]
"""

FEE = """\
GRACE = 2
RATE = 10
BULK = 5


def total_fee(days_late):
    total = 0
    for days in days_late:
        late = 0 if days is None else days - GRACE
        if late > 0:
            total += late * RATE
    if len(days_late) >= BULK:
        total = total // 2
    return total
"""


@pytest.fixture
def busiest_task(tmp_path: Path) -> CodeTask:
    """Typical tests: hours 7-20, positive counts, no ties."""
    folder = write_code_task(
        tmp_path / "busiest",
        entry_point="busiest",
        reference=BUSIEST,
        signature="def busiest(visits: list[list[int]]) -> int | None:",
        description="The hour 6-21 with the most people (earliest on ties); None if none.",
        checklist=["empty", "ties", "negative", "boundary"],
        examples=[[[[7, 3], [9, 5], [7, 1]]], [[[10, 2], [12, 4]]]],
        tests=[
            ([[[8, 1], [15, 3]]], "typical"),
            ([[[20, 6]]], "typical"),
            ([[[11, 2], [13, 1], [14, 3]]], "typical"),
            ([[[9, 4], [10, 1], [9, 1]]], "typical"),
            ([[]], "edge:empty"),
            ([[[3, 5], [23, 1]]], "edge:empty"),  # nothing left, but not the empty input
            ([[[9, 2], [7, 2]]], "edge:ties"),
            ([[[15, 3], [10, 1], [10, 2]]], "edge:ties"),
            ([[[9, -5], [10, 1]]], "edge:negative"),
            ([[[9, -5]]], "edge:negative"),
            ([[[5, 9], [6, 1]]], "edge:boundary"),
            ([[[22, 9], [21, 1]]], "edge:boundary"),
        ],
    )
    task = load_task(folder)
    assert isinstance(task, CodeTask)
    return task


@pytest.fixture
def rank_task(tmp_path: Path) -> CodeTask:
    """Typical tests: distinct accounts, positive amounts, totals under the cap, no ties."""
    folder = write_code_task(
        tmp_path / "rank",
        entry_point="rank",
        reference=RANK,
        signature="def rank(entries: list[list[int | None]], cap: int) -> list[list[int]]:",
        description="Totals of |amount| per account, capped, largest first (ties by account).",
        checklist=["empty", "duplicates", "ties", "negative", "boundary", "missing"],
        examples=[[[[1, 30], [2, 50]], 100], [[[3, 10], [1, 20], [2, 5]], 100]],
        tests=[
            ([[[4, 7], [5, 9]], 50], "typical"),
            ([[[1, 12], [2, 40], [3, 25]], 60], "typical"),
            ([[[8, 3]], 10], "typical"),
            ([[], 10], "edge:empty"),
            ([[[1, 10], [2, 15], [1, 10]], 100], "edge:duplicates"),
            ([[[2, 10], [1, 10]], 100], "edge:ties"),
            ([[[5, 7], [3, 7], [4, 1]], 100], "edge:ties"),
            ([[[1, -30], [2, 20]], 100], "edge:negative"),
            ([[[1, 150], [2, 40]], 100], "edge:boundary"),
            ([[[1, 0], [2, 5]], 100], "edge:boundary"),
            ([[[1, None], [2, 5]], 100], "edge:missing"),
        ],
    )
    task = load_task(folder)
    assert isinstance(task, CodeTask)
    return task


@pytest.fixture
def fee_task(tmp_path: Path) -> CodeTask:
    """Typical tests: fewer than five loans, every one more than two days late."""
    folder = write_code_task(
        tmp_path / "fee",
        entry_point="total_fee",
        reference=FEE,
        signature="def total_fee(days_late: list[int | None]) -> int:",
        description="10 per day beyond 2 days; None is no fee; five loans or more: half.",
        checklist=["empty", "negative", "boundary", "missing"],
        examples=[[[5, 3]], [[4, 7, 6]]],
        tests=[
            ([[10]], "typical"),
            ([[3, 3, 8]], "typical"),
            ([[]], "edge:empty"),
            ([[2, 5]], "edge:boundary"),
            ([[1, 4]], "edge:boundary"),
            ([[3, 4, 5, 6, 7]], "edge:boundary"),
            ([[3, 4, 5, 6]], "edge:boundary"),
            ([[-1, 4]], "edge:negative"),
            ([[None, 5]], "edge:missing"),
        ],
    )
    task = load_task(folder)
    assert isinstance(task, CodeTask)
    return task


def levels(task: CodeTask, operator: str, sandbox: Sandbox) -> list[Candidate]:
    """Every mutant of the task's reference by one operator, classified (no differential
    testing: none of these is meant to be equivalent)."""
    found = [m for m in mutants(task.reference, kind="code") if m.operator == operator]
    assert found, f"{operator} makes no mutant of {task.id}"
    context = prepare(task, sandbox=sandbox)
    return [classify(task, m, sandbox=sandbox, context=context, distinguish=False) for m in found]


@pytest.mark.parametrize(
    ("operator", "expected"),
    [
        # `counts[hour] > counts[best]` → `>=`: the last of two equal hours wins
        ("tie-strictness", [("subtle", ("edge:ties",))]),
        # `sorted(counts, reverse=True)`: same, from the other end
        ("sort-reverse", [("subtle", ("edge:ties",))]),
        # `OPEN <= hour < CLOSE` → `hour < CLOSE` / `OPEN <= hour`: early or late hours count
        (
            "drop-chain-bound",
            [("subtle", ("edge:boundary", "edge:empty"))] * 2,
        ),
        # `people > 0` → `people != 0`: a negative count makes an hour
        ("sign-test", [("subtle", ("edge:negative",))]),
        # `OPEN <= hour < CLOSE` → `CLOSE <= hour < CLOSE` / `OPEN <= hour < OPEN`: no hour
        # counts, the worked examples fail
        (
            "swap-threshold",
            [("obvious", ("edge:boundary", "edge:negative", "edge:ties", "example", "typical"))]
            * 2,
        ),
    ],
)
def test_wrong_condition_levels(
    busiest_task: CodeTask,
    sandbox: Sandbox,
    operator: str,
    expected: list[tuple[str, tuple[str, ...]]],
) -> None:
    got = levels(busiest_task, operator, sandbox)
    assert [(c.level, c.failed_tags) for c in got] == expected, [c.reason for c in got]
    assert all(c.error_type == "wrong-condition" for c in got)


@pytest.mark.parametrize(
    ("operator", "expected"),
    [
        # `(-item[1], item[0])` → `(-item[1], -item[0])`: equal totals in the other order
        ("negate-tiebreak", [("subtle", "wrong-condition", None)]),
        # `amount != 0` → `amount < 0` (`> 0` is sign-test's): only refunds count
        ("eq-to-order", [("obvious", "wrong-condition", None)]),
        # `min(total, cap)` → `total`: a parameter read only there is the cap
        ("remove-clamp", [("subtle", "missed-edge-case", "boundary")]),
        # `amount is not None and amount != 0` → `amount != 0`: abs(None) raises
        ("drop-edge-check", [("subtle", "missed-edge-case", "missing")]),
        # `abs(amount)` → `amount`: a refund lowers the total
        ("remove-abs", [("subtle", "missed-edge-case", "negative")]),
        # `totals.get(account, 0) + abs(amount)` → `abs(amount)`: a repeat overwrites
        ("remove-accumulate", [("subtle", "missed-edge-case", "duplicates")]),
    ],
)
def test_rank_levels(
    rank_task: CodeTask,
    sandbox: Sandbox,
    operator: str,
    expected: list[tuple[str, str, str | None]],
) -> None:
    got = levels(rank_task, operator, sandbox)
    assert [(c.level, c.error_type, c.targets) for c in got] == expected, [c.reason for c in got]


@pytest.mark.parametrize(
    ("operator", "expected"),
    [
        # `if len(days_late) >= BULK: total = total // 2` deleted: no discount on 5 loans
        ("remove-special-case", [("subtle", "boundary")]),
        # `if late > 0: total += ...` → always added: days within the grace subtract
        ("unwrap-edge-check", [("subtle", "negative")]),
        # `0 if days is None else days - GRACE` → `days - GRACE`: None - 2 raises
        ("remove-fallback", [("subtle", "missing")]),
    ],
)
def test_fee_levels(
    fee_task: CodeTask,
    sandbox: Sandbox,
    operator: str,
    expected: list[tuple[str, str | None]],
) -> None:
    got = levels(fee_task, operator, sandbox)
    assert [(c.level, c.targets) for c in got] == expected, [c.reason for c in got]
    assert all(c.error_type == "missed-edge-case" for c in got)


SHIPPING = """\
def shipping(weight, express):
    cost = 5
    if express:
        cost = 15
    elif weight > 20:
        cost = 10
    return cost
"""


def test_elif_to_if_level(tmp_path: Path, sandbox: Sandbox) -> None:
    """Typical tests never send a heavy parcel express: only then do both branches run."""
    folder = write_code_task(
        tmp_path / "shipping",
        entry_point="shipping",
        reference=SHIPPING,
        signature="def shipping(weight: int, express: bool) -> int:",
        description="15 express, else 10 over 20 kg, else 5.",
        checklist=["boundary"],
        examples=[[3, False], [4, True]],
        tests=[
            ([25, False], "typical"),
            ([10, True], "typical"),
            ([30, False], "typical"),
            ([25, True], "edge:boundary"),
            ([20, False], "edge:boundary"),
        ],
    )
    task = load_task(folder)
    assert isinstance(task, CodeTask)
    # `elif weight > 20:` → `if weight > 20:`: a heavy express parcel costs 10
    (got,) = levels(task, "elif-to-if", sandbox)
    assert (got.level, got.error_type, got.failed_tags) == (
        "subtle",
        "wrong-condition",
        ("edge:boundary",),
    ), got.reason


RETURNS = """\
def accept_returns(sold, returns):
    accepted = 0
    for qty in returns:
        if accepted + qty > sold:
            continue
        accepted += qty
    return accepted
"""


def test_drop_term_level(tmp_path: Path, sandbox: Sandbox) -> None:
    """Typical tests never return more than was sold, so the running total never matters."""
    folder = write_code_task(
        tmp_path / "returns",
        entry_point="accept_returns",
        reference=RETURNS,
        signature="def accept_returns(sold: int, returns: list[int]) -> int:",
        description="Accept each return in turn while the total accepted stays within sold.",
        checklist=["boundary"],
        examples=[[10, [2, 3]], [9, [1, 1, 1]]],
        tests=[
            ([10, [1, 2, 3]], "typical"),
            ([8, [4]], "typical"),
            ([20, [5, 5, 5]], "typical"),
            ([5, [3, 3]], "edge:boundary"),
            ([6, [4, 1, 2]], "edge:boundary"),
            ([4, [4]], "edge:boundary"),
        ],
    )
    task = load_task(folder)
    assert isinstance(task, CodeTask)
    # `accepted + qty > sold` → `qty > sold` / `accepted > sold`: the total can pass `sold`
    got = levels(task, "drop-term", sandbox)
    assert [(c.level, c.failed_tags) for c in got] == [("subtle", ("edge:boundary",))] * 2, [
        c.reason for c in got
    ]


def manual(source: str) -> Mutant:
    return Mutant("manual", "wrong-condition", "hand-written", source, "", 1)


def test_failing_the_empty_input_is_obvious(busiest_task: CodeTask, sandbox: Sandbox) -> None:
    context = prepare(busiest_task, sandbox=sandbox)
    # wrong on `busiest([])` only
    empty = BUSIEST.replace("    return best\n", "    return best if visits else -1\n")
    got = classify(busiest_task, manual(empty), sandbox=sandbox, context=context)
    assert got.level == "obvious"
    assert got.reason.startswith("obvious: fails the empty input, hidden test 4"), got.reason
    # wrong when nothing is left once filtered (an edge:empty test, not the empty input) and
    # on the all-negative test: an edge case, not a trivial one
    filtered = BUSIEST.replace(
        "    return best\n", "    return best if counts or not visits else -1\n"
    )
    got = classify(busiest_task, manual(filtered), sandbox=sandbox, context=context)
    assert got.level == "subtle", got.reason
    assert got.failed_tags == ("edge:empty", "edge:negative")
    # raising on the empty input is obvious too
    raises = BUSIEST.replace("    counts = {}\n", "    counts = {}\n    visits[0]\n")
    got = classify(busiest_task, manual(raises), sandbox=sandbox, context=context)
    assert got.level == "obvious"
    assert "fails the empty input" in got.reason


# ---------------------------------------------------------------- data

TRIPS_CSV = """\
rider,kind,start,end
r1,e,2024-05-01 08:00:00,2024-05-01 08:12:00
r1,e,2024-05-01 09:00:00,2024-05-01 09:14:30
r2,e,2024-05-01 10:00:00,2024-05-01 10:10:00
r2,e,2024-05-01 11:00:00,2024-05-01 11:00:30
r4,c,2024-05-01 12:00:00,2024-05-01 13:20:00
r2,e,2024-05-01 13:00:00,2024-05-01 13:11:00
r3,e,2024-05-01 14:00:00,2024-05-01 14:09:00
"""

# per rider, electric trips of 60 s or more: r1 12 and 14.5 min (13.25), r2 10 and 11 (10.5;
# its 30 s trip is left out), r3 9; r4's 80 min trip is a classic bike
TRIPS_REFERENCE = """\
import pandas as pd

df = pd.read_csv("data.csv", parse_dates=["start", "end"])
seconds = (df["end"] - df["start"]).dt.total_seconds()
df["minutes"] = seconds / 60
# electric trips of a minute or more
trips = df[(df["kind"] == "e") & (seconds >= 60)]
per_rider = trips.groupby("rider")["minutes"].mean()
answer = round(per_rider.max(), 2)
"""


@pytest.fixture
def trips_task(tmp_path: Path) -> DataTask:
    folder = tmp_path / "bank" / "trip-minutes"
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(
        'id = "trip-minutes"\nkind = "data"\ntitle = "Trip minutes"\ndifficulty = "easy"\n'
        'do_minutes = 5\nskill = "filter-aggregate"\nrole = "practice"\n'
        'checklist = ["boundary"]\nanswer = 13.25\ndecimals = 2\n'
    )
    (folder / "question.md").write_text(
        "# Trip minutes\n\nThe largest mean electric trip length per rider, in minutes, over "
        "trips of 60 s or more. Round to 2 decimal places.\n\n## Edge cases\n\n"
        "- boundary: a trip of exactly 60 s counts.\n"
    )
    (folder / "data.csv").write_text(TRIPS_CSV)
    (folder / "reference.py").write_text(TRIPS_REFERENCE)
    task = load_task(folder)
    assert isinstance(task, DataTask)
    return task


def test_data_operator_levels(trips_task: DataTask, sandbox: Sandbox) -> None:
    context = prepare(trips_task, sandbox=sandbox)
    new = {
        "invert-comparison",
        "mask-and-or",
        "invert-mask",
        "wrong-column",
        "round-to-int",
        "wrong-group-key",
    }
    chosen = [
        m
        for m in mutants(trips_task.reference, kind="data")
        if m.operator in new | {"time-unit"}
        or (m.operator == "swap-aggregate" and "`.max()`" in m.description)
    ]
    got = [(m.operator, classify(trips_task, m, sandbox=sandbox, context=context)) for m in chosen]
    # `.dt.total_seconds()` → `.dt.days`: 0 s per trip, no trip left, NaN
    (nan,) = [c for op, c in got if op == "time-unit"]
    assert nan.level == "obvious"
    assert "impossible" in nan.reason
    assert sorted((op, c.level, c.value) for op, c in got if op != "time-unit") == [
        ("invert-comparison", "obvious", 0.5),  # only the 30 s false start: 0.5 min
        ("invert-mask", "obvious", 80.0),  # the complement: r4's classic trip
        ("mask-and-or", "obvious", 80.0),  # any e trip or any long trip: r4's 80 min
        ("round-to-int", "subtle", 13.0),  # 13.25 → 13
        ("swap-aggregate", "discarded", 9.0),  # the smallest rider mean, 32 % off
        ("swap-aggregate", "subtle", 10.92),  # mean of the riders' means, 17.6 % off
        ("wrong-column", "obvious", None),  # `df["end"] == "e"`: no row, NaN
        ("wrong-column", "obvious", None),  # `df["start"] == "e"`: the same
        # `groupby("end")` / `groupby("start")`: one group per trip, the longest 14.5 min
        ("wrong-group-key", "subtle", 14.5),
        ("wrong-group-key", "subtle", 14.5),
    ]
