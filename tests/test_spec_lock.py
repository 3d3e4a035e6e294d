"""Locking a spec, enforcing the lock, declared deviations, and the pre-registration text."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

import vcost
from vcost.errors import LockError, SpecError
from vcost.spec import (
    Lock,
    StudySpec,
    example_text,
    lock_path_for,
    lock_spec,
    prereg,
    problems_of,
)

NOW = datetime(2027, 2, 22, 9, 30, tzinfo=UTC)


def line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in text")


@pytest.fixture
def study(tmp_path: Path) -> Path:
    path = tmp_path / "study.toml"
    path.write_text(example_text("core-study"), encoding="utf-8")
    return path


def edit(path: Path, old: str, new: str) -> str:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")
    return text


def append(path: Path, extra: str) -> str:
    text = path.read_text(encoding="utf-8") + extra
    path.write_text(text, encoding="utf-8")
    return text


BUDGET_DEVIATION = """
[[deviations]]
field = "budget.value"
old = 10
new = 12
reason = "sessions ended early; checkers asked for more time"
declared_at = 2027-03-15
"""


def test_lock_writes_hash_spec_version_and_time(study: Path) -> None:
    lock = lock_spec(study, now=NOW)
    path = study.with_name("study.lock.json")
    assert lock_path_for(study) == path
    assert lock.path == path
    data = json.loads(path.read_text(encoding="utf-8"))
    spec = StudySpec.load(study)
    assert data["spec_hash"] == spec.spec_hash == lock.spec_hash
    assert data["spec"] == json.loads(spec.canonical_json())
    assert data["vcost_version"] == vcost.__version__
    assert data["locked_at"] == "2027-02-22T09:30:00Z"
    assert data["spec_file"] == "study.toml"
    assert [d["field"] for d in data["protocol_deviations"]] == [
        "stopping.rule",
        "verdicts.per_answer",
    ]
    assert Lock.read(path) == lock
    assert spec.lock == lock
    assert spec.lock_hash == spec.spec_hash == spec.stamp_hash


def test_lock_refuses_to_overwrite_unless_forced(study: Path) -> None:
    first = lock_spec(study, now=NOW)
    with pytest.raises(LockError, match="already locked") as caught:
        lock_spec(study)
    assert "--force" in str(caught.value)
    later = datetime(2027, 3, 1, tzinfo=UTC)
    again = lock_spec(study, force=True, now=later)
    assert again.spec_hash == first.spec_hash
    assert again.locked_at == later


def test_invalid_spec_is_not_locked(study: Path) -> None:
    edit(study, "tau = 1.0", "tau = 2.0")
    with pytest.raises(SpecError):
        lock_spec(study)
    assert not lock_path_for(study).exists()


def test_changed_field_raises_lock_error_naming_it(study: Path) -> None:
    lock_spec(study, now=NOW)
    text = edit(study, "value = 10 ", "value = 12 ")
    with pytest.raises(LockError) as caught:
        StudySpec.load(study)
    error = caught.value
    assert error.field == "budget.value"
    assert error.line == line_of(text, "value = 12 ")
    assert error.source == str(study)
    message = str(error)
    assert "changed from 10.0 to 12.0" in message
    assert "[[deviations]]" in message
    assert "reason" in message
    assert 'field = "budget.value", old = 10.0, new = 12.0' in message


def test_declared_deviation_loads_and_keeps_the_lock_hash(study: Path) -> None:
    lock = lock_spec(study, now=NOW)
    edit(study, "value = 10 ", "value = 12 ")
    append(study, BUDGET_DEVIATION)
    spec = StudySpec.load(study)
    assert spec.budget_for() == 12.0
    later = [d for d in spec.deviations if d.kind == "lock"]
    assert [(d.field, d.old, d.new, d.declared_at) for d in later] == [
        ("budget.value", 10, 12, date(2027, 3, 15))
    ]
    assert spec.lock_hash == lock.spec_hash == spec.stamp_hash
    assert spec.spec_hash != lock.spec_hash
    text = prereg(spec)
    assert "sessions ended early" in text
    assert f"`sha256:{lock.spec_hash}`" in text


def test_deviation_with_the_wrong_old_or_new_value(study: Path) -> None:
    lock_spec(study, now=NOW)
    edit(study, "value = 10 ", "value = 12 ")
    text = append(
        study, BUDGET_DEVIATION.replace("old = 10", "old = 9").replace("new = 12", "new = 13")
    )
    with pytest.raises(LockError) as caught:
        StudySpec.load(study)
    problems = {p.field: p for p in problems_of(caught.value)}
    assert problems["deviations[2].old"].line == line_of(text, "old = 9")
    assert "the locked value of 'budget.value' is 10.0" in problems["deviations[2].old"].message
    assert problems["deviations[2].new"].line == line_of(text, "new = 13")


def test_deviation_naming_an_unchanged_field_is_an_error(study: Path) -> None:
    lock_spec(study, now=NOW)
    text = append(study, BUDGET_DEVIATION)
    with pytest.raises(LockError) as caught:
        StudySpec.load(study)
    error = caught.value
    assert error.field == "deviations[2].field"
    assert error.line == line_of(text, 'field = "budget.value"')
    assert "did not change since the lock" in str(error)


def test_deviation_without_a_reason_is_an_error(study: Path) -> None:
    lock_spec(study, now=NOW)
    edit(study, "value = 10 ", "value = 12 ")
    text = append(study, BUDGET_DEVIATION.replace('reason = "sessions', 'note = "sessions'))
    with pytest.raises(SpecError) as caught:
        StudySpec.load(study)
    problems = {p.field: p for p in problems_of(caught.value)}
    lines = text.splitlines()
    header = len(lines) - lines[::-1].index("[[deviations]]")  # the appended entry's header
    assert problems["deviations[2].reason"].line == header
    assert "missing required field 'reason'" in problems["deviations[2].reason"].message


def test_chain_of_deviations_on_one_field(study: Path) -> None:
    lock_spec(study, now=NOW)
    edit(study, "value = 10 ", "value = 14 ")
    append(study, BUDGET_DEVIATION)
    append(study, BUDGET_DEVIATION.replace("old = 10", "old = 12").replace("new = 12", "new = 14"))
    assert StudySpec.load(study).budget_for() == 14.0


def test_removed_field_needs_a_deviation_without_new(study: Path) -> None:
    lock_spec(study, now=NOW)
    block = (
        '[flags.inactivity]\ngap_minutes = 10\nactivity = ["keystroke", "mouse movement", '
        '"scroll", "code run"]\n'
    )
    edit(study, block, "")
    with pytest.raises(LockError) as caught:
        StudySpec.load(study)
    assert caught.value.field == "flags.inactivity"
    assert "to (not set)" in str(caught.value)
    append(
        study,
        '\n[[deviations]]\nfield = "flags.inactivity"\n'
        'old = { gap_minutes = 10.0, activity = ["keystroke", "mouse movement", "scroll", '
        '"code run"] }\nreason = "the harness cannot log activity"\ndeclared_at = 2027-03-01\n',
    )
    spec = StudySpec.load(study)
    assert spec.flags is not None
    assert spec.flags.inactivity is None


def test_protocol_deviations_are_frozen_by_the_lock(study: Path) -> None:
    lock_spec(study, now=NOW)
    text = edit(study, "doesn't reflect real checking", "is unrealistic")
    with pytest.raises(LockError) as caught:
        StudySpec.load(study)
    assert caught.value.field == "deviations"
    assert caught.value.line == line_of(text, 'field = "stopping.rule"')
    assert "recorded when the spec was locked" in str(caught.value)


def test_edited_lock_file_is_refused(study: Path) -> None:
    lock_spec(study, now=NOW)
    path = lock_path_for(study)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["spec"]["budget"]["value"] = 99.0
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LockError, match="the lock file was edited"):
        StudySpec.load(study)


def test_garbage_lock_file_is_refused(study: Path) -> None:
    lock_path_for(study).write_text("{not json", encoding="utf-8")
    with pytest.raises(LockError, match="cannot read the lock file"):
        StudySpec.load(study)
    lock_path_for(study).write_text("{}", encoding="utf-8")
    with pytest.raises(LockError, match="not a vcost lock file"):
        StudySpec.load(study)


def test_relock_with_lock_deviations_asks_to_remove_them(study: Path) -> None:
    lock_spec(study, now=NOW)
    edit(study, "value = 10 ", "value = 12 ")
    append(study, BUDGET_DEVIATION)
    with pytest.raises(SpecError, match="not locked") as caught:
        lock_spec(study, force=True)
    assert "remove these entries" in str(caught.value)


def test_from_toml_text_enforces_a_given_lock(study: Path) -> None:
    lock = lock_spec(study, now=NOW)
    text = study.read_text(encoding="utf-8").replace("value = 20", "value = 25")
    with pytest.raises(LockError, match=r"do_time_cap\.value"):
        StudySpec.from_toml_text(text, source="mem.toml", lock=lock)


# -- the pre-registration -------------------------------------------------------------------------


def _body(text: str) -> str:
    """The prose, without the canonical JSON appendix (which trivially holds every value)."""
    return text.split("## Appendix B")[0]


def test_prereg_unlocked_warns() -> None:
    spec = StudySpec.from_toml_text(example_text("core-study"))
    text = prereg(spec, today=date(2027, 2, 22))
    assert "**NOT LOCKED.**" in text
    assert "Generated: 2027-02-22 by vcost" in text
    assert spec.spec_hash in text


def test_prereg_states_every_declared_choice_of_the_core_study(study: Path) -> None:
    """Seed 003: the core study's settings, each as a sentence."""
    lock = lock_spec(study, now=NOW)
    spec = StudySpec.load(study)
    body = _body(prereg(spec))
    expected = [
        f"Locked specification `sha256:{lock.spec_hash}`, locked 2027-02-22 09:30 UTC",
        f"with vcost {vcost.__version__}",
        "**Cost unit (u):** human-minutes.",
        "Panel size: 3 to 4.",
        "a panel, not a representative sample",
        "**Verification budget (B):** 10 human-minutes per answer, fixed.",
        "**Do-time cap:** 20 human-minutes per do attempt, fixed.",
        "A check ends when the verifier gives a verdict, the budget B is exhausted, or the "
        "verifier declares the answer unverifiable within budget.",
        "at least a fraction q = 0.5 of the verifier population fails",
        "two-sided 95% Clopper-Pearson interval",
        "**confirmed** Verification-Cost Error when the interval's lower bound is >= q = 0.5",
        "**not** a VCE when its upper bound is < q; **inconclusive** otherwise.",
        "**Verdicts per answer (m):** 1.",
        "every one is inconclusive (the fewest verdicts that can confirm an error is 6",
        "alpha = 0.05",
        "one of 50%, 75% or 100%",
        'results below 0.667 are flagged "verifier-uncertain" and reported, not withheld',
        "**Random seed:** 20270201.",
        "1. **Correct verdict** within budget",
        "a *false accept* (an incorrect answer judged correct)",
        "3. **Budget exhausted** without a verdict",
        "4. **Declared unverifiable** within budget.",
        "**Premature closure:** a wrong verdict given at confidence >= tau = 100%.",
        "a verdict given in under 30 seconds at 50% confidence",
        "gaps over 10 minutes between activity",
        "4 sessions of 3 do/check pairs, about 45 minutes each, ending after 3 pairs or 60 minutes",
        "A practice session on 2 tasks not used in the study comes first.",
        "50% of checked answers are wrong; each session has at least 1 correct and at least 1 "
        "wrong; verifiers are not told the proportion.",
        '`stopping.rule`: `"confidence-at-least-tau"` -> `"any-verdict"` (declared 2027-02-22)',
        "`verdicts.per_answer`: `3` -> `1`",
        "480 human-minutes for the 48 answers (m x n x B)",
    ]
    for phrase in expected:
        assert phrase in body, phrase
    free_text = [
        spec.verifiers.description,
        spec.verifiers.eligibility,
        spec.verifiers.recruitment,
        spec.interface.description,
        spec.dataset.ground_truth,
        *spec.tools.allowed,
        *spec.tools.forbidden,
        *(c.when for c in spec.contingencies),
        *(c.then for c in spec.contingencies),
        *(d.reason for d in spec.deviations),
    ]
    folded = " ".join(body.split())
    for value in free_text:
        assert " ".join(value.split()) in folded, value


def test_prereg_of_the_paper_instantiation() -> None:
    """Crescitelli et al. Sec. 6: tau = 0.9 as the stopping confidence, B = 15, m planned."""
    body = _body(prereg(StudySpec.from_toml_text(example_text("code-instantiation"))))
    assert "**Verification budget (B):** 15 human-minutes per answer, fixed." in body
    assert "self-reported confidence >= tau = 0.9" in body
    assert "12, fixed by precision planning: at true failure probabilities 0.1 and 0.9" in body
    assert "confirmed when at least 10 of 12 verifiers miss it" in body
    assert "**Random seed:** not declared." in body


def test_prereg_point_estimate_is_marked_not_recommended() -> None:
    text = example_text("code-instantiation").replace(
        'rule = "three-state"', 'rule = "point-estimate"'
    )
    body = _body(prereg(StudySpec.from_toml_text(text)))
    assert "Point-estimate rule (not recommended by Crescitelli et al." in body
