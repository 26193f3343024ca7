"""The paper-settings report alone (``iclab report --reference``): every shipped reference run — the ``paper``
preset of each experiment, :mod:`iclab.report._reference` — judged by the installed code, as ``index.html``,
``report.md`` and ``comparisons.csv`` in one folder: the claims ledger, one row per reference run (commit, date,
machine, wall and CPU time, cells, verdict counts) and per experiment its comparison table.

Nothing is recomputed and no figure is drawn: judging takes seconds, while re-drawing the figures from the stored
cells (each experiment's ``figures(config, results, dir)``) took 33 s for the temperature run alone; a run's figures
come with ``iclab run NAME --preset paper``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from iclab.errors import IclabError
from iclab.experiments import experiment_names, get_experiment
from iclab.report._combined import write_report_pages
from iclab.report._reference import load_reference, reference_runs
from iclab.report._run_report import fmt_seconds, tally, tally_line
from iclab.report._sections import ReportRun
from iclab.stats import AGREES, DISAGREES, NOT_JUDGED

__all__ = ["write_reference_report", "TITLE"]

#: The first heading of the page: how a folder is known as an iclab paper-settings report.
TITLE = "iclab paper-settings report (reference runs)"

_HEADER = [
    "paper",
    "experiment",
    "commit",
    "date",
    "machine",
    "device",
    "wall time",
    "CPU time",
    "cells done",
    "failed",
    "agrees",
    "disagrees",
    "not judged",
]


def _reference_run(name: str, folder: Path, root: Path | None) -> ReportRun:
    ref = load_reference(name, root)
    meta = ref.meta
    summary = {
        "comparisons": [c.as_dict() for c in ref.rows.values()],
        "errors": list(ref.errors),
        "cells": {"done": meta.get("cells_done", "?"), "failed": meta.get("cells_failed", "?")},
        "wall_seconds": meta.get("wall_seconds"),
        "cpu_seconds": meta.get("cpu_seconds"),
        "reference": dict(meta),
        **ref.family,  # the ledger's chance line and Holm family, as a run's summary.json has them
    }
    config = json.loads((folder / "config.json").read_text())
    return ReportRun(folder, config, get_experiment(name), summary, None)


def _rows(runs: Sequence[ReportRun]) -> list[list[str]]:
    rows = []
    for r in runs:
        m, t = r.summary["reference"], tally(r.comparisons)["all"]
        rows.append(
            [
                r.exp.paper,
                r.exp.name,
                str(m.get("commit") or "?")[:7],
                str(m.get("date") or m.get("shipped") or "?"),
                str(m.get("machine", "?")),
                str(m.get("device", "?")),
                fmt_seconds(m.get("wall_seconds")),
                fmt_seconds(m.get("cpu_seconds")),
                str(m.get("cells_done", "?")),
                str(m.get("cells_failed", "?")),
                str(t[AGREES]),
                str(t[DISAGREES]),
                str(t[NOT_JUDGED]),
            ]
        )
    return rows


def write_reference_report(out_dir: str | Path = "runs/reference", root: Path | None = None) -> Path:
    """Judge every reference run under ``root`` (default: the shipped ones) with the installed code and write the
    paper-settings report to ``out_dir`` (``index.html``, ``report.md``, ``comparisons.csv``); return the HTML
    path. A reference that cannot be judged here (its experiment not registered) is listed at the top."""
    runs, failures = [], []
    for name, folder in reference_runs(root).items():
        try:
            runs.append(_reference_run(name, folder, root))
        except (IclabError, OSError, ValueError, KeyError) as exc:
            failures.append(f"{name}: reference run not judged: {type(exc).__name__}: {exc}")
    missing = [n for n in experiment_names() if n not in {r.exp.name for r in runs}]
    claims = [c for r in runs for c in r.comparisons]
    headline = (
        f"{len(runs)} reference run(s), each the `paper` preset of its experiment, shipped with iclab and judged now "
        f"by this iclab (nothing recomputed): {tally_line(claims) if runs else 'no claims.'}"
        + (f" No reference run is shipped for: {', '.join(missing)}." if missing else "")
    )
    return write_report_pages(Path(out_dir), TITLE, headline, runs, _HEADER, _rows, failures)
