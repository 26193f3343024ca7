"""The one trainer for every iclab model.

``train(model, data, loss_fn, config)`` runs ``config.steps`` optimiser steps. Each step draws a fresh batch
``data.sample(batch_size, generator_for(seed, "train", step))`` (or a minibatch of a fixed pool), so that the
batch sequence is a pure function of the seed: a run resumed from a checkpoint continues bit-for-bit.

``loss_fn(model, batch)`` returns the scalar loss, or ``(loss, groups)`` where ``groups`` maps a name (e.g. a
feature) to a float; ``stop_rule(step, groups) -> bool`` can then stop on per-group criteria (e.g. "every
feature's loss <= eps/K", OOD spec §4.2). A non-finite loss raises :class:`TrainingDiverged` and leaves the
last good checkpoint in place.
"""

from __future__ import annotations

import json
import math
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import torch
from tqdm.auto import tqdm

from iclab.data import generator_for
from iclab.errors import IclabError
from iclab.train._config import TrainConfig

__all__ = ["train", "TrainResult", "TrainingDiverged", "CHECKPOINT", "METRICS"]

CHECKPOINT = "checkpoint.pt"
METRICS = "metrics.jsonl"


class TrainingDiverged(IclabError, FloatingPointError):
    """The loss became NaN or infinite."""


@dataclass
class TrainResult:
    model: torch.nn.Module
    steps: int
    final_loss: float
    stopped: str  # "max_steps" | "target_loss" | "stop_rule" | "interrupted"
    history: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


def _optimizer(params, cfg: TrainConfig) -> torch.optim.Optimizer:
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    if cfg.optimizer == "adamw":
        return torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    return torch.optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)


def _lr_factor(step: int, cfg: TrainConfig) -> float:
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


def _save_checkpoint(path: Path, model, opt, sched, step: int, history: list) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                "step": step, "history": history}, tmp)
    tmp.replace(path)


def train(model: torch.nn.Module, data: Any, loss_fn: Callable, config: TrainConfig, *,
          run_dir: str | Path | None = None, resume: bool = False,
          stop_rule: Callable[[int, Mapping[str, float]], bool] | None = None,
          probes: Mapping[str, Callable[[torch.nn.Module], Any]] | None = None,
          eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None = None,
          desc: str = "train") -> TrainResult:
    """Train ``model`` in place on prompts from ``data`` (see module docstring).

    Args:
        data: an object with ``sample(batch_size, generator) -> batch``; batches may define ``to(device)``.
        loss_fn: ``(model, batch) -> loss`` or ``(loss, {group: value})``.
        run_dir: where ``checkpoint.pt`` and ``metrics.jsonl`` go (None: keep nothing on disk).
        resume: continue from ``run_dir/checkpoint.pt`` if it exists.
        stop_rule: called at every logged step with the groups' losses; True stops training.
        probes: ``{name: fn(model)}`` recorded every ``log_every`` steps (e.g. parameter summaries).
        eval_fn: ``model -> {metric: value}`` recorded every ``log_every`` steps.
    """
    cfg = config
    device = torch.device(cfg.device)
    model.to(device)
    opt = _optimizer([p for p in model.parameters() if p.requires_grad], cfg)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: _lr_factor(s, cfg))
    start_step, history = 0, []
    ckpt = metrics_path = None
    if run_dir is not None:
        run_dir = Path(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        ckpt, metrics_path = run_dir / CHECKPOINT, run_dir / METRICS
        if resume and ckpt.exists():
            state = torch.load(ckpt, map_location=device, weights_only=False)
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["optimizer"])
            sched.load_state_dict(state["scheduler"])
            start_step, history = state["step"], state["history"]
        elif metrics_path.exists():
            metrics_path.unlink()

    pool = None
    if cfg.pool_size is not None:
        pool = _to_device(data.sample(cfg.pool_size, generator_for(cfg.seed, "pool")), device)

    interrupted = {"flag": False}

    def _on_sigint(signum, frame):  # finish the current step, checkpoint, then stop
        interrupted["flag"] = True

    old_handler = None
    try:
        old_handler = signal.signal(signal.SIGINT, _on_sigint)
    except ValueError:  # not in the main thread
        pass

    bar = tqdm(total=cfg.steps, initial=start_step, desc=desc, disable=not cfg.progress, dynamic_ncols=True)
    t0 = time.perf_counter()
    stopped, loss_value, smoothed, step = "max_steps", float("nan"), None, start_step
    try:
        for step in range(start_step, cfg.steps):
            g = generator_for(cfg.seed, "train", step)
            if pool is None:
                batch = _to_device(data.sample(cfg.batch_size, g), device)
            else:
                idx = torch.randint(cfg.pool_size, (cfg.batch_size,), generator=g).to(device)
                batch = _pool_minibatch(pool, idx)
            model.train()
            out = loss_fn(model, batch)
            loss, groups = (out if isinstance(out, tuple) else (out, {}))
            loss_value = float(loss.detach())
            if not math.isfinite(loss_value):
                raise TrainingDiverged(
                    f"loss became {loss_value} at step {step}; lower the learning rate (lr={cfg.lr}) or set "
                    f"grad_clip" + (f"; the last good checkpoint is kept at {ckpt}" if ckpt and ckpt.exists() else ""))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.grad_clip is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            opt.step()
            sched.step()
            smoothed = loss_value if smoothed is None else 0.9 * smoothed + 0.1 * loss_value
            done_steps = step + 1
            last = done_steps == cfg.steps
            if done_steps % cfg.log_every == 0 or last or step == start_step:
                record = {"step": done_steps, "loss": loss_value, "lr": sched.get_last_lr()[0],
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
                    with metrics_path.open("a") as fh:
                        fh.write(json.dumps(record, default=float) + "\n")
                bar.set_postfix(loss=f"{loss_value:.4g}")
                if stop_rule is not None and stop_rule(done_steps, {k: float(v) for k, v in groups.items()}):
                    stopped = "stop_rule"
                if cfg.target_loss is not None and smoothed <= cfg.target_loss:
                    stopped = "target_loss"
            bar.update(1)
            if ckpt is not None and cfg.checkpoint_every and done_steps % cfg.checkpoint_every == 0:
                _save_checkpoint(ckpt, model, opt, sched, done_steps, history)
            if interrupted["flag"]:
                stopped = "interrupted"
            if stopped != "max_steps":
                break
        step_count = (step + 1) if cfg.steps > start_step else start_step
        if ckpt is not None:
            _save_checkpoint(ckpt, model, opt, sched, step_count, history)
    finally:
        bar.close()
        if old_handler is not None:
            signal.signal(signal.SIGINT, old_handler)
    model.eval()
    return TrainResult(model, step_count, loss_value, stopped, history, time.perf_counter() - t0)
