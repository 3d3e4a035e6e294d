"""Verifier reliability (seed 004): gold sets, blind labels, verifier runs, error rates, cards.

::

    gold = GoldSet.sealed("bank-code", "python-functions", items)        # canary in every item
    adjudication = adjudicate(gold, read_labels(["a.csv", "b.csv", "adj.csv"]), level="task")
    run = run_verifier(HiddenTestVerifier(tasks, sandbox=box), gold.items)
    estimate = error_rates(gold, adjudication, run)                      # FA / FR per stratum
    card = build_card(gold=gold, adjudication=adjudication, run=run, estimate=estimate,
                      policy=load_policy("card-policy.toml"))
    write_card(card, "out/card")                                         # JSON, Markdown, HTML
    audit = exploit_audit(verifier, gold, ScriptedAttacker(), budget=100)  # -> build_card(...)
    audit = exploit_audit(verifier, gold, ModelAttacker(config, client=client), budget=30)

Why a package of its own (not ``vcost.analysis``): gold sets, labels, verifier runs and anchors
are stages with their own files and commands (``vcost card``, ``vcost drift``), not a read-only
analysis of episodes; and ``analysis/`` holds the human study's analysis. See
docs/reliability.md.
"""

from __future__ import annotations

from vcost.reliability._attacker import ModelAttacker
from vcost.reliability._card import (
    TIERS,
    CardPolicy,
    GraderCard,
    TierDecision,
    TierRule,
    apply_drift,
    build_card,
    decide_eligibility,
    expired,
    load_policy,
)
from vcost.reliability._downstream import (
    EscalationCheck,
    PassRate,
    escalation_guarantee,
    ppi_pass_rate,
    read_escalations,
)
from vcost.reliability._drift import AnchorSet, DriftCheck, check_drift, freeze_anchor, read_anchor
from vcost.reliability._exploit import (
    JUDGE_STRATEGIES,
    TEST_SUITE_STRATEGIES,
    AdaptiveAttacker,
    Attacker,
    Candidate,
    ExploitAttempt,
    ExploitAudit,
    Feedback,
    ScriptedAttacker,
    exploit_audit,
    worked_examples,
)
from vcost.reliability._exploit_file import read_exploit_audit
from vcost.reliability._families import (
    FamilyBias,
    FamilyComparison,
    family_bias,
    newcombe_difference,
)
from vcost.reliability._gold import (
    CANARY_PREFIX,
    EXPECTED_OF_STRATUM,
    GoldItem,
    GoldSet,
    Stratum,
    content_canary,
    export_gold,
    find_canary,
    gold_from_answers,
    gold_from_candidates,
    gold_from_references,
    make_canary,
    read_export_log,
    read_gold,
    write_gold,
)
from vcost.reliability._labels import (
    LEVELS,
    Adjudication,
    ItemLabel,
    LabelLevel,
    LabelRow,
    adjudicate,
    read_labels,
    write_labelling_sheet,
)
from vcost.reliability._rates import (
    Abstention,
    Calibration,
    RateEstimate,
    ReliabilityEstimate,
    error_rates,
)
from vcost.reliability._render import render_html, render_markdown, write_card
from vcost.reliability._verifiers import (
    HiddenTestVerifier,
    JudgeVerifier,
    Verdict,
    Verifier,
    VerifierIdentity,
    VerifierRun,
    read_verdicts,
    run_verifier,
)

__all__ = [
    "CANARY_PREFIX",
    "EXPECTED_OF_STRATUM",
    "JUDGE_STRATEGIES",
    "LEVELS",
    "TEST_SUITE_STRATEGIES",
    "TIERS",
    "Abstention",
    "AdaptiveAttacker",
    "Adjudication",
    "AnchorSet",
    "Attacker",
    "Calibration",
    "Candidate",
    "CardPolicy",
    "DriftCheck",
    "EscalationCheck",
    "ExploitAttempt",
    "ExploitAudit",
    "FamilyBias",
    "FamilyComparison",
    "Feedback",
    "GoldItem",
    "GoldSet",
    "GraderCard",
    "HiddenTestVerifier",
    "ItemLabel",
    "JudgeVerifier",
    "LabelLevel",
    "LabelRow",
    "ModelAttacker",
    "PassRate",
    "RateEstimate",
    "ReliabilityEstimate",
    "ScriptedAttacker",
    "Stratum",
    "TierDecision",
    "TierRule",
    "Verdict",
    "Verifier",
    "VerifierIdentity",
    "VerifierRun",
    "adjudicate",
    "apply_drift",
    "build_card",
    "check_drift",
    "content_canary",
    "decide_eligibility",
    "error_rates",
    "escalation_guarantee",
    "expired",
    "exploit_audit",
    "export_gold",
    "family_bias",
    "find_canary",
    "freeze_anchor",
    "gold_from_answers",
    "gold_from_candidates",
    "gold_from_references",
    "load_policy",
    "make_canary",
    "newcombe_difference",
    "ppi_pass_rate",
    "read_anchor",
    "read_escalations",
    "read_exploit_audit",
    "read_export_log",
    "read_gold",
    "read_labels",
    "read_verdicts",
    "render_html",
    "render_markdown",
    "run_verifier",
    "worked_examples",
    "write_card",
    "write_gold",
    "write_labelling_sheet",
]
