"""The result store of a run folder: one SQLite database (WAL mode), one row per cell.

Rows are written by the driver only, one transaction per cell, so a killed driver (SIGKILL included)
leaves every finished cell intact and no half-written row. ``status`` is ``done`` or ``failed`` (with the
error text); pending cells simply have no row.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterator

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
)
"""


class ResultStore:
    """SQLite-backed map ``cell key -> (status, result row)``."""

    FILENAME = "results.sqlite"

    def __init__(self, folder: str | Path):
        self.path = Path(folder) / self.FILENAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=30.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

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

    def count(self) -> dict[str, int]:
        return dict(self._db.execute("SELECT status, COUNT(*) FROM cells GROUP BY status"))
