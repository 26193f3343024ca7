"""The result store of a run folder: one SQLite database (WAL mode), one row per cell.

Rows are written by the driver only, one transaction per cell (``INSERT OR REPLACE`` keyed by the cell's
hash), so a killed driver (SIGKILL included) leaves every finished cell intact, no half-written row and no
duplicate. ``status`` is ``done`` or ``failed`` (with the error text); pending cells simply have no row.
A second table ``sweeps`` logs each invocation (executor, cells computed and failed, wall time) for the report.

``ResultStore(folder, readonly=True)`` (``iclab report``, ``iclab export``, :func:`load_results`) creates and
changes nothing: a missing store is an error, and a store without a ``-wal`` file is read as immutable, so not
even SQLite's ``-wal``/``-shm`` side files appear. A store that cannot be written (disk full, read-only folder)
raises :class:`StoreWriteError` naming what is kept; a store that is not a database raises
:class:`StoreUnreadableError`, which ``--force`` clears.
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from iclab.errors import RunFolderError

__all__ = ["ResultStore", "StoreUnreadableError", "StoreWriteError", "results_row"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cells (
    key TEXT PRIMARY KEY,
    idx INTEGER NOT NULL,
    cell TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
    result TEXT,
    error TEXT,
    seconds REAL,
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS sweeps (
    started REAL NOT NULL,
    finished REAL,
    executor TEXT,
    workers INTEGER,
    todo INTEGER,
    computed INTEGER,
    failed INTEGER
)
"""
_SCHEMA_VERSION = 1


class StoreUnreadableError(RunFolderError):
    """``results.sqlite`` is not an iclab result store (not a database, a folder, a newer schema)."""


class StoreWriteError(RunFolderError):
    """The store could not be written (disk full, read-only folder); every row committed before is kept."""


def _why(exc: BaseException) -> str:
    """A short reason for an SQLite/OS error, naming the usual cause."""
    text = str(exc)
    if "full" in text or "disk I/O" in text or getattr(exc, "errno", None) in (28, 27):  # ENOSPC, EFBIG
        return f"{text}: is the disk full, or a file-size limit (ulimit -f) reached?"
    if "readonly" in text or "read-only" in text or isinstance(exc, PermissionError):
        return f"{text}: the folder or the file is read-only"
    return text


def results_row(key: str, cell: dict, status: str, result: dict | None, error: str | None,
                seconds: float | None) -> dict[str, Any]:
    """One cell as a results row: ``{**cell, **result, "_key", "_status", "_seconds"}``, plus ``_error`` when it
    failed (the rows of :meth:`ResultStore.rows`)."""
    row = {**cell, **(result or {}), "_key": key, "_status": status, "_seconds": seconds}
    if error:
        row["_error"] = error
    return row


class ResultStore:
    """SQLite-backed map ``cell key -> (status, result row)``; ``readonly=True`` changes nothing on disk."""

    FILENAME = "results.sqlite"

    def __init__(self, folder: str | Path, readonly: bool = False) -> None:
        self.path = Path(folder) / self.FILENAME
        self.readonly = readonly
        if not Path(folder).is_dir():
            raise RunFolderError(f"{folder} is not a run folder (no such folder)")
        if self.path.is_dir():
            raise StoreUnreadableError(f"{self.path} is a folder, not an iclab result store" + self._remedy())
        if readonly and not self.path.exists():
            raise RunFolderError(f"{folder} has no {self.FILENAME}: no cell of this run has finished yet")
        self._db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        try:
            db = self._open_readonly() if self.readonly else sqlite3.connect(self.path, timeout=30.0)
        except sqlite3.Error as exc:
            raise RunFolderError(f"cannot open {self.path} ({_why(exc)})") from None
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > _SCHEMA_VERSION:
                raise StoreUnreadableError(f"{self.path} was written by a newer iclab (store schema {version})"
                                           + self._remedy())
            if self.readonly:
                db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # reads the header: fails if not a db
            else:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a commit survives a killed process
                db.executescript(_SCHEMA)
                db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
                db.commit()
        except sqlite3.DatabaseError as exc:
            db.close()
            if isinstance(exc, sqlite3.OperationalError) and ("readonly" in str(exc) or "full" in str(exc)
                                                               or "disk I/O" in str(exc)):
                raise StoreWriteError(f"cannot write {self.path} ({_why(exc)}); use --out DIR") from None
            raise StoreUnreadableError(f"{self.path} is not a readable iclab result store ({exc})"
                                       + self._remedy()) from None
        except BaseException:
            db.close()
            raise
        return db

    def _remedy(self) -> str:
        return "" if self.readonly else "; use --out DIR, or --force to discard it"

    def _open_readonly(self) -> sqlite3.Connection:
        """Open without creating anything: immutable when no ``-wal`` holds newer rows, else read-only WAL."""
        wal = self.path.with_name(self.FILENAME + "-wal")
        mode = "mode=ro" if wal.exists() else "immutable=1"
        return sqlite3.connect(f"{self.path.absolute().as_uri()}?{mode}", uri=True, timeout=30.0)

    def has_cells_table(self) -> bool:
        return self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'cells'").fetchone() \
            is not None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def put(self, key: str, idx: int, cell: dict, *, result: dict | None = None, error: str | None = None,
            seconds: float = 0.0) -> None:
        """Record one finished cell (``result``) or failed cell (``error``) in one transaction."""
        status = "failed" if error is not None else "done"
        with self._writing(f"cell {idx}"), self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO cells (key, idx, cell, status, result, error, seconds, finished_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, idx, json.dumps(cell, sort_keys=True), status,
                 None if result is None else json.dumps(result, allow_nan=True), error, seconds, time.time()),
            )

    def rows(self, status: str | None = "done") -> Iterator[dict[str, Any]]:
        """Rows ``{**cell, **result, "_key", "_seconds"}`` ordered by cell index (none from an empty store)."""
        if self.readonly and not self.has_cells_table():
            return
        query = "SELECT key, cell, status, result, error, seconds FROM cells"
        args: tuple = ()
        if status is not None:
            query += " WHERE status = ?"
            args = (status,)
        for key, cell, st, result, error, seconds in self._db.execute(query + " ORDER BY idx", args):
            yield results_row(key, json.loads(cell), st, json.loads(result) if result else None, error, seconds)

    @contextmanager
    def _writing(self, what: str) -> Iterator[None]:
        """An SQLite/OS error while writing ``what`` becomes one :class:`StoreWriteError` saying what is kept."""
        try:
            yield
        except (sqlite3.OperationalError, OSError) as exc:
            try:
                kept = f" ({self.count().get('done', 0)} cells done)"
            except sqlite3.Error:
                kept = ""
            raise StoreWriteError(f"could not write {what} to {self.path} ({_why(exc)}); every cell finished "
                                  f"before is kept{kept}: fix the cause and rerun the same command to resume") from None

    def start_sweep(self, executor: str, workers: int | None, todo: int) -> int:
        with self._writing("the sweep log"), self._db:
            cur = self._db.execute("INSERT INTO sweeps (started, executor, workers, todo, computed, failed) "
                                   "VALUES (?, ?, ?, ?, 0, 0)", (time.time(), executor, workers, todo))
        return int(cur.lastrowid)

    def finish_sweep(self, sweep_id: int, computed: int, failed: int) -> None:
        with self._writing("the sweep log"), self._db:
            self._db.execute("UPDATE sweeps SET finished = ?, computed = ?, failed = ? WHERE rowid = ?",
                             (time.time(), computed, failed, sweep_id))

    def sweeps(self) -> list[dict[str, Any]]:
        """Every invocation that computed cells: ``started``, ``finished`` (None if killed), executor, counts."""
        if self.readonly and not self.has_cells_table():
            return []
        cur = self._db.execute("SELECT started, finished, executor, workers, todo, computed, failed FROM sweeps "
                               "ORDER BY started")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur]

    def count(self) -> dict[str, int]:
        if self.readonly and not self.has_cells_table():
            return {}
        return dict(self._db.execute("SELECT status, COUNT(*) FROM cells GROUP BY status"))

    def statuses(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT key, status FROM cells"))
