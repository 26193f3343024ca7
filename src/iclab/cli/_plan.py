"""What ``iclab run`` is about to do, said before it does it: the experiment, preset and config hash, the cells
(by part), the run folder and what is in it. ``--dry-run`` prints this and stops (nothing is created or
written); ``-v`` logs it before a real run."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Mapping

__all__ = ["run_plan"]


def _folder_state(folder: Path, config_hash: str) -> str:
    """What a run would find in ``folder`` (read only: config.json is the one file looked at)."""
    from iclab.errors import RunFolderError
    from iclab.runs import RunFolder

    meta_path = folder / "config.json"
    try:
        RunFolder.check_target(folder)
    except RunFolderError as exc:
        return f"refused ({exc})"
    if not folder.exists():
        return "new"
    if not meta_path.exists():
        return "exists, holds no run yet"
    try:
        old_hash = json.loads(meta_path.read_text()).get("config_hash")
    except (OSError, ValueError):
        return "holds an unreadable config.json (refused unless --force)"
    if old_hash == config_hash:
        return "holds this config: finished cells are read back, the rest run"
    return f"holds another config ({old_hash}): refused unless --force (which discards its results)"


def run_plan(
    name: str, preset: str, overrides: Mapping[str, Any], seed: int | None, out: Path | None, executor: str
) -> list[str]:
    """The lines describing the run of experiment ``name`` (validates the config; runs and writes nothing)."""
    from iclab.experiments import run_dir_for, sweep_for

    sweep = sweep_for(name, preset, overrides, seed)
    sweep.tasks()  # the checks a run makes on its grid (no cells, too many, a repeated cell), before any line
    folder = run_dir_for(sweep, customised=bool(overrides) or seed is not None, out=out)
    parts = Counter(str(cell.get("part", "-")) for cell in sweep.cells)
    by_part = ", ".join(f"{part}: {count}" for part, count in parts.items()) if len(parts) > 1 else ""
    return [
        f"{name}: preset {preset}, config hash {sweep.config_hash}",
        f"{len(sweep.cells)} cells" + (f" ({by_part})" if by_part else "") + f" on the {executor} executor",
        f"run folder {folder}: {_folder_state(folder, sweep.config_hash)}",
    ]
