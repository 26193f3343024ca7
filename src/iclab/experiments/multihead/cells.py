"""Cells of the ``multihead`` experiment (arXiv:2503.12734; docs/papers/multihead.md §5.1): every cell names
its ``part`` (``baseline``, ``iso``, ``lengthgen``, ``aniso``, ``multitask``) and its ``seed``; trained parts add
the head count ``H`` and the ``attention`` normaliser."""

from __future__ import annotations

from typing import Any

from iclab.experiments.multihead.anisotropic import anisotropic_cell
from iclab.experiments.multihead.baselines import baseline_cell
from iclab.experiments.multihead.config import MultiheadConfig
from iclab.experiments.multihead.isotropic import isotropic_cell
from iclab.experiments.multihead.multitask import multitask_cell

__all__ = ["cells", "run_cell", "shared"]


def _trained_cells(cfg: MultiheadConfig, seed: int) -> list[dict]:
    """The trained models of one seed, in run order."""
    out: list[dict] = []
    if "iso" in cfg.kinds:
        out += [{"part": "iso", "H": H, "attention": "softmax", "seed": seed} for H in cfg.heads]
        if cfg.linear:
            out.append({"part": "iso", "H": 1, "attention": "linear", "seed": seed})
    if "lengthgen" in cfg.kinds:
        out += [{"part": "lengthgen", "H": cfg.lengthgen_heads, "attention": "softmax", "seed": seed},
                {"part": "lengthgen", "H": 1, "attention": "linear", "seed": seed}]
    if "aniso" in cfg.kinds:
        out.append({"part": "aniso", "H": cfg.aniso_heads, "attention": "softmax", "seed": seed})
    if "multitask" in cfg.kinds:
        out += [{"part": "multitask", "H": H, "attention": "softmax", "seed": seed} for H in cfg.multitask_heads]
    return out


def cells(cfg: MultiheadConfig) -> list[dict]:
    """One ``baseline`` cell, then the trained models of each of the ``seeds`` seeds."""
    out: list[dict] = [{"part": "baseline", "seed": cfg.seed}] if "baseline" in cfg.kinds else []
    for s in range(cfg.seeds):
        out += _trained_cells(cfg, cfg.seed + s)
    return out


def shared(cfg: MultiheadConfig) -> None:
    """Nothing is shared between cells."""
    return None


def run_cell(cfg: MultiheadConfig, cell: dict, shared: Any = None) -> dict:
    part = cell["part"]
    if part == "baseline":
        return baseline_cell(cfg, cell)
    if part == "iso":
        return isotropic_cell(cfg, cell, cfg.n_train)
    if part == "lengthgen":
        return isotropic_cell(cfg, cell, cfg.lengthgen_train)
    if part == "aniso":
        return anisotropic_cell(cfg, cell)
    if part == "multitask":
        return multitask_cell(cfg, cell)
    raise ValueError(f"unknown multihead cell part {part!r}")
