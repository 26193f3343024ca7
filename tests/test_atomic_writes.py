"""Every file iclab writes is written atomically, and every ``--out`` is guarded (issue 40, items 1 and 2).

A writer that fails part-way (a full disk, ``kill -9``) leaves the old file or none, never a truncated one; an
existing file is replaced only when it is the writer's own earlier output or with ``--force``."""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
import types
from pathlib import Path

import pytest

import fixtures_experiments  # noqa: F401 - registers fx_sweep in this process
from fixtures_experiments import fixture_env, iclab_cli
from iclab.cli import main
from iclab.errors import ConfigError
from iclab.experiments import run_experiment
from iclab.files import atomic_write, check_out, write_text_atomic
from test_runs_safety import snapshot


pytestmark = pytest.mark.usefixtures("fixture_experiments_env")


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("finished") / "r"
    run_experiment("fx_sweep", overrides={"n_cells": 40}, out=out, executor="serial", progress=False)
    return out


def _one_error_line(rc: int, err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    assert all(n in lines[0] for n in needles), lines[0]


# --- the helper itself ---


def test_a_failure_inside_the_block_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "summary.json"
    target.write_text('{"old": 1}')
    with pytest.raises(OSError):
        with atomic_write(target) as tmp:
            tmp.write_text('{"new": ')  # half written, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
    assert target.read_text() == '{"old": 1}' and sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]


def test_a_written_file_keeps_the_usual_mode_and_replaces_the_old(tmp_path):
    target = tmp_path / "sub" / "report.md"
    write_text_atomic(target, "new\n")
    umask = os.umask(0)
    os.umask(umask)
    assert target.read_text() == "new\n" and (target.stat().st_mode & 0o777) == (0o666 & ~umask)
    target.chmod(0o640)
    write_text_atomic(target, "newer\n")
    assert target.read_text() == "newer\n" and (target.stat().st_mode & 0o777) == 0o640


def test_kill_9_inside_the_block_leaves_the_old_file(tmp_path):
    target = tmp_path / "results.csv"
    target.write_text("a,b\n1,2\n")
    code = (
        "import os, signal, sys\nfrom iclab.files import atomic_write\n"
        "with atomic_write(sys.argv[1]) as tmp:\n    tmp.write_text('a,b\\n3')\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(target)], env=fixture_env(), timeout=120)
    assert proc.returncode == -9 and target.read_text() == "a,b\n1,2\n"


def test_check_out_refuses_a_folder_and_a_file_it_did_not_write(tmp_path):
    mine = tmp_path / "mine.csv"
    mine.write_text("x\n")
    with pytest.raises(ConfigError, match="this is a folder"):
        check_out(tmp_path, True, lambda p: True, "a table")
    with pytest.raises(ConfigError, match="--force"):
        check_out(mine, False, lambda p: False, "a table")
    with pytest.raises(ConfigError, match="--force"):
        check_out(mine, False, lambda p: 1 / 0, "a table")  # an unreadable file is not ours
    assert check_out(mine, True, lambda p: False, "a table") == mine
    assert check_out(mine, False, lambda p: True, "a table") == mine


# --- writers under a full disk (a file-size limit in a real process) ---


def _limited(nbytes: int):
    def limit() -> None:  # Python ignores SIGXFSZ, so an oversized write fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))

    return limit


@pytest.mark.slow
def test_a_full_disk_during_report_leaves_the_old_summary_and_report(finished, tmp_path):
    import shutil

    run = Path(shutil.copytree(finished, tmp_path / "r"))
    assert iclab_cli(["report", str(run)]).returncode == 0
    before = {name: (run / name).read_bytes() for name in ("summary.json", "report.md")}
    assert len(before["summary.json"]) > 2048
    figures = snapshot(run / "figures")
    proc = iclab_cli(["report", str(run)], preexec=_limited(2048))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    for name, content in before.items():
        assert (run / name).read_bytes() == content
    json.loads((run / "summary.json").read_text())
    assert not [p for p in run.rglob("*") if p.name.endswith(".tmp")] and snapshot(run / "figures") == figures


@pytest.mark.slow
def test_a_full_disk_during_export_leaves_no_file(finished, tmp_path):
    out = tmp_path / "x.csv"
    proc = iclab_cli(["export", str(finished), "--out", str(out)], preexec=_limited(1024))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert not out.exists() and list(tmp_path.iterdir()) == []


# --- --out guards ---


def test_export_refuses_a_suffix_that_is_not_its_format(finished, tmp_path, capsys):
    before = snapshot(tmp_path)
    capsys.readouterr()
    rc = main(["export", str(finished), "--format", "parquet", "--out", str(tmp_path / "x.csv")])
    _one_error_line(rc, capsys.readouterr().err, "--out", ".parquet")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("command", ["probe", "tau"])
def test_hf_out_never_replaces_a_users_file(tmp_path, capsys, command):
    prompts = tmp_path / "p.txt"
    prompts.write_text("paris is the capital of france\nrome is the capital of italy\n")
    mine = tmp_path / ("user_probe.csv" if command == "probe" else "user_tau.json")
    mine.write_text("my own data\n")
    before = snapshot(tmp_path)
    args = ["hf", command, "--model", "minilm", "--prompts", str(prompts), "--out", str(mine)]
    if command == "tau":
        args += ["--shifted", str(prompts)]
    capsys.readouterr()
    _one_error_line(main(args), capsys.readouterr().err, str(mine), "--force")
    assert snapshot(tmp_path) == before


def test_hf_probe_replaces_its_own_table_and_with_force_a_users_file(tmp_path, capsys):
    import pandas as pd

    prompts = tmp_path / "p.txt"
    prompts.write_text("paris is the capital of france\n")
    out = tmp_path / "probe.csv"
    out.write_text("mine\n")
    args = ["hf", "probe", "--model", "minilm", "--prompts", str(prompts), "--out", str(out)]
    assert main(args + ["--force"]) == 0
    assert main(args) == 0  # its own earlier table
    assert len(pd.read_csv(out)) == 6 * 12 and sorted(p.name for p in tmp_path.iterdir()) == ["p.txt", "probe.csv"]


# --- corrupt model files ---


def test_models_list_calls_a_cut_cache_damaged(tmp_path, monkeypatch, capsys):
    from safetensors.torch import save_file
    import torch

    folder = tmp_path / "smollm2-135m-instruct-fp32"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    save_file({"w": torch.zeros(64, 64)}, folder / "model.safetensors")
    monkeypatch.setenv("ICLAB_CACHE", str(tmp_path))
    capsys.readouterr()
    assert main(["models", "list"]) == 0
    assert "converted: " in capsys.readouterr().out
    data = (folder / "model.safetensors").read_bytes()
    for cut in (b"", data[: len(data) // 2]):
        (folder / "model.safetensors").write_bytes(cut)
        assert main(["models", "list"]) == 0
        line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("smollm2"))
        assert "damaged: " in line and "converted: " not in line


@pytest.mark.parametrize("size", [0, 1 << 20])
def test_converting_a_zero_byte_or_truncated_gguf_is_one_clear_error(tmp_path, size):
    from iclab.errors import UnsupportedModelError
    from iclab.hf import _loading
    from iclab.hf._gguf_convert import convert_gguf

    real = _loading._locate_smollm2(tmp_path) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    package = tmp_path / "pkg"
    package.mkdir()
    with open(real, "rb") as src:
        (package / "m.gguf").write_bytes(src.read(size))
    spec = types.SimpleNamespace(alias="smollm2", gguf_file="m.gguf", locate=lambda work: package, package=None)
    target = tmp_path / "cache" / "m-fp32"
    with pytest.raises(UnsupportedModelError, match="m.gguf is damaged"):
        convert_gguf(spec, target)
    assert not target.exists() and not [p for p in (tmp_path / "cache").iterdir() if "tmp" in p.name]


# --- a run folder is checked whole before it is reported (item 4) ---


def _report_refused(capsys, run: Path, *needles: str) -> None:
    before = snapshot(run)
    capsys.readouterr()
    _one_error_line(main(["report", str(run)]), capsys.readouterr().err, *needles)
    assert snapshot(run) == before


def test_report_refuses_a_config_json_swapped_for_another_experiments(finished, tmp_path, capsys):
    import shutil

    run = Path(shutil.copytree(finished, tmp_path / "r"))
    run_experiment("fx_other", overrides={"n_cells": 3}, out=tmp_path / "o", executor="serial", progress=False)
    shutil.copy(tmp_path / "o" / "config.json", run / "config.json")  # a valid record, of another run
    _report_refused(capsys, run, "not cells of the config", "fx_other")


def test_report_refuses_a_config_edited_after_the_run(finished, tmp_path, capsys):
    import shutil

    run = Path(shutil.copytree(finished, tmp_path / "r"))
    record = json.loads((run / "config.json").read_text())
    record["config"]["n_samples"] += 1
    (run / "config.json").write_text(json.dumps(record))
    _report_refused(capsys, run, "does not match itself", record["config_hash"])


def test_report_refuses_a_stored_result_of_the_wrong_kind(finished, tmp_path, capsys):
    import shutil
    import sqlite3

    run = Path(shutil.copytree(finished, tmp_path / "r"))
    with sqlite3.connect(run / "results.sqlite") as db:
        key, result = db.execute("SELECT key, result FROM cells WHERE status = 'done' LIMIT 1").fetchone()
        db.execute(
            "UPDATE cells SET result = ? WHERE key = ?", (json.dumps({**json.loads(result), "mean": "abc"}), key)
        )
    db.close()
    _report_refused(capsys, run, "mean='abc'", "other cells hold numbers")


def test_report_of_an_untouched_folder_still_works(finished, tmp_path, capsys):
    import shutil

    run = Path(shutil.copytree(finished, tmp_path / "r"))
    assert main(["report", str(run)]) == 0 and (run / "summary.json").is_file()


@pytest.mark.slow
def test_a_full_disk_during_hf_probe_leaves_the_old_table(tmp_path):
    prompts = tmp_path / "p.txt"
    prompts.write_text("paris is the capital of france\n")
    out = tmp_path / "probe.csv"
    out.write_text("layer,head,rows,mean,var,row_var,spread,entropy\n0,0,1,0.0,0.0,0.0,0.0,0.0\n")  # an earlier table
    before = out.read_bytes()
    proc = iclab_cli(["hf", "probe", "--model", "minilm", "--prompts", str(prompts), "--out", str(out)], _limited(2048))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert out.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["p.txt", "probe.csv"]
