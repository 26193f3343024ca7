"""``iclab`` command line: list, run, reproduce, report, export, calibrate, theory …, hf …, models ….

Every error iclab raises on purpose (:class:`iclab.errors.IclabError`), and every operating-system error
(a file that cannot be read or written, a full disk), is printed as one line ``error: …`` with exit status 2,
never as a traceback. Ctrl-C prints ``interrupted: …`` and exits with 130, and SIGTERM does the same with exit 143
(128 + the signal; typer turns a KeyboardInterrupt into exit 130 on its own, so :func:`main` notes the signal
itself to say so and to tell the two apart). A reader that closes the pipe (``iclab show NAME | head -1``) ends
the command quietly with 141 (128 + SIGPIPE), and running out of memory is one ``error:`` line with exit 2. Sub-command groups live in
``_<name>.py`` modules that add themselves to :data:`app` when imported (see ``_SUBCOMMANDS``); the options of
``iclab`` itself (``--version``, ``-v/-q``, ``--no-progress``) are in ``_global_options``.
"""

from __future__ import annotations

import importlib
import io
import os
import signal
import sys
import threading
from contextlib import contextmanager

import typer

from iclab.cli._global_options import global_options, show_progress
from iclab.errors import IclabError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="iclab: in-context learning in softmax attention — theory, experiments, temperature control.",
)
app.callback()(global_options)

__all__ = ["app", "main", "show_progress", "one_line"]

_SUBCOMMANDS = ("_runs", "_show", "_theory", "_hf", "_models", "_calibrate", "_sizes")


def _load_subcommands() -> None:
    for mod in _SUBCOMMANDS:
        name = f"{__name__}.{mod}"
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise


_INTERRUPTED = "interrupted: finished cells are kept; rerun the same command to resume"
_MAX_ERROR = 2000  # characters of one error line (a backend's own message, e.g. MLflow's, is kept whole)


def one_line(text: str, limit: int = _MAX_ERROR) -> str:
    """``text`` on one line, cut in the middle beyond ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else f"{text[: limit // 2]} … {text[-limit // 3 :]}"


@contextmanager
def _noting_signals(seen: list):
    """Append the signal to ``seen`` when SIGINT or SIGTERM arrives, then raise KeyboardInterrupt (as Python does
    for SIGINT): SIGTERM stops a run the way Ctrl-C does. A signal whose handler is not the default (ignored, as
    SIGINT is in a background job, or set by the caller) is left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def note(signum, frame):
        seen.append(signum)
        raise KeyboardInterrupt

    defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    ours = [sig for sig, default in defaults.items() if signal.getsignal(sig) is default]
    for sig in ours:
        signal.signal(sig, note)
    try:
        yield
    finally:
        for sig in ours:
            signal.signal(sig, defaults[sig])


def main(argv: list[str] | None = None) -> int:
    """Console entry point."""
    _load_subcommands()
    interrupts: list = []
    try:
        with _noting_signals(interrupts):
            rc = app(args=argv, standalone_mode=False)  # click returns typer.Exit's code here
    except IclabError as exc:
        typer.echo(f"error: {one_line(exc)}", err=True)
        return 2
    except BrokenPipeError:  # the reader closed the pipe (`iclab show NAME | head -1`): stop quietly, as on SIGPIPE
        return _closed_pipe()
    except MemoryError:
        typer.echo("error: out of memory (the input asks for more than this machine has)", err=True)
        return 2
    except OSError as exc:  # the file system said no: one line, the file and the reason
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        typer.echo(f"error: {one_line(where + (exc.strerror or str(exc)))}", err=True)
        return 2
    except (typer.Abort, KeyboardInterrupt):
        typer.echo(_INTERRUPTED, err=True)
        return 128 + (interrupts[-1] if interrupts else signal.SIGINT)
    except SystemExit as exc:
        return _closed_pipe() if _pipe_was_closed() else int(exc.code or 0)
    except Exception as exc:  # usage errors: typer vendors click, so match by behaviour, not class
        if callable(getattr(exc, "format_message", None)) and isinstance(getattr(exc, "exit_code", None), int):
            where = getattr(getattr(exc, "ctx", None), "command_path", None)
            hint = f" (see `{where} --help`)" if where else ""
            typer.echo(f"error: {one_line(exc.format_message())}{hint}", err=True)
            return exc.exit_code
        if type(exc).__name__ == "Exit" and isinstance(getattr(exc, "exit_code", None), int):
            return exc.exit_code
        raise
    if interrupts and rc == 130:
        typer.echo(_INTERRUPTED, err=True)
        return 128 + interrupts[-1]
    try:
        sys.stdout.flush()  # here, not at interpreter exit, where a closed pipe turns into exit 1 and a warning
    except BrokenPipeError:
        return _closed_pipe()
    if _pipe_was_closed():
        return _closed_pipe()
    return rc if isinstance(rc, int) else 0


def _pipe_was_closed() -> bool:
    """Whether click met a closed stdout (EPIPE): it then wraps stdout to hush it and ends with a bare exit 1."""
    return type(sys.stdout).__name__ == "PacifyFlushWrapper"


def _closed_pipe() -> int:
    """Exit status 141 (128 + SIGPIPE, as a shell reports a command its reader stopped), no message; stdout is
    pointed at /dev/null so that Python's own flush at exit cannot fail again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):  # stdout is not a file (tests)
        pass
    return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
