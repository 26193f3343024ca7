"""What ``iclab run`` is about to do, checked and said before it does it: every check the run makes
(:func:`iclab.runs.check_run`: the grid, devices and models, the budget, the executor, the run folder), raising
the error the run would raise, then the experiment, preset and config hash, the cells (by part), the run folder
and what is in it. ``--dry-run`` prints this and stops (nothing is created or written); ``-v`` logs it before a
real run."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from iclab.runs import RunChecks, RunOptions, Sweep

__all__ = ["RunPlan", "plan_run"]


@dataclass(frozen=True)
class RunPlan:
    """A checked run: its sweep, its run folder, and the lines that describe it."""

    sweep: Sweep
    folder: Path
    lines: list[str]


def _folder_state(checks: RunChecks) -> str:
    """What the run will find in its folder (the checks passed, so the run accepts it)."""
    if not checks.path.exists():
        return "new"
    if checks.recorded is not None:
        return "holds this config: finished cells are read back, the rest run"
    if (checks.path / "config.json").exists():
        return "holds another run's results (or an unreadable config.json): --force discards them"
    return "exists, holds no run yet"


def plan_run(
    name: str, preset: str, overrides: Mapping[str, Any], seed: int | None, out: Path | None, options: RunOptions
) -> RunPlan:
    """Build the sweep of experiment ``name`` (once: the run runs this one) and check its run as the run itself does
    with ``options`` (raising its error); describe it. Runs and writes nothing."""
    from iclab.experiments import run_dir_for, sweep_for
    from iclab.runs import check_run

    sweep = sweep_for(name, preset, overrides, seed)
    folder = run_dir_for(sweep, customised=bool(overrides) or seed is not None, out=out)
    checks = check_run(sweep, folder, options)
    parts = Counter(str(cell.get("part", "-")) for cell in sweep.cells)
    by_part = ", ".join(f"{part}: {count}" for part, count in parts.items()) if len(parts) > 1 else ""
    return RunPlan(
        sweep,
        checks.path,
        [
            f"{name}: preset {preset}, config hash {sweep.config_hash}",
            f"{len(sweep.cells)} cells" + (f" ({by_part})" if by_part else "") + f" on the {options.executor} executor",
            f"run folder {folder}: {_folder_state(checks)}",
        ],
    )
