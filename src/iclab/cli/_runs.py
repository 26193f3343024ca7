"""``iclab list | run | reproduce | report | export``."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from iclab.cli import app, show_progress
from iclab.cli._global_options import logger
from iclab.cli._plan import plan_run
from iclab.cli._reproduce_each import reproduce_each
from iclab.cli._tracking import TRACKER_HELP, check_tracker, start_tracking
from iclab.config import check_choice, parse_overrides, read_config_file
from iclab.errors import ConfigError, IclabError, RunFolderError
from iclab.runs import RunOptions


@app.command("list")
def list_experiments() -> None:
    """List registered experiments with their paper, title and where each comes from (iclab, an installed plugin
    or ICLAB_EXPERIMENT_MODULES)."""
    from iclab.experiments import all_experiments, experiment_origin

    for exp in all_experiments():
        typer.echo(f"{exp.name:28s} {exp.paper:12s} {exp.title}  [{experiment_origin(exp.name)}]")


def _folder_option(flag: str, value: Optional[str]) -> Optional[Path]:
    """``--out``/``--root`` as a Path; an empty or blank value is refused (it would mean the current folder)."""
    if value is None:
        return None
    if not value.strip() or "\0" in value:
        raise ConfigError(flag, value, "a folder path (not empty)")
    return Path(value)


def _run_options(
    executor: str,
    workers: Optional[int],
    address: Optional[str],
    force: bool,
    retry_failed: bool,
    cell_timeout: Optional[float],
    no_budget_check: bool,
) -> RunOptions:
    """The run options of ``iclab run`` / ``reproduce``, made (and so checked) once from the flags, before any run
    folder is made; each run adds only its tracker's ``on_cell``."""
    return RunOptions(
        executor=executor,
        workers=workers,
        address=address,
        force=force,
        retry_failed=retry_failed,
        progress=show_progress(),
        cell_timeout=cell_timeout,
        budget_check=not no_budget_check,
    )


def _check_report_folder(folder: Path, title: str = "iclab reproduction report") -> None:
    """Refuse, before any run, a report folder holding files iclab did not write (its ``figures/`` is replaced):
    one with an ``index.html`` whose page is titled ``title`` (the reproduction or the paper-settings report)."""
    try:
        if folder.exists() and not folder.is_dir():
            raise RunFolderError(f"{folder} is a file; pass --root with a new folder")
        if not folder.exists() or not any(folder.iterdir()):
            return
        page = folder / "index.html"
        ours = page.is_file() and f"<title>{title}</title>" in page.read_text(errors="replace")[:20000]
    except OSError as exc:
        raise RunFolderError(f"cannot use {folder} for the report: {exc.strerror or exc}") from None
    if not ours:
        raise RunFolderError(
            f"{folder} holds files iclab did not write (no index.html of an {title}); the report would "
            "replace them: pass --root with a new folder"
        )


def _preset(quick: bool, full: bool, preset: Optional[str] = None) -> str:
    """The preset named by ``--quick``, ``--full`` or ``--preset NAME`` (at most one; default ``quick``)."""
    chosen = [name for name, on in (("quick", quick), ("full", full), (preset, preset is not None)) if on]
    if len(chosen) > 1:
        raise ConfigError("--quick/--full/--preset", "/".join(map(str, chosen)), "at most one of them")
    return chosen[0] if chosen else "quick"


@app.command("run")
def run(
    experiment: str = typer.Argument(..., help="experiment name (see `iclab list`)"),
    quick: bool = typer.Option(False, "--quick", help="the quick preset (default)"),
    full: bool = typer.Option(False, "--full", help="the full preset (the largest sweep)"),
    preset: Optional[str] = typer.Option(
        None,
        "--preset",
        help="a preset by name: quick, full or paper (the paper's settings for every claim that fits on a CPU)",
    ),
    set_: List[str] = typer.Option(
        [], "--set", help="override a config field: key=value (repeatable; `iclab show NAME` lists the fields)"
    ),
    config_file: Optional[Path] = typer.Option(
        None,
        "--config",
        help="TOML, YAML or JSON file of config fields "
        "(`iclab show NAME --format toml` writes one); --set wins over it",
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="base seed"),
    out: Optional[str] = typer.Option(
        None,
        "--out",
        help="run folder (default runs/<experiment>-<preset>); a new "
        "or empty folder, or a run folder of the same config",
    ),
    executor: str = typer.Option("local", "--executor", help="serial | local | ray"),
    workers: Optional[int] = typer.Option(None, "--workers", help="worker processes (local) / CPUs (ray)"),
    address: Optional[str] = typer.Option(None, "--address", help="Ray cluster address (ray executor)"),
    force: bool = typer.Option(False, "--force", help="discard results of another config in --out"),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="rerun cells that failed before"),
    cell_timeout: Optional[float] = typer.Option(
        None, "--cell-timeout", help="fail a cell that runs longer than this many seconds (the sweep goes on)"
    ),
    no_budget_check: bool = typer.Option(
        False, "--no-budget-check", help="run even when the estimated memory or time of a cell exceeds this machine's"
    ),
    tracker: Optional[str] = typer.Option(None, "--tracker", help=TRACKER_HELP),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="make every check the run makes (config, devices, models, budget, executor, run folder) and print the "
        "cells and the run folder; run and write nothing (exit status as the run's)",
    ),
) -> None:
    """Run (or resume) one experiment; writes results, figures and report.md into the run folder."""
    from iclab.report import run_and_report

    out_dir = _folder_option("--out", out)
    options = _run_options(executor, workers, address, force, retry_failed, cell_timeout, no_budget_check)
    check_tracker(tracker)
    overrides = {**(read_config_file(config_file) if config_file else {}), **parse_overrides(set_)}
    preset = _preset(quick, full, preset)
    plan = plan_run(experiment, preset, overrides, seed, out_dir, options)  # the sweep, built once, and its checks
    if dry_run:
        typer.echo("\n".join(plan.lines + ["dry run: every check passed; nothing was run or written"]))
        return
    for line in plan.lines:
        logger.info(line)
    live = start_tracking(tracker, plan.sweep, plan.folder)  # before the first cell
    try:
        result = run_and_report(plan.sweep, out=plan.folder, options=RunOptions.of(options, on_cell=live.on_cell))
    except BaseException:
        live.abort()
        raise
    typer.echo(
        f"{experiment}: {len(result.results)} cells done, {len(result.failed)} failed ({result.computed} run now, "
        f"{result.reused} read back) -> {result.path / 'report.md'}"
    )
    live.close(result)
    if len(result.failed):
        raise SystemExit(1)  # (typer.Exit is swallowed by main(): standalone_mode=False)


@app.command("reproduce")
def reproduce(
    quick: bool = typer.Option(False, "--quick", help="quick presets (minutes on a laptop CPU; default)"),
    full: bool = typer.Option(False, "--full", help="full presets (the largest sweeps)"),
    preset: Optional[str] = typer.Option(None, "--preset", help="presets by name: quick, full or paper"),
    only: List[str] = typer.Option([], "--only", help="run only these experiments (repeatable)"),
    root: str = typer.Option("runs", "--root", help="folder for run folders and the report"),
    executor: str = typer.Option("local", "--executor", help="serial | local | ray"),
    workers: Optional[int] = typer.Option(None, "--workers", help="worker processes (local) / CPUs (ray)"),
    address: Optional[str] = typer.Option(None, "--address", help="Ray cluster address (ray executor)"),
    force: bool = typer.Option(False, "--force", help="discard results of another config in the run folders"),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="rerun cells that failed before"),
    cell_timeout: Optional[float] = typer.Option(None, "--cell-timeout", help="fail a cell that runs longer"),
    no_budget_check: bool = typer.Option(False, "--no-budget-check", help="skip the memory/time estimates"),
    tracker: Optional[str] = typer.Option(None, "--tracker", help=TRACKER_HELP),
) -> None:
    """Run every registered experiment, then write runs/report/index.html, report.md and screenshot.png."""
    from iclab.experiments import experiment_names, sweep_for
    from iclab.report import reference_runs, write_combined_report
    from iclab.runs import default_run_dir, kept_workers, make_executor

    root = _folder_option("--root", root)
    options = _run_options(executor, workers, address, force, retry_failed, cell_timeout, no_budget_check)
    make_executor(options)  # a Ray --address is reached before anything runs
    _check_report_folder(root / "report")
    check_tracker(tracker)
    preset = _preset(quick, full, preset)
    names = list(only) or experiment_names()
    sweeps = [sweep_for(name, preset) for name in names]  # every name and preset checked before anything runs
    run_dirs, failures = [], []
    fresh = [s for s in sweeps if not default_run_dir(s.name, preset, root).exists()]  # they will compute a shared
    with kept_workers(ahead=fresh):  # workers import iclab and load each model once; shared inputs computed ahead
        reproduce_each(sweeps, preset, root, options, tracker, run_dirs, failures)
    page = write_combined_report(run_dirs, root / "report", failures)
    typer.echo(f"report: {page}")
    shipped = sorted(set(names) & set(reference_runs()))
    typer.echo(
        f"paper-settings verdicts beside this run's: reference runs shipped for {len(shipped)} of {len(names)} "
        "experiment(s); that report alone: iclab report --reference"
    )
    _screenshot(page)
    if failures:
        typer.echo("failed experiments:\n  " + "\n  ".join(failures), err=True)
        raise SystemExit(1)  # (typer.Exit is swallowed by main(): standalone_mode=False)


def _screenshot(page: Path) -> None:
    """Load the report in headless Chromium (when installed): save screenshot.png, warn about broken content."""
    from iclab.report import check_page, find_chromium

    if find_chromium() is None:
        return
    try:
        check = check_page(page, page.parent / "screenshot.png")
    except Exception as exc:  # noqa: BLE001 - the report itself is written; the check is a bonus
        typer.echo(f"warning: could not check the report in chromium: {exc}", err=True)
        return
    for problem in check.errors + [f"image {i['alt']!r} does not render" for i in check.broken_images]:
        typer.echo(f"warning: report page: {problem}", err=True)
    typer.echo(f"screenshot: {check.screenshot}")


@app.command("report")
def report(
    run_dir: Optional[Path] = typer.Argument(None, help="a run folder (or none, with --reference)"),
    force: bool = typer.Option(False, "--force", help="report a folder written by another iclab version or code"),
    reference: bool = typer.Option(
        False,
        "--reference",
        help="instead of a run folder: the paper-settings report alone (every shipped reference run, the `paper` "
        "preset of each experiment, judged by this iclab; seconds, nothing recomputed) into ROOT/reference",
    ),
    root: Optional[str] = typer.Option(None, "--root", help="with --reference: folder for the report (default runs)"),
) -> None:
    """Rewrite figures and report.md of a finished run folder (no cell is recomputed), each claim beside its
    paper-settings verdict (the shipped reference run, judged now). A folder written by another iclab version or
    code is refused without --force; with it, the report and the terminal say so. With --reference: write the
    paper-settings report alone (ROOT/reference/index.html, report.md, comparisons.csv)."""
    from iclab.experiments import get_experiment, load_run
    from iclab.report import write_run_report
    from iclab.runs import RunFolder, RunResult

    if reference or root is not None:
        _reference_report(run_dir, force, reference, root)
        return
    if run_dir is None:
        raise ConfigError("RUN_DIR", "(none)", "a run folder, or --reference for the paper-settings report")
    run = load_run(run_dir)
    foreign = "; ".join(RunFolder.foreign_code(run.meta))
    if foreign and not force:
        raise RunFolderError(
            f"{run_dir} was written by another iclab ({foreign}): its report is left as it is; "
            "pass --force to judge its results with this iclab (the report then says so)"
        )
    if foreign:
        typer.echo(f"warning: {run_dir} was written by another iclab ({foreign}); report.md says so", err=True)
    if not len(run.results) and not len(run.failed):
        raise IclabError(
            f"{run_dir} holds no finished or failed cell yet: nothing to report (the folder is left as it is)"
        )
    _check_whole(run)
    result = RunResult(RunFolder(run.path, run.meta), run.config, run.results, run.failed, 0, 0)
    typer.echo(str(write_run_report(get_experiment(run.experiment), run.config, result)))


def _check_whole(run) -> None:
    """A run folder is reported only whole: every stored cell is a cell of the grid its ``config.json`` makes (a
    config swapped for another experiment's valid one made every claim "not measured", exit 0), and every metric
    column holds one kind of value (a cell result ``a1="abc"`` among numbers showed as "raw RMS nan%")."""
    import numpy as np

    from iclab.errors import short_repr
    from iclab.experiments import get_experiment
    from iclab.runs import ResultStore, Sweep

    exp = get_experiment(run.experiment)
    grid = Sweep(run.experiment, "", run.config, exp.cells(run.config), exp.run_cell).keys()
    with ResultStore(run.path, readonly=True) as store:
        stored = np.concatenate([store.keys("done"), store.keys("failed")])
    foreign = int((~np.isin(stored, grid)).sum())
    if foreign:
        raise RunFolderError(
            f"{run.path}: {foreign} of its {len(stored)} stored cells are not cells of the config in its config.json "
            f"(experiment {run.experiment!r}): the record was replaced after the run; the folder is left as it is"
        )
    cell_keys = set().union(*(c.keys() for c in exp.cells(run.config)[:1]))
    for col in [c for c in run.results.columns if not c.startswith("_") and c not in cell_keys]:
        values = [v for v in run.results[col] if v is not None and not (isinstance(v, float) and v != v)]
        kinds = {_kind(v) for v in values}
        if "number" in kinds and "text" in kinds:
            key, bad = next((k, v) for k, v in zip(run.results["_key"], run.results[col]) if _kind(v) == "text")
            raise RunFolderError(
                f"{run.path}: cell {key} holds {col}={short_repr(bad)} where the other cells hold numbers: its "
                "result store was changed after the run; the folder is left as it is"
            )


def _kind(value) -> str:
    """``number`` (bool excluded), ``text``, or what else a stored metric is (a curve, a table)."""
    import numbers

    if isinstance(value, numbers.Real) and not isinstance(value, bool) and type(value).__name__ != "bool_":
        return "number"
    return "text" if isinstance(value, str) else type(value).__name__


def _reference_report(run_dir: Optional[Path], force: bool, reference: bool, root: Optional[str]) -> None:
    """``iclab report --reference [--root ROOT]``: one clear error for a flag that does not go with it."""
    from iclab.report import REFERENCE_REPORT_TITLE, write_reference_report

    if not reference:
        raise ConfigError("--root", root, "only with --reference (a run folder's report is written into it)")
    if run_dir is not None:
        raise ConfigError("RUN_DIR", str(run_dir), "no run folder with --reference (it reports the reference runs)")
    if force:
        raise ConfigError("--force", "true", "not with --reference (the reference runs are this iclab's own)")
    folder = (_folder_option("--root", root) or Path("runs")) / "reference"
    _check_report_folder(folder, REFERENCE_REPORT_TITLE)
    page = write_reference_report(folder)
    typer.echo(f"paper-settings report: {page} (and {page.with_name('report.md')})")


@app.command("export")
def export(
    run_dir: Path = typer.Argument(..., help="a run folder"),
    fmt: str = typer.Option("csv", "--format", help="csv | parquet"),
    out: Optional[str] = typer.Option(None, "--out", help="output file (default RUN_DIR/results.FORMAT)"),
    force: bool = typer.Option(
        False, "--force", help="replace an existing --out file that is not an export of this run"
    ),
) -> None:
    """Export a run's results table to CSV or Parquet (an existing file is replaced only if it is an export of this
    run)."""
    from iclab.runs import EXPORT_FORMATS, export_results, read_export

    check_choice("--format", fmt, EXPORT_FORMATS)
    if out is not None and not out.strip():
        raise ConfigError("--out", out, "a file path (not empty)")
    target = export_results(run_dir, fmt, out, force=force)
    typer.echo(f"{len(read_export(target))} rows -> {target}")
