"""Cells of the ``multihead`` experiment (arXiv:2503.12734; docs/papers/multihead.md §5.1): every cell names
its ``part`` (``baseline``, ``ratio``, ``iso``, ``lengthgen``, ``aniso``, ``multitask``, ``activation``) and its
``seed``, the replicate index ``0 .. seeds - 1`` (a cell's draws are keyed by ``derive_seed(config seed, "replicate",
seed)``); trained parts add the head count ``H`` and the ``attention`` normaliser."""

from __future__ import annotations

from typing import Any

from iclab.budget import Need
from iclab.experiments.multihead.anisotropic import anisotropic_cell
from iclab.experiments.multihead.baselines import baseline_cell
from iclab.experiments.multihead.config import MultiheadConfig
from iclab.experiments.multihead.isotropic import isotropic_cell
from iclab.experiments.multihead.multitask import multitask_cell
from iclab.experiments.multihead.ratio import ratio_cell, ratio_grid

__all__ = ["cells", "run_cell", "shared", "budget"]


def _trained_cells(cfg: MultiheadConfig, seed: int) -> list[dict]:
    """The trained models of one seed, in run order."""
    out: list[dict] = []
    if "iso" in cfg.kinds:
        out += [{"part": "iso", "H": H, "attention": "softmax", "seed": seed} for H in cfg.heads]
        if cfg.linear:
            out.append({"part": "iso", "H": 1, "attention": "linear", "seed": seed})
    if "lengthgen" in cfg.kinds and cfg.lengthgen_train != cfg.n_train:  # else the iso models serve
        out += [
            {"part": "lengthgen", "H": cfg.lengthgen_heads, "attention": "softmax", "seed": seed},
            {"part": "lengthgen", "H": 1, "attention": "linear", "seed": seed},
        ]
    if "aniso" in cfg.kinds:
        out.append({"part": "aniso", "H": cfg.aniso_heads, "attention": "softmax", "seed": seed})
    if "multitask" in cfg.kinds:
        out += [{"part": "multitask", "H": H, "attention": "softmax", "seed": seed} for H in cfg.multitask_heads]
    if "activation" in cfg.kinds:
        out += [
            {"part": "activation", "H": cfg.activation_heads, "attention": a, "seed": seed} for a in cfg.activations
        ]
    return out


def cells(cfg: MultiheadConfig) -> list[dict]:
    """One ``baseline`` and one ``ratio`` cell, then the trained models of each of the ``seeds`` seeds."""
    out: list[dict] = [{"part": p, "seed": 0} for p in ("baseline", "ratio") if p in cfg.kinds]
    for s in range(cfg.seeds):
        out += _trained_cells(cfg, s)
    return out


def shared(cfg: MultiheadConfig) -> None:
    """Nothing is shared between cells."""
    return None


def run_cell(cfg: MultiheadConfig, cell: dict, shared: Any = None) -> dict:
    part = cell["part"]
    if part == "baseline":
        return baseline_cell(cfg, cell)
    if part == "ratio":
        return ratio_cell(cfg, cell)
    if part in ("iso", "activation"):
        return isotropic_cell(cfg, cell, cfg.n_train)
    if part == "lengthgen":
        return isotropic_cell(cfg, cell, cfg.lengthgen_train)
    if part == "aniso":
        return anisotropic_cell(cfg, cell)
    if part == "multitask":
        return multitask_cell(cfg, cell)
    raise ValueError(f"unknown multihead cell part {part!r}")


def budget(cfg: MultiheadConfig) -> list[Need]:
    r"""The largest trained cell (fp32 training, fp64 evaluation): a batch of prompts through H heads, the Monte-Carlo
    and evaluation prompts at the longest length (``mt_n`` included); time ~ 40 · steps · batch · n · d · H flops at
    ~5e9/s, with steps = ``stage2_steps`` where the ``iso`` H ≥ 2 softmax models train that long. Plus the ``ratio``
    cell: per draw of X and grid point, the Gram matrices (4Ld²) and the eigenvalues (~10d³) at ~5e8/s. The parts
    add up, so the estimate is an upper bound of the largest cell."""
    from iclab.config import check_device_available

    check_device_available("device", cfg.device)
    d = max(cfg.d, cfg.mt_d)
    lengths = [cfg.n_train, cfg.lengthgen_train, *cfg.eval_lengths, *cfg.paper_lengths]
    n = max(lengths + ([cfg.mt_n] if "multitask" in cfg.kinds else []))
    heads = max([*cfg.heads, *cfg.multitask_heads, cfg.aniso_heads, cfg.lengthgen_heads])
    per_step = cfg.batch_size * n * (d + 1) * heads
    n_eval = max(cfg.n_eval, cfg.n_monitor)
    lengths = {"eval_lengths": max(cfg.eval_lengths), "d": cfg.d}
    stage2 = "iso" in cfg.kinds and any(H >= 2 for H in cfg.heads) and cfg.stage2_steps > cfg.steps
    steps = cfg.stage2_steps if stage2 else cfg.steps
    step_fields = {"stage2_steps": steps} if stage2 else {"steps": steps}
    needs = [
        Need({"batch_size": cfg.batch_size, **lengths, "heads": heads}, memory=4.0 * 16 * per_step),
        Need({**step_fields, "batch_size": cfg.batch_size}, seconds=40.0 * steps * per_step / 5e9),
        Need(
            {"n_mc": cfg.n_mc, **lengths}, memory=8.0 * 4 * cfg.n_mc * n * (d + 1), seconds=cfg.n_mc * n * d * d / 1e8
        ),
        Need({"n_eval": n_eval, **lengths}, memory=8.0 * 4 * n_eval * n * (d + 1) + 8.0 * 2 * n_eval * n * heads),
    ]
    if "ratio" in cfg.kinds:
        grid = ratio_grid(cfg)
        flops = cfg.n_ratio * sum(4.0 * L * dd * dd + 10.0 * dd**3 for dd, L, _ in grid)
        chunk = min(cfg.n_ratio, 500)  # draws of X held at once (iclab.theory.multihead.risk_ratio_mc)
        memory = max(8.0 * 3 * chunk * L * dd + 8.0 * 3 * chunk * dd * dd for dd, L, _ in grid)
        needs.append(Need({"n_ratio": cfg.n_ratio, "ratio_dims": cfg.ratio_dims}, memory=memory, seconds=flops / 5e8))
    return needs
