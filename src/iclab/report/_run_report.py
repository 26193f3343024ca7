"""``report.md`` of one run folder: the paper's claim, figures, and the "paper reports / iclab measures" table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import pandas as pd

from iclab.errors import IclabError
from iclab.experiments import Experiment, get_experiment, load_run, run_experiment
from iclab.experiments import Comparison, judge_run
from iclab.runs import ResultStore, RunFolder, RunResult, Sweep
from iclab.stats import AGREES, DISAGREES, KINDS, NOT_JUDGED, VERDICTS

if TYPE_CHECKING:
    from iclab.config import Config

__all__ = [
    "write_run_report",
    "run_and_report",
    "comparison_table_md",
    "run_summary",
    "run_timing",
    "fmt_seconds",
    "judge",
    "rejudged_summary",
    "tally",
    "tally_line",
]


def fmt_seconds(seconds: float | None) -> str:
    """``42 s``, ``3.5 min`` or ``1.2 h``; ``—`` when unknown."""
    if seconds is None:
        return "—"
    if seconds < 90:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def tally(rows: Sequence[Comparison]) -> dict[str, dict[str, int]]:
    """Counts ``{kind: {verdict: n}}`` (every kind and verdict present, zeros included) plus ``"all"``."""
    out = {k: {v: 0 for v in VERDICTS} for k in (*KINDS, "all")}
    for c in rows:
        out.setdefault(c.kind, {v: 0 for v in VERDICTS})[c.verdict] += 1
        out["all"][c.verdict] += 1
    return out


def tally_line(rows: Sequence[Comparison]) -> str:
    """``"12 claims: 5 agree, 2 disagree, 5 not judged (paper value 1/0/3, …)"``."""
    t = tally(rows)
    kinds = ", ".join(f"{k} {t[k][AGREES]}/{t[k][DISAGREES]}/{t[k][NOT_JUDGED]}" for k in KINDS if sum(t[k].values()))
    a = t["all"]
    return (
        f"{len(rows)} claims: {a[AGREES]} agree, {a[DISAGREES]} disagree, {a[NOT_JUDGED]} not judged"
        + (f" (agree/disagree/not judged by kind: {kinds})" if kinds else "")
        + "."
    )


def run_timing(folder: Path, result: RunResult) -> dict:
    """Compute seconds summed over done cells, and wall seconds summed over the invocations that ran cells."""
    cell_seconds = float(result.results["_seconds"].sum()) if "_seconds" in result.results else 0.0
    with ResultStore(folder, readonly=True) as store:
        sweeps = store.sweeps()
    wall = sum((s["finished"] or s["started"]) - s["started"] for s in sweeps)
    executors = sorted({s["executor"] for s in sweeps if s["executor"]})
    return {"cell_seconds": cell_seconds, "wall_seconds": wall, "sweeps": len(sweeps), "executors": executors}


def judge(exp: Experiment, config, result: RunResult) -> tuple[list[Comparison], list[str]]:
    """Every declared claim of the run with its verdict (:func:`iclab.experiments.judge_run`), and errors."""
    return judge_run(
        paper=exp.paper,
        experiment=exp.name,
        config=config,
        results=result.results,
        failed=result.failed,
        claims=exp.claims,
        compare=exp.compare,
    )


def comparison_table_md(rows: Sequence[Comparison]) -> str:
    """The comparison rows as a markdown table (claim, kind, paper, measured ± uncertainty, test, verdict)."""
    lines = [
        "| claim | kind | paper reports | iclab measures | test | statistic | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in rows:
        verdict = c.verdict if c.verdict != DISAGREES else f"**{c.verdict}**"
        if c.reason:
            verdict += f" ({c.reason})"
        measured = c.measured + ("" if c.uncertainty in ("", "—") else f" {c.uncertainty}")
        cells = [f"{c.claim} [{c.source}]", c.kind, c.paper_value, measured, c.test, c.statistic, verdict]
        lines.append("| " + " | ".join(str(x).replace("|", "\\|").replace("\n", " ") for x in cells) + " |")
    return "\n".join(lines)


def run_summary(exp: Experiment, config: Config, result: RunResult) -> dict[str, Any]:
    """Figures, comparison rows, notes and errors of a finished run (also written to ``summary.json``)."""
    fig_dir = result.folder.figures
    fig_dir.mkdir(parents=True, exist_ok=True)
    figures: list[Path] = []
    notes = ""
    comparisons, errors = judge(exp, config, result)
    if len(result.results):
        try:
            figures = [Path(p) for p in exp.figures(config, result.results, fig_dir)]
        except Exception as exc:  # noqa: BLE001 - a broken plot must not lose computed results
            errors.append(f"figures failed: {type(exc).__name__}: {exc}")
        if exp.notes is not None:
            try:
                notes = exp.notes(config, result.results)
            except Exception as exc:  # noqa: BLE001
                errors.append(f"notes failed: {type(exc).__name__}: {exc}")
    return {"figures": figures, "comparisons": comparisons, "notes": notes, "errors": errors}


def write_run_report(exp: Experiment, config: Config, result: RunResult) -> Path:
    """Write ``figures/``, ``summary.json`` and ``report.md`` into the run folder; return the report path."""
    summary = run_summary(exp, config, result)
    folder = result.folder.path
    lines = [
        f"# {exp.title}",
        "",
        f"Experiment `{exp.name}` (paper key `{exp.paper}`), preset "
        f"`{result.folder.meta.get('preset')}`, seed {config.seed}, config hash "
        f"`{result.folder.meta.get('config_hash')}`.",
        "",
        "## What the paper claims",
        "",
        exp.claim.strip(),
        "",
    ]
    foreign = RunFolder.foreign_code(result.folder.meta)
    if foreign:
        lines[4:4] = [
            f"> **Written by another iclab:** these results were computed by {'; '.join(foreign)}; "
            "this report judges them with the running one (now).",
            "",
        ]
    timing = run_timing(folder, result)
    lines += [
        f"Cells: {len(result.results)} done ({result.computed} computed now, {result.reused} reused), "
        f"{len(result.failed)} failed. Compute time {fmt_seconds(timing['cell_seconds'])} summed over cells, "
        f"wall time {fmt_seconds(timing['wall_seconds'])} over {timing['sweeps']} invocation(s).",
        "",
    ]
    if len(result.failed):
        lines += ["Failed cells (rerun with `--retry-failed`):", ""]
        for _, row in result.failed.iterrows():
            lines.append(f"- cell {row.get('_key')}: `{str(row.get('_error', '')).splitlines()[0]}`")
        lines.append("")
    if summary["comparisons"]:
        lines += [
            "## Claims: paper reports / iclab measures / verdict",
            "",
            tally_line(summary["comparisons"]),
            "",
            comparison_table_md(summary["comparisons"]),
            "",
        ]
    if summary["notes"]:
        lines += ["## Where they disagree, and why", "", summary["notes"].strip(), ""]
    if summary["figures"]:
        lines += ["## Figures", ""]
        lines += [f"![{p.stem}](figures/{p.name})" for p in summary["figures"]]
        lines.append("")
    for err in summary["errors"]:
        lines.append(f"> **report error:** {err}")
    (folder / "report.md").write_text("\n".join(lines) + "\n")
    (folder / "summary.json").write_text(
        json.dumps(
            {
                "experiment": exp.name,
                "figures": [
                    str(p.relative_to(folder)) if p.is_relative_to(folder) else str(p) for p in summary["figures"]
                ],
                "comparisons": [c.as_dict() for c in summary["comparisons"]],
                "notes": summary["notes"],
                "errors": summary["errors"],
                "cells": {
                    "done": len(result.results),
                    "failed": len(result.failed),
                    "failed_errors": [
                        str(e).splitlines()[0] for e in (result.failed["_error"] if "_error" in result.failed else [])
                    ][:20],
                },
                **timing,
            },
            indent=2,
            default=str,
        )
    )
    return folder / "report.md"


def run_and_report(
    experiment: str | Sweep,
    preset: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    seed: int | None = None,
    **kwargs: Any,
) -> RunResult:
    """Run (or resume) ``experiment`` (:func:`iclab.experiments.run_experiment`, same arguments: a name or a built
    :class:`~iclab.runs.Sweep`, ``out``, ``options`` or its fields), then write its figures, ``summary.json`` and
    ``report.md``."""
    result = run_experiment(experiment, preset, overrides, seed, **kwargs)
    name = experiment.name if isinstance(experiment, Sweep) else experiment
    write_run_report(get_experiment(name), result.config, result)
    return result


def rejudged_summary(run_dir: Path, exp: Experiment) -> dict[str, Any]:
    """The comparisons of a run folder without ``summary.json`` (a run stopped before its report): every declared
    claim judged on the cells it holds — "not measured" where they are missing — so the ledger's counts never
    drop an experiment's claims."""
    try:
        run = load_run(run_dir)
        results, failed, config = run.results, run.failed, run.config
    except IclabError as exc:  # an unreadable store: the claims are declared all the same, none measured
        config = exp.config_cls.from_dict(json.loads((run_dir / "config.json").read_text())["config"])
        results = failed = pd.DataFrame()
        errors = [f"results not read: {exc}"]
    else:
        errors = []
    rows, judge_errors = judge_run(
        paper=exp.paper,
        experiment=exp.name,
        config=config,
        results=results,
        failed=failed,
        claims=exp.claims,
        compare=exp.compare,
    )
    return {"comparisons": [r.as_dict() for r in rows], "errors": errors + judge_errors}
