"""``report.md`` of one run folder: the paper's claim, figures, and the "paper reports / iclab measures" table, with
the paper-settings verdict of each claim beside this run's: the experiment's shipped reference run (its ``paper``
preset) re-judged by the installed code (:mod:`iclab.report._reference`), "—" where none is shipped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from iclab.experiments import Experiment, get_experiment, run_experiment
from iclab.experiments import Comparison, chance_line, family_summary
from iclab.files import write_text_atomic
from iclab.report._judging import judge, rejudged_summary
from iclab.report._reference import Reference, load_reference
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
    "REFERENCE_COLUMN",
    "PAPER_SETTINGS_ONLY",
    "reference_cell_md",
    "reference_line",
    "reference_tally_line",
]

#: The column that puts the paper-settings verdict beside this run's.
REFERENCE_COLUMN = "paper-settings verdict (reference run)"
NO_REFERENCE = "— (no reference shipped)"
NOT_IN_REFERENCE = "— (claim not in the reference run)"
#: This run's cell of a claim that only the reference run has (a quick run judging another task, say).
PAPER_SETTINGS_ONLY = "paper settings only"


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
    """Compute seconds summed over done cells, and wall seconds summed over the invocations that ran cells
    (:meth:`ResultStore.wall_seconds <iclab.runs.ResultStore.wall_seconds>`: a killed one up to its last cell)."""
    cell_seconds = float(result.results["_seconds"].sum()) if "_seconds" in result.results else 0.0
    with ResultStore(folder, readonly=True) as store:
        sweeps, wall = store.sweeps(), store.wall_seconds()
    executors = sorted({s["executor"] for s in sweeps if s["executor"]})
    return {"cell_seconds": cell_seconds, "wall_seconds": wall, "sweeps": len(sweeps), "executors": executors}


def _measured(c: Comparison) -> str:
    return c.measured + ("" if c.uncertainty in ("", "—") else f" {c.uncertainty}")


def reference_cell_md(reference: Reference, claim_id: str, *, short: bool = False) -> str:
    """The paper-settings verdict of ``claim_id`` in markdown: ``**disagrees**: measured 6.2 % [5.1, 7.1]`` (a
    "not judged" one with its reason; ``short``: the verdict alone), or "—" saying why there is none."""
    if not reference.shipped:
        return NO_REFERENCE
    c = reference.row(claim_id)
    if c is None:
        return NOT_IN_REFERENCE
    verdict = c.verdict if c.verdict != DISAGREES else f"**{c.verdict}**"
    if short:
        return verdict
    return f"{verdict}: measured {_measured(c)}" + (f" ({c.reason})" if c.verdict == NOT_JUDGED and c.reason else "")


def reference_line(reference: Reference) -> str:
    """Where the paper-settings verdicts of one experiment come from: the reference run's commit (short), date,
    machine, wall time and cells — or that none is shipped."""
    m = reference.meta
    if not reference.shipped:
        return f"No paper-settings reference run is shipped for `{reference.experiment}`: its column reads —."
    cpu = f", CPU {fmt_seconds(m['cpu_seconds'])}" if m.get("cpu_seconds") is not None else ""
    return (
        f"Paper-settings verdicts: the reference run of `{reference.experiment}` (`paper` preset, shipped with "
        f"iclab), commit `{str(m.get('commit') or '?')[:7]}`, {m.get('date') or m.get('shipped') or '?'}, "
        f"{m.get('machine', '?')} ({m.get('device', '?')}), wall {fmt_seconds(m.get('wall_seconds'))}{cpu}, "
        f"{m.get('cells_done', '?')} cells done, {m.get('cells_failed', '?')} failed; re-judged by this iclab now."
    ) + "".join(f" Reference error: {e}" for e in reference.errors)


def reference_tally_line(rows: Sequence[Comparison], references: Mapping[str, Reference]) -> str:
    """``"14 agree, 7 disagree, 0 not judged; 165 with no reference verdict (—)."``: the paper-settings verdicts
    over the claims ``rows`` of this run, each looked up by experiment and claim id in ``references``."""
    counts = {v: 0 for v in VERDICTS}
    missing = 0
    for c in rows:
        ref = references.get(c.experiment)
        row = None if ref is None else ref.row(c.id)
        if row is None:
            missing += 1
        else:
            counts[row.verdict] += 1
    return (
        f"{counts[AGREES]} agree, {counts[DISAGREES]} disagree, "
        f"{counts[NOT_JUDGED]} not judged" + (f"; {missing} with no reference verdict (—)" if missing else "") + "."
    )


def comparison_table_md(rows: Sequence[Comparison], reference: Reference | None = None) -> str:
    """The comparison rows as a markdown table (claim, kind, paper, measured ± uncertainty, test, verdict); with
    ``reference`` (the experiment's, shipped or not) a last column gives each claim's paper-settings verdict."""
    extra = reference is not None
    lines = [
        "| claim | kind | paper reports | iclab measures | test | statistic | verdict |"
        + (f" {REFERENCE_COLUMN} |" if extra else ""),
        "|---|---|---|---|---|---|---|" + ("---|" if extra else ""),
    ]
    for c in rows:
        verdict = c.verdict if c.verdict != DISAGREES else f"**{c.verdict}**"
        if c.reason:
            verdict += f" ({c.reason})"
        cells = [f"{c.claim} [{c.source}]", c.kind, c.paper_value, _measured(c), c.test, c.statistic, verdict]
        if extra:
            cells.append(reference_cell_md(reference, c.id))
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
    summary = {"figures": figures, "comparisons": comparisons, "notes": notes, "errors": errors}
    return summary | family_summary(comparisons)  # chance agreements and the Holm family


def write_run_report(exp: Experiment, config: Config, result: RunResult, reference: Reference | None = None) -> Path:
    """Write ``figures/``, ``summary.json`` and ``report.md`` into the run folder; return the report path.
    ``reference``: the paper-settings verdicts beside this run's (default: the shipped reference run of ``exp``,
    :func:`iclab.report._reference.load_reference`)."""
    summary = run_summary(exp, config, result)
    reference = load_reference(exp.name) if reference is None else reference
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
    elif RunFolder.rejudged(result.folder.meta):
        lines[4:4] = [
            f"> **Re-judged:** the cells were computed by the same code; {RunFolder.rejudged(result.folder.meta)}: "
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
            f"This run: {tally_line(summary['comparisons'])} Reference run (paper settings): "
            + reference_tally_line(summary["comparisons"], {exp.name: reference}),
            "",
            reference_line(reference),
            "",
            chance_line([summary]) + ".",
            "",
            comparison_table_md(summary["comparisons"], reference),
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
    write_text_atomic(folder / "report.md", "\n".join(lines) + "\n")  # a crash or a full disk: old file or none
    write_text_atomic(
        folder / "summary.json",
        json.dumps(
            {
                "experiment": exp.name,
                "figures": [
                    str(p.relative_to(folder)) if p.is_relative_to(folder) else str(p) for p in summary["figures"]
                ],
                "comparisons": [c.as_dict() for c in summary["comparisons"]],
                "chance_agrees": summary["chance_agrees"],
                "holm": summary["holm"],
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
        ),
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
