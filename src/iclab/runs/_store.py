"""The result store of a run folder: one SQLite database (WAL mode), one row per cell.

Rows are written by the driver only, one transaction per cell (``INSERT OR REPLACE`` keyed by the cell's
hash), so a killed driver (SIGKILL included) leaves every finished cell intact, no half-written row and no
duplicate. ``status`` is ``done`` or ``failed`` (with the error text); pending cells simply have no row.
A second table ``sweeps`` logs each invocation (executor, cells computed and failed, wall time) for the report.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterator

from iclab.errors import RunFolderError

__all__ = ["ResultStore"]

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


class ResultStore:
    """SQLite-backed map ``cell key -> (status, result row)``."""

    FILENAME = "results.sqlite"

    def __init__(self, folder: str | Path):
        self.path = Path(folder) / self.FILENAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=30.0)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a commit survives a killed process
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > _SCHEMA_VERSION:
                raise RunFolderError(f"{self.path} was written by a newer iclab (store schema {version}); "
                                     "use --out DIR or --force")
            self._db.executescript(_SCHEMA)
            self._db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise RunFolderError(f"{self.path} is not a readable iclab result store ({exc}); "
                                 "use --out DIR or --force") from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def statuses(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT key, status FROM cells"))

    def put(self, key: str, idx: int, cell: dict, *, result: dict | None = None, error: str | None = None,
            seconds: float = 0.0) -> None:
        """Record one finished cell (``result``) or failed cell (``error``) in one transaction."""
        status = "failed" if error is not None else "done"
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO cells (key, idx, cell, status, result, error, seconds, finished_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, idx, json.dumps(cell, sort_keys=True), status,
                 None if result is None else json.dumps(result, allow_nan=True), error, seconds, time.time()),
            )

    def rows(self, status: str | None = "done") -> Iterator[dict[str, Any]]:
        """Rows ``{**cell, **result, "_key", "_seconds"}`` ordered by cell index."""
        query = "SELECT key, cell, status, result, error, seconds FROM cells"
        args: tuple = ()
        if status is not None:
            query += " WHERE status = ?"
            args = (status,)
        for key, cell, st, result, error, seconds in self._db.execute(query + " ORDER BY idx", args):
            row = dict(json.loads(cell))
            if result:
                row.update(json.loads(result))
            row.update({"_key": key, "_status": st, "_seconds": seconds})
            if error:
                row["_error"] = error
            yield row

    def start_sweep(self, executor: str, workers: int | None, todo: int) -> int:
        with self._db:
            cur = self._db.execute("INSERT INTO sweeps (started, executor, workers, todo, computed, failed) "
                                   "VALUES (?, ?, ?, ?, 0, 0)", (time.time(), executor, workers, todo))
        return int(cur.lastrowid)

    def finish_sweep(self, sweep_id: int, computed: int, failed: int) -> None:
        with self._db:
            self._db.execute("UPDATE sweeps SET finished = ?, computed = ?, failed = ? WHERE rowid = ?",
                             (time.time(), computed, failed, sweep_id))

    def sweeps(self) -> list[dict[str, Any]]:
        """Every invocation that computed cells: ``started``, ``finished`` (None if killed), executor, counts."""
        cur = self._db.execute("SELECT started, finished, executor, workers, todo, computed, failed FROM sweeps "
                               "ORDER BY started")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur]

    def count(self) -> dict[str, int]:
        return dict(self._db.execute("SELECT status, COUNT(*) FROM cells GROUP BY status"))
