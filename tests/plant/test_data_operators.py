"""Data-script mutation operators: exact mutated text, layout of untouched lines kept."""

from __future__ import annotations

from vcost.plant import mutants
from vcost.plant._data_operators import (
    drop_conjunct,
    drop_groupby_key,
    drop_mask,
    dropna_to_fillna,
    floor_division,
    invert_comparison,
    invert_mask,
    mask_and_or,
    mask_comparison,
    remove_drop_duplicates,
    remove_dropna,
    remove_unit_factor,
    round_digits,
    round_to_int,
    swap_aggregate,
    swap_unit_factor,
    time_unit,
    ungrouped_aggregate,
    wrong_column,
    wrong_group_key,
)
from vcost.plant._source import Edit, SourceText

SCRIPT = """\
import pandas as pd

df = pd.read_csv("data.csv")
print("rows read:", len(df))

# Exact duplicates are double scans: keep one copy.
df = df.drop_duplicates()

# Evening calls, billing queue ( both ends included ).
mask = (df["hour"] >= 18) & (df["hour"] <= 22) & (df["queue"] == "billing")
calls = df[mask]
calls = calls.dropna(subset=["talk_s"])   # no talk time: left out

minutes = (calls["talk_s"] + calls["wrap_s"]) / 60
per_agent = minutes.groupby([calls["agent"], calls["team"]]).mean()
answer = round(per_agent.max(), 2)
"""


def sources(edits: list[Edit]) -> list[str]:
    return [e.source for e in edits]


def test_mask_comparison_loosens_and_flips() -> None:
    edits = list(mask_comparison(SourceText(SCRIPT)))
    assert sources(edits) == [
        SCRIPT.replace('(df["hour"] >= 18)', '(df["hour"] > 18)'),
        SCRIPT.replace('(df["hour"] <= 22)', '(df["hour"] < 22)'),
        SCRIPT.replace('(df["queue"] == "billing")', '(df["queue"] != "billing")'),
    ]


def test_drop_conjunct_removes_one_condition_and_its_ampersand() -> None:
    edits = list(drop_conjunct(SourceText(SCRIPT)))
    line = 'mask = (df["hour"] >= 18) & (df["hour"] <= 22) & (df["queue"] == "billing")'
    assert sources(edits) == [
        SCRIPT.replace(line, 'mask = (df["hour"] <= 22) & (df["queue"] == "billing")'),
        SCRIPT.replace(line, 'mask = (df["hour"] >= 18) & (df["queue"] == "billing")'),
        SCRIPT.replace(line, 'mask = (df["hour"] >= 18) & (df["hour"] <= 22)'),
    ]


def test_drop_conjunct_of_two_drops_the_parentheses() -> None:
    src = 'x = df[(df["a"] == 1) & df["b"].notna()]\n'
    edits = list(drop_conjunct(SourceText(src)))
    assert sources(edits) == ['x = df[df["b"].notna()]\n', 'x = df[df["a"] == 1]\n']
    assert [e.targets for e in edits] == [None, "missing"]


def test_drop_mask_deletes_a_self_assignment() -> None:
    src = "import pandas as pd\ns = pd.Series([1])\n# keep long trips\ns = s[s >= 60]\nprint(s)\n"
    (edit,) = drop_mask(SourceText(src))
    assert edit.source == "import pandas as pd\ns = pd.Series([1])\nprint(s)\n"


def test_drop_mask_replaces_other_filters() -> None:
    (edit,) = drop_mask(SourceText(SCRIPT))
    assert edit.source == SCRIPT.replace("calls = df[mask]", "calls = df")


def test_remove_drop_duplicates_deletes_statement_and_comment() -> None:
    (edit,) = remove_drop_duplicates(SourceText(SCRIPT))
    assert edit.source == SCRIPT.replace(
        "# Exact duplicates are double scans: keep one copy.\ndf = df.drop_duplicates()\n", ""
    )
    assert edit.targets == "duplicates"


def test_remove_dropna_and_fillna() -> None:
    line = 'calls = calls.dropna(subset=["talk_s"])   # no talk time: left out\n'
    (removed,) = remove_dropna(SourceText(SCRIPT))
    assert removed.source == SCRIPT.replace(line, "")
    (filled,) = dropna_to_fillna(SourceText(SCRIPT))
    assert filled.source == SCRIPT.replace('calls.dropna(subset=["talk_s"])', "calls.fillna(0)")
    assert removed.targets == filled.targets == "missing"


def test_remove_dropna_inside_an_expression() -> None:
    src = 'waits = visits["wait"].dropna()\n'
    (edit,) = remove_dropna(SourceText(src))
    assert edit.source == 'waits = visits["wait"]\n'


def test_swap_aggregate_methods_and_agg_names() -> None:
    src = "a = s.mean()\nb = g.count()\nc = g.agg('sum')\n"
    assert sources(list(swap_aggregate(SourceText(src)))) == [
        "a = s.median()\nb = g.count()\nc = g.agg('sum')\n",
        "a = s.sum()\nb = g.count()\nc = g.agg('sum')\n",
        "a = s.mean()\nb = g.size()\nc = g.agg('sum')\n",
        "a = s.mean()\nb = g.nunique()\nc = g.agg('sum')\n",
        "a = s.mean()\nb = g.count()\nc = g.agg('mean')\n",
    ]


def test_drop_groupby_key_and_ungrouped_aggregate() -> None:
    keys = list(drop_groupby_key(SourceText(SCRIPT)))
    old = 'minutes.groupby([calls["agent"], calls["team"]]).mean()'
    assert sources(keys) == [
        SCRIPT.replace(old, 'minutes.groupby(calls["team"]).mean()'),
        SCRIPT.replace(old, 'minutes.groupby(calls["agent"]).mean()'),
    ]
    (flat,) = ungrouped_aggregate(SourceText(SCRIPT))
    assert flat.source == SCRIPT.replace(old, "minutes.mean()")


def test_round_digits() -> None:
    assert sources(list(round_digits(SourceText(SCRIPT)))) == [
        SCRIPT.replace("per_agent.max(), 2)", "per_agent.max(), 1)"),
        SCRIPT.replace("per_agent.max(), 2)", "per_agent.max(), 3)"),
    ]
    assert sources(list(round_digits(SourceText("x = s.round(0)\n")))) == ["x = s.round(1)\n"]


def test_unit_factor_removed_without_leftover_parentheses_and_swapped() -> None:
    (removed,) = remove_unit_factor(SourceText(SCRIPT))
    assert removed.source == SCRIPT.replace(
        '(calls["talk_s"] + calls["wrap_s"]) / 60', 'calls["talk_s"] + calls["wrap_s"]'
    )
    (swapped,) = swap_unit_factor(SourceText(SCRIPT))
    assert swapped.source == SCRIPT.replace(
        '(calls["talk_s"] + calls["wrap_s"]) / 60', '(calls["talk_s"] + calls["wrap_s"]) / 3600'
    )


def test_unit_factor_on_the_left_of_a_product() -> None:
    src = "share = 100 * late / len(returned)\n"
    assert sources(list(remove_unit_factor(SourceText(src)))) == ["share = late / len(returned)\n"]
    assert sources(list(swap_unit_factor(SourceText(src)))) == [
        "share = 1000 * late / len(returned)\n"
    ]


def test_floor_division() -> None:
    src = "per_guest = total / guests  # EUR\nweeks = days // 7\n"
    assert sources(list(floor_division(SourceText(src)))) == [
        "per_guest = total // guests  # EUR\nweeks = days // 7\n",
        "per_guest = total / guests  # EUR\nweeks = days / 7\n",
    ]


def test_data_mutants_cover_the_three_types() -> None:
    found = mutants(SCRIPT, kind="data")
    assert {m.error_type for m in found} == {"wrong-filter", "wrong-aggregation", "rounding-unit"}
    assert len({m.source for m in found}) == len(found)


# ---------------------------------------------------------------- filters inverted, joined the
# other way, on the wrong column; max/min; whole numbers; time units


def test_invert_comparison_takes_the_complement() -> None:
    edits = list(invert_comparison(SourceText(SCRIPT)))
    assert sources(edits) == [
        SCRIPT.replace('(df["hour"] >= 18)', '(df["hour"] < 18)'),
        SCRIPT.replace('(df["hour"] <= 22)', '(df["hour"] > 22)'),
    ]


def test_mask_and_or_one_operator_at_a_time() -> None:
    line = 'mask = (df["hour"] >= 18) & (df["hour"] <= 22) & (df["queue"] == "billing")'
    assert sources(list(mask_and_or(SourceText(SCRIPT)))) == [
        SCRIPT.replace(line, line.replace("18) &", "18) |")),
        SCRIPT.replace(line, line.replace("22) &", "22) |")),
    ]


def test_invert_mask_adds_or_removes_the_tilde() -> None:
    (edit,) = invert_mask(SourceText(SCRIPT))
    assert edit.source == SCRIPT.replace("calls = df[mask]", "calls = df[~mask]")
    src = 'a = df[df["x"] > 1]\nb = df[~df["y"].isna()]\n'
    assert sources(list(invert_mask(SourceText(src)))) == [
        src.replace('df[df["x"] > 1]', 'df[~(df["x"] > 1)]'),
        src.replace('df[~df["y"].isna()]', 'df[df["y"].isna()]'),
    ]


def test_wrong_column_in_filters_and_subsets() -> None:
    src = (
        "trips = df[(df['kind'] == 'e') & (df['rider'] == 'casual')]\n"
        'trips = trips.dropna(subset=["ended_at"])\n'
        'total = trips["seconds"].sum()\n'
    )
    assert sources(list(wrong_column(SourceText(src)))) == [
        src.replace("df['kind'] == 'e'", "df['rider'] == 'e'"),
        src.replace("df['kind'] == 'e'", "df['ended_at'] == 'e'"),
        src.replace("df['rider'] == 'casual'", "df['kind'] == 'casual'"),
        src.replace("df['rider'] == 'casual'", "df['ended_at'] == 'casual'"),
        src.replace('subset=["ended_at"]', 'subset=["kind"]'),
        src.replace('subset=["ended_at"]', 'subset=["rider"]'),
    ]


def test_swap_aggregate_max_and_min() -> None:
    src = "spread = rates.max() - rates.min()\n"
    assert sources(list(swap_aggregate(SourceText(src)))) == [
        "spread = rates.mean() - rates.min()\n",
        "spread = rates.min() - rates.min()\n",
        "spread = rates.max() - rates.mean()\n",
        "spread = rates.max() - rates.max()\n",
    ]


def test_round_to_int() -> None:
    src = "answer = round(per_agent.max(), 2)\nx = float(s.mean())\ny = float('nan')\n"
    assert sources(list(round_to_int(SourceText(src)))) == [
        src.replace("round(per_agent.max(), 2)", "round(per_agent.max())"),
        src.replace("float(s.mean())", "int(s.mean())"),
    ]


def test_time_unit() -> None:
    src = "days = (b - a).dt.days\nsecs = (b - a).dt.total_seconds()\nn = s.days\n"
    assert sources(list(time_unit(SourceText(src)))) == [
        src.replace(".dt.days", ".dt.total_seconds()"),
        src.replace(".dt.total_seconds()", ".dt.days"),
    ]


def test_wrong_group_key() -> None:
    old = 'minutes.groupby([calls["agent"], calls["team"]])'
    assert sources(list(wrong_group_key(SourceText(SCRIPT)))) == [
        SCRIPT.replace(old, 'minutes.groupby([calls["team"], calls["team"]])'),
        SCRIPT.replace(old, 'minutes.groupby([calls["hour"], calls["team"]])'),
        SCRIPT.replace(old, 'minutes.groupby([calls["agent"], calls["agent"]])'),
        SCRIPT.replace(old, 'minutes.groupby([calls["agent"], calls["hour"]])'),
    ]
    src = 'by_shop = df.groupby("shop")["cost"].mean()\nx = df[df["status"] == "done"]\n'
    assert sources(list(wrong_group_key(SourceText(src)))) == [
        src.replace('groupby("shop")', 'groupby("cost")'),
        src.replace('groupby("shop")', 'groupby("status")'),
    ]
