"""Render a grader card as Markdown and as one self-contained HTML page (no external assets)."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vcost.reliability._card import GraderCard

__all__ = ["render_html", "render_markdown", "write_card"]


def _pct(x: Any) -> str:
    return "n/a" if x is None else f"{100 * float(x):.1f}%"


def _interval(pair: Any) -> str:
    return "n/a" if not pair else f"[{_pct(pair[0])}, {_pct(pair[1])}]"


def _num(x: Any, digits: int = 3) -> str:
    return "n/a" if x is None else f"{float(x):.{digits}f}"


def _rate_rows(card: GraderCard) -> list[list[str]]:
    rows = []
    for r in card.estimate["rates"]:
        zero = ""
        if r["rule_of_three"] is not None:
            zero = (
                f"0 errors: <= {_pct(r['zero_event_exact'])} "
                f"(rule of three {_pct(r['rule_of_three'])});"
                f" {r['items_for_target']} items for <= {_pct(r['target_bound'])}"
                f" (+{r['more_items_for_target']})"
            )
        rows.append(
            [
                r["kind"],
                r["group"],
                f"{r['errors']}/{r['n']}",
                _pct(r["rate"]),
                _interval(r["clopper_pearson"]),
                _interval(r["korn_graubard"]),
                _interval(r["cluster_bootstrap"]),
                f"{r['clusters']} / {_num(r['design_effect'], 2)}",
                zero,
            ]
        )
    return rows


_RATE_HEAD = [
    "rate",
    "group",
    "errors/n",
    "estimate",
    "Clopper-Pearson (naive)",
    "Korn-Graubard (clusters)",
    "cluster bootstrap",
    "clusters / deff",
    "zero errors",
]


def _sections(card: GraderCard) -> list[tuple[str, list[str], list[list[str]], list[str]]]:
    """(title, table head, table rows, paragraphs) per section: shared by both renderers."""
    v = card.verifier
    est = card.estimate
    ab = est["abstention"]
    cal = est["calibration"]
    lab = card.labelling
    gold = card.gold
    out: list[tuple[str, list[str], list[list[str]], list[str]]] = []
    out.append(
        (
            "Verifier",
            ["field", "value"],
            [
                ["name", v.name],
                ["kind", v.kind],
                ["version", v.version],
                ["model", v.model or "-"],
                ["prompt hash", v.prompt_hash or "-"],
                ["decoding", v.decoding or "-"],
                ["parser", v.parser or "-"],
                ["synthetic", "YES (not a real model)" if v.synthetic else "no"],
                ["task class", card.task_class],
                ["run at", card.run_at],
                ["issued", card.issued_at],
                ["expires", card.expires_at],
            ],
            list(card.notes),
        )
    )
    out.append(
        (
            "Eligibility",
            ["tier", "granted", "why not"],
            [
                [
                    d.tier,
                    "yes" if d.granted else "no",
                    "; ".join(d.reasons) if not d.granted else "",
                ]
                for d in card.eligibility
            ],
            [
                f"Thresholds from {card.policy.get('source') or 'the policy'} (sha256 "
                f"{str(card.policy.get('sha256'))[:16]}), declared {card.policy['declared_at']}.",
            ],
        )
    )
    out.append(
        (
            "Gold set datasheet",
            ["field", "value"],
            [
                ["name", str(gold["name"])],
                [
                    "items / tasks / clusters",
                    f"{gold['items']} / {gold['tasks']} / {gold['clusters']}",
                ],
                ["by stratum", ", ".join(f"{k}: {n}" for k, n in gold["by_stratum"].items())],
                ["by source", ", ".join(f"{k}: {n}" for k, n in gold["by_source"].items())],
                ["canary", str(gold["canary"])],
                ["digest", str(gold["digest"])[:16]],
                ["exports logged", str(gold["exports"])],
            ],
            [str(n) for n in gold.get("notes", [])],
        )
    )
    out.append(
        (
            f"Labels (level: {lab['level']})",
            ["field", "value"],
            [
                ["status counts", ", ".join(f"{k}: {n}" for k, n in sorted(lab["counts"].items()))],
                [
                    "Cohen's kappa (first two labellers)",
                    f"{_num(lab['kappa'])} on {lab['kappa_items']} items",
                ],
                ["percent agreement", _pct(lab["percent_agreement"])],
            ]
            + ([["label source", str(lab["label_source"])]] if "label_source" in lab else [])
            + [
                [
                    f"labeller: {who.get('name', '?')}",
                    str(who.get("what", who.get("role", who.get("kind", "")))),
                ]
                for who in lab.get("labellers", [])
            ]
            + (
                [["labels for items not in the gold set", ", ".join(lab["unknown_items"])]]
                if lab.get("unknown_items")
                else []
            )
            + [
                [f"set aside: {s['item_id']}", f"{s['status']}: {s['reason']}"]
                for s in lab["set_aside"]
            ],
            [],
        )
    )
    out.append(
        (
            "Error rates",
            _RATE_HEAD,
            _rate_rows(card),
            [
                f"Intervals at {_pct(est['level_confidence'])}; Korn-Graubard is the "
                "Clopper-Pearson interval on the design-effect sample (items sharing a task "
                "or source); the thresholds read its upper bound. Abstentions are in no "
                "rate (see coverage).",
            ],
        )
    )
    out.append(
        (
            "Abstention and accuracy when judging",
            ["field", "value"],
            [
                ["labelled items", str(ab["labelled"])],
                [
                    "judged / abstained / no verdict",
                    f"{ab['judged']} / {ab['abstained']} / {ab['missing']}",
                ],
                ["coverage", f"{_pct(ab['coverage'])} {_interval(ab['coverage_interval'])}"],
                [
                    "accuracy when judging",
                    f"{_pct(ab['accuracy_when_judging'])} {_interval(ab['accuracy_interval'])}",
                ],
            ],
            [],
        )
    )
    out.append(
        (
            "Calibration of the verifier's confidence",
            ["bin", "count", "mean confidence", "accuracy"],
            [
                [
                    f"({_num(b['lower'], 1)}, {_num(b['upper'], 1)}]",
                    str(b["count"]),
                    _num(b["mean_confidence"]),
                    _num(b["accuracy"]),
                ]
                for b in cal["reliability_diagram"]
                if b["count"]
            ],
            [
                cal["reason"]
                or f"n = {cal['n']}; ECE {_num(cal['ece'])}; debiased calibration error "
                f"{_num(cal['debiased_calibration_error'])}; Brier {_num(cal['brier'])}."
            ],
        )
    )
    out.append(
        (
            "Bias: perturbation flip rates",
            ["perturbation", "checker", "flips/pairs", "rate", "interval", "noise floor"],
            [
                [
                    str(f.get("perturbation")),
                    str(f.get("checker")),
                    f"{f.get('flips')}/{f.get('pairs')}",
                    _pct(f.get("rate")),
                    _interval([f.get("lower"), f.get("upper")] if "lower" in f else None),
                    _pct(f.get("baseline_rate")),
                ]
                for f in card.flip_rates
            ],
            [] if card.flip_rates else ["No perturbed runs (not applicable, or not yet run)."],
        )
    )
    out.append(_audit_section(card.exploit_audit))
    down = card.downstream
    out.append(
        (
            "Downstream pass rate (prediction-powered inference)",
            ["field", "value"],
            []
            if not down
            else [
                ["estimate", f"{_pct(down['estimate'])} {_interval(down['clipped'])}"],
                ["method", f"{down['method']} (lambda {_num(down['lambda'])})"],
                ["raw verifier pass rate", _pct(down["verifier_rate"])],
                ["gold labels alone", _interval(down["gold_only"])],
                [
                    "gold-labelled / verifier-only outputs",
                    f"{down['labelled']} / {down['unlabelled']}",
                ],
            ],
            ["Not computed."]
            if not down
            else [
                f"Interval at {_pct(down['level'])}; abstentions counted as {down['abstain_as']:g}."
            ],
        )
    )
    esc = card.escalation
    out.append(
        (
            f"Escalation guarantee: {esc['status']}" if esc else "Escalation guarantee",
            ["field", "value"],
            []
            if not esc
            else [
                ["claimed agreement", _pct(esc["claimed"])],
                [
                    "agreement on non-escalated items",
                    f"{esc['agreed']}/{esc['judged']} = {_pct(esc['agreement'])} "
                    f"{_interval(esc['interval'])}",
                ],
                ["escalated", f"{esc['escalated']} of {esc['items']}"],
                ["one-sided lower bound", _pct(esc["lower_bound"])],
                ["exact binomial p (H0: agreement >= claim)", _num(esc["p_value"], 4)],
            ],
            ["Not applicable or not checked."] if not esc else list(esc["reasons"]),
        )
    )
    out.append(_family_section(card.family_bias))
    drift = card.drift
    out.append(
        (
            f"Drift: {drift.get('status')}",
            ["field", "value"],
            [[str(k), json.dumps(v)] for k, v in drift.items() if k not in ("status",)],
            [],
        )
    )
    return out


def _family_section(
    bias: Mapping[str, Any] | None,
) -> tuple[str, list[str], list[list[str]], list[str]]:
    """Same-family vs cross-family judgments: each rate, the difference and its intervals."""
    title = "Self-preference: same-family vs cross-family judge"
    if not bias:
        return (title, [], [], ["Not measured (no verdicts tagged with model families)."])
    head = [
        "rate",
        "group",
        "same family",
        "cross family",
        "difference",
        "Newcombe (independent)",
        "cluster bootstrap",
        "status",
    ]
    rows = []
    for c in bias["comparisons"]:
        same, cross = c["same"], c["cross"]
        rows.append(
            [
                c["kind"],
                c["group"],
                f"{same['errors']}/{same['n']} = {_pct(same['rate'])} "
                f"{_interval(same['clopper_pearson'])}",
                f"{cross['errors']}/{cross['n']} = {_pct(cross['rate'])} "
                f"{_interval(cross['clopper_pearson'])}",
                "n/a" if c["difference"] is None else f"{100 * c['difference']:+.1f} pts",
                _interval(c["newcombe"]),
                _interval(c["cluster_bootstrap"]),
                c["status"],
            ]
        )
    judges = ", ".join(bias["judge_families"]) or "-"
    answers = ", ".join(bias["answer_families"]) or "-"
    abstained = bias.get("abstained") or {}
    paragraph = (
        f"Judge families: {judges}; answer families: {answers}; {bias['pairs']} judged "
        f"(judge, item) pairs, abstentions same/cross {abstained.get('same', 0)}/"
        f"{abstained.get('cross', 0)}; left out: {bias['untagged']} untagged, "
        f"{bias['unlabelled']} without a gold label. Intervals at {_pct(bias['level'])}; a "
        "difference counts only when both intervals exclude 0."
    )
    verdict = (
        "The judge favours its own family's outputs."
        if bias["self_preference"]
        else "No self-preference shown."
    )
    return (title, head, rows, [verdict, paragraph])


def _audit_section(
    audit: Mapping[str, Any] | None,
) -> tuple[str, list[str], list[list[str]], list[str]]:
    """The exploit audit: a summary, per strategy, representative exploits, on-policy."""
    title = "Exploit audit"
    if not audit:
        return (title, [], [], ["Not run: training reward is not granted without a passed audit."])
    if audit.get("audit") != "vcost exploit audit":  # a team's own audit file: show its fields
        return (title, ["field", "value"], [[str(k), json.dumps(v)] for k, v in audit.items()], [])
    rows = [["passed", "yes" if audit["passed"] else "no"]]
    named = audit.get("verifier")
    if isinstance(named, Mapping):
        rows.append(
            [
                "verifier audited",
                f"{named.get('name')} ({named.get('kind')} {named.get('version')})",
            ]
        )
    gold = audit.get("gold")
    if isinstance(gold, Mapping) and gold.get("digest"):
        rows.append(
            ["gold set", f"{gold.get('name') or '(unnamed)'}, digest {gold['digest'][:12]}"]
        )
    rows += [
        ["attacker", str(audit["attacker"])],
        ["budget spent / budget", f"{audit['spent']} / {audit['budget']}"],
        [
            "successes / attempts",
            f"{audit['successes']} / {audit['spent']} ({_pct(audit['success_rate'])} "
            f"{_interval(audit['interval'])})",
        ],
        ["allowed success rate", _pct(audit["max_success_rate"])],
        ["first success at budget", str(audit["first_success_at"] or "none")],
    ]
    if audit.get("budget_unit"):
        at = 1 + next(n for n, r in enumerate(rows) if r[0] == "budget spent / budget")
        rows.insert(at, ["budget unit", str(audit["budget_unit"])])
    if audit.get("rounds"):
        rows.append(["rounds per gold failure (adaptive attacker)", str(audit["rounds"])])
    usage = audit.get("attacker_usage")
    if usage:
        cost = usage.get("cost_usd")
        rows.append(
            [
                "attacker's own spending",
                f"{usage.get('model_calls')} model calls ({usage.get('replayed_from_cassette')} "
                f"replayed), {usage.get('tokens')} tokens "
                f"({usage.get('input_tokens')} in, {usage.get('output_tokens')} out)"
                + ("" if cost is None else f", ${cost:.4f}"),
            ]
        )
    if audit.get("accepted_label_unknown"):
        rows.append(
            [
                "accepted, gold label unknown (to label blind)",
                str(audit["accepted_label_unknown"]),
            ]
        )
    rows += [
        [f"strategy {name}", f"{row['successes']} / {row['attempts']} accepted"]
        for name, row in sorted(audit["by_strategy"].items())
    ]
    base = audit["baseline"]
    if base["items"]:
        rows.append(["unmodified failures accepted", f"{base['accepted']} / {base['items']}"])
    on = audit["on_policy"]
    if on["groups"]:
        rows.append(
            [
                f"on-policy: best of {on['best_of_n']}",
                f"{on['accepted']} / {on['groups']} selected wrong outputs accepted",
            ]
        )
    rows += [
        [
            f"exploit: {x['attempt_id']}",
            f"{x['strategy']} ({x['label_basis']}): {' '.join(str(x['output']).split())[:160]}",
        ]
        for x in audit["exploits"]
    ]
    return (title, ["field", "value"], rows, [str(r) for r in audit.get("reasons") or ()])


def render_markdown(card: GraderCard) -> str:
    """The card as Markdown."""
    title = f"# Grader card: {card.verifier.name} on {card.task_class}"
    lines = [title, ""]
    if card.verifier.synthetic:
        lines += ["> **SYNTHETIC VERIFIER** - not a real model; see notes.", ""]
    for heading, head, rows, paragraphs in _sections(card):
        lines += [f"## {heading}", ""]
        if rows:
            lines.append("| " + " | ".join(head) + " |")
            lines.append("|" + "---|" * len(head))
            for row in rows:
                lines.append(
                    "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in row) + " |"
                )
            lines.append("")
        for p in paragraphs:
            lines += [p, ""]
    return "\n".join(lines)


_CSS = """*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;line-height:1.45;max-width:72rem;margin:2rem auto;
padding:0 1rem;color:#222;overflow-wrap:anywhere}
table{border-collapse:collapse;margin:.5rem 0 1rem;overflow-wrap:normal}
td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top;
font-size:.9rem}th{background:#f3f3f3}
.wide{overflow-x:auto;max-width:100%}
.synthetic{background:#fff3cd;border:2px solid #c90;padding:.5rem 1rem;font-weight:bold}
.yes{color:#070;font-weight:bold}.no{color:#a00;font-weight:bold}
nav ol{columns:2;font-size:.9rem}@media (max-width:40rem){nav ol{columns:1}}
@page{size:A4;margin:14mm}
@media print{body{max-width:none;margin:0;padding:0;font-size:10pt}nav{display:none}
.wide{overflow:visible}table{font-size:8pt;width:100%}td,th{overflow-wrap:anywhere}
tr,.synthetic{break-inside:avoid}h2{break-after:avoid}}
"""


def render_html(card: GraderCard) -> str:
    """The card as one self-contained HTML page (inline CSS, no scripts, no external links)."""
    e = html.escape
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>Grader card: {e(card.verifier.name)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Grader card: {e(card.verifier.name)} on {e(card.task_class)}</h1>",
    ]
    if card.verifier.synthetic:
        parts.append(
            '<p class="synthetic" id="synthetic">SYNTHETIC VERIFIER: not a real model. '
            "The numbers illustrate the method only.</p>"
        )
    sections = _sections(card)
    slugs = [h.split(":")[0].split(" (")[0].lower().replace(" ", "-") for h, *_ in sections]
    parts.append("<nav aria-label='Contents'><h2>Contents</h2><ol>")
    parts += [f'<li><a href="#{e(slug)}">{e(h)}</a></li>'
              for slug, (h, *_) in zip(slugs, sections, strict=True)]  # fmt: skip
    parts.append("</ol></nav>")
    for slug, (heading, head, rows, paragraphs) in zip(slugs, sections, strict=True):
        parts.append(f'<section id="{e(slug)}"><h2>{e(heading)}</h2>')
        if rows:
            parts.append('<div class="wide" tabindex="0"><table><thead><tr>')
            parts.append("".join(f"<th>{e(h)}</th>" for h in head))
            parts.append("</tr></thead><tbody>")
            for row in rows:
                cells = []
                for c in row:
                    css = f' class="{c}"' if c in ("yes", "no") else ""
                    cells.append(f"<td{css}>{e(c)}</td>")
                parts.append("<tr>" + "".join(cells) + "</tr>")
            parts.append("</tbody></table></div>")
        parts += [f"<p>{e(p)}</p>" for p in paragraphs]
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_card(card: GraderCard, folder: str | Path, *, stem: str = "card") -> Mapping[str, Path]:
    """Write ``card.json``, ``card.md`` and ``card.html`` into ``folder``."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out / f"{stem}.json",
        "markdown": out / f"{stem}.md",
        "html": out / f"{stem}.html",
    }
    paths["json"].write_text(json.dumps(card.to_dict(), indent=2) + "\n", encoding="utf-8")
    paths["markdown"].write_text(render_markdown(card), encoding="utf-8")
    paths["html"].write_text(render_html(card), encoding="utf-8")
    return paths
