"""Experiment tracking, offline: MLflow's local file store, TensorBoard event files and W&B offline runs record a
run folder's config, one metrics record per cell, its figures and report; the trainer streams to a tracker
through callbacks; ``iclab run --tracker`` logs a finished run and refuses a tracker it cannot use up front."""

import glob
import json
import struct

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
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps the file store behind this switch
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
    """The protobuf records of a W&B ``.wandb`` file (LevelDB log framing: 32 KiB blocks, 7-byte headers)."""
    from wandb.proto import wandb_internal_pb2 as pb

    data, pos, chunks, pending = open(path, "rb").read(), 7, [], b""
    while pos + 7 <= len(data):
        if 32768 - pos % 32768 < 7:
            pos += 32768 - pos % 32768
            continue
        _, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
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


@pytest.mark.slow
def test_wandb_offline_run_records_cells_config_and_files(run_folder, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    folder, meta, results = run_folder
    with make_tracker("wandb", folder.name, group="fx", log_dir=tmp_path / "wb") as tracker:
        log_run_folder(tracker, folder, meta, results)
    (run_file,) = glob.glob(str(tmp_path / "wb" / "wandb" / "offline-run-*" / "run-*.wandb"))
    records = _wandb_records(run_file)
    errs = {}
    for r in records:
        if r.WhichOneof("record_type") == "history":
            items = {"/".join(i.nested_key) or i.key: i.value_json for i in r.history.item}
            if "cell/err" in items:
                errs[r.history.step.num] = json.loads(items["cell/err"])
    assert errs == dict(enumerate(ERRS))
    config = {u.key: u.value_json for r in records if r.WhichOneof("record_type") == "config" for u in r.config.update}
    assert json.loads(config["config.l_values"]) == "[10, 20, 40]"
    files = {
        p.split("/files/")[-1]
        for p in glob.glob(str(tmp_path / "wb" / "wandb" / "offline-run-*" / "files" / "**"), recursive=True)
    }
    assert {"report.md", "cells.csv"} <= files and any(f.startswith("media/images/figures/err_vs_l") for f in files)


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
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
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
