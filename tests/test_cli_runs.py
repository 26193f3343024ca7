"""``iclab run | reproduce | report | export`` end to end on the fixture experiments (serial executor)."""

import pandas as pd
import pytest

import fixtures_experiments  # noqa: F401 - registers fx_sweep / fx_other in this process
from iclab.cli import main


pytestmark = pytest.mark.usefixtures("fixture_experiments_env")


def test_run_failed_cell_then_retry_failed(tmp_path, capsys):
    out, flag = tmp_path / "run", tmp_path / "flag"
    args = [
        "run",
        "fx_sweep",
        "--executor",
        "serial",
        "--out",
        str(out),
        "--set",
        "n_cells=5",
        "--set",
        "fail_cells=1,3",
        "--set",
        f"flag={flag}",
    ]
    assert main(args) == 1  # failed cells: non-zero exit, the rest is kept
    text = capsys.readouterr()
    assert "3 cells done, 2 failed (5 run now, 0 read back)" in text.out
    assert "cell 1 of fx_sweep failed: RuntimeError: fixture cell 1 fails until" in text.err
    assert "fx_sweep [serial]" in text.err and "5/5" in text.err and "failed=2" in text.err  # one progress bar
    assert "--retry-failed" in (out / "report.md").read_text()
    flag.touch()
    assert main(args) == 1  # without --retry-failed nothing is rerun
    assert "3 cells done, 2 failed (0 run now, 3 read back)" in capsys.readouterr().out
    assert main(args + ["--retry-failed"]) == 0
    assert "5 cells done, 0 failed (2 run now, 3 read back)" in capsys.readouterr().out


def test_run_refuses_other_config_with_one_line_error(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "fx_sweep", "--executor", "serial", "--out", str(out), "--set", "n_cells=2"]) == 0
    capsys.readouterr()
    assert main(["run", "fx_sweep", "--executor", "serial", "--out", str(out), "--set", "n_cells=3"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: run folder") and "--force" in err and "--out" in err and "\n" not in err
    assert main(["run", "fx_sweep", "--executor", "spark", "--out", str(out)]) == 2
    assert "executor" in capsys.readouterr().err


def test_export_and_report_commands(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "fx_sweep", "--executor", "serial", "--out", str(out), "--set", "n_cells=3"]) == 0
    assert main(["export", str(out), "--format", "parquet", "--out", str(tmp_path / "r.parquet")]) == 0
    assert "3 rows ->" in capsys.readouterr().out
    assert len(pd.read_parquet(tmp_path / "r.parquet")) == 3
    assert main(["export", str(out)]) == 0 and (out / "results.csv").exists()
    assert main(["export", str(out), "--format", "xlsx"]) == 2
    (out / "report.md").unlink()
    assert main(["report", str(out)]) == 0 and (out / "report.md").exists()
    assert main(["export", str(tmp_path)]) == 2
    assert "not an iclab run folder" in capsys.readouterr().err


def test_reproduce_writes_the_combined_report(tmp_path, capsys):
    root = tmp_path / "runs"
    assert (
        main(
            [
                "reproduce",
                "--only",
                "fx_sweep",
                "--only",
                "fx_other",
                "--root",
                str(root),
                "--executor",
                "serial",
                "--tracker",
                "tensorboard",
            ]
        )
        == 0
    )
    page = root / "report" / "index.html"
    assert page.exists() and (root / "report" / "report.md").exists()
    said = capsys.readouterr().out
    assert f"report: {page}" in said
    for name in ("fx_sweep", "fx_other"):  # each experiment its own tracked run, beside the run folders
        assert f"tensorboard: 6 cells -> tensorboard event files in {root / 'tensorboard' / name}-quick/" in said
        assert list((root / "tensorboard" / f"{name}-quick").glob("*/events.out.tfevents.*"))
    assert (root / "fx_sweep-quick" / "results.sqlite").exists()
    assert main(["reproduce", "--only", "nope", "--root", str(root)]) == 2


def test_preset_flags_exclusive_and_named_preset_validated(tmp_path, capsys):
    from iclab.cli import main

    assert main(["run", "temperature", "--quick", "--preset", "full", "--out", str(tmp_path / "x")]) == 2
    assert "--quick/--full/--preset" in capsys.readouterr().err
    assert main(["run", "temperature", "--preset", "nonsense", "--out", str(tmp_path / "y")]) == 2
    err = capsys.readouterr().err
    assert "invalid preset='nonsense'" in err and "quick" in err
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def _refused_run(tmp_path, name, case):
    """A run that ``iclab run`` refuses before any cell: (experiment, arguments, what the error says)."""
    if case == "budget":
        return "temperature", ["--set", "n_test=1000000000"], "one cell would need about 1.08 TB"
    if case == "device":
        return "multihead", ["--set", "device=cuda:99"], "invalid device='cuda:99'"
    if case == "model":
        return "temperature-llm", ["--set", f"models={tmp_path / 'no-model'}"], "invalid models="
    if case == "foreign folder":
        (tmp_path / name).mkdir()
        (tmp_path / name / "notes.txt").write_text("mine")
        return "fx_sweep", [], "is not empty (notes.txt) and is not an iclab run folder"
    assert main(["run", "fx_sweep", "--executor", "serial", "--out", str(tmp_path / name), "--set", "n_cells=2"]) == 0
    return "fx_sweep", ["--set", "n_cells=3"], "holds results of another run"  # case "another run"


@pytest.mark.parametrize("case", ["budget", "device", "model", "foreign folder", "another run"])
def test_dry_run_refuses_what_the_run_refuses_with_the_same_error(tmp_path, capsys, case):
    experiment, args, says = _refused_run(tmp_path, "out", case)
    out = tmp_path / "out"
    before = sorted(p.name for p in out.iterdir()) if out.exists() else None
    capsys.readouterr()
    argv = ["run", experiment, "--executor", "serial", "--out", str(out), *args]
    assert main([*argv, "--dry-run"]) == 2
    dry = capsys.readouterr()
    assert says in dry.err and "dry run" not in dry.out
    assert (sorted(p.name for p in out.iterdir()) if out.exists() else None) == before  # nothing written
    assert main(argv) == 2
    assert capsys.readouterr().err == dry.err  # one check, one message
    assert (sorted(p.name for p in out.iterdir()) if out.exists() else None) == before
