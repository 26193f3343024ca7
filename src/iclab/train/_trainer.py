"""The one trainer for every iclab model.

``train(model, data, loss_fn, config)`` runs ``config.steps`` optimiser steps. Each step draws a fresh batch
``data.sample(batch_size, generator_for(seed, "train", step))`` (or a minibatch of a fixed pool drawn once
from ``generator_for(seed, "pool")``), so the batch sequence is a pure function of the seed and a run resumed
from a checkpoint continues bit-for-bit (same final weights as an uninterrupted run). Batches are drawn on
the CPU and moved to ``config.device``, so the data do not depend on the device either.

``loss_fn(model, batch)`` returns the scalar loss, or ``(loss, groups)`` where ``groups`` maps a name (e.g. a
feature) to a float; ``stop_rule(step, groups) -> bool`` can then stop on per-group criteria (e.g. "every
feature's loss <= eps/K", OOD spec §4.2; see :mod:`iclab.train._stopping`). A non-finite loss (or non-finite
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
from typing import Any, Callable, Mapping

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

    def __init__(self, message: str, step: int = -1, checkpoint: Path | None = None):
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
        raise ConfigError("device", cfg.device, message=f"invalid device={cfg.device!r}: CUDA is not available "
                          "on this machine (use device='cpu')")
    if cfg.device.startswith("mps") and not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
        raise ConfigError("device", cfg.device, message="invalid device='mps': MPS is not available here")
    return torch.device(cfg.device)


def _split_loss(out: Any, step: int) -> tuple[torch.Tensor, Mapping[str, float]]:
    loss, groups = out if isinstance(out, tuple) else (out, {})
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise IclabError(f"loss_fn must return a scalar tensor (or (loss, groups)); got "
                         f"{type(loss).__name__} {tuple(getattr(loss, 'shape', ()))} at step {step}")
    return loss.reshape(()), groups


def _all_finite(model: torch.nn.Module) -> bool:
    return all(bool(torch.isfinite(p).all()) for p in model.parameters())


def train(model: torch.nn.Module, data: Any, loss_fn: Callable, config: TrainConfig, *,
          run_dir: str | Path | None = None, resume: bool = False,
          stop_rule: Callable[[int, Mapping[str, float]], bool] | None = None,
          probes: Mapping[str, Callable[[torch.nn.Module], Any]] | None = None,
          eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None = None,
          desc: str = "train") -> TrainResult:
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
    """
    cfg = config
    device = _device(cfg)
    cfg_dict = cfg.to_dict()
    model.to(device)
    opt = _optimizer([p for p in model.parameters() if p.requires_grad], cfg)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: _lr_factor(s, cfg))
    start_step, history, smoothed = 0, [], None
    ckpt = metrics_path = None
    if run_dir is not None:
        run_dir = Path(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        ckpt, metrics_path = run_dir / CHECKPOINT, run_dir / METRICS
        if resume and ckpt.exists():
            start_step, history, smoothed = load_checkpoint(ckpt, model, opt, sched, cfg_dict, device)
        elif ckpt.exists():
            ckpt.unlink()  # a fresh run never leaves another run's checkpoint behind
        # the stream on disk always equals the history of the weights we continue from
        write_metrics(metrics_path, history, append=False)

    pool = None
    if cfg.pool_size is not None:
        pool = _to_device(data.sample(cfg.pool_size, generator_for(cfg.seed, "pool")), device)

    interrupted = {"flag": False, "signal": None}

    def _on_signal(signum, frame):  # finish the current step, checkpoint, then stop
        interrupted["flag"], interrupted["signal"] = True, signum

    old_handlers = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            old_handlers[sig] = signal.signal(sig, _on_signal)
        except ValueError:  # not in the main thread
            pass

    def _checkpoint(done: int) -> None:
        if not _all_finite(model):
            raise TrainingDiverged(
                f"weights became non-finite by step {done}; not overwriting the last good checkpoint "
                f"{ckpt if ckpt.exists() else '(none written)'}; lower lr (lr={cfg.lr}) or set grad_clip",
                done, ckpt if ckpt.exists() else None)
        save_checkpoint(ckpt, model, opt, sched, done, history, smoothed, cfg_dict)

    bar = tqdm(total=cfg.steps, initial=min(start_step, cfg.steps), desc=desc, unit="step",
               disable=not cfg.progress, dynamic_ncols=True)
    t0 = time.perf_counter()
    stopped = "max_steps"
    loss_value = float(history[-1]["loss"]) if history else float("nan")
    done_steps = start_step
    try:
        for step in range(start_step, cfg.steps):
            g = generator_for(cfg.seed, "train", step)
            if pool is None:
                batch = _to_device(data.sample(cfg.batch_size, g), device)
            else:
                idx = torch.randint(cfg.pool_size, (cfg.batch_size,), generator=g).to(device)
                batch = _pool_minibatch(pool, idx)
            model.train()
            loss, groups = _split_loss(loss_fn(model, batch), step)
            loss_value = float(loss.detach())
            if not math.isfinite(loss_value):
                good = ckpt if ckpt is not None and ckpt.exists() else None
                if metrics_path is not None:
                    write_metrics(metrics_path, [{"step": step, "event": "diverged"}])
                raise TrainingDiverged(
                    f"loss became {loss_value} at step {step}; lower the learning rate (lr={cfg.lr}) or set "
                    f"grad_clip; " + (f"the last good checkpoint (step {_ckpt_step(history, good)}) is kept "
                                      f"at {good}" if good else "no checkpoint was written (set checkpoint_every)"),
                    step, good)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.grad_clip is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            opt.step()
            sched.step()
            smoothed = loss_value if smoothed is None else 0.9 * smoothed + 0.1 * loss_value
            done_steps = step + 1
            if done_steps % cfg.log_every == 0 or done_steps == cfg.steps or done_steps == 1:
                record = {"step": done_steps, "loss": loss_value, "lr": sched.get_last_lr()[0],
                          "seconds": time.perf_counter() - t0,
                          **{f"group/{k}": float(v) for k, v in groups.items()}}
                if probes or eval_fn:
                    model.eval()
                    with torch.no_grad():
                        for name, fn in (probes or {}).items():
                            val = fn(model)
                            record.update({f"{name}/{k}": v for k, v in val.items()} if isinstance(val, dict)
                                          else {name: val})
                        if eval_fn is not None:
                            record.update({f"eval/{k}": float(v) for k, v in eval_fn(model).items()})
                history.append(record)
                if metrics_path is not None:
                    write_metrics(metrics_path, [record])
                bar.set_postfix(loss=f"{loss_value:.4g}")
                if stop_rule is not None and stop_rule(done_steps, {k: float(v) for k, v in groups.items()}):
                    stopped = "stop_rule"
                if cfg.target_loss is not None and smoothed <= cfg.target_loss:
                    stopped = "target_loss"
            bar.update(1)
            if ckpt is not None and cfg.checkpoint_every and done_steps % cfg.checkpoint_every == 0:
                _checkpoint(done_steps)
            if interrupted["flag"]:
                stopped = "interrupted"
            if stopped != "max_steps":
                break
        if ckpt is not None:
            _checkpoint(done_steps)
    finally:
        bar.close()
        for sig, handler in old_handlers.items():
            signal.signal(sig, handler)
    model.eval()
    if interrupted["signal"] is not None:
        signal.raise_signal(interrupted["signal"])  # the caller's handler decides (default: stop)
    return TrainResult(model, done_steps, loss_value, stopped, history, time.perf_counter() - t0, ckpt)


def _ckpt_step(history: list, good: Path | None) -> Any:
    try:
        return torch.load(good, map_location="cpu", weights_only=False)["step"] if good else None
    except Exception:  # noqa: BLE001
        return "?"
