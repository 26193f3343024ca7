"""What iclab does with a folder it should not trust: a result store with bytes overwritten on disk, a folder
written by another iclab version or code, and an ``export --out`` target that already exists. Each is one
``error:`` line (exit 2) that names the file and what is wrong, nothing is changed, and ``--force`` does what
it says."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

import fixtures_experiments  # noqa: F401 - registers fx_sweep / fx_other in this process
from iclab.cli import main
from iclab.experiments import run_experiment
from iclab.runs import ResultStore, export_results, load_results, read_export
from iclab.runs._store import StoreDamagedError
from test_runs_safety import snapshot

N_CELLS = 60  # rows over several pages of the store


pytestmark = pytest.mark.usefixtures("fixture_experiments_env")


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """One finished run of fx_sweep (copied by the tests that change it)."""
    out = tmp_path_factory.mktemp("finished") / "r"
    run_experiment("fx_sweep", overrides={"n_cells": N_CELLS}, out=out, executor="serial", progress=False)
    return out


def copy_run(finished: Path, dest: Path) -> Path:
    shutil.copytree(finished, dest)
    return dest


def cli(capsys, *argv) -> tuple[int, str]:
    capsys.readouterr()
    rc = main(list(argv))
    return rc, capsys.readouterr().err


def one_error_line(rc: int, err: str, *needles: str) -> str:
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _pages(store: Path) -> tuple[int, dict[str, int]]:
    """The page size and the root page of every table and index of ``store``."""
    with sqlite3.connect(f"file:{store}?immutable=1", uri=True) as db:  # no -wal/-shm side files
        size = db.execute("PRAGMA page_size").fetchone()[0]
        roots = dict(db.execute("SELECT name, rootpage FROM sqlite_master"))
    return size, roots


def damage(store: Path, kind: str) -> None:
    """Overwrite bytes of ``store`` in place, as a failing disk or a torn copy would."""
    data = bytearray(store.read_bytes())
    size, roots = _pages(store)
    if kind in ("cells", "sweeps", "index"):  # a b-tree page's header and cell pointers
        name = {"cells": "cells", "sweeps": "sweeps", "index": "sqlite_autoindex_cells_1"}[kind]
        at = (roots[name] - 1) * size + 8
        data[at : at + 64] = b"\xff" * 64
    else:  # inside one row's JSON text: not UTF-8 ("text"), or UTF-8 that is not JSON ("json")
        at = data.index(b'"mean": ')
        data[at : at + 8] = b"\xff\xfe\xff\xfe\xff\xfe\xff\xfe" if kind == "text" else b"{{{{{{{{"
    store.write_bytes(bytes(data))


DAMAGES = ["cells", "sweeps", "index", "text", "json"]


@pytest.mark.parametrize("kind", DAMAGES)
def test_report_and_export_of_a_damaged_store_are_one_line_and_change_nothing(finished, tmp_path, capsys, kind):
    """Before: ``sqlite3.DatabaseError: database disk image is malformed`` (a traceback) from report, and export
    exited 0 on several of these without a word."""
    run = copy_run(finished, tmp_path / "r")
    damage(run / "results.sqlite", kind)
    before = snapshot(tmp_path)
    for argv in (
        ["report", str(run)],
        ["export", str(run)],
        ["export", str(run), "--format", "parquet"],
        ["export", str(run), "--out", str(tmp_path / "x.csv")],
    ):
        line = one_error_line(*cli(capsys, *argv), str(run / "results.sqlite"), "is damaged", "still readable")
        assert "cell rows" in line and "sweep log" in line, line
    assert snapshot(tmp_path) == before
    with pytest.raises(StoreDamagedError, match="is damaged"):
        load_results(run)


def test_the_damage_line_says_what_still_reads(finished, tmp_path, capsys):
    run = copy_run(finished, tmp_path / "r")
    damage(run / "results.sqlite", "sweeps")
    line = one_error_line(*cli(capsys, "report", str(run)))
    assert f"still readable: {N_CELLS} of {N_CELLS} cell rows" in line, line
    run = copy_run(finished, tmp_path / "t")
    damage(run / "results.sqlite", "text")
    line = one_error_line(*cli(capsys, "export", str(run)))
    assert f"still readable: {N_CELLS - 1} of {N_CELLS} cell rows, the sweep log" in line, line


@pytest.mark.parametrize("kind", DAMAGES)
def test_a_run_into_a_damaged_store_is_refused_and_force_starts_over(finished, tmp_path, capsys, kind):
    run = copy_run(finished, tmp_path / "r")
    damage(run / "results.sqlite", kind)
    argv = ["run", "fx_sweep", "--executor", "serial", "--set", f"n_cells={N_CELLS}", "--out", str(run)]
    before = snapshot(run)
    one_error_line(*cli(capsys, *argv), "is damaged", "--force")
    assert snapshot(run) == before
    rc, err = cli(capsys, *argv, "--force")
    assert rc == 0, err
    assert len(load_results(run)) == N_CELLS


def test_an_undamaged_store_still_reads(finished, tmp_path):
    with ResultStore(finished, readonly=True) as store:
        assert store.count() == {"done": N_CELLS}
    assert len(load_results(finished)) == N_CELLS


def test_export_never_overwrites_a_file_it_did_not_write(finished, tmp_path, capsys):
    """Before: ``iclab export RUN --out mydata.csv`` silently replaced the user's own file."""
    run = copy_run(finished, tmp_path / "r")
    mine = tmp_path / "mydata.csv"
    for content in ("_key,a\nmine,1\n", "x,y\n1,2\n", "\0\1binary"):
        mine.write_text(content)
        before = snapshot(tmp_path)
        one_error_line(*cli(capsys, "export", str(run), "--out", str(mine)), str(mine), "--force")
        assert snapshot(tmp_path) == before
    rc, err = cli(capsys, "export", str(run), "--out", str(mine), "--force")
    assert rc == 0, err
    assert len(read_export(mine)) == N_CELLS


def test_export_replaces_an_earlier_export_of_the_same_run_only(finished, tmp_path, capsys):
    run = copy_run(finished, tmp_path / "r")
    for fmt in ("csv", "parquet"):
        first = export_results(run, fmt)
        assert first == run / f"results.{fmt}"
        assert export_results(run, fmt) == first  # an export of this run: replaced
        rc, err = cli(capsys, "export", str(run), "--format", fmt)
        assert rc == 0, err
    run_experiment("fx_other", overrides={"n_cells": 3}, out=tmp_path / "o", executor="serial", progress=False)
    theirs = export_results(tmp_path / "o", "csv", tmp_path / "theirs.csv")
    before = snapshot(tmp_path)
    one_error_line(*cli(capsys, "export", str(run), "--out", str(theirs)), "not an export of this run")
    assert snapshot(tmp_path) == before


def _foreign(run: Path, **meta) -> None:
    record = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps({**record, **meta}))


@pytest.mark.parametrize("meta", [{"iclab_version": "0.0.1"}, {"code_hash": "0123456789abcdef"}])
def test_report_of_a_folder_from_another_iclab_is_refused_unless_forced(finished, tmp_path, capsys, meta):
    """Before: exit 0, report.md rewritten, nothing said."""
    run = copy_run(finished, tmp_path / "r")
    _foreign(run, **meta)
    before = snapshot(tmp_path)
    value = next(iter(meta.values()))
    one_error_line(*cli(capsys, "report", str(run)), "written by another iclab", value, "--force")
    assert snapshot(tmp_path) == before
    rc, err = cli(capsys, "report", str(run), "--force")
    assert rc == 0 and err.startswith("warning: ") and value in err and "Traceback" not in err, err
    report = (run / "report.md").read_text()
    assert "Written by another iclab" in report and value in report
    rc, err = cli(capsys, "export", str(run))  # the data itself exports as it is
    assert rc == 0, err
