"""Fuzz what ``iclab report`` and ``iclab export`` are given besides flags: result stores with random bytes
overwritten, run folders written by another iclab version or code, and ``--out`` files that already exist.

Every case is classified by ``tests/fuzz_harness.py``: refused input must be one ``error:`` line (exit 2, no
traceback, within ``BOUND`` seconds, every file byte-identical); good input (a store whose overwritten bytes
SQLite never reads, an earlier export of the same run, a folder of this iclab) must succeed and counts as a
correct result. Whether a store is damaged is decided here independently, with SQLite itself: ``PRAGMA
integrity_check`` and every row's JSON.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fixtures_experiments  # noqa: F401 - registers fx_sweep / fx_other in this process
from fuzz_harness import classify_cli
from iclab.experiments import run_experiment
from iclab.runs import export_results, read_export

pytestmark = [pytest.mark.filterwarnings("ignore"), pytest.mark.usefixtures("fixture_experiments_env")]

_FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """A finished fx_sweep run (40 cells, 2 failed: several pages of the store) and a finished fx_other run."""
    root = tmp_path_factory.mktemp("runs")
    over = {"n_cells": 40, "fail_cells": "3,17", "flag": str(root / "never")}
    run_experiment("fx_sweep", overrides=over, out=root / "sweep", executor="serial", progress=False)
    run_experiment("fx_other", overrides={"n_cells": 3}, out=root / "other", executor="serial", progress=False)
    return {"sweep": root / "sweep", "other": root / "other"}


@contextmanager
def _copy(run: Path) -> Iterator[tuple[Path, Path]]:
    """A fresh working folder holding a copy of ``run``: ``(folder, run copy)``; removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="iclab-fuzz-") as work:
        yield Path(work), Path(shutil.copytree(run, Path(work) / "r"))


_NUMBER, _TEXT = (int, float), (str,)
_CELL_COLUMNS = {
    "key": _TEXT,
    "idx": (int,),
    "status": _TEXT,
    "cell": _TEXT,
    "result": _TEXT + (type(None),),
    "error": _TEXT + (type(None),),
    "seconds": _NUMBER + (type(None),),
}
_SWEEP_COLUMNS = {
    "started": _NUMBER,
    "finished": _NUMBER + (type(None),),
    "executor": _TEXT + (type(None),),
    **{k: (int, type(None)) for k in ("workers", "todo", "computed", "failed")},
}


def _damaged(store: Path) -> bool:
    """Whether SQLite finds ``store`` damaged, or a value is not what iclab wrote (text that is UTF-8, a number,
    a JSON object): the oracle, independent of iclab."""
    try:
        with sqlite3.connect(f"file:{store}?immutable=1", uri=True) as db:
            if db.execute("PRAGMA integrity_check").fetchall() != [("ok",)]:
                return True
            if db.execute("PRAGMA user_version").fetchone()[0] != 1:  # iclab's store schema: a header overwritten
                return True
            for table, columns in (("cells", _CELL_COLUMNS), ("sweeps", _SWEEP_COLUMNS)):
                for row in db.execute(f"SELECT {', '.join(columns)} FROM {table}"):  # text must decode
                    if not all(isinstance(v, t) for v, t in zip(row, columns.values())):
                        return True
                    if table == "cells" and not all(isinstance(json.loads(v or "{}"), dict) for v in row[3:5]):
                        return True
    except (sqlite3.Error, ValueError):
        return True
    return False


@settings(_FUZZ, max_examples=150)
@given(data=st.data(), command=st.sampled_from(["report", "export", "parquet"]))
def test_a_store_with_overwritten_bytes_is_one_clear_error_or_reads_whole(runs, data, command):
    with _copy(runs["sweep"]) as (work, run):
        store = run / "results.sqlite"
        raw = bytearray(store.read_bytes())
        for _ in range(data.draw(st.integers(1, 3), label="overwrites")):
            at = data.draw(st.integers(0, len(raw) - 1), label="offset")
            junk = data.draw(st.binary(min_size=1, max_size=256), label="bytes")
            raw[at : at + len(junk)] = junk[: len(raw) - at]
        store.write_bytes(bytes(raw))
        damaged = _damaged(store)
        argv = {
            "report": ["report", str(run)],
            "export": ["export", str(run), "--out", str(work / "x.csv")],
            "parquet": ["export", str(run), "--format", "parquet", "--out", str(work / "x.parquet")],
        }[command]
        outcome, err = classify_cli(argv, work, names=("results.sqlite",), good=not damaged)
    assert outcome == ("clear" if damaged else "correct"), (command, damaged, outcome, err[-2000:])


_META = st.fixed_dictionaries(
    {},
    optional={
        "iclab_version": st.sampled_from(["0.0.1", "9.9.9", "", "0.1.0+local", None, 1]),
        "code_hash": st.text("0123456789abcdef", min_size=1, max_size=16) | st.sampled_from([None, ""]),
    },
).filter(bool)


@_FUZZ
@given(meta=_META, force=st.booleans())
def test_a_folder_from_another_iclab_is_refused_by_report_unless_forced(runs, meta, force):
    with _copy(runs["sweep"]) as (work, run):
        record = json.loads((run / "config.json").read_text())
        (run / "config.json").write_text(json.dumps({**record, **meta}))
        argv = ["report", str(run)] + (["--force"] if force else [])
        outcome, err = classify_cli(argv, work, names=("another iclab",), good=force)
        note = "Written by another iclab" in (run / "report.md").read_text() if (run / "report.md").exists() else False
    assert outcome == ("correct" if force else "clear"), (meta, force, outcome, err[-2000:])
    assert note == force and (not force or err.startswith("warning: ")), (meta, err)


_CONTENT = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300),
    st.sampled_from(["", "_key\n", "_key,a\nnot-a-key,1\n", "a,b\n1,2\n", "_key\n\n"]),
)


@_FUZZ
@given(
    content=_CONTENT,
    fmt=st.sampled_from(["csv", "parquet"]),
    name=st.sampled_from(["mine.csv", "mine.parquet", "mine", "results.csv"]),
)
def test_an_existing_out_file_is_replaced_only_if_it_is_an_export_of_this_run(runs, content, fmt, name):
    with _copy(runs["sweep"]) as (work, run):
        target = work / name
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
        outcome, err = classify_cli(
            ["export", str(run), "--format", fmt, "--out", str(target)], work, names=("--force", f"--format {fmt}")
        )  # a name whose suffix is another format's is refused for that first (issue 40)
    assert outcome == "clear", (content[:80], fmt, name, outcome, err[-2000:])


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("source", ["same run", "other run"])
def test_an_export_is_replaced_only_by_an_export_of_the_same_run(runs, fmt, source):
    with _copy(runs["sweep"]) as (work, run):
        target = export_results(runs["sweep"] if source == "same run" else runs["other"], fmt, work / f"t.{fmt}")
        outcome, err = classify_cli(
            ["export", str(run), "--format", fmt, "--out", str(target)],
            work,
            names=("--force",),
            good=source == "same run",
        )
        rows = len(read_export(target))
    assert outcome == ("correct" if source == "same run" else "clear"), (outcome, err[-2000:])
    assert rows == (40 if source == "same run" else 3)
