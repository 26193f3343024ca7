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

Every open runs SQLite's ``PRAGMA integrity_check`` and decodes every row's JSON (together about two seconds per
200,000 cells): a store that fails either (bytes overwritten on disk, a torn copy) raises
:class:`StoreDamagedError`, one line naming the file, the first problems SQLite finds and what still reads (how
many cell rows decode, whether the sweep log does). ``iclab report`` and ``iclab export`` refuse a damaged store
rather than judge or export part of it; ``sqlite3 FILE .recover`` salvages what still reads; ``iclab run
--force`` discards it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd

from iclab.errors import RunFolderError
from iclab.runs._table import among, key_ints, results_table

__all__ = ["ResultStore", "StoreDamagedError", "StoreUnreadableError", "StoreWriteError", "results_row"]

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


class StoreDamagedError(StoreUnreadableError):
    """``results.sqlite`` is a database that fails SQLite's integrity check or holds a row that does not decode."""


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


# What SQLite raises on a damaged file (an error message quoting a damaged schema may not even decode).
_FAILS = (sqlite3.Error, UnicodeDecodeError)
# The types iclab writes (SQLite keeps whatever type a value was stored with: overwritten bytes can change it).
_CELL_TYPES = ("typeof(key) = 'text' AND typeof(idx) = 'integer' AND typeof(status) = 'text' AND typeof(cell) = 'text' "
               "AND typeof(result) IN ('text', 'null') AND typeof(error) IN ('text', 'null') "
               "AND typeof(seconds) IN ('real', 'integer', 'null')")
_SWEEP_TYPES = ("typeof(started) IN ('real', 'integer') AND typeof(finished) IN ('real', 'integer', 'null') "
                "AND typeof(executor) IN ('text', 'null') AND typeof(workers) IN ('integer', 'null') "
                "AND typeof(todo) IN ('integer', 'null') AND typeof(computed) IN ('integer', 'null') "
                "AND typeof(failed) IN ('integer', 'null')")


def _readable_rows(db: sqlite3.Connection) -> tuple[int, int | None, bool]:
    """``(cell rows that read, cell rows recorded, whether the sweep log reads)``. A row reads when its values have
    the types iclab wrote, its texts are UTF-8 and its cell and result are JSON objects; the rows after a malformed
    page do not read, and the count of rows recorded is None when even that does not."""
    db.text_factory = bytes  # undecodable text is damage, counted here, not an error
    try:
        total = db.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
    except _FAILS:
        total = None
    readable = 0
    try:
        query = f"SELECT key, status, error, cell, result FROM cells WHERE {_CELL_TYPES}"
        for *texts, cell, result in db.execute(query):
            readable += all(t is None or _utf8(t) for t in texts) and all(
                t is None or _json_object(t) for t in (cell, result))
    except _FAILS:
        pass
    try:
        log = db.execute(f"SELECT 1 FROM sweeps WHERE NOT ({_SWEEP_TYPES})").fetchone() is None and all(
            ex is None or _utf8(ex) for (ex,) in db.execute("SELECT executor FROM sweeps"))
    except _FAILS:
        log = False
    finally:
        db.text_factory = str
    return readable, total, log


def _utf8(text: bytes) -> bool:
    try:
        text.decode()
        return True
    except UnicodeDecodeError:
        return False


def _json_object(text: bytes) -> bool:
    """Whether a stored JSON text is UTF-8 and parses to an object (cells and results are dicts)."""
    try:
        return isinstance(json.loads(text.decode()), dict)
    except ValueError:  # UnicodeDecodeError, JSONDecodeError
        return False


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
                raise StoreUnreadableError(f"{self.path} was written by a newer iclab, or its header is damaged (store schema {version}; "
                                           f"this iclab reads {_SCHEMA_VERSION})"
                                           + self._remedy())
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            problems = [ln for row in db.execute("PRAGMA integrity_check(3)") for ln in row[0].splitlines()
                        if not ln.startswith("***")]
            if problems != ["ok"]:
                raise StoreDamagedError(self._damage(db, "SQLite's integrity check: " + "; ".join(problems[:2])))
            readable, total, log = _readable_rows(db) if "cells" in tables else (0, 0, True)
            if readable != total or not (log or "sweeps" not in tables):
                bad = "some" if total is None else total - readable
                raise StoreDamagedError(self._damage(db, f"{bad} cell rows do not read" if readable != total
                                                     else "the sweep log does not read"))
            if not self.readonly:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a commit survives a killed process
                if version < _SCHEMA_VERSION or not {"cells", "sweeps"} <= tables:  # else opening writes nothing
                    db.executescript(_SCHEMA)
                    db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
                    db.commit()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # (a schema text that is not UTF-8)
            what = "its schema is not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc)
            damaged = ("malformed" in what or "schema" in what) and self._damage(db, what)
            db.close()
            if damaged:
                raise StoreDamagedError(damaged) from None
            if isinstance(exc, sqlite3.OperationalError) and ("readonly" in str(exc) or "full" in str(exc)
                                                               or "disk I/O" in str(exc)):
                raise StoreWriteError(f"cannot write {self.path} ({_why(exc)}); use --out DIR") from None
            raise StoreUnreadableError(f"{self.path} is not a readable iclab result store ({exc})"
                                       + self._remedy()) from None
        except BaseException:
            db.close()
            raise
        return db

    def _damage(self, db: sqlite3.Connection, what: str) -> str:
        """One line: the file, what is damaged (``what``) and what still reads."""
        cells, total, log = _readable_rows(db)
        of = "" if total is None else f" of {total}"
        return (f"{self.path} is damaged ({what}); still readable: {cells}{of} cell rows, "
                f"{'the' if log else 'not the'} sweep log. Nothing was changed: salvage them with "
                f"`sqlite3 {self.path} .recover`, or rerun into a new folder (--out DIR)"
                + ("" if self.readonly else ", or pass --force to discard them"))

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """A row that does not decode, or a page SQLite finds malformed while reading, is StoreDamagedError."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            if "decode" not in str(exc):
                raise RunFolderError(f"cannot read {self.path} ({_why(exc)})") from None
            raise StoreDamagedError(self._damage(self._db, f"a row does not decode: {str(exc)[:80]}")) from None
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:  # malformed pages; values that do not parse
            raise StoreDamagedError(self._damage(self._db, f"reading a row: {str(exc)[:80]}")) from None

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
        with self._reading():
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
            except (sqlite3.Error, RunFolderError):
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
        with self._reading():
            cur = self._db.execute("SELECT started, finished, executor, workers, todo, computed, failed FROM sweeps "
                                   "ORDER BY started")
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row)) for row in cur]

    def wall_seconds(self) -> float:
        """Wall-clock seconds summed over the invocations: ``finished - started`` of each, and for one that was
        killed (no ``finished``) the time to its last cell on record, the last ``finished_at`` before the next
        invocation started (a lower bound: its unfinished cells and a cell computed again later do not count)."""
        sweeps = self.sweeps()
        if not sweeps:
            return 0.0
        with self._reading():
            stamps = np.sort(np.array([t for (t,) in self._db.execute("SELECT finished_at FROM cells")
                                       if t is not None], dtype=float))
        total = 0.0
        for i, s in enumerate(sweeps):
            end = s["finished"]
            if end is None:
                until = sweeps[i + 1]["started"] if i + 1 < len(sweeps) else np.inf
                inside = stamps[(stamps >= s["started"]) & (stamps < until)]
                end = inside[-1] if len(inside) else s["started"]
            total += float(end) - s["started"]
        return total

    def count(self) -> dict[str, int]:
        if self.readonly and not self.has_cells_table():
            return {}
        with self._reading():
            return dict(self._db.execute("SELECT status, COUNT(*) FROM cells GROUP BY status"))

    def cell_texts(self) -> set[str]:
        """The stored cells (done or failed) as the JSON texts they were written as (``json.dumps(cell,
        sort_keys=True)``): a planned cell whose text is not here has not run."""
        if self.readonly and not self.has_cells_table():
            return set()
        with self._reading():
            return {c for (c,) in self._db.execute("SELECT cell FROM cells")}

    def keys(self, status: str) -> np.ndarray:
        """The keys of the cells with ``status`` (``done``, ``failed``) as :func:`key_ints`, in no order."""
        if self.readonly and not self.has_cells_table():
            return np.zeros(0, dtype=np.uint64)
        with self._reading():
            return key_ints(k for (k,) in self._db.execute("SELECT key FROM cells WHERE status = ?", (status,)))

    def table(self, status: str | None = "done", keys: np.ndarray | None = None) -> pd.DataFrame:
        """The rows of :meth:`rows` as one DataFrame (:func:`results_table`), only those whose key is in ``keys``
        (:func:`key_ints`) when given. The rows are filtered in bounded chunks, never all held at once (and not at
        all when every stored row is of ``keys``, the usual case)."""
        rows = self.rows(status)
        if keys is not None and (status is None or not np.isin(self.keys(status), keys).all()):
            rows = among(rows, np.sort(keys))
        return results_table(rows)

