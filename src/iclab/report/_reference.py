"""Reference runs: the ``paper`` preset of every experiment, run once on one commit and shipped with the package,
re-judged by the installed code.

A reference run is a run folder stripped to what judging needs, under ``iclab/reference/<experiment>-paper/``:

- ``config.json`` — the run's own record (config, config hash, seed, iclab version, git revision, code hash);
- ``results.sqlite`` — its result store (every finished and failed cell; the ``sweeps`` log with wall times);
- ``reference.json`` — how it was made: commit, date, machine, wall and CPU seconds, cells done and failed.

Nothing is recomputed: :func:`reference_summary` loads the cells and judges every declared claim with the installed
``claims``/``compare`` (:func:`iclab.report._judging.rejudged_summary`), once per process and folder, so a change of
the judge shows up as a change of a reference verdict (guarded by ``tests/test_reference.py`` against the committed
snapshot ``tests/data/reference_verdicts.json``, rewritten by ``make reference-snapshot``). :func:`load_reference`
gives the reports one :class:`Reference` per experiment — "none shipped" included — and :func:`ship_reference` makes
a reference from a finished run folder.
"""

from __future__ import annotations

import copy
import json
import os
import platform
import shutil
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from iclab.errors import IclabError, RunFolderError
from iclab.experiments import Comparison, get_experiment
from iclab.report._judging import rejudged_summary
from iclab.runs import ResultStore

__all__ = [
    "REFERENCE_DIR",
    "Reference",
    "load_reference",
    "reference_runs",
    "reference_summary",
    "reference_meta",
    "reference_verdicts",
    "verdict_changes",
    "ship_reference",
]

#: Where the shipped reference runs live (package data of ``iclab``).
REFERENCE_DIR = Path(__file__).resolve().parents[1] / "reference"
_PRESET = "paper"


def reference_runs(root: Path | None = None) -> dict[str, Path]:
    """``{experiment: folder}`` of every shipped reference run (``<experiment>-paper`` with a ``config.json``)."""
    root = REFERENCE_DIR if root is None else Path(root)
    if not root.is_dir():
        return {}
    out = {}
    for folder in sorted(root.iterdir()):
        if folder.is_dir() and (folder / "config.json").is_file():
            out[json.loads((folder / "config.json").read_text())["experiment"]] = folder
    return out


def reference_meta(folder: Path) -> dict[str, Any]:
    """``reference.json`` of a reference folder (commit, date, machine, wall and CPU seconds, cell counts)."""
    path = Path(folder) / "reference.json"
    return json.loads(path.read_text()) if path.is_file() else {}


_JUDGED: dict[tuple, dict[str, Any]] = {}  # (experiment, folder, file stamps) -> rejudged summary, per process


def reference_summary(experiment: str, root: Path | None = None) -> dict[str, Any] | None:
    """The shipped ``paper`` run of ``experiment`` re-judged by the installed code: ``{"comparisons": [...],
    "errors": [...], "meta": reference.json, "path": folder}``; ``None`` when none is shipped. Judged once per
    process and folder (a changed file is judged again); each call gets its own copy."""
    folder = reference_runs(root).get(experiment)
    if folder is None:
        return None
    stamp = tuple((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in sorted(folder.iterdir()) if f.is_file())
    key = (experiment, str(folder.resolve()), stamp)
    if key not in _JUDGED:
        _JUDGED[key] = rejudged_summary(folder, get_experiment(experiment))
    return {**copy.deepcopy(_JUDGED[key]), "meta": reference_meta(folder), "path": str(folder)}


@dataclass(frozen=True)
class Reference:
    """The paper-settings verdicts of one experiment: its shipped reference run re-judged by the installed code
    (``rows``: claim id -> comparison, ``family``: its expected chance agreements and Holm family), or none shipped
    (``path`` None, no rows)."""

    experiment: str
    rows: Mapping[str, Comparison] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)
    errors: tuple[str, ...] = ()
    path: Path | None = None
    family: Mapping[str, Any] = field(default_factory=dict)  # chance_agrees and holm (family_summary)

    @property
    def shipped(self) -> bool:
        return self.path is not None

    def row(self, claim_id: str) -> Comparison | None:
        return self.rows.get(claim_id)


def load_reference(experiment: str, root: Path | None = None) -> Reference:
    """The :class:`Reference` of ``experiment`` (:func:`reference_summary`); one that cannot be judged (an
    experiment not registered here, an unreadable ``config.json``) keeps its folder and says why in ``errors``."""
    try:
        summary = reference_summary(experiment, root)
    except (IclabError, OSError, ValueError, KeyError) as exc:
        folder = reference_runs(root).get(experiment)
        meta = reference_meta(folder) if folder else {}
        return Reference(experiment, {}, meta, (f"reference run not judged: {type(exc).__name__}: {exc}",), folder)
    if summary is None:
        return Reference(experiment)
    rows = {c["id"]: Comparison(**c) for c in summary["comparisons"]}
    family = {k: summary[k] for k in ("chance_agrees", "holm") if k in summary}
    return Reference(experiment, rows, summary["meta"], tuple(summary["errors"]), Path(summary["path"]), family)


def reference_verdicts(root: Path | None = None) -> dict[str, dict[str, str]]:
    """``{experiment: {claim id: verdict}}`` of every shipped reference run, re-judged now (the snapshot's form)."""
    out = {}
    for name in reference_runs(root):
        ref = load_reference(name, root)
        if ref.errors and not ref.rows:
            raise IclabError(f"reference run of {name} not judged: {'; '.join(ref.errors)}")
        out[name] = {cid: c.verdict for cid, c in sorted(ref.rows.items())}
    return out


def verdict_changes(old: Mapping[str, Mapping[str, str]], root: Path | None = None) -> list[str]:
    """One readable line per claim whose verdict differs from the snapshot ``old`` ({experiment: {id: verdict}}):
    ``experiment / claim id: old -> new (reason, or the statistic of a judged verdict)``, claims and experiments that appeared or went included."""
    lines, shipped = [], reference_runs(root)
    for name in sorted(set(old) | set(shipped)):
        ref = load_reference(name, root) if name in shipped else None
        now = {} if ref is None else {cid: c.verdict for cid, c in ref.rows.items()}
        if ref is None:
            lines.append(f"{name}: reference run no longer shipped (snapshot has {len(old[name])} claims)")
            continue
        for cid in sorted(set(old.get(name, {})) | set(now)):
            before, after = old.get(name, {}).get(cid, "(not in the snapshot)"), now.get(cid, "(no such claim now)")
            if before != after:
                c = ref.rows.get(cid)
                why = "" if c is None else (c.reason or c.statistic)  # a judged verdict's why is its statistic
                lines.append(f"{name} / {cid}: {before} -> {after}" + (f" ({why})" if why else ""))
        lines += [f"{name}: {e}" for e in ref.errors]
    return lines


def ship_reference(
    run_dir: str | Path, root: Path | None = None, *, cpu_seconds: float | None = None, cpu_note: str = ""
) -> Path:
    """Copy the finished ``paper`` run ``run_dir`` into ``root/<experiment>-paper/`` (default: the package's
    reference folder): ``config.json``, a compacted single-file copy of ``results.sqlite`` (WAL folded in, no side
    files) and ``reference.json`` (commit, date, machine, wall time summed over the invocations, a killed one up to
    its last cell; ``cpu_seconds`` if measured, with ``cpu_note`` saying how where not all of it was, e.g. a killed
    invocation's share estimated; cells done/failed). An existing reference of the same experiment is replaced."""
    run_dir = Path(run_dir)
    meta = json.loads((run_dir / "config.json").read_text())
    if meta.get("preset") != _PRESET:
        raise RunFolderError(f"{run_dir}: preset {meta.get('preset')!r}; a reference run is a {_PRESET!r} run")
    root = REFERENCE_DIR if root is None else Path(root)
    dest = root / f"{meta['experiment']}-{_PRESET}"
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copy2(run_dir / "config.json", tmp / "config.json")
    src = sqlite3.connect(f"file:{run_dir / 'results.sqlite'}?mode=ro", uri=True)
    try:
        src.execute(f"VACUUM INTO '{tmp / 'results.sqlite'}'")
    finally:
        src.close()
    with ResultStore(run_dir, readonly=True) as store:
        counts, invocations = store.count(), len(store.sweeps())
        wall = store.wall_seconds()  # a killed invocation counts up to its last cell
    done, failed = counts.get("done", 0), counts.get("failed", 0)
    ref = {
        "experiment": meta["experiment"],
        "preset": _PRESET,
        "commit": meta.get("git_revision"),
        "code_hash": meta.get("code_hash"),
        "iclab_version": meta.get("iclab_version"),
        "shipped": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {_cpu_name()}, {_cores()} CPU cores",
        "device": str(meta["config"].get("device") or "cpu"),
        "wall_seconds": round(wall, 1),
        "cpu_seconds": None if cpu_seconds is None else round(float(cpu_seconds), 1),
        **({"cpu_note": str(cpu_note)} if cpu_note else {}),
        "invocations": invocations,
        "cells_done": done,
        "cells_failed": failed,
    }
    (tmp / "reference.json").write_text(json.dumps(ref, indent=2) + "\n")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return dest


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
