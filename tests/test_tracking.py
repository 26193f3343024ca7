"""Experiment tracking, offline: MLflow's local file store, TensorBoard event files and W&B offline runs record a
run folder's config, one metrics record per cell, its figures and report; the trainer streams to a tracker
through callbacks; ``iclab run --tracker`` logs each cell while the sweep runs (a test reads the store mid-run,
from a cell that waits for it), and refuses a tracker it cannot use or start before the first cell."""

import glob
import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import matplotlib
import pandas as pd
import pytest
import torch

import fixtures_experiments  # noqa: F401 - registers fx_sweep in this process
from fixtures_experiments import fixture_env
from iclab.cli import main
from iclab.errors import ConfigError
from iclab.tracking import cell_metrics, flat_params, log_run_folder, make_tracker
from iclab.train import TrainConfig, train

matplotlib.use("Agg")

ERRS = [0.5, 0.25, 0.125]


@pytest.fixture
def run_folder(tmp_path):
    """A finished run folder as iclab writes it: config.json, summary.json, report.md, one figure with its CSV."""
    import matplotlib.pyplot as plt

    folder = tmp_path / "fx-quick"
    (folder / "figures").mkdir(parents=True)
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot(ERRS)
    fig.savefig(folder / "figures" / "err_vs_l.png")
    plt.close(fig)
    pd.DataFrame({"l": [10, 20, 40], "err": ERRS}).to_csv(folder / "figures" / "err_vs_l.csv", index=False)
    meta = {
        "experiment": "fx",
        "preset": "quick",
        "config_hash": "c0ffee",
        "config": {"l_values": [10, 20, 40], "d": 5, "seed": 0},
    }
    (folder / "config.json").write_text(json.dumps(meta))
    verdicts = ["agrees", "disagrees", "not judged", "agrees"]
    (folder / "summary.json").write_text(
        json.dumps({"comparisons": [{"verdict": v} for v in verdicts], "cells": {"failed": 1}})
    )
    (folder / "report.md").write_text("# fx\n")
    results = pd.DataFrame(
        [
            {"part": "curve", "l": l, "err": e, "curve": [e, e], "_key": f"k{i}", "_status": "done", "_seconds": 0.25}
            for i, (l, e) in enumerate(zip((10, 20, 40), ERRS))
        ]
    )
    return folder, meta, results


def test_cell_metrics_and_params_are_flat_numbers_and_text():
    row = {
        "part": "a",
        "l": 10,
        "err": 0.5,
        "ok": True,
        "nan": float("nan"),
        "curve": [1, 2],
        "_key": "k",
        "_seconds": 2.0,
        "τ grid": 1.5,
    }
    assert cell_metrics(row) == {
        "cell/l": 10.0,
        "cell/err": 0.5,
        "cell/ok": 1.0,
        "cell/seconds": 2.0,
        "cell/_ grid": 1.5,
    }
    assert flat_params({"a": (1, 2), "b": {"c": "x"}, "d": None}) == {"a": "[1, 2]", "b.c": "x", "d": "null"}


def test_mlflow_file_store_records_every_cell(run_folder, tmp_path, monkeypatch):
    from mlflow import MlflowClient

    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "mlruns").as_uri())
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)  # MLflow 3's switch: the tracker sets it for file:
    folder, meta, results = run_folder
    with make_tracker("mlflow", folder.name, group="fx") as tracker:
        assert log_run_folder(tracker, folder, meta, results) == 3
    client = MlflowClient()
    run = client.get_run(tracker.run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "fx-quick"
    assert run.data.params["config.l_values"] == "[10, 20, 40]" and run.data.params["config_hash"] == "c0ffee"
    history = client.get_metric_history(tracker.run_id, "cell/err")
    assert [(m.step, m.value) for m in sorted(history, key=lambda m: m.step)] == list(enumerate(ERRS))
    assert (
        run.data.metrics["run/claims_agrees"],
        run.data.metrics["run/claims_disagrees"],
        run.data.metrics["run/claims_not_judged"],
        run.data.metrics["run/cells_failed"],
    ) == (2, 1, 1, 1)
    files = {f.path for f in client.list_artifacts(tracker.run_id)}
    figures = {f.path for f in client.list_artifacts(tracker.run_id, "figures")}
    assert {"report.md", "summary.json", "config.json", "cells.csv"} <= files
    assert figures == {"figures/err_vs_l.png", "figures/err_vs_l.csv"}
    assert client.get_experiment(run.info.experiment_id).name == "fx"


def test_tensorboard_event_files_hold_cells_figures_and_config(run_folder, tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    folder, meta, results = run_folder
    with make_tracker("tensorboard", folder.name, log_dir=tmp_path / "tb") as tracker:
        log_run_folder(tracker, folder, meta, results)
    events = EventAccumulator(str(tmp_path / "tb"), size_guidance={"tensors": 0, "images": 0}).Reload()
    assert [(e.step, e.value) for e in events.Scalars("cell/err")] == list(enumerate(ERRS))
    assert events.Tags()["images"] == ["figures/err_vs_l"]
    config_text = events.Tensors("config/text_summary")[0].tensor_proto.string_val[0].decode()
    assert "| config.d | 5 |" in config_text


def test_tensorboard_needs_a_log_folder():
    with pytest.raises(ConfigError, match="log_dir"):
        make_tracker("tensorboard", "x")


def _wandb_records(path):
    """The protobuf records of a W&B ``.wandb`` file (LevelDB log framing: 32 KiB blocks, 7-byte headers); a record
    the writer has not finished writing yet is left out."""
    from wandb.proto import wandb_internal_pb2 as pb

    data, pos, chunks, pending = open(path, "rb").read(), 7, [], b""
    while pos + 7 <= len(data):
        if 32768 - pos % 32768 < 7:
            pos += 32768 - pos % 32768
            continue
        _, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        if pos + 7 + length > len(data):  # the tail is still being written
            break
        chunk, pos = data[pos + 7 : pos + 7 + length], pos + 7 + length
        if kind == 0:  # padding to the end of the block
            pos += 32768 - pos % 32768 if pos % 32768 else 0
            continue
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):  # full record, or the last piece of one
            chunks.append(pending)
    records = []
    for chunk in chunks:
        record = pb.Record()
        record.ParseFromString(chunk)
        records.append(record)
    return records


def _finished_wandb_run(wandb_dir, timeout=600.0):
    """The records of the one offline run under ``wandb_dir`` once W&B has written its ``exit`` record.

    ``run.finish()`` returns when the run is finished, but W&B's service process writes the ``.wandb`` file
    through a buffer that it flushes on its own schedule (on a busy machine, seconds later). Records are
    written in order, so once the ``exit`` record (W&B's last) is on disk, every record before it is too."""
    deadline = time.monotonic() + timeout
    while True:
        files = glob.glob(str(wandb_dir / "offline-run-*" / "run-*.wandb"))
        records = _wandb_records(files[0]) if len(files) == 1 else []
        if any(r.WhichOneof("record_type") == "exit" for r in records):
            return records
        assert time.monotonic() < deadline, f"no complete W&B run under {wandb_dir} after {timeout:g} s: {files}"
        time.sleep(0.2)


@pytest.mark.slow
def test_wandb_offline_run_records_cells_config_and_files(run_folder, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    folder, meta, results = run_folder
    with make_tracker("wandb", folder.name, group="fx", log_dir=tmp_path / "wb") as tracker:
        log_run_folder(tracker, folder, meta, results)
    records = _finished_wandb_run(tmp_path / "wb" / "wandb")
    errs = {}
    for r in records:
        if r.WhichOneof("record_type") == "history":
            items = {"/".join(i.nested_key) or i.key: i.value_json for i in r.history.item}
            if "cell/err" in items:
                errs[json.loads(items["step"])] = json.loads(items["cell/err"])
    assert errs == dict(enumerate(ERRS))
    config = {u.key: u.value_json for r in records if r.WhichOneof("record_type") == "config" for u in r.config.update}
    assert json.loads(config["config.l_values"]) == "[10, 20, 40]"
    files = {
        p.split("/files/")[-1]
        for p in glob.glob(str(tmp_path / "wb" / "wandb" / "offline-run-*" / "files" / "**"), recursive=True)
    }
    assert {"report.md", "cells.csv", "figures/err_vs_l.csv"} <= files
    assert any(f.startswith("media/images/figures/err_vs_l") for f in files)
    (table,) = glob.glob(str(tmp_path / "wb" / "wandb" / "offline-run-*" / "files" / "cells.csv"))
    assert pd.read_csv(table)["err"].tolist() == ERRS  # a copy W&B keeps (the temporary original is gone)


def test_wandb_steps_need_not_grow(tmp_path, monkeypatch):
    """Cells finish in any order: a record at a smaller step than the one before is kept (W&B's own step would
    drop it)."""
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    with make_tracker("wandb", "order", log_dir=tmp_path / "wb") as tracker:
        for step in (2, 0, 1):
            tracker.log_metrics({"cell/err": ERRS[step]}, step)
    records = _finished_wandb_run(tmp_path / "wb" / "wandb")
    rows = [
        {"/".join(i.nested_key) or i.key: json.loads(i.value_json) for i in r.history.item}
        for r in records
        if r.WhichOneof("record_type") == "history"
    ]
    assert [(row["step"], row["cell/err"]) for row in rows if "cell/err" in row] == [(2, 0.125), (0, 0.5), (1, 0.25)]


class _Line:
    def sample(self, batch_size, generator):
        x = torch.randn(batch_size, 3, generator=generator)
        return x, x.sum(1, keepdim=True)


def test_trainer_callbacks_get_every_record_and_a_tracker_streams_them(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    seen = []
    cfg = TrainConfig(steps=12, batch_size=8, lr=0.05, log_every=4)
    with make_tracker("tensorboard", "train", log_dir=tmp_path / "tb") as tracker:
        result = train(
            torch.nn.Linear(3, 1),
            _Line(),
            lambda m, b: ((m(b[0]) - b[1]) ** 2).mean(),
            cfg,
            callbacks=[seen.append, tracker.train_callback()],
        )
    assert [r["step"] for r in seen] == [1, 4, 8, 12] and seen == result.history
    losses = EventAccumulator(str(tmp_path / "tb")).Reload().Scalars("train/loss")
    assert [(e.step, round(e.value, 5)) for e in losses] == [(r["step"], round(r["loss"], 5)) for r in seen]


def test_cli_run_with_mlflow_tracker_logs_each_cell(tmp_path, monkeypatch, capsys):
    from mlflow import MlflowClient

    env = fixture_env()
    monkeypatch.setenv("ICLAB_EXPERIMENT_MODULES", env["ICLAB_EXPERIMENT_MODULES"])
    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "mlruns").as_uri())
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    out = tmp_path / "fx-run"
    assert (
        main(
            [
                "--no-progress",
                "run",
                "fx_sweep",
                "--executor",
                "serial",
                "--out",
                str(out),
                "--set",
                "n_cells=4",
                "--tracker",
                "mlflow",
            ]
        )
        == 0
    )
    said = capsys.readouterr().out
    assert "mlflow: 4 cells -> mlflow run " in said
    run_id = said.split("mlflow run ")[1].split()[0]
    history = MlflowClient().get_metric_history(run_id, "cell/mean")
    assert sorted(m.step for m in history) == [0, 1, 2, 3]
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "config.json",
        "figures",
        "report.md",
        "results.sqlite",
        "summary.json",
    ]  # the tracker wrote nothing here


def test_cli_refuses_an_unknown_or_missing_tracker_before_running(tmp_path, monkeypatch, capsys):
    out = tmp_path / "never"
    assert main(["run", "temperature", "--out", str(out), "--tracker", "neptune"]) == 2
    assert "--tracker" in capsys.readouterr().err and not out.exists()
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None if name == "wandb" else object())
    assert main(["run", "temperature", "--out", str(out), "--tracker", "wandb"]) == 2
    assert "pip install 'iclab[wandb]'" in capsys.readouterr().err and not out.exists()


def test_on_cell_hears_of_stored_cells_first_then_each_cell_as_it_is_stored(tmp_path, monkeypatch):
    from iclab.experiments import run_experiment
    from iclab.runs import load_results

    monkeypatch.setenv("ICLAB_EXPERIMENT_MODULES", fixture_env()["ICLAB_EXPERIMENT_MODULES"])
    out, flag, seen = tmp_path / "run", tmp_path / "flag", []
    overrides = {"n_cells": 4, "fail_cells": "1", "flag": str(flag)}

    def run(**kwargs):
        seen.clear()
        run_experiment(
            "fx_sweep",
            "quick",
            overrides,
            out=out,
            executor="serial",
            progress=False,
            on_cell=lambda idx, row: seen.append((idx, row)),
            **kwargs,
        )
        return [(idx, row["_status"]) for idx, row in seen]

    assert run() == [(0, "done"), (1, "failed"), (2, "done"), (3, "done")]
    stored = {row["_key"]: row for row in load_results(out).to_dict("records")}
    assert [row for _, row in seen if row["_status"] == "done"] == [stored[k] for k in stored]  # as load_results
    assert "fixture cell 1 fails" in seen[1][1]["_error"] and "mean" not in seen[1][1]
    assert run() == [(0, "done"), (1, "failed"), (2, "done"), (3, "done")]  # all read back, nothing rerun
    flag.touch()
    assert run(retry_failed=True) == [(0, "done"), (2, "done"), (3, "done"), (1, "done")]


def test_a_tracker_that_cannot_start_stops_the_run_before_any_cell_with_its_whole_message(
    tmp_path, monkeypatch, capsys
):
    from mlflow.store.tracking.file_store import FileStore

    monkeypatch.setenv("ICLAB_EXPERIMENT_MODULES", fixture_env()["ICLAB_EXPERIMENT_MODULES"])
    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "mlruns").as_uri())
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "false")  # the user's own "no": MLflow 3 refuses the file store
    with pytest.raises(Exception) as refused:  # MLflow's own words, to compare with what iclab prints
        FileStore(str(tmp_path / "mlruns"))
    out = tmp_path / "fx-run"
    argv = ["--no-progress", "run", "fx_sweep", "--executor", "serial", "--out", str(out), "--tracker", "mlflow"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --tracker mlflow could not start (MlflowException: ") and "\n" not in err
    assert " ".join(str(refused.value).split()) in err and err.endswith("; no cell was run")  # whole, not cut
    assert not out.exists()


def _mlflow_cells(uri):
    """``(run, steps of cell/mean)`` of the one MLflow run of experiment fx_sweep in store ``uri`` (None: none yet)."""
    from mlflow import MlflowClient

    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("fx_sweep")
    runs = client.search_runs([experiment.experiment_id]) if experiment else []
    if not runs:
        return None, []
    (run,) = runs
    return client.get_run(run.info.run_id), sorted(
        m.step for m in client.get_metric_history(run.info.run_id, "cell/mean")
    )


def _tensorboard_cells(folder):
    """``(None, steps of cell/mean)`` in the event files of the one run under ``folder`` (``<run folder>/<time>``)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    (run,) = glob.glob(str(folder / "*" / "*"))
    events = EventAccumulator(run).Reload()
    return None, sorted(e.step for e in events.Scalars("cell/mean")) if "cell/mean" in events.Tags()["scalars"] else []


def _wandb_cells(folder, finished=False):
    """``(None, steps of cell/mean)`` in the offline W&B run under ``folder`` (with ``finished``: once W&B has
    written all of it)."""
    if finished:
        records = _finished_wandb_run(folder)
    else:
        files = glob.glob(str(folder / "offline-run-*" / "run-*.wandb"))
        records = _wandb_records(files[0]) if files else []
    rows = [
        {"/".join(i.nested_key) or i.key: json.loads(i.value_json) for i in r.history.item}
        for r in records
        if r.WhichOneof("record_type") == "history"
    ]
    return None, sorted(row["step"] for row in rows if "cell/mean" in row)


@pytest.mark.slow
@pytest.mark.parametrize("store", ["mlflow-file", "mlflow-default", "tensorboard", "wandb"])
def test_each_cell_shows_in_the_tracker_while_the_run_goes_on(tmp_path, monkeypatch, store):
    """``iclab run --tracker`` in a subprocess on the serial executor: its cell 2 starts only after cells 0 and 1
    are stored and logged, and waits there until the test has read the tracker's store; then the run finishes.
    MLflow and TensorBoard hold the two cells at once; W&B's service writes its offline file on its own schedule
    (seconds), so it is polled."""
    import iclab

    env = fixture_env()
    env["PYTHONPATH"] = os.pathsep.join([str(Path(iclab.__file__).parents[1]), env["PYTHONPATH"]])
    for name in ("MLFLOW_TRACKING_URI", "MLFLOW_ALLOW_FILE_STORE", "MLFLOW_EXPERIMENT_NAME"):
        env.pop(name, None)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"  # MLflow's default store: mlflow.db in the working folder
    if store == "mlflow-file":
        env["MLFLOW_TRACKING_URI"] = uri = (tmp_path / "mlruns").as_uri()
        monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # for this test's own reader
    env.update(WANDB_MODE="offline", WANDB_SILENT="true")  # W&B's run goes to ./wandb
    readers = {
        "tensorboard": lambda: _tensorboard_cells(tmp_path / "tensorboard"),  # beside the run folder
        "wandb": lambda: _wandb_cells(tmp_path / "wandb"),
    }
    read = readers.get(store, lambda: _mlflow_cells(uri))
    gate, out = tmp_path / "gate", tmp_path / "fx-run"
    argv = [
        "--no-progress",
        "run",
        "fx_sweep",
        "--executor",
        "serial",
        "--out",
        str(out),
        "--set",
        "n_cells=4",
        "--set",
        "gate_cells=2",
        "--set",
        f"flag={gate}",
        "--tracker",
        store.split("-")[0],
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "iclab", *argv],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        waiting, deadline = tmp_path / "gate.waiting", time.monotonic() + 600
        while not waiting.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert waiting.exists(), proc.stdout.read() if proc.poll() is not None else "cell 2 did not start in 600 s"
        run, steps = read()  # mid-run: cells 0 and 1 are logged, cell 2 is running, cell 3 waits
        while store == "wandb" and len(steps) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
            run, steps = read()
        assert steps == [0, 1]
        if run is not None:  # MLflow: a live run with its settings and no end-of-run record yet
            assert run.info.status == "RUNNING" and "run/cells_done" not in run.data.metrics
            assert run.data.params["config.n_cells"] == "4" and run.data.params["experiment"] == "fx_sweep"
        gate.touch()
        said, _ = proc.communicate(timeout=600)
    finally:
        gate.touch()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, said
    run, steps = _wandb_cells(tmp_path / "wandb", finished=True) if store == "wandb" else read()
    assert steps == [0, 1, 2, 3] and f"{store.split('-')[0]}: 4 cells -> " in said
    if run is not None:
        from mlflow import MlflowClient

        assert run.info.status == "FINISHED" and run.data.metrics["run/cells_done"] == 4
        files = {f.path for f in MlflowClient(uri).list_artifacts(run.info.run_id)}
        assert {"report.md", "summary.json", "cells.csv"} <= files
