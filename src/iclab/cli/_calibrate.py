"""``iclab calibrate RUN_DIR``: the false-agree rate of every claim's test at the run's own noise level.

The run folder is judged again with this iclab (:func:`iclab.report.rejudged_summary`; nothing in the folder is
written), and each claim's test is simulated under its least favourable false claim
(:func:`iclab.stats.calibration_table`, ``docs/calibration.md``). The table goes to the terminal, and to
``--out`` as CSV when named (a new file; an existing one only with ``--force``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from iclab.cli import app
from iclab.config import check_int
from iclab.files import atomic_write, check_new_file

#: fewest draws per claim: below this the Monte Carlo SE of a 5 % rate exceeds 2 points
MIN_DRAWS = 100

#: most draws per claim: each claim holds a few arrays of this length in memory
MAX_DRAWS = 1_000_000


def _rate(rate: float, mc_se: float) -> str:
    return "—" if rate != rate else f"{rate:6.1%} ± {mc_se:.1%}"


@app.command("calibrate")
def calibrate(
    run_dir: Path = typer.Argument(..., help="a run folder"),
    draws: int = typer.Option(1000, "--draws", help=f"simulated tables per claim ({MIN_DRAWS}..{MAX_DRAWS:,})"),
    seed: int = typer.Option(0, "--seed", help="seed of the simulation (an integer >= 0)"),
    out: Optional[str] = typer.Option(None, "--out", help="also write the table as CSV to this new file"),
    force: bool = typer.Option(False, "--force", help="replace an existing --out file"),
) -> None:
    """Judge a run folder again and simulate each claim's test where the claim is false: print the false-agree rate
    per claim (± its Monte Carlo SE) against the nominal 5 %. Exit status 1 when some test is not calibrated."""
    from iclab.experiments import get_experiment, load_run
    from iclab.report import rejudged_summary
    from iclab.stats import calibration_table

    check_int("--draws", draws, MIN_DRAWS, MAX_DRAWS)
    check_int("--seed", seed, 0)
    target = check_new_file(out, force)
    run = load_run(run_dir)
    table = calibration_table(rejudged_summary(run.path, get_experiment(run.experiment)), draws, seed)
    for r in table.itertuples():
        mark = "" if r.passes is None else ("pass" if r.passes else "FAIL")
        typer.echo(f"{r.claim_id:44s} {r.judge:12s} {_rate(r.false_agree, r.mc_se):16s} {mark:5s} {r.null}")
    tested = table[table["passes"].notna()]
    failed = int((tested["passes"] == False).sum())  # noqa: E712 - a column of True/False/None
    typer.echo(
        f"{len(tested)} of {len(table)} claims have a test record; {failed} above the nominal "
        f"{table['nominal'].iloc[0]:.0%} + 2 MC SE ({draws} draws, seed {seed})"
        if len(table)
        else "no claims"
    )
    if target is not None:
        with atomic_write(target) as tmp:
            table.to_csv(tmp, index=False)
        typer.echo(f"table -> {target}")
    if failed:
        raise typer.Exit(1)
