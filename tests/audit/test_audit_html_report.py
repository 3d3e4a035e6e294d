"""`vcost audit LOG --report DIR`: the audit as a report a reader accepts (issue 16, "the
grader card and the audit report follow the same rules").

A synthetic log (three models, two benchmarks, one with subjects, long model names, a true
``synthetic`` column) goes through the CLI; the HTML is opened in Debian's headless Chromium
(tests/browser.py) at 1,280 and 390 px and in print layout, and printed to an A4 PDF, with
the checks of tests/browser.py that tests/analysis/test_report_browser.py runs on the study
report.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from browser import assert_no_overflow, contents_links, offline_only, print_a4
from vcost.audit import AuditSettings, audit, audit_label, read_results
from vcost.audit._plots import CAPTIONS
from vcost.cli import cli

MODELS = {
    "acme-research/frontier-model-2026-11-experimental-long-context-instruct": 0.93,
    "small-open-model": 0.90,
    "baseline": 0.70,
}


def _write_log(path: Path, *, marker: str | None = "true", n: int = 1500, seed: int = 3) -> Path:
    """A per-item log drawn at random: accuracy per model as above, confidences that track
    correctness, 12 subjects on one benchmark. ``marker`` fills the ``synthetic`` column."""
    rng = np.random.default_rng(seed)
    header = ["model", "benchmark", "item", "subject", "correct", "confidence"]
    if marker is not None:
        header.append("synthetic")
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(header)
        for bench, size in (("reasoning-bench", n), ("tiny-bench", 120)):
            for model, acc in MODELS.items():
                for i in range(size):
                    correct = int(rng.random() < acc)
                    conf = float(np.clip(acc + rng.normal(0, 0.08), 0.01, 0.99))
                    subject = f"subject-{i % 12}" if bench == "reasoning-bench" else ""
                    row = [model, bench, f"q{i}", subject, correct, f"{conf:.3f}"]
                    out.writerow(row + ([marker] if marker is not None else []))
    return path


def _run(args: list[str]) -> Any:
    result = CliRunner().invoke(cli, ["audit", *args])
    return result


def test_cli_report_writes_html_markdown_json_with_the_logs_synthetic_marker(
    tmp_path: Path,
) -> None:
    log = _write_log(tmp_path / "log.csv")
    out = tmp_path / "report"
    result = _run([str(log), "--report", str(out), "--reps", "200", "--plots", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for name in ("report.html", "report.md", "audit.json"):
        assert (out / name).exists(), name
        assert f"wrote {out / name}" in result.output
    page = (out / "report.html").read_text()
    data = json.loads((out / "audit.json").read_text())
    assert data["label"].startswith("SYNTHETIC DATA")
    assert 'class="banner" data-label' in page
    assert data["synthetic"] == [str(log)]
    # Both plots inline, labelled, each with its caption.
    assert page.count("<figure") == 2
    for name, caption in CAPTIONS.items():
        assert f'data-plot="{name}"' in page
        assert caption.replace("'", "&#x27;") in page
    assert "SYNTHETIC DATA" in (tmp_path / "floor_vs_n.svg").read_text()
    # The summary states each benchmark's verdict counts as in the JSON, counts with separators.
    md = (out / "report.md").read_text()
    summary = md.split("## Summary", 1)[1].split("\n## ", 1)[0]
    for bench in data["benchmarks"]:
        c = bench["verdict_counts"]
        assert (
            f"{c['verifiable']} differ by more than twice the verification floor (verifiable), "
            f"{c['marginal']} by one to two floors (marginal) and {c['noise']} by less than one"
        ) in summary
    assert "reasoning-bench (1,500 items every model answered, 3 models)" in summary
    assert "of 200 bootstrap resamples" in summary
    for section in ("## Methods", "## Limitations", "## Benchmark reasoning-bench"):
        assert section in md
    assert "subject-11" in md  # the subjects table
    # Plain-language columns, no code names.
    assert "verification floor [95% interval]" in md
    assert "flip_rate" not in md
    assert "noise_floor" not in md


def test_label_comes_from_the_flag_the_label_option_or_nothing(tmp_path: Path) -> None:
    log = _write_log(tmp_path / "plain.csv", marker=None, n=200)
    report = audit(read_results(log), AuditSettings(reps=50))
    assert report.synthetic == ()
    assert audit_label(report) is None
    assert audit_label(report, synthetic=True).startswith("SYNTHETIC DATA")  # type: ignore[union-attr]
    assert audit_label(report, label="PILOT RUN", synthetic=True) == "PILOT RUN"

    out = tmp_path / "plain"
    result = _run([str(log), "--report", str(out), "--reps", "50"])
    assert result.exit_code == 0, result.output
    assert "data-label" not in (out / "report.html").read_text()
    assert "label" not in json.loads((out / "audit.json").read_text())

    out = tmp_path / "flagged"
    result = _run([str(log), "--report", str(out), "--reps", "50", "--synthetic"])
    assert result.exit_code == 0, result.output
    assert "SYNTHETIC DATA" in (out / "report.html").read_text()


def test_a_bad_synthetic_marker_names_file_line_and_field(tmp_path: Path) -> None:
    log = _write_log(tmp_path / "bad.csv", marker="maybe", n=20)
    result = _run([str(log), "--report", str(tmp_path / "out")])
    assert result.exit_code != 0
    assert "bad.csv:2" in result.output
    assert "synthetic" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_gap_interval_half_width_matches_the_paired_normal_approximation(tmp_path: Path) -> None:
    """The bootstrap interval of a pair's accuracy gap against an independent value: for n
    items the paired difference's normal-approximation half-width is z sd(a_i - b_i) / sqrt(n),
    which is exactly delta_acc (``noise_floor``, computed without resampling). With 2,000
    resamples of 1,500 items the percentile interval's half-width agrees within 10%."""
    log = _write_log(tmp_path / "log.csv", n=1500)
    report = audit(read_results(log), AuditSettings(reps=2000, seed=1))
    bench = next(b for b in report.benchmarks if b.benchmark == "reasoning-bench")
    for pair in bench.pairs:
        gi = pair.gap_interval
        assert gi is not None
        assert gi.value == pytest.approx(pair.accuracy.gap)
        assert gi.lower <= gi.value <= gi.upper
        half = (gi.upper - gi.lower) / 2
        assert half == pytest.approx(pair.noise_floor, rel=0.10), pair


def test_audit_report_in_chromium_no_overflow_captions_synthetic_a4(
    tmp_path: Path, chromium: Any, artifacts: Path
) -> None:
    """No horizontal overflow at 1,280 or 390 px nor in print layout at A4 width (794 CSS px);
    no network request; the contents list links to every section; every plot has a caption
    under it and carries the SYNTHETIC label; the page prints to a multi-page A4 PDF."""
    log = _write_log(tmp_path / "log.csv")
    out = tmp_path / "report"
    result = _run([str(log), "--report", str(out), "--reps", "200"])
    assert result.exit_code == 0, result.output
    url = (out / "report.html").resolve().as_uri()
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        requests = offline_only(context, url)
        page = context.new_page()
        assert_no_overflow(page, url, artifacts / "audit-report", full_page=True)
        title = page.title()
        links = contents_links(page)
        figures = page.eval_on_selector_all(
            "figure",
            """fs => fs.map(f => {
                const svg = f.querySelector('svg');
                const box = svg.getBoundingClientRect();
                return {last: f.lastElementChild.tagName, caption: f.innerText.length,
                        width: box.width, marks: svg.querySelectorAll('path, use').length,
                        synthetic: svg.textContent.includes('SYNTHETIC')};
            })""",
        )
        banner = page.inner_text(".banner")
        pages = print_a4(page, artifacts / "audit-report-a4.pdf")
    finally:
        context.close()
    assert requests
    assert set(requests) == {url}, f"network requests: {requests}"
    assert title == "Audit of an evaluation log"
    assert banner.startswith("SYNTHETIC DATA")
    assert {"#summary", "#plots", "#methods", "#limitations", "#benchmark-reasoning-bench",
            "#benchmark-tiny-bench"} <= set(links)  # fmt: skip
    assert len(figures) == 2
    for fig in figures:
        assert fig["last"] == "FIGCAPTION"
        assert fig["caption"] > 100
        assert fig["width"] > 100
        assert fig["marks"] > 5
        assert fig["synthetic"]
    assert pages >= 3
