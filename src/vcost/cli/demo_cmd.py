"""`vcost demo`: the whole pipeline that exists today, end to end, on synthetic data."""

from __future__ import annotations

import json
import shutil
from importlib.resources import as_file, files
from pathlib import Path

import click
import pandas as pd
from rich.console import Console
from rich.progress import Progress, TaskID

from vcost.answers import AnswerLog, generate_answers, natural_error_table, read_selection
from vcost.cli.answers_cmd import errors_table, selection_table
from vcost.cli.grade_cmd import grades_table
from vcost.cli.indicators_cmd import write_outputs
from vcost.cli.judge_cmd import frame_table, verdicts_table
from vcost.cli.plant_cmd import summary_tables
from vcost.errors import VcostError
from vcost.grader import grade_answers, read_answers
from vcost.indicators import IndicatorSettings, compute_indicators
from vcost.judges import JudgmentLog, consistency, flip_rate, judge, judgments_trace
from vcost.models import Cassette, CassetteClient, load_models
from vcost.plant import plant_bank
from vcost.sandbox import Sandbox
from vcost.simulate import SyntheticStudy, synthetic_trace
from vcost.spec import StudySpec
from vcost.store import Store
from vcost.tasks import BUNDLED_BANK, load_bank
from vcost.trace_io import read_trace, write_trace

LABEL = "SYNTHETIC EXAMPLE DATA: drawn by vcost.simulate, not measured on people or models."


def _grade(console: Console, out: Path) -> None:
    """Step 1: ground truth for a few hand-made answers, in the sandbox."""
    with as_file(files("vcost") / "examples" / "answers-demo.jsonl") as src:
        answers = read_answers(src)
    sandbox = Sandbox("auto")
    console.rule(f"1. grade {len(answers)} example answers in the sandbox ({sandbox.isolation})")
    with Progress(console=console, transient=True) as bar:
        job = bar.add_task("grading", total=len(answers))
        grades = grade_answers(
            load_bank(BUNDLED_BANK), answers, sandbox=sandbox, progress=lambda _g: bar.advance(job)
        )
    console.print(grades_table(grades))
    (out / "grades.jsonl").write_text(
        "".join(json.dumps(g.to_dict()) + "\n" for g in grades), encoding="utf-8"
    )


PLANT_TASKS = ("e-electricity-bill", "m-overtime-pay", "d-restaurant-spend-per-guest")


def _plant(console: Console, out: Path) -> None:
    """Step 2: planted errors on a few bundled tasks, classified in the sandbox."""
    console.rule(f"2. plant errors in {len(PLANT_TASKS)} bundled tasks")
    with Progress(console=console, transient=True) as bar:
        jobs: dict[str, TaskID] = {}

        def progress(task_id: str, done: int, total: int) -> None:
            if task_id not in jobs:
                jobs[task_id] = bar.add_task(task_id, total=total)
            bar.update(jobs[task_id], completed=done, total=total)

        report = plant_bank(
            BUNDLED_BANK, task_ids=PLANT_TASKS, sandbox=Sandbox("auto"), progress=progress
        )
    for table in summary_tables(report):
        console.print(table)
    (out / "planted.json").write_text(json.dumps(report.to_dict(), indent=2), encoding="utf-8")


def _checkers(console: Console, out: Path) -> None:
    """Step 3: model answers and AI-checker verdicts, replayed from a bundled cassette."""
    folder = out / "ai-checkers"
    shutil.rmtree(folder, ignore_errors=True)
    with as_file(files("vcost") / "examples" / "ai-checkers") as example:
        models = load_models(example / "models.toml")
        selection = read_selection(example / "selection.json")
        client = CassetteClient(None, Cassette(example / "cassette.jsonl", mode="replay"))
        bank = {t.id: t for t in load_bank(BUNDLED_BANK)}
        tasks = [bank[i] for i in sorted({a.task_id for a in selection.answers})]
        answerers = {n: c for n, c in models.items() if "checker" not in n}
        checkers = {n: c for n, c in models.items() if "checker" in n}
        console.rule(
            f"3. model answers and AI checkers, replayed from a cassette ({', '.join(models)}: "
            "synthetic models, see examples/ai-checkers/README.md)"
        )
        log = AnswerLog(folder / "answers.jsonl")
        with Progress(console=console, transient=True) as bar:
            job = bar.add_task("answers (graded in the sandbox)", total=None)
            generated = generate_answers(
                tasks,
                answerers,
                client=client,
                log=log,
                sandbox=Sandbox("auto"),
                n=2,
                progress=lambda done, total: bar.update(job, completed=done, total=total),
            )
        console.print(errors_table(natural_error_table(log.answers())))
        console.print(selection_table(selection))
        judgments = JudgmentLog(folder / "judgments.jsonl")
        failed = generated.failed
        for perturbation in ("standard", "paraphrase"):
            failed += judge(
                selection, bank, checkers, client=client, log=judgments, k=3,
                perturbation=perturbation,
            ).failed  # fmt: skip
    if failed:
        raise VcostError(
            f"{failed} call(s) are not in the bundled cassette",
            hint="a prompt or a bundled task changed: rerun scripts/make_demo_checkers.py",
        )
    trace = judgments_trace(judgments.judgments("standard"), selection)
    write_trace(trace, folder / "trace", format="csv", overwrite=True)
    console.print(verdicts_table(trace))
    rows = [c.to_dict() for c in consistency(judgments.judgments("standard"))]
    console.print(frame_table("Consistency across 3 repeats", pd.DataFrame(rows)))
    flips = flip_rate(judgments.judgments("standard"), judgments.judgments("paraphrase"))
    console.print(
        frame_table(
            "Paraphrased answers: flip rate vs standard", pd.DataFrame([f.to_dict() for f in flips])
        )
    )
    console.print(f"[bold]AI-checker trace[/] {len(trace.episodes)} episodes -> {folder / 'trace'}")


def _study_report(console: Console, out: Path, reps: int) -> None:
    """Step 5: a simulated 4-person panel checks the answers of step 3; the study analysis of
    people and AI checkers together, and its HTML report."""
    from vcost.analysis import analyse_study
    from vcost.report.study import render_study
    from vcost.simulate import PanelStudy, simulate_panel

    console.rule("5. a simulated 4-person panel on the same tasks and answers: the study report")
    folder = out / "study-report"
    with as_file(files("vcost") / "examples" / "core-study.toml") as src:
        spec = StudySpec.load(src)
    with as_file(files("vcost") / "examples" / "ai-checkers") as example:
        selection = read_selection(example / "selection.json")
        models = load_models(example / "models.toml")
    difficulty = {t.id: t.difficulty for t in load_bank(BUNDLED_BANK)}
    answers = pd.DataFrame([a.trace_row() for a in selection.answers])
    task_ids = sorted(set(answers["task_id"]), key=lambda t: (difficulty[t], t))
    tasks = pd.DataFrame({"task_id": task_ids, "difficulty": [difficulty[t] for t in task_ids]})
    sim = simulate_panel(PanelStudy(people=4, seed=spec.seed or 0), tasks=tasks, answers=answers)
    write_trace(sim.trace, folder / "trace", format="csv", overwrite=True)
    sim.ratings.to_csv(folder / "ratings.csv", index=False)
    console.print(f"[bold]panel[/] {len(sim.trace.episodes)} synthetic do and check episodes "
                  f"(4 simulated people, {len(tasks)} bundled tasks, the {len(answers)} answers "
                  f"of step 3) -> {folder / 'trace'}")  # fmt: skip
    ai_checks = read_trace(out / "ai-checkers" / "trace", confidence_levels=None)
    labels = tasks.set_index("task_id")["difficulty"]
    ai = out / "ai-checkers"
    model_log = [*AnswerLog(ai / "answers.jsonl").answers(),
                 *JudgmentLog(ai / "judgments.jsonl").judgments("standard")]  # fmt: skip
    analysis = analyse_study(
        sim.trace, spec=spec, difficulty=labels, reps=min(reps, 400), ai_checks=ai_checks,
        models=models, model_log=model_log, realism=sim.ratings,
    )  # fmt: skip
    paths = render_study(analysis, folder, label=LABEL)
    if analysis.ratio is not None:
        r = analysis.ratio.overall
        console.print(f"verification ratio {r.value:.2f} [{r.lower:.2f}, {r.upper:.2f}] "
                      f"(simulated truth {sim.true_overall_ratio:.2f})")  # fmt: skip
    console.print(f"[green]study report[/]: {paths['html']} (also {paths['markdown'].name}, "
                  f"{paths['json'].name})")  # fmt: skip


@click.command()
@click.option(
    "--out",
    default="out",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the outputs.",
)
@click.option("--reps", default=1000, show_default=True, help="Bootstrap replicates.")
@click.option(
    "--serve",
    "serve_after",
    is_flag=True,
    help="Then write a demo study (OUT/harness-demo) and serve it with `vcost serve --demo`, "
    "printing participant and admin links; Ctrl-C stops.",
)
@click.pass_context
def demo(ctx: click.Context, out: Path, reps: int, serve_after: bool) -> None:
    """Run the example study end to end.

    1. Grades a few hand-made answers to bundled tasks in the sandbox (OUT/grades.jsonl).
    2. Plants errors in three bundled tasks and classifies each mutant (OUT/planted.json).
    3. Replays model answers and AI-checker verdicts from a bundled cassette of synthetic
    models: answers graded, natural errors tabulated, two checkers judging each selected
    answer 3 times, plain and paraphrased (OUT/ai-checkers/).
    4. Loads the paper's illustrative code instantiation (B = 15 human-minutes, tau = 0.9,
    q = 1/2, Clopper-Pearson 95%), draws a synthetic trace, writes it as CSV, validates and
    imports it into a fresh SQLite store, computes the indicators from the store, prints the
    model-level table and writes OUT/report.md, OUT/indicators.json and OUT/outputs.csv.

    5. Simulates a 4-person core-study panel (SYNTHETIC people) that does the 12 bundled tasks
    of step 3 and checks the same selected answers (graded in the sandbox; natural and planted
    errors) the AI checkers judged; runs the pre-registered analysis with the core-study spec,
    people and AI checkers together (RQ1-RQ4, with the panel's simulated realism ratings), and
    writes the report: OUT/study-report/report.html (self-contained, plots inline), report.md
    and numbers.json, with the simulated trace in OUT/study-report/trace and the ratings in
    ratings.csv.

    6. With --serve: writes a demo study to OUT/harness-demo and serves the web harness on
    http://127.0.0.1:8000 (participant, walkthrough and admin links printed).
    """
    console = Console()
    out.mkdir(parents=True, exist_ok=True)
    _grade(console, out)
    _plant(console, out)
    _checkers(console, out)
    console.rule("4. the protocol's indicators on a synthetic trace")
    with as_file(files("vcost") / "examples" / "code-instantiation.toml") as src:
        spec_path = out / "study.toml"
        shutil.copyfile(src, spec_path)
    spec = StudySpec.load(spec_path)
    console.print(f"[bold]spec[/] {spec_path}  hash {spec.spec_hash[:16]}…")
    study = SyntheticStudy(
        budget=float(spec.budget_for()),
        verdicts_per_answer=spec.m,
        confidence_levels=tuple(spec.confidence_levels),
    )
    trace = synthetic_trace(study)
    trace_dir = out / "trace"
    write_trace(trace, trace_dir, format="csv", overwrite=True)
    console.print(f"[bold]trace[/] {len(trace.episodes)} synthetic episodes -> {trace_dir}")
    db_path = out / "vcost.db"
    db_path.unlink(missing_ok=True)
    url = f"sqlite:///{db_path}"
    with Store.open(url) as store:
        store.import_trace(
            read_trace(trace_dir, confidence_levels=study.confidence_levels),
            spec_hash=spec.stamp_hash,
        )
        stored = store.load_trace()
    console.print(f"[bold]store[/] imported into {db_path}")
    settings = IndicatorSettings.from_spec(spec, bootstrap_reps=reps)
    with Progress(console=console, transient=True) as bar:
        models = stored.answers["model_id"].nunique()
        task = bar.add_task("indicators (two-way cluster bootstrap)", total=models)
        report = compute_indicators(
            stored, settings, spec=spec, progress=lambda _name: bar.advance(task)
        )
    write_outputs(report, as_json=False, markdown=out / "report.md", label=LABEL)
    (out / "indicators.json").write_text(json.dumps(report.to_dict(), indent=2), encoding="utf-8")
    report.outputs.to_csv(out / "outputs.csv", index=False)
    console.print(
        f"[green]done[/]: {out / 'report.md'}, {out / 'indicators.json'}, {out / 'outputs.csv'}"
    )
    _study_report(console, out, reps)
    if serve_after:
        from vcost.cli.serve_cmd import serve

        console.rule("6. the web harness on a demo study (vcost serve --demo)")
        ctx.invoke(serve, demo=True, demo_dir=out / "harness-demo", test_link=True)
