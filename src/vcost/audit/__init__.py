"""Audit an evaluation log: which differences between models are above the verification floor.

Reads per-item results (CSV/JSONL, lm-evaluation-harness ``samples_*.jsonl``, Inspect AI logs)
and audits every benchmark in them against the limits of Wang (2026), "The Verification Tax"
(:mod:`vcost.stats.audit`, :mod:`vcost.stats.calibration`)::

    from vcost.audit import AuditSettings, audit, read_results, render_audit, write_plots

    results = read_results("samples/")                 # or a .csv, .jsonl, .json, .eval file
    report = audit(results, AuditSettings(reps=1000, seed=0))
    report.benchmarks[0].pairs[0].accuracy.verdict     # Verdict.NOISE / MARGINAL / VERIFIABLE
    report.to_dict()                                   # JSON for machines
    write_plots(report, "plots/")                      # floor vs n, detection power vs m * eps
    render_audit_report(report, "report/", label=audit_label(report))  # report.html, .md, .json

docs/audit.md explains every number, the formats and the decisions the paper leaves open.
"""

from vcost.audit._audit import (
    AuditReport,
    AuditSettings,
    BenchmarkAudit,
    Estimate,
    ModelAudit,
    PairAudit,
    SkippedBenchmark,
    SubjectAudit,
    audit,
    resample_weights,
)
from vcost.audit._plots import audit_plots, write_plots
from vcost.audit._read import COLUMNS, LOG_FORMATS, EvalResults, LogFormat, read_results
from vcost.audit._render import render_audit, render_plan
from vcost.audit._report import audit_html, audit_label, audit_markdown, render_audit_report

__all__ = [
    "COLUMNS",
    "LOG_FORMATS",
    "AuditReport",
    "AuditSettings",
    "BenchmarkAudit",
    "Estimate",
    "EvalResults",
    "LogFormat",
    "ModelAudit",
    "PairAudit",
    "SkippedBenchmark",
    "SubjectAudit",
    "audit",
    "audit_html",
    "audit_label",
    "audit_markdown",
    "audit_plots",
    "read_results",
    "render_audit",
    "render_audit_report",
    "render_plan",
    "resample_weights",
    "write_plots",
]
