"""The measurement specification: shipped examples, validation errors, canonical form and hash."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vcost.errors import SpecError
from vcost.spec import (
    EXAMPLES,
    StudySpec,
    example_path,
    example_text,
    prereg,
    problems_of,
)
from vcost.spec._locate import KeyLines, dotted, split_dotted
from vcost.trace import HUMAN_CONFIDENCE_LEVELS

MINIMAL = """\
# a minimal valid spec
[study]
name = "minimal"
version = "1"

[cost]
unit = "human-minutes"

[verifiers]
kind = "person"
description = "developers"
eligibility = "working Python"
recruitment = "volunteers"

[budget]
mode = "fixed"
value = 15

[stopping]
tau = 0.9

[decision]
rule = "three-state"
q = 0.5
interval = "clopper-pearson"
alpha = 0.05

[verdicts]
per_answer = 6

[confidence]
levels = [0.5, 0.75, 0.9, 1.0]

[agreement]
threshold = 0.667

[tools]
allowed = ["running the code"]

[interface]
description = "one answer at a time"

[dataset]
name = "bank"
reference = "tasks/"
ground_truth = "hidden tests"
"""

FULL_STUDY = """\
# The full study's "Protocol settings" (seed 003, "Full study (if resourced)").
[study]
name = "full-study"
version = "1"

[cost]
unit = "human-minutes"

[verifiers]
kind = "person"
description = "screened students and early-career developers"
eligibility = "third- and fourth-year CS students and developers with up to five years' experience"
recruitment = "PES University, the Lossfunk community, and developer networks; paid"

[budget]
mode = "per-task"
factor = 1.0          # each task's median pilot 1 do time

[pilot]
description = "pilot 1 (timing): about 18 people, do only, 3 do attempts per task"

[pilot.median_do_time]
t01 = 6.0
t02 = 8.5
"t.03" = 7.25

[do_time_cap]
mode = "per-task"
factor = 2.0          # twice the task's median pilot 1 do time

[stopping]
rule = "any-verdict"
tau = 1.0

[decision]
rule = "three-state"
q = 0.5
interval = "clopper-pearson"
alpha = 0.05

[verdicts]
per_answer = 3

[verdicts.subset]
answers = 12
per_answer = 6
selection = "12 wrong answers per domain"

[flags.inactivity]
gap_minutes = 10

[agreement]
threshold = 0.667

[tools]
allowed = ["reading", "running the code", "writing their own tests", "a calculator"]
forbidden = ["AI assistants", "web search"]

[interface]
description = "web harness"

[dataset]
name = "48 tasks"
reference = "tasks/full"
ground_truth = "hidden test suites of at least 20 tests"
answers = 72

[sessions]
count = 42
pairs_per_session = 6
max_minutes = 120

[mix]
wrong_fraction = 0.5
min_correct_per_session = 2
min_wrong_per_session = 2

[[deviations]]
field = "stopping.rule"
kind = "protocol"
old = "confidence-at-least-tau"
new = "any-verdict"
reason = "forcing people to continue until they are 90% sure doesn't reflect real checking"
declared_at = 2027-02-01
"""


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing ``needle``."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in text")


def load_error(tmp_path: Path, text: str, name: str = "study.toml") -> tuple[SpecError, Path]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        StudySpec.load(path)
    return caught.value, path


def replace(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# -- shipped examples -----------------------------------------------------------------------------


def test_code_instantiation_matches_the_paper() -> None:
    """Crescitelli et al. 2026 (seed 000), Sec. 6, Step 6, "Illustrative instantiation": u =
    human-minutes, V = professional developers with seniority metadata, B = 15 human-minutes per
    output, tau = 0.9, q = 1/2, Clopper-Pearson at 95%, the three-state rule, m by precision
    planning."""
    spec = StudySpec.load(Path(str(example_path("code-instantiation"))))
    assert spec.cost_unit == "human-minutes"
    assert spec.verifiers.kind == "person"
    assert "professional developers" in spec.verifiers.description
    assert spec.verifiers.metadata == ("seniority",)
    assert spec.budget.mode == "fixed"
    assert spec.budget_for() == 15.0
    assert spec.tau == 0.9
    assert spec.stopping.rule == "confidence-at-least-tau"
    assert spec.q == 0.5
    assert spec.interval_method == "clopper-pearson"
    assert spec.alpha == 0.05
    assert spec.decision_rule == "three-state"
    assert spec.verdicts.basis == "precision-planning"
    assert spec.m == 12
    assert spec.deviations == ()


def test_code_instantiation_m_is_the_smallest_that_meets_its_plan() -> None:
    """m = 12 is what precision planning gives for inconclusive share <= 0.2 at p = 0.1 and 0.9
    (q = 1/2, 95% Clopper-Pearson); 11 fails with a hint naming 12."""
    text = example_text("code-instantiation")
    bad = replace(text, "per_answer = 12", "per_answer = 11")
    with pytest.raises(SpecError) as caught:
        StudySpec.from_toml_text(bad, source="code.toml")
    error = caught.value
    assert error.field == "verdicts.per_answer"
    assert error.line == line_of(bad, "per_answer = 11")
    assert "precision planning gives m = 12" in str(error)


def test_core_study_matches_the_study_design() -> None:
    """Seed 003, "Core study (what I'll run)" and "Protocol settings": human-minutes; a panel of
    3-4 Lossfunk people; one fixed check budget of 10 minutes and a do-time cap of 20 minutes
    (no pilot); 4 sessions of 3 pairs, 45 minutes, hard stop 60, plus a practice session on 2
    tasks; half the answers wrong, at least 1 correct and 1 wrong per session; confidence 50/75/
    100 %; guesses under 30 s at 50 %; inactivity gaps over 10 minutes; q = 1/2 with 95%
    Clopper-Pearson and the three-state rule; 1 human verdict per answer; the declared deviation
    "any verdict ends the check" and premature closure at 100 % confidence."""
    spec = StudySpec.load(Path(str(example_path("core-study"))))
    assert spec.cost_unit == "human-minutes"
    assert (spec.verifiers.panel_min, spec.verifiers.panel_max) == (3, 4)
    assert spec.verifiers.sampling == "panel"
    assert "Lossfunk" in spec.verifiers.description
    assert spec.budget.mode == "fixed"
    assert spec.budget_for("any-task") == 10.0
    assert spec.do_time_cap_for("any-task") == 20.0
    sessions = spec.sessions
    assert sessions is not None
    assert (sessions.count, sessions.pairs_per_session, sessions.practice_tasks) == (4, 3, 2)
    assert (sessions.target_minutes, sessions.max_minutes) == (45.0, 60.0)
    mix = spec.mix
    assert mix is not None
    assert mix.wrong_fraction == 0.5
    assert (mix.min_correct_per_session, mix.min_wrong_per_session) == (1, 1)
    assert mix.disclosed is False
    assert spec.confidence_levels == (0.5, 0.75, 1.0)
    assert spec.flags is not None
    assert spec.flags.guess is not None
    assert (spec.flags.guess.under_seconds, spec.flags.guess.at_confidence) == (30.0, 0.5)
    assert spec.flags.inactivity is not None
    assert spec.flags.inactivity.gap_minutes == 10.0
    assert (spec.q, spec.alpha, spec.interval_method) == (0.5, 0.05, "clopper-pearson")
    assert spec.decision_rule == "three-state"
    assert spec.m == 1
    assert spec.stopping.rule == "any-verdict"
    assert spec.tau == 1.0
    assert spec.reaches_tau(1.0)
    assert not spec.reaches_tau(0.75)
    assert spec.is_possible_guess(29.0, 0.5)
    assert not spec.is_possible_guess(31.0, 0.5)
    assert not spec.is_possible_guess(10.0, 0.75)
    kinds = {(d.field, d.kind, d.old, d.new) for d in spec.deviations}
    assert ("stopping.rule", "protocol", "confidence-at-least-tau", "any-verdict") in kinds
    assert any("doesn't reflect real checking" in d.reason for d in spec.deviations)
    assert any("2 pairs per session" in c.then for c in spec.contingencies)
    assert spec.dataset.answers == 48


def test_full_study_protocol_settings() -> None:
    """Seed 003, full study "Protocol settings": check budget = each task's median pilot 1 do
    time, do-time cap = twice it; 3 verdicts per answer, 6 for a subset of 12 wrong answers; at 6
    verdicts an error is confirmed only if all 6 checkers miss it and ruled out only if none do
    (Crescitelli et al. Sec. 5: 6/6 gives a lower bound of about 0.54, 0/6 an upper of 0.46)."""
    spec = StudySpec.from_toml_text(FULL_STUDY, source="full.toml")
    assert spec.budget_for("t01") == 6.0
    assert spec.budget_for("t.03") == 7.25
    assert spec.do_time_cap_for("t02") == 17.0
    assert spec.verdicts.subset is not None
    assert (spec.verdicts.subset.answers, spec.verdicts.subset.per_answer) == (12, 6)
    text = prereg(spec)
    assert (
        "With 6 verdicts per answer an error is confirmed only if all 6 verifiers miss it" in text
    )
    assert "ruled out only if none misses it" in text
    assert "With 3 verdicts per answer no answer can be resolved" in text
    assert "| t.03 | 7.25 | 7.25 | 14.5 |" in text
    assert 'pilot.median_do_time."t.03"' in spec.field_paths()


def test_examples_are_all_shipped() -> None:
    assert set(EXAMPLES) == {"code-instantiation", "core-study"}
    for name in EXAMPLES:
        assert StudySpec.from_toml_text(example_text(name)).study.name == name


def test_parameters_are_attributes_other_modules_read() -> None:
    """indicators.IndicatorSettings.from_spec reads these names off a StudySpec."""
    spec = StudySpec.from_toml_text(MINIMAL)
    for name in (
        "tau",
        "q",
        "alpha",
        "interval_method",
        "m",
        "confidence_levels",
        "agreement_threshold",
        "cost_unit",
        "spec_hash",
        "deviations",
    ):
        assert hasattr(spec, name), name
    assert spec.agreement_threshold == 0.667
    assert spec.lock_hash is None
    assert spec.stamp_hash == spec.spec_hash
    from vcost.indicators import IndicatorSettings

    settings_ = IndicatorSettings.from_spec(spec)
    assert (settings_.tau, settings_.q, settings_.interval_method) == (0.9, 0.5, "clopper-pearson")


def test_people_default_to_the_study_designs_confidence_levels() -> None:
    """Seed 003: confidence 50%, 75% or 100%; models report a probability instead."""
    text = MINIMAL.replace("[confidence]\nlevels = [0.5, 0.75, 0.9, 1.0]\n", "").replace(
        "tau = 0.9", "tau = 1.0"
    )
    assert StudySpec.from_toml_text(text).confidence_levels == HUMAN_CONFIDENCE_LEVELS
    as_model = text.replace('kind = "person"', 'kind = "model"')
    assert StudySpec.from_toml_text(as_model).confidence_levels == ()


# -- budgets --------------------------------------------------------------------------------------


ARMS = replace(
    MINIMAL,
    'mode = "fixed"\nvalue = 15\n',
    'mode = "arms"\nassignment = "per-verifier"\n\n'
    '[[budget.arms]]\nname = "short"\nvalue = 5\n\n'
    '[[budget.arms]]\nname = "long"\nvalue = 60\n',
)


def test_budget_arms() -> None:
    """Crescitelli et al. Step 3: comparisons across budgets need randomised budget conditions."""
    spec = StudySpec.from_toml_text(ARMS, source="arms.toml")
    assert spec.budget_arms == ("short", "long")
    assert spec.budget_for(arm="short") == 5.0
    assert spec.budget_for("t1", arm="long") == 60.0
    with pytest.raises(SpecError, match="name one"):
        spec.budget_for()
    with pytest.raises(SpecError, match="no budget arm named 'medium'"):
        spec.budget_for(arm="medium")
    assert "2 randomised budget arms" in prereg(spec)


def test_budget_helpers_refuse_what_the_spec_lacks() -> None:
    spec = StudySpec.from_toml_text(FULL_STUDY, source="full.toml")
    with pytest.raises(SpecError, match="task 'nope' has no pilot median"):
        spec.budget_for("nope")
    with pytest.raises(SpecError, match="name the task"):
        spec.budget_for()
    with pytest.raises(SpecError, match="has no arm"):
        spec.budget_for("t01", arm="short")
    assert StudySpec.from_toml_text(MINIMAL).do_time_cap_for("t01") is None


# -- errors name file, line and field -------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "needle", "field", "words"),
    [
        ("tau = 0.9", "tau = 1.5", "tau = 1.5", "stopping.tau", "out of range"),
        ("q = 0.5", "q = 1.0", "q = 1.0", "decision.q", "must be < 1"),
        ("alpha = 0.05", "alpha = 0", "alpha = 0", "decision.alpha", "must be > 0"),
        ("per_answer = 6", "per_answer = 0", "per_answer = 0", "verdicts.per_answer", ">= 1"),
        ("value = 15", 'value = "15"', 'value = "15"', "budget.value", "wrong type: got string"),
        ("value = 15", "value = -1", "value = -1", "budget.value", "human-minutes"),
        ('version = "1"', "version = 1", "version = 1", "study.version", "got integer"),
        ('unit = "human-minutes"', 'unit = "minutes"', "minutes", "cost.unit", "human-minutes"),
        (
            "threshold = 0.667",
            "threshold = 0.667\ntreshold = 1",
            "treshold",
            "agreement.treshold",
            "did you mean 'threshold'",
        ),
        (
            'interval = "clopper-pearson"',
            'interval = "clopper"',
            "clopper",
            "decision.interval",
            "did you mean 'clopper-pearson'",
        ),
        (
            'allowed = ["running the code"]',
            'allowed = ["running the code", 3]',
            "allowed",
            "tools.allowed[1]",
            "got integer 3",
        ),
        ('name = "minimal"', 'name = "has space"', "has space", "study.name", "not a valid name"),
    ],
)
def test_bad_value_names_file_line_and_field(
    tmp_path: Path, old: str, new: str, needle: str, field: str, words: str
) -> None:
    text = replace(MINIMAL, old, new)
    error, path = load_error(tmp_path, text)
    assert error.source == str(path)
    assert error.field == field
    assert error.line == line_of(text, needle)
    assert words in str(error)
    assert str(error).startswith(f"{path}:{error.line}: field '{field}': ")


def test_toml_syntax_error_gives_its_line(tmp_path: Path) -> None:
    text = replace(MINIMAL, "tau = 0.9", "tau = = 0.9")
    error, path = load_error(tmp_path, text)
    assert error.line == line_of(text, "tau = = 0.9")
    assert error.field == "stopping.tau"
    assert "invalid TOML" in str(error)
    assert "column" in str(error)
    assert str(error).startswith(f"{path}:{error.line}:")


def test_unknown_table_suggests_the_right_name(tmp_path: Path) -> None:
    text = replace(MINIMAL, "[budget]", "[budjet]")
    error, _ = load_error(tmp_path, text)
    problems = {p.field: p for p in problems_of(error)}
    assert problems["budjet"].line == line_of(text, "[budjet]")
    assert "did you mean 'budget'?" in problems["budjet"].message
    # ... and the table that is now missing points at line 1
    assert problems["budget"].line == 1
    assert problems["budget"].message == "missing table [budget]"


def test_missing_field_points_at_its_table_header(tmp_path: Path) -> None:
    text = replace(MINIMAL, 'ground_truth = "hidden tests"\n', "")
    error, _ = load_error(tmp_path, text)
    assert error.field == "dataset.ground_truth"
    assert error.line == line_of(text, "[dataset]")
    assert "missing required field 'ground_truth'" in str(error)
    assert "expected how ground truth is fixed" in str(error)


def test_missing_table_points_at_line_1(tmp_path: Path) -> None:
    text = replace(MINIMAL, '[interface]\ndescription = "one answer at a time"\n', "")
    error, _ = load_error(tmp_path, text)
    assert (error.field, error.line) == ("interface", 1)


def test_arms_with_one_budget(tmp_path: Path) -> None:
    text = ARMS.replace('\n[[budget.arms]]\nname = "long"\nvalue = 60\n', "")
    error, _ = load_error(tmp_path, text)
    assert error.field == "budget.arms"
    assert error.line == line_of(text, "[[budget.arms]]")
    assert "at least 2 budgets; got 1" in str(error)


def test_error_in_second_array_entry_points_at_its_line(tmp_path: Path) -> None:
    text = replace(ARMS, "value = 60", "value = 0")
    error, _ = load_error(tmp_path, text)
    assert error.field == "budget.arms[1].value"
    assert error.line == line_of(text, "value = 0")


def test_per_task_budget_needs_pilot_and_cap(tmp_path: Path) -> None:
    text = replace(MINIMAL, 'mode = "fixed"\nvalue = 15', 'mode = "per-task"\nfactor = 1.0')
    error, _ = load_error(tmp_path, text)
    fields = {p.field for p in problems_of(error)}
    assert fields == {"pilot", "do_time_cap"}
    assert all(p.line == line_of(text, 'mode = "per-task"') for p in problems_of(error))
    assert "twice the pilot median" in str(error)


def test_mode_and_its_value_must_agree(tmp_path: Path) -> None:
    text = replace(MINIMAL, 'mode = "fixed"\nvalue = 15', 'mode = "fixed"\nfactor = 1.0')
    error, _ = load_error(tmp_path, text)
    problems = {p.field: p for p in problems_of(error)}
    assert problems["budget.value"].message == "budget mode 'fixed' needs 'value'"
    assert problems["budget.factor"].line == line_of(text, "factor = 1.0")


def test_subset_must_get_more_verdicts_than_m(tmp_path: Path) -> None:
    text = replace(FULL_STUDY, "per_answer = 6", "per_answer = 3")
    error, _ = load_error(tmp_path, text)
    assert error.field == "verdicts.subset.per_answer"
    assert error.line == line_of(text, "selection =") - 1


def test_tau_must_be_reachable_on_the_confidence_scale(tmp_path: Path) -> None:
    text = replace(MINIMAL, "levels = [0.5, 0.75, 0.9, 1.0]", "levels = [0.5, 0.75]")
    error, _ = load_error(tmp_path, text)
    assert error.field == "stopping.tau"
    assert error.line == line_of(text, "tau = 0.9")
    assert "no confidence level reaches tau = 0.9" in str(error)


def test_confidence_levels_must_increase(tmp_path: Path) -> None:
    text = replace(MINIMAL, "levels = [0.5, 0.75, 0.9, 1.0]", "levels = [0.5, 0.5, 1.0]")
    error, _ = load_error(tmp_path, text)
    assert (error.field, error.line) == ("confidence.levels[1]", line_of(text, "levels ="))


def test_multiline_array_elements_have_their_own_lines(tmp_path: Path) -> None:
    text = replace(
        MINIMAL, "levels = [0.5, 0.75, 0.9, 1.0]", "levels = [\n  0.5,\n  # x\n  1.5,\n]"
    )
    error, _ = load_error(tmp_path, text)
    assert (error.field, error.line) == ("confidence.levels[1]", line_of(text, "1.5,"))


def test_guess_confidence_must_be_a_level(tmp_path: Path) -> None:
    text = MINIMAL + "\n[flags.guess]\nunder_seconds = 30\nat_confidence = 0.6\n"
    error, _ = load_error(tmp_path, text)
    assert error.field == "flags.guess.at_confidence"
    assert error.line == line_of(text, "at_confidence = 0.6")


def test_any_verdict_needs_a_declared_protocol_deviation(tmp_path: Path) -> None:
    """Seed 003 declares "any verdict ends the check" as a deviation from Step 3's tau rule."""
    text = replace(MINIMAL, "tau = 0.9", 'rule = "any-verdict"\ntau = 0.9')
    error, _ = load_error(tmp_path, text)
    assert error.field == "stopping.rule"
    assert error.line == line_of(text, 'rule = "any-verdict"')
    assert 'kind = "protocol"' in str(error)


def test_fewer_than_three_verdicts_need_a_declared_deviation(tmp_path: Path) -> None:
    """Crescitelli et al. Step 4: agreement across N >= 3 verifiers per output."""
    text = replace(MINIMAL, "per_answer = 6", "per_answer = 2")
    error, _ = load_error(tmp_path, text)
    assert (error.field, error.line) == ("verdicts.per_answer", line_of(text, "per_answer = 2"))


def test_deviation_needs_a_reason(tmp_path: Path) -> None:
    text = FULL_STUDY.replace('reason = "forcing people', 'why = "forcing people')
    error, _ = load_error(tmp_path, text)
    problems = {p.field: p for p in problems_of(error)}
    assert problems["deviations[0].reason"].line == line_of(text, "[[deviations]]")
    assert problems["deviations[0].why"].line == line_of(text, "why =")


def test_blank_reason_is_an_error(tmp_path: Path) -> None:
    text = replace(FULL_STUDY, 'reason = "forcing', 'reason = "   "\nx_reason = "forcing')
    error, _ = load_error(tmp_path, text)
    assert any(
        p.field == "deviations[0].reason" and p.message == "must not be empty"
        for p in problems_of(error)
    )


def test_protocol_deviation_must_match_the_spec(tmp_path: Path) -> None:
    text = replace(FULL_STUDY, 'new = "any-verdict"', 'new = "any-verdicts"')
    error, _ = load_error(tmp_path, text)
    assert error.field == "deviations[0].new"
    assert error.line == line_of(text, 'new = "any-verdicts"')
    assert 'expected new = "any-verdict"' in str(error)


def test_protocol_deviation_must_name_a_field(tmp_path: Path) -> None:
    text = replace(MINIMAL + FULL_STUDY[FULL_STUDY.index("[[deviations]]") :], "", "")
    text = text.replace('field = "stopping.rule"', 'field = "stopping.rules"')
    error, _ = load_error(tmp_path, text)
    assert error.field == "deviations[0].field"
    assert "did you mean 'stopping.rule'?" in str(error)


def test_lock_deviation_without_a_lock_is_an_error(tmp_path: Path) -> None:
    text = MINIMAL + (
        '\n[[deviations]]\nfield = "budget.value"\nold = 10\nnew = 15\nreason = "r"\n'
        "declared_at = 2027-03-01\n"
    )
    error, _ = load_error(tmp_path, text)
    assert error.field == "deviations[0].kind"
    assert error.line == line_of(text, "[[deviations]]")
    assert "not locked" in str(error)


def test_all_problems_are_reported_at_once(tmp_path: Path) -> None:
    text = replace(MINIMAL, "tau = 0.9", "tau = 2")
    text = replace(text, "q = 0.5", "q = -1")
    text = replace(text, 'kind = "person"', 'kind = "persons"')
    error, path = load_error(tmp_path, text)
    problems = problems_of(error)
    assert [p.field for p in problems] == ["verifiers.kind", "stopping.tau", "decision.q"]
    assert [p.line for p in problems] == sorted(p.line for p in problems)
    assert (error.line, error.field) == (problems[0].line, problems[0].field)
    lines = str(error).splitlines()
    assert len(lines) == 4  # one per problem, then the count
    assert lines[1].startswith(f"{path}:{line_of(text, 'tau = 2')}: field 'stopping.tau'")
    assert lines[-1].startswith("3 problems")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no such file"):
        StudySpec.load(tmp_path / "nope.toml")


# -- key -> line ----------------------------------------------------------------------------------


def test_key_lines_follow_tables_arrays_and_strings() -> None:
    text = """\
top = 1
[a]
s = \"\"\"
x = 2
\"\"\"
'quoted key' = 3
b.c = 4
inline = { d = 5, e = [6,
  7] }
[[arr]]
v = 1
[[arr]]
v = 2
[[arr.sub]]
w = 3
[arr.tab]
z = 4
"""
    lines = KeyLines(text).lines
    assert lines[("top",)] == 1
    assert lines[("a",)] == 2
    assert lines[("a", "s")] == 3
    assert ("a", "x") not in lines  # inside a multi-line string
    assert lines[("a", "quoted key")] == 6
    assert lines[("a", "b", "c")] == 7
    assert lines[("a", "inline", "d")] == 8
    assert lines[("a", "inline", "e", 1)] == 9
    assert lines[("arr", 0, "v")] == 11
    assert lines[("arr", 1, "v")] == 13
    assert lines[("arr", 1, "sub", 0, "w")] == 15
    assert lines[("arr", 1, "tab", "z")] == 17


@given(
    st.lists(
        st.one_of(
            st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8),
            st.integers(min_value=0, max_value=99),
        ),
        min_size=1,
        max_size=5,
    ).filter(lambda parts: isinstance(parts[0], str))
)
def test_dotted_paths_round_trip(parts: list[str | int]) -> None:
    path = tuple(parts)
    assert split_dotted(dotted(path)) == path


# -- canonical form and hash ----------------------------------------------------------------------


def _toml(data: dict[str, Any], order: list[int] | None = None) -> str:
    """A small TOML writer for the test (scalars, arrays, nested tables, arrays of tables)."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return repr(v)

    def key(k: str) -> str:
        return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)

    out: list[str] = []

    def table(prefix: str, body: dict[str, Any]) -> None:
        items = list(body.items())
        if order:
            items = [items[i % len(items)] for i in order if i < len(items)] + items
            seen: set[str] = set()
            items = [kv for kv in items if not (kv[0] in seen or seen.add(kv[0]))]
        scalars = [(k, v) for k, v in items if not isinstance(v, dict) and not _is_aot(v)]
        if prefix:
            out.append(f"\n# table {prefix}\n[{prefix}]")
        for k, v in scalars:
            out.append(f"{key(k)}   =  {value(v)}  # c")
        for k, v in items:
            name = f"{prefix}.{key(k)}" if prefix else key(k)
            if isinstance(v, dict):
                table(name, v)
            elif _is_aot(v):
                for entry in v:
                    out.append(f"\n[[{name}]]")
                    for ek, ev in entry.items():
                        out.append(f"{key(ek)} = {value(ev)}")

    table("", data)
    return "\n".join(out) + "\n"


def _is_aot(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


@settings(max_examples=40)
@given(name=st.sampled_from(sorted(EXAMPLES)), order=st.permutations(list(range(20))))
def test_hash_is_stable_under_reordering_whitespace_and_comments(
    name: str, order: list[int]
) -> None:
    """Tables and keys in any order, extra blank lines and comments: same canonical JSON."""
    original = StudySpec.from_toml_text(example_text(name))
    data = json.loads(original.canonical_json())
    data["deviations"] = [
        {k: v for k, v in d.model_dump(mode="python").items() if v is not None}
        for d in original.deviations
    ]
    for d in data["deviations"]:
        d["declared_at"] = "2027-02-22"
    text = _toml(data, order).replace('declared_at = "2027-02-22"', "declared_at = 2027-02-22")
    again = StudySpec.from_toml_text(text)
    assert again.canonical_json() == original.canonical_json()
    assert again.spec_hash == original.spec_hash


@settings(max_examples=30)
@given(st.permutations(list(range(20))))
def test_hash_is_stable_when_table_blocks_move(order: list[int]) -> None:
    """The shipped core-study text with its [table] blocks shuffled (arrays of tables keep
    their relative order, as TOML requires for meaning)."""
    text = example_text("core-study")
    blocks = re.split(r"\n(?=\[)", text)
    head, rest = blocks[0], blocks[1:]
    singles = [b for b in rest if not b.startswith("[[")]
    arrays = [b for b in rest if b.startswith("[[")]
    shuffled = [singles[i] for i in order if i < len(singles)]
    shuffled += [b for b in singles if b not in shuffled]
    moved = "\n".join([head, *arrays[:1], *shuffled, *arrays[1:]]) + "\n# trailing comment\n"
    original = StudySpec.from_toml_text(text)
    assert StudySpec.from_toml_text(moved).spec_hash == original.spec_hash


def test_number_spelling_does_not_change_the_hash() -> None:
    spellings = ["value = 15", "value = 15.0", "value = 1.5e1", "value = 15.000"]
    hashes = {
        StudySpec.from_toml_text(MINIMAL.replace("value = 15", s)).spec_hash for s in spellings
    }
    assert len(hashes) == 1


def test_canonical_json_is_sorted_compact_and_hashes_to_spec_hash() -> None:
    spec = StudySpec.from_toml_text(example_text("core-study"))
    text = spec.canonical_json()
    data = json.loads(text)
    assert json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False) == text
    assert "deviations" not in data
    assert hashlib.sha256(text.encode()).hexdigest() == spec.spec_hash
    assert re.fullmatch(r"[0-9a-f]{64}", spec.spec_hash)


def test_deviations_are_not_hashed() -> None:
    text = example_text("core-study")
    spec = StudySpec.from_toml_text(text)
    longer = text.replace("doesn't reflect real checking", "doesn't reflect checking at all")
    assert StudySpec.from_toml_text(longer).spec_hash == spec.spec_hash


_ENUM_VALUES = (
    "tokens",
    "model",
    "representative",
    "point-estimate",
    "any-verdict",
    "confidence-at-least-tau",
    "wilson",
    "fleiss-kappa",
    "fixed",
    "per-task",
)


def _mutations(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1]
    if isinstance(value, float):
        return [value / 2, value * 0.9, value + 1, value + 0.5]
    if isinstance(value, str):
        return [value + " (changed)", *_ENUM_VALUES]
    if isinstance(value, list):
        return [value[:-1], [*value, value[-1]]] if value else []
    return []


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_any_changed_value_changes_the_hash(name: str) -> None:
    """Every field the spec declares is covered by the hash."""
    spec = StudySpec.from_toml_text(example_text(name))
    base = json.loads(spec.canonical_json())
    deviations = [d.model_dump() for d in spec.deviations]
    changed = 0
    for path, value in spec.field_paths().items():
        parts = split_dotted(path)
        assert parts is not None
        for candidate in _mutations(value):
            if candidate == value:
                continue
            data = json.loads(json.dumps(base))
            node = data
            for part in parts[:-1]:
                node = node[part]
            node[parts[-1]] = candidate
            data["deviations"] = [
                {**d, "new": candidate} if split_dotted(d["field"]) == parts else d
                for d in deviations
            ]
            try:
                mutated = StudySpec.model_validate(data)
            except ValueError:
                continue
            assert mutated.spec_hash != spec.spec_hash, path
            changed += 1
            break
    # the rest are coupled to other fields (q and m via the plan) or cannot change (spec_format)
    assert changed >= 0.8 * len(spec.field_paths())


def test_the_pause_rule_is_optional_and_leaves_existing_hashes_alone() -> None:
    """``sessions.pause`` unset is not in the canonical form, so specs written before the field
    existed keep their hash; set, it is part of the hashed (and locked) spec."""
    text = example_text("core-study")
    plain = StudySpec.from_toml_text(text)
    assert plain.sessions is not None
    assert plain.sessions.pause is None
    assert "pause" not in json.loads(plain.canonical_json())["sessions"]
    paused = StudySpec.from_toml_text(
        text.replace("\n[sessions]\n", '\n[sessions]\npause = "between-items"\n', 1)
    )
    assert paused.sessions is not None
    assert paused.sessions.pause == "between-items"
    assert paused.spec_hash != plain.spec_hash
    with pytest.raises(SpecError, match=r"sessions\.pause"):
        StudySpec.from_toml_text(
            text.replace("\n[sessions]\n", '\n[sessions]\npause = "whenever"\n', 1)
        )


def test_prereg_has_an_analysis_plan_with_vcost_s_declared_choices() -> None:
    """Issue 16 item 7: the pre-registration lists every pre-registered analysis and the
    estimator choices that are vcost's own (fixed-effects survival, clustered logit)."""
    from vcost.spec import StudySpec, example_path, prereg

    text = prereg(StudySpec.load(example_path("core-study")))
    plan = text[text.index("## 7. Analysis plan") : text.index("## 8. Instrumentation cost")]
    for needle in ("H1", "H3", "break-even", "fixed-effects", "clustered", "order-statistic"):
        assert needle in plan, needle
