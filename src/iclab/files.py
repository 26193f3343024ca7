"""The one rule for every file iclab writes, and the one guard for every ``--out``.

**Atomic writes** (:func:`atomic_write`, :func:`write_text_atomic`): the content goes to a temporary file in the
target's own folder (``.<name>.<pid>-<random>.tmp``, so the rename never crosses a file system), is flushed and
``fsync``-ed, then renamed over the target with ``os.replace``. A crash, a ``kill -9`` or a full disk at any
moment leaves the old file or none at the target, never a truncated one; the temporary file is removed on any
error, and one that a killed writer left behind is removed by the next write of the same target (see
:func:`atomic_write`). Summaries, reports, exports, probes, estimates and calibration tables all go through it;
converted models are written to a scratch folder moved into place (:mod:`iclab.hf._gguf_convert`).

**The --out guard** (:func:`check_out`): an existing file is replaced only when the writer recognises it as its
own earlier output (a predicate each writer supplies: an export of this run, a probe table, a τ estimate), or
when the user passes ``--force``; a folder is never a file name. iclab never replaces a file it did not write.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path
from typing import Callable, Iterator

from iclab.errors import ConfigError

__all__ = ["atomic_write", "write_text_atomic", "check_out", "check_new_file", "process_ended"]


@contextlib.contextmanager
def atomic_write(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block ends without an error, that file is fsync-ed and
    renamed over ``path`` (the folder is created first). On any error the temporary file is removed and ``path``
    is left as it was. The block may write the temporary path by any means (pandas, ``save_pretrained`` …).

    The temporary file is named ``.<name>.<pid>-<random>.tmp`` (``<pid>``: the writing process). A writer killed
    between creating it and the rename (``kill -9``, a power cut) cannot remove it, so each write of ``path`` first
    removes the temporary files of ``path`` whose process no longer runs on this machine; those of a live writer
    (another process or thread writing the same target now) are left alone. Not on Windows, where no process is
    asked, nor for a process on another machine sharing the folder, which is taken to be gone."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(target)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        os.chmod(tmp, _mode(target))  # mkstemp makes the file private (0600); the target keeps the usual mode
        yield tmp
        with open(tmp, "rb+") as fh:  # what the block wrote reaches the disk before the rename makes it visible
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError) and exc.errno is not None and exc.filename in (None, str(tmp)):
            raise OSError(exc.errno, exc.strerror, str(target)) from None  # the file the user named, not the temp
        raise
    with contextlib.suppress(OSError):  # the rename itself reaches the disk (POSIX; not possible on Windows)
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _remove_stale_temporaries(target: Path) -> None:
    """Remove ``.<name>.<pid>-<random>.tmp`` beside ``target`` whose ``<pid>`` is no running process (best effort).
    The random part holds no dot, so the temporary files of ``<name>.csv`` never match those of ``<name>``."""
    pattern = re.compile(rf"\.{re.escape(target.name)}\.([1-9][0-9]{{0,9}})-[^.]+\.tmp")
    with contextlib.suppress(OSError), os.scandir(target.parent) as entries:
        for entry in entries:
            found = pattern.fullmatch(entry.name)
            if found and process_ended(int(found.group(1))):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def process_ended(pid: int) -> bool:
    """Whether no process ``pid`` runs on this machine (a writer that left a temporary file and was killed). False
    where that cannot be known: on Windows (``os.kill(pid, 0)`` would signal it), or for a process of another user."""
    if os.name != "posix":
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):  # EPERM: it runs, as another user
        return False
    return False


def _mode(target: Path) -> int:
    """The permissions the target has (when it exists), else the usual ``0666`` less the process's umask."""
    with contextlib.suppress(OSError):
        return target.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`atomic_write`); return the path."""
    with atomic_write(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def check_out(path: str | Path, force: bool, ours: Callable[[Path], bool], what: str, flag: str = "--out") -> Path:
    """``path`` as a Path when it may be written: it does not exist, or ``ours(path)`` says it is this writer's
    own earlier output (``what``, e.g. "a probe table of iclab hf probe"), or ``force``. A folder, or another
    file without ``force``, is one ConfigError naming ``flag`` and saying how to go on; nothing is touched."""
    target = Path(path)
    if target.is_dir():
        raise ConfigError(flag, str(target), "a file name (this is a folder)")
    if target.exists() and not force and not _recognised(ours, target):
        raise ConfigError(
            flag,
            str(target),
            message=f"{target} exists and is not {what}: iclab never overwrites a file it did not write; pass a "
            "new file name, or --force to replace it",
        )
    return target


def check_new_file(path: str | None, force: bool, flag: str = "--out") -> Path | None:
    """``path`` as a Path for output that depends on this call's options (a table of one ``--draws`` or one
    ``--budget``), so no earlier file is ever taken as its own: None when no path is given; an empty path or one
    holding NUL, a folder, or an existing file without ``force`` is one ConfigError naming ``flag``."""
    if path is None:
        return None
    if not path.strip() or "\0" in path:
        raise ConfigError(flag, path, "a file path (not empty, not a folder)")
    return check_out(path, force, lambda p: False, "a new file", flag)


def _recognised(ours: Callable[[Path], bool], path: Path) -> bool:
    try:
        return bool(ours(path))
    except Exception:  # noqa: BLE001 - whatever cannot be read as the writer's output is not its output
        return False
