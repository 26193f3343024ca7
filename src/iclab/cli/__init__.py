"""``iclab`` command line: list, run, reproduce, report, export, theory …, hf ….

Every error iclab raises on purpose (:class:`iclab.errors.IclabError`) is printed as one line
``error: …`` with exit status 2, never as a traceback. Sub-command groups live in ``_<name>.py`` modules
that add themselves to :data:`app` when imported (see ``_SUBCOMMANDS``); the options of ``iclab`` itself
(``--version``, ``-v/-q``, ``--no-progress``) are in ``_global_options``.
"""

from __future__ import annotations

import importlib
import sys

import typer

from iclab.cli._global_options import global_options, show_progress
from iclab.errors import IclabError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="iclab: in-context learning in softmax attention — theory, experiments, temperature control.")
app.callback()(global_options)

__all__ = ["app", "main", "show_progress"]

_SUBCOMMANDS = ("_runs", "_show", "_theory", "_hf")


def _load_subcommands() -> None:
    for mod in _SUBCOMMANDS:
        name = f"{__name__}.{mod}"
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise


def main(argv: list[str] | None = None) -> int:
    """Console entry point."""
    _load_subcommands()
    try:
        rc = app(args=argv, standalone_mode=False)  # click returns typer.Exit's code here
    except IclabError as exc:
        typer.echo(f"error: {exc}", err=True)
        return 2
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("interrupted: finished cells are kept; rerun the same command to resume", err=True)
        return 130
    except SystemExit as exc:
        return int(exc.code or 0)
    except Exception as exc:  # usage errors: typer vendors click, so match by behaviour, not class
        if callable(getattr(exc, "show", None)) and isinstance(getattr(exc, "exit_code", None), int):
            exc.show()
            return exc.exit_code
        if type(exc).__name__ == "Exit" and isinstance(getattr(exc, "exit_code", None), int):
            return exc.exit_code
        raise
    return rc if isinstance(rc, int) else 0


if __name__ == "__main__":
    sys.exit(main())
