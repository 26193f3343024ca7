"""The judge as the reports call it: every declared claim of a run folder with its verdict, from ``summary.json``'s
writer (:func:`judge`) or from the store alone (:func:`rejudged_summary`, for a run stopped before its report and
for the shipped reference runs). The verdicts themselves come from :func:`iclab.experiments.judge_run`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from iclab.errors import IclabError
from iclab.experiments import Comparison, Experiment, family_summary, judge_run, load_run
from iclab.runs import RunResult

__all__ = ["judge", "rejudged_summary"]


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
    return {"comparisons": [r.as_dict() for r in rows], "errors": errors + judge_errors} | family_summary(rows)
