"""The judge as the reports call it: every declared claim of a run folder with its verdict, from ``summary.json``'s
writer (:func:`judge`) or from the store alone (:func:`rejudged_summary`, for a run stopped before its report and
for the shipped reference runs). The verdicts themselves come from :func:`iclab.experiments.judge_run`; each
power-limited claim's reason then names the size that would decide it and its estimated CPU time at the run's
seconds per cell (:mod:`iclab.report._sizes`, issue 38), and :func:`plan_sizes` gives the whole plan."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from iclab.errors import IclabError
from iclab.experiments import Comparison, Experiment, family_summary, get_experiment, judge_run, load_run
from iclab.report._sizes import SizePlan, cost_note, size_claims
from iclab.runs import RunResult, unrun_cells

__all__ = ["judge", "rejudged_summary", "plan_sizes"]


def judge(exp: Experiment, config, result: RunResult) -> tuple[list[Comparison], list[str]]:
    """Every declared claim of the run with its verdict (:func:`iclab.experiments.judge_run`), and errors."""
    rows, errors = judge_run(
        paper=exp.paper,
        experiment=exp.name,
        config=config,
        results=result.results,
        failed=result.failed,
        claims=exp.claims,
        compare=exp.compare,
        not_run=_not_run(exp, config, result.path),
    )
    return _costed(rows, exp, config, result.results), errors


def _not_run(exp: Experiment, config, run_dir: Path) -> list[dict]:
    """The planned cells of the run folder ``run_dir`` that its store holds no row of
    (:func:`iclab.runs.unrun_cells`): a claim that reads one is "not measured" (issue 43, item 4). None when the
    config makes no grid now (that run's claims are then judged on what the store holds, as before)."""
    try:
        planned = exp.cells(config)
    except IclabError:
        return []
    return unrun_cells(run_dir, planned)


def cpu_scale(run_dir: str | Path, results: pd.DataFrame) -> float:
    """CPU seconds per second of cell time in the run folder ``run_dir``: the ``cpu_seconds`` its ``reference.json``
    records (a shipped reference, timed as a whole process) over the sum of its cells' seconds (wall time, longer
    than the CPU a cell took when it shared its core); 1 when either is unknown."""
    try:
        cpu = json.loads((Path(run_dir) / "reference.json").read_text()).get("cpu_seconds")
    except (OSError, ValueError, AttributeError):
        return 1.0
    cells = float(pd.to_numeric(results.get("_seconds", pd.Series(dtype=float)), errors="coerce").sum())
    if not isinstance(cpu, (int, float)) or not math.isfinite(cpu) or cpu <= 0 or not cells > 0:
        return 1.0
    return float(cpu) / cells


def _costed(
    rows: list[Comparison], exp: Experiment, config, results: pd.DataFrame, scale: float = 1.0
) -> list[Comparison]:
    """``rows`` with each power-limited claim's reason followed by what would decide it and its cost
    (:func:`~iclab.report._sizes.cost_note`); ``rows`` as they are when the run cannot be costed (no cells, a grid
    the config no longer makes): the verdicts never depend on it."""
    try:
        plan = size_claims(exp, config, results, [r.as_dict() for r in rows], scale)
    except Exception:  # noqa: BLE001 - the plan is a note on the reasons; the verdicts stand without it
        return rows
    notes = {c.id: cost_note(c) for c in plan.claims}
    return [dataclasses.replace(r, reason=f"{r.reason}; {notes[r.id]}") if notes.get(r.id) else r for r in rows]


def rejudged_summary(run_dir: Path, exp: Experiment) -> dict[str, Any]:
    """The comparisons of a run folder without ``summary.json`` (a run stopped before its report): every declared
    claim judged on the cells it holds — "not measured" where they are missing — so the ledger's counts never
    drop an experiment's claims."""
    try:
        run = load_run(run_dir)
        results, failed, config = run.results, run.failed, run.config
    except IclabError as exc:  # an unreadable store: the claims are declared all the same, none measured
        config = exp.config_cls.from_dict(json.loads((Path(run_dir) / "config.json").read_text())["config"])
        results = failed = pd.DataFrame()
        errors = [f"results not read: {exc}"]
        not_run = []
    else:
        errors = []
        not_run = _not_run(exp, config, run_dir)
    rows, judge_errors = judge_run(
        paper=exp.paper,
        experiment=exp.name,
        config=config,
        results=results,
        failed=failed,
        claims=exp.claims,
        compare=exp.compare,
        not_run=not_run,
    )
    rows = _costed(rows, exp, config, results, cpu_scale(run_dir, results))
    return {"comparisons": [r.as_dict() for r in rows], "errors": errors + judge_errors} | family_summary(rows)


def plan_sizes(run_dir: str | Path) -> SizePlan:
    """The size plan of the finished run folder ``run_dir`` (a run folder or a shipped reference), judged again by
    the installed code (:func:`~iclab.report._sizes.size_claims`). A folder that is not a run folder is the error
    :func:`iclab.experiments.load_run` raises; one without a finished cell is an IclabError."""
    run = load_run(run_dir)
    exp = get_experiment(run.experiment)
    if not len(run.results):
        raise IclabError(f"{run_dir} holds no finished cell yet: nothing to plan from (the folder is left as it is)")
    rows, _ = judge_run(
        paper=exp.paper,
        experiment=exp.name,
        config=run.config,
        results=run.results,
        failed=run.failed,
        claims=exp.claims,
        compare=exp.compare,
        not_run=_not_run(exp, run.config, Path(run.path)),
    )
    plan = size_claims(exp, run.config, run.results, [r.as_dict() for r in rows], cpu_scale(run.path, run.results))
    return dataclasses.replace(plan, path=Path(run.path))
