"""The one trainer for every iclab model.

``train(model, data, loss_fn, config)`` runs ``config.steps`` optimiser steps. Each step draws a fresh batch
``data.sample(batch_size, generator_for(seed, "train", step))`` (or a minibatch of a fixed pool drawn once
from ``generator_for(seed, "pool")``), so the batch sequence is a pure function of the seed and a run resumed
from a checkpoint continues bit-for-bit (same final weights as an uninterrupted run). Batches are drawn on
the CPU and moved to ``config.device``, so the data do not depend on the device either.

``loss_fn(model, batch)`` returns the scalar loss, or ``(loss, groups)`` where ``groups`` maps a name (e.g. a
feature) to a float; ``stop_rule(step, groups) -> bool`` can then stop on per-group criteria (e.g. "every
feature's loss <= eps/K", the stopping rule of arXiv:2609.36448, docs/papers/ood.md; see :mod:`iclab.train._stopping`). A non-finite loss (or non-finite
weights at a checkpoint) raises :class:`TrainingDiverged` and leaves the last good checkpoint in place.
SIGINT/SIGTERM finish the current step and write a checkpoint; then the signal is delivered to the handler
that was installed before (so Ctrl-C still raises ``KeyboardInterrupt`` and SIGTERM still ends the process: a
caller such as an experiment cell never mistakes a cut-short run for a finished one). Only when that handler
ignores the signal does ``train`` return, with ``stopped="interrupted"``.
"""

from __future__ import annotations

import math
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import torch
from tqdm.auto import tqdm

from iclab.data import generator_for
from iclab.errors import ConfigError, IclabError
from iclab.train._checkpoint import CHECKPOINT, load_checkpoint, save_checkpoint
from iclab.train._config import TrainConfig
from iclab.train._metrics import METRICS, write_metrics

__all__ = ["train", "TrainResult", "TrainingDiverged", "CHECKPOINT", "METRICS"]


class TrainingDiverged(IclabError, FloatingPointError):
    """The loss (or the weights) became NaN or infinite. ``step`` is the step at which it was seen and
    ``checkpoint`` the last good checkpoint (None if none was written)."""

    def __init__(self, message: str, step: int = -1, checkpoint: Path | None = None) -> None:
        super().__init__(message)
        self.step, self.checkpoint = step, checkpoint


@dataclass
class TrainResult:
    model: torch.nn.Module
    steps: int
    final_loss: float
    stopped: str  # "max_steps" | "target_loss" | "stop_rule" | "interrupted"
    history: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    checkpoint: Path | None = None


def _optimizer(params, cfg: TrainConfig) -> torch.optim.Optimizer:
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    if cfg.optimizer == "adamw":
        return torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    return torch.optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)


def _lr_factor(step: int, cfg: TrainConfig) -> float:
    """Multiplier of ``lr`` at ``step``: linear warm-up, then constant / cosine-to-0 / linear-to-0."""
    if cfg.warmup_steps and step < cfg.warmup_steps:
        return (step + 1) / cfg.warmup_steps
    if cfg.schedule == "constant":
        return 1.0
    frac = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
    frac = min(max(frac, 0.0), 1.0)
    if cfg.schedule == "cosine":
        return 0.5 * (1.0 + math.cos(math.pi * frac))
    return 1.0 - frac


def _to_device(batch: Any, device: torch.device) -> Any:
    if hasattr(batch, "to"):
        return batch.to(device)
    if isinstance(batch, (tuple, list)):
        return type(batch)(_to_device(b, device) for b in batch)
    if isinstance(batch, dict):
        return {k: _to_device(v, device) for k, v in batch.items()}
    return batch


def _pool_minibatch(pool: Any, idx: torch.Tensor) -> Any:
    if hasattr(pool, "index"):
        return pool.index(idx)
    if isinstance(pool, torch.Tensor):
        return pool[idx]
    if isinstance(pool, (tuple, list)):
        return type(pool)(_pool_minibatch(p, idx) for p in pool)
    if isinstance(pool, dict):
        return {k: _pool_minibatch(v, idx) for k, v in pool.items()}
    raise TypeError(f"cannot index a training pool of type {type(pool).__name__}; give it an index(idx) method")


def _device(cfg: TrainConfig) -> torch.device:
    if cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(
            "device",
            cfg.device,
            message=f"invalid device={cfg.device!r}: CUDA is not available on this machine (use device='cpu')",
        )
    if cfg.device.startswith("mps") and not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
        raise ConfigError("device", cfg.device, message="invalid device='mps': MPS is not available here")
    return torch.device(cfg.device)


def _split_loss(out: Any, step: int) -> tuple[torch.Tensor, Mapping[str, float]]:
    loss, groups = out if isinstance(out, tuple) else (out, {})
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise IclabError(
            f"loss_fn must return a scalar tensor (or (loss, groups)); got "
            f"{type(loss).__name__} {tuple(getattr(loss, 'shape', ()))} at step {step}"
        )
    return loss.reshape(()), groups


def _all_finite(model: torch.nn.Module) -> bool:
    return all(bool(torch.isfinite(p).all()) for p in model.parameters())


class _StopSignals:
    """Catch SIGINT/SIGTERM while training (the step in progress finishes and a checkpoint is written); on exit
    restore the previous handlers. :meth:`deliver` then re-raises the caught signal to them."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._old: dict = {}

    def __enter__(self) -> "_StopSignals":
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._old[sig] = signal.signal(sig, self._catch)
            except ValueError:  # not in the main thread
                pass
        return self

    def _catch(self, signum, frame) -> None:
        self.signal = signum

    def __exit__(self, *exc) -> None:
        for sig, handler in self._old.items():
            signal.signal(sig, handler)

    def deliver(self) -> None:
        if self.signal is not None:
            signal.raise_signal(self.signal)  # the caller's handler decides (default: stop)


class _Training:
    """The state of one training run and its steps: batch, optimiser step, log record, checkpoint."""

    def __init__(
        self,
        model: torch.nn.Module,
        data: Any,
        loss_fn: Callable,
        cfg: TrainConfig,
        run_dir: str | Path | None,
        resume: bool,
    ):
        self.model, self.data, self.loss_fn, self.cfg = model, data, loss_fn, cfg
        self.device = _device(cfg)
        self.cfg_dict = cfg.to_dict()
        model.to(self.device)
        self.opt = _optimizer([p for p in model.parameters() if p.requires_grad], cfg)
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, lambda s: _lr_factor(s, cfg))
        self.start_step, self.history, self.smoothed = 0, [], None
        self.ckpt = self.metrics_path = None
        if run_dir is not None:
            self._open_run_dir(Path(run_dir), resume)
        self.pool = None
        if cfg.pool_size is not None:
            self.pool = _to_device(data.sample(cfg.pool_size, generator_for(cfg.seed, "pool")), self.device)

    def _open_run_dir(self, run_dir: Path, resume: bool) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        self.ckpt, self.metrics_path = run_dir / CHECKPOINT, run_dir / METRICS
        if resume and self.ckpt.exists():
            self.start_step, self.history, self.smoothed = load_checkpoint(
                self.ckpt, self.model, self.opt, self.sched, self.cfg_dict, self.device
            )
        elif self.ckpt.exists():
            self.ckpt.unlink()  # a fresh run never leaves another run's checkpoint behind
        # the stream on disk always equals the history of the weights we continue from
        write_metrics(self.metrics_path, self.history, append=False)

    def batch(self, step: int) -> Any:
        """The batch of ``step``: fresh from ``(seed, step)``, or a minibatch of the fixed pool."""
        g = generator_for(self.cfg.seed, "train", step)
        if self.pool is None:
            return _to_device(self.data.sample(self.cfg.batch_size, g), self.device)
        idx = torch.randint(self.cfg.pool_size, (self.cfg.batch_size,), generator=g).to(self.device)
        return _pool_minibatch(self.pool, idx)

    def step(self, step: int) -> tuple[float, Mapping[str, float]]:
        """One optimiser step on the batch of ``step``; a non-finite loss raises :class:`TrainingDiverged`."""
        self.model.train()
        loss, groups = _split_loss(self.loss_fn(self.model, self.batch(step)), step)
        loss_value = float(loss.detach())
        if not math.isfinite(loss_value):
            self._diverged(step, loss_value)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        if self.cfg.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.grad_clip)
        self.opt.step()
        self.sched.step()
        self.smoothed = loss_value if self.smoothed is None else 0.9 * self.smoothed + 0.1 * loss_value
        return loss_value, groups

    def _diverged(self, step: int, loss_value: float) -> None:
        good = self.ckpt if self.ckpt is not None and self.ckpt.exists() else None
        if self.metrics_path is not None:
            write_metrics(self.metrics_path, [{"step": step, "event": "diverged"}])
        raise TrainingDiverged(
            f"loss became {loss_value} at step {step}; lower the learning rate (lr={self.cfg.lr}) or set "
            f"grad_clip; "
            + (
                f"the last good checkpoint (step {_ckpt_step(self.history, good)}) is kept at {good}"
                if good
                else "no checkpoint was written (set checkpoint_every)"
            ),
            step,
            good,
        )

    def record(
        self,
        done: int,
        loss_value: float,
        groups: Mapping[str, float],
        seconds: float,
        probes: Mapping[str, Callable] | None,
        eval_fn: Callable | None,
    ) -> dict:
        """The log record of step ``done`` (loss, lr, groups, probes, eval), appended to history and metrics."""
        record = {
            "step": done,
            "loss": loss_value,
            "lr": self.sched.get_last_lr()[0],
            "seconds": seconds,
            **{f"group/{k}": float(v) for k, v in groups.items()},
        }
        if probes or eval_fn:
            self.model.eval()
            with torch.no_grad():
                for name, fn in (probes or {}).items():
                    val = fn(self.model)
                    record.update({f"{name}/{k}": v for k, v in val.items()} if isinstance(val, dict) else {name: val})
                if eval_fn is not None:
                    record.update({f"eval/{k}": float(v) for k, v in eval_fn(self.model).items()})
        self.history.append(record)
        if self.metrics_path is not None:
            write_metrics(self.metrics_path, [record])
        return record

    def checkpoint(self, done: int) -> None:
        """Save weights, optimiser, schedule and history, unless the weights are no longer finite."""
        ckpt = self.ckpt
        if not _all_finite(self.model):
            raise TrainingDiverged(
                f"weights became non-finite by step {done}; not overwriting the last good checkpoint "
                f"{ckpt if ckpt.exists() else '(none written)'}; lower lr (lr={self.cfg.lr}) or set grad_clip",
                done,
                ckpt if ckpt.exists() else None,
            )
        save_checkpoint(ckpt, self.model, self.opt, self.sched, done, self.history, self.smoothed, self.cfg_dict)


def _stop_reason(run: _Training, done: int, groups: Mapping[str, float], stop_rule: Callable | None) -> str | None:
    """Why training stops after logged step ``done`` (``stop_rule`` or ``target_loss``), or None."""
    reason = None
    if stop_rule is not None and stop_rule(done, {k: float(v) for k, v in groups.items()}):
        reason = "stop_rule"
    if run.cfg.target_loss is not None and run.smoothed <= run.cfg.target_loss:
        reason = "target_loss"
    return reason


def train(
    model: torch.nn.Module,
    data: Any,
    loss_fn: Callable,
    config: TrainConfig,
    *,
    run_dir: str | Path | None = None,
    resume: bool = False,
    stop_rule: Callable[[int, Mapping[str, float]], bool] | None = None,
    probes: Mapping[str, Callable[[torch.nn.Module], Any]] | None = None,
    eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None = None,
    callbacks: Sequence[Callable[[dict[str, Any]], None]] = (),
    desc: str = "train",
) -> TrainResult:
    """Train ``model`` in place on prompts from ``data`` (see module docstring).

    Args:
        data: an object with ``sample(batch_size, generator) -> batch``; batches may define ``to(device)``
            and (for ``pool_size``) ``index(idx)``.
        loss_fn: ``(model, batch) -> loss`` or ``(loss, {group: value})``.
        run_dir: where ``checkpoint.pt`` and ``metrics.jsonl`` go (None: keep nothing on disk).
        resume: continue from ``run_dir/checkpoint.pt`` if it exists (else start afresh).
        stop_rule: called at every logged step with the groups' losses; True stops training.
        probes: ``{name: fn(model)}`` recorded every ``log_every`` steps (e.g. parameter summaries); a probe
            may return a number, a list, or a dict (recorded as ``name/key``).
        eval_fn: ``model -> {metric: value}`` recorded as ``eval/metric`` every ``log_every`` steps.
        callbacks: each is called with every log record (``step``, ``loss``, ``lr``, ``seconds``, groups,
            probes, eval) right after it is written, e.g. a tracker's
            :meth:`iclab.tracking.Tracker.train_callback` to stream training curves to MLflow, W&B or TensorBoard.
    """
    cfg = config
    run = _Training(model, data, loss_fn, cfg, run_dir, resume)
    bar = tqdm(
        total=cfg.steps,
        initial=min(run.start_step, cfg.steps),
        desc=desc,
        unit="step",
        disable=not cfg.progress,
        dynamic_ncols=True,
    )
    t0 = time.perf_counter()
    stopped = "max_steps"
    loss_value = float(run.history[-1]["loss"]) if run.history else float("nan")
    done = run.start_step
    with _StopSignals() as signals:
        try:
            for step in range(run.start_step, cfg.steps):
                loss_value, groups = run.step(step)
                done = step + 1
                if done % cfg.log_every == 0 or done == cfg.steps or done == 1:
                    record = run.record(done, loss_value, groups, time.perf_counter() - t0, probes, eval_fn)
                    for callback in callbacks:
                        callback(record)
                    bar.set_postfix(loss=f"{loss_value:.4g}")
                    stopped = _stop_reason(run, done, groups, stop_rule) or stopped
                bar.update(1)
                if run.ckpt is not None and cfg.checkpoint_every and done % cfg.checkpoint_every == 0:
                    run.checkpoint(done)
                if signals.signal is not None:
                    stopped = "interrupted"
                if stopped != "max_steps":
                    break
            if run.ckpt is not None:
                run.checkpoint(done)
        finally:
            bar.close()
    model.eval()
    signals.deliver()
    return TrainResult(model, done, loss_value, stopped, run.history, time.perf_counter() - t0, run.ckpt)


def _ckpt_step(history: list, good: Path | None) -> Any:
    try:
        return torch.load(good, map_location="cpu", weights_only=False)["step"] if good else None
    except Exception:  # noqa: BLE001
        return "?"
