"""``iclab plan RUN_DIR [--budget 3h] [--out plan.csv [--force]]``: the sizes that would decide a run's undecided
claims, and what they cost (issue 38).

The run folder is judged again by this iclab (nothing in it is written). For every claim: its verdict, and for a
claim undecided for want of samples the units that would decide it at its current effect and spread (the judge's
own count, ``Verdict.test_record["needed"]``), the preset field that sets them and its new value, and the CPU time
of a fresh run at that size at the run's measured seconds per cell, scaled to the CPU time a shipped reference
records (:mod:`iclab.report._sizes`). Then the
``--set`` overrides that buy as many claims as fit within ``--budget`` (cheapest first) and the run's estimated
total. Sizes are chosen once, from a pilot: a new run with new seeds, never this one topped up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from iclab.budget import parse_duration
from iclab.cli import app
from iclab.files import atomic_write, check_new_file

__all__ = ["plan"]

_COLUMNS = ["claim", "verdict", "status", "n", "needed", "field", "now", "value", "adds_cells", "cpu_hours", "why"]


def _table(plan: Any) -> Any:
    """The plan as one row per claim (a DataFrame of :data:`_COLUMNS`), for ``--out``."""
    import pandas as pd

    rows = [
        {
            "claim": c.id,
            "verdict": c.verdict,
            "status": c.status,
            "n": c.n,
            "needed": (f"≥{c.needed}" if c.at_least else c.needed) if c.needed else None,
            "field": c.field,
            "now": c.now if c.field else None,
            "value": c.value,
            "adds_cells": c.adds_cells if c.field else None,
            "cpu_hours": None if c.seconds is None else round(c.seconds / 3600, 3),
            "why": c.why,
        }
        for c in plan.claims
    ]
    return pd.DataFrame(rows, columns=_COLUMNS)


def _print(plan: Any, choice: Any, budget: float) -> None:
    """The table, then the overrides that fit ``budget`` CPU seconds and what they buy."""
    from iclab.report import fmt_hours

    how = "sum of its cells" + (
        f" × {plan.cpu_scale:.2g}, its recorded CPU time over its cells' wall time" if plan.cpu_scale != 1.0 else ""
    )
    typer.echo(f"{plan.experiment}: {plan.path} — the run as measured: {fmt_hours(plan.seconds)} CPU ({how})")
    typer.echo(f"{'claim':40s} {'verdict':11s} {'units now → needed':24s} {'--set':30s} {'fresh run':>10s}")
    for c in plan.claims:
        if c.status == "decided":
            typer.echo(f"{c.id:40s} {c.verdict:11s}")
            continue
        units = f"{c.n:,} → {'≥' if c.at_least else ''}{c.needed:,}" if c.needed else ""
        cost = fmt_hours(c.seconds) if c.override else ""
        typer.echo(f"{c.id:40s} {c.verdict:11s} {units:24s} {c.override:30s} {cost:>10s}  [{c.status}] {c.why}")
    typer.echo(f"\nwithin --budget {fmt_hours(budget)} (the whole fresh run, cheapest claims first):")
    for name, value in choice.overrides.items():
        typer.echo(f"  --set {name}={value}")
    if not choice.overrides:
        typer.echo("  (no override: no undecided claim fits)")
    typer.echo(
        f"  decides {len(choice.bought)} claim(s): {', '.join(choice.bought) or '—'}; estimated {fmt_hours(choice.seconds)} "
        "CPU — a fresh run with new seeds, judged alone (never this run topped up)"
    )


@app.command("plan")
def plan(
    run_dir: Path = typer.Argument(..., help="a finished run folder (or a shipped reference run)"),
    budget: str = typer.Option("4h", "--budget", help="CPU time the fresh run may take: 3h, 90m, 2h30m, 3600s"),
    out: Optional[str] = typer.Option(None, "--out", help="also write the table as CSV to this new file"),
    force: bool = typer.Option(False, "--force", help="replace an existing --out file"),
) -> None:
    """Judge a run folder again and say, per claim, the units that would decide it at its current effect and spread,
    the preset field to change and the CPU time a fresh run at that size costs; then the --set overrides that buy
    the most claims within --budget."""
    from iclab.report import choose_sizes, plan_sizes

    seconds = parse_duration("--budget", budget)
    target = check_new_file(out, force)
    sizes = plan_sizes(run_dir)
    _print(sizes, choose_sizes(sizes, seconds), seconds)
    if target is not None:
        with atomic_write(target) as tmp:
            _table(sizes).to_csv(tmp, index=False)
        typer.echo(f"table -> {target}")
