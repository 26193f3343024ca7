"""What the fuzz tests share: run one bad input, classify what happened, and count it.

A case is *clear* when it exits with status 2 and writes exactly one line to stderr, ``error: …``, that names
what was wrong, with no traceback, within :data:`BOUND` seconds, and every file under the working folder is
byte-identical afterwards. Anything else is counted under what went wrong: ``traceback`` (an exception escaped
or a traceback was printed), ``accepted`` (the command went on to create its run folder, or exited 0),
``hang`` (it ran past the bound), ``files_changed``, ``unclear`` (another exit status or not one error line);
``valid`` is a huge value that is a legal setting (it reached the run folder in a test that allows that);
``correct`` is a command on good input (an undamaged store, an earlier export) that succeeded as it should.
``COUNTS`` is printed at the end of the session by ``conftest.py`` (the closing note of issue 15 quotes it).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import signal
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Callable

BOUND = 30.0  # seconds one refused input may take (most take milliseconds)
COUNTS: Counter = Counter()


class Accepted(Exception):
    """Raised in place of creating a run folder: the input got past every check."""


class Hang(BaseException):
    """Raised by the timer when one case runs past :data:`BOUND`."""


def snapshot(root: Path) -> dict[str, str]:
    """Every file and folder under ``root`` with the SHA-256 of its bytes (folders: ``"dir"``)."""
    return {
        str(p.relative_to(root)): "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
    }


@contextlib.contextmanager
def bounded(seconds: float = BOUND):
    """Raise :class:`Hang` after ``seconds`` (main thread only; elsewhere unbounded)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum, frame):
        raise Hang()

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def classify_cli(
    argv: list[str], root: Path, names: tuple[str, ...] = (), may_run: bool = False, good: bool = False
) -> tuple[str, str]:
    """Run ``iclab argv`` in-process with ``root`` as the folder to watch; ``(outcome, stderr)``.

    ``names``: strings of which at least one must appear in the error line (the field or flag). ``may_run``: the
    input may be valid (a huge but legal value): reaching the run folder counts as ``valid``, not ``accepted``.
    ``good``: the input is good, so exit 0 (files may change) counts as ``correct``, and an error as ``wrong``."""
    from iclab.cli import main

    before = snapshot(root)
    err, out = io.StringIO(), io.StringIO()
    start = time.monotonic()
    try:
        with bounded(), contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = main(argv)
    except Accepted:
        outcome = "accepted"
    except Hang:
        outcome = "hang"
    except BaseException as exc:  # noqa: BLE001 - whatever escaped is a traceback for the user
        err.write(f"Traceback: {type(exc).__name__}: {exc}")
        outcome = "traceback"
    else:
        lines = err.getvalue().strip().splitlines()
        if "Traceback" in err.getvalue():
            outcome = "traceback"
        elif rc == 0:
            outcome = "accepted"
        elif rc != 2 or len(lines) != 1 or not lines[0].startswith("error: "):
            outcome = "unclear"
        elif names and not any(n in lines[0] for n in names):
            outcome = "unclear"
        else:
            outcome = "clear"
    if time.monotonic() - start > BOUND:
        outcome = "hang"
    if snapshot(root) != before:
        outcome = "files_changed" if outcome == "clear" else outcome
    if may_run and outcome == "accepted":
        outcome = "valid"
    if good and outcome in ("accepted", "clear", "files_changed"):
        outcome = "correct" if outcome == "accepted" else "wrong"
    COUNTS["cases"] += 1
    COUNTS[outcome] += 1
    return outcome, err.getvalue()


def classify_api(call: Callable[[], object], error_types: tuple[type, ...]) -> tuple[str, str]:
    """Call ``call``; ``clear`` when it raises one of ``error_types`` (iclab's own), else what it did."""
    try:
        with bounded():
            call()
    except error_types as exc:
        outcome, text = "clear", str(exc)
    except Hang:
        outcome, text = "hang", ""
    except BaseException as exc:  # noqa: BLE001
        outcome, text = "traceback", f"{type(exc).__name__}: {exc}"
    else:
        outcome, text = "accepted", ""
    COUNTS["cases"] += 1
    COUNTS[outcome] += 1
    return outcome, text


def count_result(ok: bool) -> None:
    """A property case that computes a result (not an error): counted as ``correct`` or ``wrong``."""
    COUNTS["cases"] += 1
    COUNTS["correct" if ok else "wrong"] += 1
