"""``report.md`` of one run folder: the paper's claim, figures, and the "paper reports / iclab measures" table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from iclab.experiments import Comparison, Experiment, get_experiment, run_experiment
from iclab.runs import ResultStore, RunResult

__all__ = ["write_run_report", "run_and_report", "comparison_table_md", "comparison_dict", "run_summary",
           "run_timing", "fmt_seconds"]


def fmt_seconds(seconds: float | None) -> str:
    """``42 s``, ``3.5 min`` or ``1.2 h``; ``—`` when unknown."""
    if seconds is None:
        return "—"
    if seconds < 90:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def run_timing(folder: Path, result: RunResult) -> dict:
    """Compute seconds summed over done cells, and wall seconds summed over the invocations that ran cells."""
    cell_seconds = float(result.results["_seconds"].sum()) if "_seconds" in result.results else 0.0
    with ResultStore(folder) as store:
        sweeps = store.sweeps()
    wall = sum((s["finished"] or s["started"]) - s["started"] for s in sweeps)
    executors = sorted({s["executor"] for s in sweeps if s["executor"]})
    return {"cell_seconds": cell_seconds, "wall_seconds": wall, "sweeps": len(sweeps), "executors": executors}


def _ok(value) -> bool | None:
    """``Comparison.ok`` as True/False/None (numpy bools and their ``"True"`` text included)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "null", "—", "n/a")):
        return None
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1")
    return bool(value)


def comparison_dict(c) -> dict:
    """A Comparison as JSON-safe plain values (experiments may hand numpy bools or numbers)."""
    return {"quantity": str(c.quantity), "paper": str(c.paper), "measured": str(c.measured), "ok": _ok(c.ok),
            "note": str(c.note or "")}


def comparison_table_md(rows: Sequence[Comparison]) -> str:
    lines = ["| quantity | paper reports | iclab measures | within tolerance? | note |", "|---|---|---|---|---|"]
    mark = {True: "yes", False: "**no**", None: "—"}
    for c in rows:
        cells = [c.quantity, c.paper, c.measured, mark[_ok(c.ok)], c.note]
        lines.append("| " + " | ".join(str(x).replace("|", "\\|").replace("\n", " ") for x in cells) + " |")
    return "\n".join(lines)


def run_summary(exp: Experiment, config, result: RunResult) -> dict:
    """Figures, comparisons and notes of a finished run (also written to ``summary.json``)."""
    fig_dir = result.folder.figures
    fig_dir.mkdir(parents=True, exist_ok=True)
    figures: list[Path] = []
    comparisons: list = []
    notes = ""
    errors: list[str] = []
    if len(result.results):
        for stage, fn in (("figures", exp.figures), ("compare", exp.compare)):
            try:
                out = fn(config, result.results) if stage == "compare" else fn(config, result.results, fig_dir)
            except Exception as exc:  # noqa: BLE001 - a broken plot must not lose computed results
                errors.append(f"{stage} failed: {type(exc).__name__}: {exc}")
                continue
            if stage == "figures":
                figures = [Path(p) for p in out]
            else:
                comparisons = list(out)
        if exp.notes is not None:
            try:
                notes = exp.notes(config, result.results)
            except Exception as exc:  # noqa: BLE001
                errors.append(f"notes failed: {type(exc).__name__}: {exc}")
    return {"figures": figures, "comparisons": comparisons, "notes": notes, "errors": errors}


def write_run_report(exp: Experiment, config, result: RunResult) -> Path:
    """Write ``figures/``, ``summary.json`` and ``report.md`` into the run folder; return the report path."""
    summary = run_summary(exp, config, result)
    folder = result.folder.path
    lines = [f"# {exp.title}", "", f"Experiment `{exp.name}` (paper key `{exp.paper}`), preset "
             f"`{result.folder.meta.get('preset')}`, seed {config.seed}, config hash "
             f"`{result.folder.meta.get('config_hash')}`.", "", "## What the paper claims", "", exp.claim.strip(), ""]
    timing = run_timing(folder, result)
    lines += [f"Cells: {len(result.results)} done ({result.computed} computed now, {result.reused} reused), "
              f"{len(result.failed)} failed. Compute time {fmt_seconds(timing['cell_seconds'])} summed over cells, "
              f"wall time {fmt_seconds(timing['wall_seconds'])} over {timing['sweeps']} invocation(s).", ""]
    if len(result.failed):
        lines += ["Failed cells (rerun with `--retry-failed`):", ""]
        for _, row in result.failed.iterrows():
            lines.append(f"- cell {row.get('_key')}: `{str(row.get('_error', '')).splitlines()[0]}`")
        lines.append("")
    if summary["comparisons"]:
        lines += ["## Paper reports / iclab measures", "", comparison_table_md(summary["comparisons"]), ""]
    if summary["notes"]:
        lines += ["## Where they disagree, and why", "", summary["notes"].strip(), ""]
    if summary["figures"]:
        lines += ["## Figures", ""]
        lines += [f"![{p.stem}](figures/{p.name})" for p in summary["figures"]]
        lines.append("")
    for err in summary["errors"]:
        lines.append(f"> **report error:** {err}")
    (folder / "report.md").write_text("\n".join(lines) + "\n")
    (folder / "summary.json").write_text(json.dumps({
        "experiment": exp.name,
        "figures": [str(p.relative_to(folder)) if p.is_relative_to(folder) else str(p) for p in summary["figures"]],
        "comparisons": [comparison_dict(c) for c in summary["comparisons"]],
        "notes": summary["notes"],
        "errors": summary["errors"],
        "cells": {"done": len(result.results), "failed": len(result.failed),
                  "failed_errors": [str(e).splitlines()[0] for e in
                                    (result.failed["_error"] if "_error" in result.failed else [])][:20]},
        **timing,
    }, indent=2, default=str))
    return folder / "report.md"


def run_and_report(name: str, preset: str = "quick", overrides=None, seed: int | None = None, **kwargs) -> RunResult:
    """Run (or resume) experiment ``name`` (:func:`iclab.experiments.run_experiment`, same arguments), then write
    its figures, ``summary.json`` and ``report.md``."""
    result = run_experiment(name, preset, overrides, seed, **kwargs)
    write_run_report(get_experiment(name), result.config, result)
    return result
