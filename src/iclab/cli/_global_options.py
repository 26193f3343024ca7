"""Options of ``iclab`` itself (before the command): ``--version``, ``-v/--verbose``, ``-q/--quiet`` and
``--no-progress``.

Messages go through :mod:`logging` (logger ``iclab``, on stderr): warnings by default, ``-v`` adds what each
command is doing (config hash, run folder, cells to run, where a tracker logged), ``-vv`` debug detail, ``-q``
errors only. ``--no-progress`` (implied by ``-q``) turns off progress bars, e.g. in CI logs.
"""

from __future__ import annotations

import logging
import sys

import typer

from iclab import __version__

__all__ = ["global_options", "show_progress", "logger"]

logger = logging.getLogger("iclab")
_state = {"progress": True}


def show_progress() -> bool:
    """Whether commands draw progress bars (False after ``--no-progress`` or ``-q``)."""
    return _state["progress"]


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"iclab {__version__}")
        raise typer.Exit(0)


def _configure_logging(verbose: int, quiet: bool) -> None:
    level = logging.ERROR if quiet else (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbose, 2)]
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s" if verbose > 1 else "%(message)s"))
    logger.handlers[:] = [handler]
    logger.setLevel(level)
    logger.propagate = False


def global_options(
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_print_version, help="Print iclab's version and exit."
    ),
    verbose: int = typer.Option(
        0, "-v", "--verbose", count=True, help="Say what each step does (-v); add debug detail (-vv)."
    ),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Print errors and results only (no progress bars)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="Draw no progress bars (e.g. in CI logs)."),
) -> None:
    """iclab: in-context learning in softmax attention — theory, experiments, temperature control."""
    _configure_logging(verbose, quiet)
    _state["progress"] = not (no_progress or quiet)
