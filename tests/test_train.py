"""The one trainer: resume is bit-for-bit, NaN keeps the last good checkpoint, stopping rules, pool, config."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

import pytest
import torch

from iclab.errors import ConfigError
from iclab.train import (
    CHECKPOINT,
    METRICS,
    TrainConfig,
    TrainingDiverged,
    after_step,
    all_groups_below,
    metrics_to_parquet,
    read_metrics,
    train,
)


@dataclass
class _Batch:
    x: torch.Tensor  # (B, d)
    y: torch.Tensor  # (B,)

    def to(self, device):
        return _Batch(self.x.to(device), self.y.to(device))

    def index(self, idx):
        return _Batch(self.x[idx], self.y[idx])


@dataclass(frozen=True)
class _Linear:
    d: int = 5

    def sample(self, batch, generator):
        x = torch.randn(batch, self.d, generator=generator)
        w = torch.arange(1, self.d + 1, dtype=torch.float32) / self.d
        return _Batch(x, x @ w + 0.1 * torch.randn(batch, generator=generator))


def _mse(model, batch):
    return ((model(batch.x).squeeze(-1) - batch.y) ** 2).mean()


def _model(seed=0, d=5):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(d, 7), torch.nn.Tanh(), torch.nn.Dropout(0.1), torch.nn.Linear(7, 1))


CFG = dict(
    steps=40,
    batch_size=11,
    lr=3e-2,
    optimizer="adam",
    schedule="cosine",
    warmup_steps=5,
    grad_clip=1.0,
    log_every=5,
    checkpoint_every=10,
    seed=3,
)


def _same_weights(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def _strip(history):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in history]


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"pool_size": 13},
        {"optimizer": "sgd", "momentum": 0.9, "schedule": "linear"},
        {"optimizer": "adamw", "weight_decay": 0.1},
    ],
)
def test_resume_after_crash_equals_uninterrupted(tmp_path, extra):
    cfg = TrainConfig(**{**CFG, **extra})
    ref = train(_model(), _Linear(), _mse, cfg, run_dir=tmp_path / "ref")

    calls = {"n": 0}

    def crashing(model, batch):
        calls["n"] += 1
        if calls["n"] == 24:  # crash at step 23: the checkpoint of step 20 survives
            raise RuntimeError("simulated crash")
        return _mse(model, batch)

    with pytest.raises(RuntimeError):
        train(_model(), _Linear(), crashing, cfg, run_dir=tmp_path / "b")
    torch.manual_seed(12345)  # a different global RNG state must not matter (dropout state is checkpointed)
    res = train(_model(seed=99), _Linear(), _mse, cfg, run_dir=tmp_path / "b", resume=True)
    assert res.steps == 40 and res.stopped == "max_steps"
    assert _same_weights(ref.model, res.model)
    assert _strip(res.history) == _strip(ref.history)
    steps = list(read_metrics(tmp_path / "b")["step"])
    assert steps == sorted(set(steps)) and steps[-1] == 40  # no duplicated records from the crashed session


def test_sigint_checkpoints_and_resume_is_bit_for_bit(tmp_path):
    cfg = TrainConfig(**{**CFG, "checkpoint_every": 0})
    ref = train(_model(), _Linear(), _mse, cfg)
    calls = {"n": 0}

    def interrupting(model, batch):
        calls["n"] += 1
        if calls["n"] == 17:
            os.kill(os.getpid(), signal.SIGINT)
        return _mse(model, batch)

    # Python's own Ctrl-C handler, as in a terminal: a suite started as a background job inherits SIGINT ignored
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):  # Ctrl-C still reaches the caller, after the checkpoint
            train(_model(), _Linear(), interrupting, cfg, run_dir=tmp_path)
    finally:
        signal.signal(signal.SIGINT, old)
    assert torch.load(tmp_path / CHECKPOINT, weights_only=False)["step"] == 17
    calls["n"] = 0
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a caller that ignores SIGINT gets a normal return
    try:
        part = train(_model(), _Linear(), interrupting, cfg, run_dir=tmp_path / "ign")
    finally:
        signal.signal(signal.SIGINT, old)
    assert part.stopped == "interrupted" and part.steps == 17
    res = train(_model(), _Linear(), _mse, cfg, run_dir=tmp_path, resume=True)
    assert res.steps == 40 and _same_weights(ref.model, res.model)


def test_nan_loss_stops_with_clear_message_and_keeps_last_good_checkpoint(tmp_path):
    cfg = TrainConfig(**CFG)
    calls = {"n": 0}

    def exploding(model, batch):
        calls["n"] += 1
        loss = _mse(model, batch)
        return loss * float("nan") if calls["n"] == 26 else loss

    with pytest.raises(TrainingDiverged, match=r"loss became nan at step 25.*step 20") as info:
        train(_model(), _Linear(), exploding, cfg, run_dir=tmp_path)
    assert info.value.step == 25 and info.value.checkpoint == tmp_path / CHECKPOINT
    state = torch.load(tmp_path / CHECKPOINT, weights_only=False)
    assert state["step"] == 20
    assert all(torch.isfinite(v).all() for v in state["model"].values())
    # the kept checkpoint is the good step-20 state: resuming reproduces the uninterrupted run
    res = train(_model(), _Linear(), _mse, cfg, run_dir=tmp_path, resume=True)
    assert _same_weights(res.model, train(_model(), _Linear(), _mse, cfg).model)


def test_nan_without_checkpoint_says_so():
    with pytest.raises(TrainingDiverged, match="no checkpoint was written"):
        train(_model(), _Linear(), lambda m, b: _mse(m, b) * float("inf"), TrainConfig(**CFG))


def test_stopping_rules():
    base = TrainConfig(**{**CFG, "steps": 400, "lr": 0.05, "schedule": "constant"})
    assert train(_model(), _Linear(), _mse, base.with_overrides({"steps": 7})).steps == 7
    res = train(_model(), _Linear(), _mse, base.with_overrides({"target_loss": 0.2}))
    assert res.stopped == "target_loss" and res.steps < 400 and res.steps % 5 == 0

    def grouped(model, batch):
        err = (model(batch.x).squeeze(-1) - batch.y) ** 2  # (B,)
        return err.mean(), {"first": float(err[:5].mean().detach()), "rest": float(err[5:].mean().detach())}

    seen = []
    res = train(
        _model(), _Linear(), grouped, base, stop_rule=lambda s, g: seen.append(g) or all_groups_below(0.3)(s, g)
    )
    assert res.stopped == "stop_rule" and res.steps < 400
    assert set(seen[-1]) == {"first", "rest"} and max(seen[-1].values()) <= 0.3
    assert "group/first" in res.history[-1]
    assert train(_model(), _Linear(), _mse, base, stop_rule=after_step(30)).steps == 30
    assert not all_groups_below(1.0)(5, {})  # nothing reported: keep going


def test_pool_gives_finite_task_diversity():
    drawn = []

    class Counting(_Linear):
        def sample(self, batch, generator):
            drawn.append(batch)
            return super().sample(batch, generator)

    pool_rows = Counting().sample(13, __import__("iclab").data.generator_for(3, "pool")).x
    drawn.clear()
    rows = []

    def recording(model, batch):
        rows.append(batch.x)
        return _mse(model, batch)

    train(_model(), Counting(), recording, TrainConfig(**{**CFG, "pool_size": 13}))
    assert drawn == [13]  # one draw of the pool, nothing per step
    seen = torch.cat(rows)  # (steps * B, d)
    assert bool((seen[:, None, :] == pool_rows[None]).all(-1).any(1).all())  # every row comes from the pool
    assert len(torch.unique(seen, dim=0)) <= 13


@pytest.mark.parametrize(
    "field,value",
    [
        ("lr", -1e-3),
        ("lr", 0.0),
        ("steps", 0),
        ("optimizer", "adagrad"),
        ("batch_size", 0),
        ("schedule", "step"),
        ("grad_clip", -1.0),
        ("device", "tpu"),
        ("pool_size", 0),
    ],
)
def test_bad_config_is_one_clear_config_error(field, value):
    with pytest.raises(ConfigError, match=field) as info:
        TrainConfig(**{field: value})
    assert info.value.field == field


def test_resume_with_other_optimisation_setting_is_refused(tmp_path):
    cfg = TrainConfig(**{**CFG, "steps": 10})
    train(_model(), _Linear(), _mse, cfg, run_dir=tmp_path)
    with pytest.raises(ConfigError, match="lr"):
        train(_model(), _Linear(), _mse, cfg.with_overrides({"lr": 0.5, "steps": 20}), run_dir=tmp_path, resume=True)


def test_metrics_stream_probes_eval_and_parquet(tmp_path):
    cfg = TrainConfig(**{**CFG, "steps": 12, "log_every": 4})
    res = train(
        _model(),
        _Linear(),
        _mse,
        cfg,
        run_dir=tmp_path,
        probes={"w": lambda m: {"norm": float(m[0].weight.norm())}, "diag": lambda m: [1.0, 2.0]},
        eval_fn=lambda m: {"err": 0.5},
    )
    df = read_metrics(tmp_path / METRICS)
    assert list(df["step"]) == [1, 4, 8, 12] == [r["step"] for r in res.history]
    assert {"loss", "lr", "seconds", "w/norm", "diag", "eval/err"} <= set(df.columns)
    back = __import__("pandas").read_parquet(metrics_to_parquet(tmp_path))
    assert list(back["step"]) == [1, 4, 8, 12] and list(back["diag"][0]) == [1.0, 2.0]


def test_device_setting():
    cfg = TrainConfig(**{**CFG, "steps": 6, "device": "cuda", "optimizer": "sgd"})
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="CUDA is not available"):
            train(_model(), _Linear(), _mse, cfg)
    else:  # same data (drawn on the CPU), trained on the GPU: close to the CPU run (no dropout: its RNG differs)
        gpu = train(_model().eval()[:2].append(_model()[3]), _Linear(), _mse, cfg).model.cpu()
        cpu = train(
            _model().eval()[:2].append(_model()[3]), _Linear(), _mse, cfg.with_overrides({"device": "cpu"})
        ).model
        assert all(torch.allclose(a, b, atol=1e-4) for a, b in zip(gpu.parameters(), cpu.parameters()))
