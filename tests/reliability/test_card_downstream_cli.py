"""`vcost card` with the downstream numbers: the PPI pass rate from unlabelled verdicts and the
escalation-guarantee check, written into the card's JSON, Markdown and HTML from real files;
bad files are one clear message naming the file, line and field."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from _reliability_support import agreeing_labels, toy_gold
from click.testing import CliRunner

from vcost.cli import cli
from vcost.errors import InputError
from vcost.reliability import (
    Verdict,
    VerifierIdentity,
    VerifierRun,
    adjudicate,
    ppi_pass_rate,
    read_escalations,
    read_verdicts,
    write_gold,
)
from vcost.stats import ppi_mean

ID = VerifierIdentity("selective-judge", "model-judge", "3")


def _files(tmp_path: Path) -> dict[str, Path]:
    gold = toy_gold()  # 16 items: t*/0, t*/1 successes; t*/2, t*/3 failures
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "item_id,labeller,role,execution_success,task_success\n"
        + "".join(f"{r.item_id},{r.labeller},{r.role},{r.execution},{r.task}\n"
                  for r in agreeing_labels(gold))
    )  # fmt: skip
    # right on every item except t0/2 and t1/2 (accepted failures); abstains on t*/3
    verdicts = []
    for item in gold.items:
        if item.item_id.endswith("/3"):
            verdicts.append(Verdict(item.item_id, "abstain", None, "escalated"))
        elif item.expected == "success" or item.item_id in ("t0/2", "t1/2"):
            verdicts.append(Verdict(item.item_id, "accept", 0.9))
        else:
            verdicts.append(Verdict(item.item_id, "reject", 0.9))
    run = VerifierRun(ID, tuple(verdicts), run_at="2026-01-01T00:00:00+00:00")
    production = VerifierRun(
        ID,
        tuple(
            Verdict(f"prod-{n}", "accept" if n % 5 else "reject" if n % 2 else "abstain")
            for n in range(200)
        ),
    )
    return {
        "gold": write_gold(gold, tmp_path / "gold.jsonl"),
        "labels": labels,
        "run": run.write(tmp_path / "run.jsonl"),
        "production": production.write(tmp_path / "production.jsonl"),
    }


def _card(files: dict[str, Path], policy: Path, out: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli,
        ["card", "--gold", str(files["gold"]), "--labels", str(files["labels"]),
         "--run", str(files["run"]), "--policy", str(policy), "--out", str(out), *extra],
    )  # fmt: skip
    return result.exit_code, result.output


def test_ppi_and_escalation_on_the_card_from_files(tmp_path: Path, policy_path: Path) -> None:
    """PPI (Angelopoulos et al. 2023), lambda = 1: theta = mean f(unlabelled) + mean(Y - f) on
    the gold items, by hand here. Escalation (Jung et al. 2024): the listed items escalated, the
    rest agree 10 of 12 times with the gold labels; claim 0.99 refuted by the exact binomial
    P(X <= 10 | 12, 0.99) = 1 - 12 (.99^11)(.01) - .99^12 = 0.0062 (summed here from the pmf)."""
    files = _files(tmp_path)
    escalations = tmp_path / "escalated.jsonl"
    escalations.write_text(
        "".join(json.dumps({"item_id": f"t{t}/3", "escalated": True}) + "\n" for t in range(4))
        + json.dumps({"item_id": "t0/0", "escalated": False})
        + "\n"
    )
    code, output = _card(
        files, policy_path, tmp_path / "card",
        "--ppi-verdicts", str(files["production"]),
        "--claimed-agreement", "0.99", "--escalation", str(escalations),
    )  # fmt: skip
    assert code == 0, output
    card = json.loads((tmp_path / "card" / "card.json").read_text())

    down = card["downstream"]
    # gold items: 12 judged + 4 abstentions (counted as 0, the default); labels y
    gold = toy_gold()
    run = VerifierRun.read(files["run"])
    f = [1.0 if v.verdict == "accept" else 0.0 for v in run.verdicts]
    y = [1.0 if i.expected == "success" else 0.0 for i in gold.items]
    u = [1.0 if n % 5 else 0.0 for n in range(200)]
    theta = sum(u) / 200 + sum(a - b for a, b in zip(y, f, strict=True)) / 16
    assert down["estimate"] == pytest.approx(theta)
    assert theta == pytest.approx(0.8 - 2 / 16)
    assert (down["labelled"], down["unlabelled"]) == (16, 200)
    assert down["verifier_rate"] == pytest.approx(0.8)
    same = ppi_mean(y, f, u, alpha=0.05)
    assert down["interval"] == pytest.approx([same.lower, same.upper])
    assert down["method"] == same.method

    esc = card["escalation"]
    assert (esc["items"], esc["escalated"], esc["judged"], esc["agreed"]) == (16, 4, 12, 10)
    p = sum(math.comb(12, k) * 0.99**k * 0.01 ** (12 - k) for k in range(11))
    assert p == pytest.approx(0.0062, abs=1e-4)
    assert esc["p_value"] == pytest.approx(p)
    assert esc["status"] == "refuted"
    assert any("refuted" in n for n in card["notes"])

    markdown = (tmp_path / "card" / "card.md").read_text()
    assert "## Downstream pass rate (prediction-powered inference)" in markdown
    assert f"| estimate | {100 * theta:.1f}%" in markdown
    assert "| gold-labelled / verifier-only outputs | 16 / 200 |" in markdown
    assert "## Escalation guarantee: refuted" in markdown
    assert "| agreement on non-escalated items | 10/12 = 83.3%" in markdown
    html = (tmp_path / "card" / "card.html").read_text()
    assert 'id="downstream-pass-rate"' in html
    assert 'id="escalation-guarantee"' in html
    assert "Not computed." not in html
    assert "from 200 verdicts and 16 gold labels (raw verifier rate 80.0%)" in output
    assert "escalation guarantee (claimed 0.99): refuted" in output


def test_defaults_tuned_lambda_and_abstentions_counted(tmp_path: Path, policy_path: Path) -> None:
    files = _files(tmp_path)
    # no --escalation: the judge's abstentions are its escalations (the same 4 items)
    code, output = _card(
        files, policy_path, tmp_path / "card", "--ppi-verdicts", str(files["production"]),
        "--ppi-lambda", "tune", "--ppi-abstain", "0.5", "--claimed-agreement", "0.5",
    )  # fmt: skip
    assert code == 0, output
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    adjudication = adjudicate(toy_gold(), agreeing_labels(toy_gold()))
    production = read_verdicts(files["production"])
    expected = ppi_pass_rate(
        adjudication, VerifierRun.read(files["run"]), production, abstain=0.5, lam="tune"
    )
    assert card["downstream"]["estimate"] == pytest.approx(expected.ppi.estimate)
    assert card["downstream"]["abstain_as"] == 0.5
    assert card["downstream"]["lambda"] == pytest.approx(expected.ppi.lam)
    assert card["escalation"]["escalated"] == 4
    assert card["escalation"]["status"] == "supported"  # 10/12 against a claim of 0.5
    # without the options the card says so
    code, _ = _card(files, policy_path, tmp_path / "plain")
    assert code == 0
    plain = json.loads((tmp_path / "plain" / "card.json").read_text())
    assert plain["downstream"] is None
    assert plain["escalation"] is None
    assert "Not computed." in (tmp_path / "plain" / "card.md").read_text()


def _error(files: dict[str, Path], policy: Path, tmp_path: Path, *extra: str) -> str:
    code, output = _card(files, policy, tmp_path / "bad-card", *extra)
    assert code == 2, output
    assert "Traceback" not in output
    return output


def test_bad_files_are_clear_messages(tmp_path: Path, policy_path: Path) -> None:
    files = _files(tmp_path)
    lines = files["production"].read_text().splitlines()

    bad_value = tmp_path / "bad-value.jsonl"
    bad_value.write_text("\n".join([*lines[:5], lines[5].replace('"accept"', '"pass"')]) + "\n")
    out = _error(files, policy_path, tmp_path, "--ppi-verdicts", str(bad_value))
    assert "bad-value.jsonl:6" in out
    assert "field 'verdict'" in out

    other = tmp_path / "other-verifier.jsonl"
    header = json.loads(lines[0])
    header["verifier"]["version"] = "4"
    other.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    out = _error(files, policy_path, tmp_path, "--ppi-verdicts", str(other))
    assert "other-verifier.jsonl:1" in out
    assert "field 'verifier.version'" in out

    overlap = tmp_path / "overlap.jsonl"
    overlap.write_text(
        "\n".join([*lines[:3], json.dumps({"item_id": "t2/1", "verdict": "accept"})]) + "\n"
    )
    out = _error(files, policy_path, tmp_path, "--ppi-verdicts", str(overlap))
    assert "overlap.jsonl:4" in out
    assert "is a gold item" in out

    twice = tmp_path / "twice.jsonl"
    twice.write_text("\n".join([*lines[:3], lines[2]]) + "\n")
    out = _error(files, policy_path, tmp_path, "--ppi-verdicts", str(twice))
    assert "twice.jsonl:4" in out
    assert "line 3 already" in out

    not_json = tmp_path / "not-json.jsonl"
    not_json.write_text(lines[0] + "\n{oops\n")
    out = _error(files, policy_path, tmp_path, "--ppi-verdicts", str(not_json))
    assert "not-json.jsonl:2" in out

    unknown = tmp_path / "unknown-item.csv"
    unknown.write_text("item_id,escalated\nt0/3,yes\nnope/9,yes\n")
    out = _error(
        files, policy_path, tmp_path, "--claimed-agreement", "0.9", "--escalation", str(unknown)
    )
    assert "unknown-item.csv:3" in out
    assert "field 'item_id'" in out
    assert "no verdict for item 'nope/9'" in out

    flag = tmp_path / "flag.csv"
    flag.write_text("item_id,escalated\nt0/3,perhaps\n")
    out = _error(
        files, policy_path, tmp_path, "--claimed-agreement", "0.9", "--escalation", str(flag)
    )
    assert "flag.csv:2" in out
    assert "field 'escalated'" in out

    # the judge abstained on t*/3 but the file says only t0/3 was escalated
    partial = tmp_path / "partial.jsonl"
    partial.write_text(json.dumps({"item_id": "t0/3"}) + "\n")
    out = _error(
        files, policy_path, tmp_path, "--claimed-agreement", "0.9", "--escalation", str(partial)
    )
    assert "partial.jsonl" in out
    assert "not marked escalated" in out

    out = _error(files, policy_path, tmp_path, "--escalation", str(partial))
    assert "--claimed-agreement" in out
    out = _error(files, policy_path, tmp_path, "--claimed-agreement", "1.5")
    assert "claimed agreement must be in (0, 1)" in out
    out = _error(files, policy_path, tmp_path, "--ppi-verdicts", str(files["production"]),
                 "--ppi-lambda", "often")  # fmt: skip
    assert "--ppi-lambda" in out


def test_the_readers_on_their_own(tmp_path: Path) -> None:
    headerless = tmp_path / "verdicts.jsonl"
    headerless.write_text(
        json.dumps({"item_id": "a", "verdict": "accept", "confidence": 0.7})
        + "\n\n"
        + json.dumps({"item_id": "b", "verdict": "abstain"})
        + "\n"
    )
    assert read_verdicts(headerless) == (Verdict("a", "accept", 0.7), Verdict("b", "abstain"))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(InputError, match="empty verdicts file"):
        read_verdicts(empty)
    escalations = tmp_path / "esc.jsonl"
    escalations.write_text('{"item_id": "a"}\n{"item_id": "b", "escalated": false}\n')
    assert read_escalations(escalations) == {"a": True, "b": False}
    escalations.write_text('{"item_id": "a"}\n{"item_id": "a"}\n')
    with pytest.raises(InputError, match="listed twice") as caught:
        read_escalations(escalations)
    assert caught.value.line == 2
    bad_csv = tmp_path / "esc.csv"
    bad_csv.write_text("id,escalated\na,yes\n")
    with pytest.raises(InputError, match="item_id column"):
        read_escalations(bad_csv)
