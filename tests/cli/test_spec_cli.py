"""`vcost spec`: check, lock, prereg, show and example, through click's test runner."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vcost.cli import cli
from vcost.spec import StudySpec, example_text


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def study(tmp_path: Path) -> Path:
    path = tmp_path / "study.toml"
    path.write_text(example_text("core-study"), encoding="utf-8")
    return path


def test_check_ok_prints_hash_and_summary(runner: CliRunner, study: Path) -> None:
    result = runner.invoke(cli, ["spec", "check", str(study)])
    assert result.exit_code == 0, result.output
    spec = StudySpec.load(study)
    assert result.stdout.startswith(f"OK {study}")
    assert spec.spec_hash in result.stdout
    assert "NOT LOCKED" in result.stdout
    assert "10 human-minutes per answer, fixed." in result.stdout
    assert "2 from the protocol, 0 since the lock" in result.stdout


def test_check_bad_spec_exits_2_with_file_line_field(runner: CliRunner, study: Path) -> None:
    text = study.read_text(encoding="utf-8").replace("tau = 1.0", "tau = 1.5")
    study.write_text(text, encoding="utf-8")
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.startswith("tau = 1.5"))
    result = runner.invoke(cli, ["spec", "check", str(study)])
    assert result.exit_code == 2
    assert f"error: {study}:{line}: field 'stopping.tau': 1.5 is out of range" in result.stderr
    assert "Traceback" not in result.output


def test_check_missing_file_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["spec", "check", str(tmp_path / "nope.toml")])
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


def test_lock_then_edit_then_deviation(runner: CliRunner, study: Path) -> None:
    result = runner.invoke(cli, ["spec", "lock", str(study)])
    assert result.exit_code == 0, result.output
    assert f"locked {study} -> {study.with_name('study.lock.json')}" in result.stdout
    lock_hash = StudySpec.load(study).spec_hash
    assert lock_hash in result.stdout

    again = runner.invoke(cli, ["spec", "lock", str(study)])
    assert again.exit_code == 2
    assert "already locked" in again.stderr

    text = study.read_text(encoding="utf-8").replace("threshold = 0.667", "threshold = 0.8")
    study.write_text(text, encoding="utf-8")
    result = runner.invoke(cli, ["spec", "check", str(study)])
    assert result.exit_code == 2
    assert "field 'agreement.threshold'" in result.stderr
    assert "changed from 0.667 to 0.8 without a declared deviation" in result.stderr

    text += (
        '\n[[deviations]]\nfield = "agreement.threshold"\nold = 0.667\nnew = 0.8\n'
        'reason = "registry reviewers asked for 0.8"\ndeclared_at = 2027-03-01\n'
    )
    study.write_text(text, encoding="utf-8")
    result = runner.invoke(cli, ["spec", "check", str(study)])
    assert result.exit_code == 0, result.output
    assert f"hash {lock_hash}" in result.stdout
    assert "2 from the protocol, 1 since the lock" in result.stdout

    forced = runner.invoke(cli, ["spec", "lock", "--force", str(study)])
    assert forced.exit_code == 2  # the lock deviation has nothing to deviate from any more
    assert "remove these entries" in forced.stderr


def test_prereg_prints_or_writes(runner: CliRunner, study: Path, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["spec", "prereg", str(study)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# Pre-registration: Measuring the Human Cost")
    assert "**NOT LOCKED.**" in result.stdout

    out = tmp_path / "prereg.md"
    runner.invoke(cli, ["spec", "lock", str(study)])
    result = runner.invoke(cli, ["spec", "prereg", str(study), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"wrote {out}"
    assert StudySpec.load(study).spec_hash in out.read_text(encoding="utf-8")


def test_show_json_is_the_hashed_canonical_json(runner: CliRunner, study: Path) -> None:
    result = runner.invoke(cli, ["spec", "show", "--json", str(study)])
    assert result.exit_code == 0, result.output
    text = result.stdout.rstrip("\n")
    assert hashlib.sha256(text.encode()).hexdigest() == StudySpec.load(study).spec_hash
    assert json.loads(text)["budget"]["value"] == 10.0


def test_show_lists_dotted_fields(runner: CliRunner, study: Path) -> None:
    result = runner.invoke(cli, ["spec", "show", str(study)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "budget.value = 10.0" in lines
    assert 'stopping.rule = "any-verdict"' in lines
    assert "deviations[0] = protocol: stopping.rule (2027-02-22)" in lines


@pytest.mark.parametrize("name", ["code-instantiation", "core-study"])
def test_example_prints_a_valid_spec(runner: CliRunner, name: str) -> None:
    result = runner.invoke(cli, ["spec", "example", name])
    assert result.exit_code == 0, result.output
    assert result.stdout == example_text(name)
    assert StudySpec.from_toml_text(result.stdout).study.name == name


def test_example_unknown_name(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["spec", "example", "nope"])
    assert result.exit_code == 2
    assert "'code-instantiation'" in result.stderr


def test_help_texts(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["spec", "--help"])
    assert result.exit_code == 0
    for command in ("check", "lock", "prereg", "show", "example"):
        assert command in result.stdout
    lock_help = runner.invoke(cli, ["spec", "lock", "--help"]).stdout
    assert "--force" in lock_help
    assert "[[deviations]]" in lock_help


def test_a_spec_saved_with_a_byte_order_mark_is_read(
    runner: CliRunner, study: Path, tmp_path: Path
) -> None:
    """Notepad saves UTF-8 with a byte-order mark: the spec reads as without it (same hash),
    and prereg -o writes into a folder that does not exist yet."""
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + study.read_bytes())
    result = runner.invoke(cli, ["spec", "check", str(bom)])
    assert result.exit_code == 0, result.output
    assert StudySpec.load(study).spec_hash in result.stdout
    out = tmp_path / "new" / "prereg.md"
    result = runner.invoke(cli, ["spec", "prereg", str(bom), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").startswith("# Pre-registration")
