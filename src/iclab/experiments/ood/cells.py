"""The grid of the ``ood`` experiment (arXiv:2609.36448, docs/papers/ood.md §5) and its cell dispatch.

Cells, in order: ``pretrain``, ``ood``, one ``forget`` cell per γ1 (its γ2 list covers the table, the dense
sweep and the phase-diagram column), one ``tiny`` cell per depth, ``minilm``, ``minilm_shift``. ``shared`` pre-trains the two
merged-Q models (K = ``K``, d = ``d`` and K = 2, d = ``d_k2``) once in the driver.
"""

from __future__ import annotations

import numpy as np

from iclab.budget import Need
from iclab.errors import ConfigError
from iclab.experiments.ood.config import OodConfig
from iclab.experiments.ood.forgetting import forgetting_cell
from iclab.experiments.ood.minilm import minilm_cell
from iclab.experiments.ood.minilm_shift import minilm_shift_cell
from iclab.experiments.ood.ood_error import ood_cell
from iclab.experiments.ood.pretrain import pretrain, pretrain_cell
from iclab.experiments.ood.tiny import tiny_cell

__all__ = ["cells", "gamma_rows", "run_cell", "shared", "budget"]


def gamma_rows(cfg: OodConfig) -> dict[float, list[float]]:
    """γ1 -> sorted γ2 list: the phase grid for every grid γ1, plus the table and dense γ2 for each table γ1."""
    grid = [round(float(v), 6) for v in np.linspace(-1, 1, cfg.phase_grid)]
    dense = [round(float(v), 6) for v in np.linspace(-1, 1, cfg.dense_gamma2)]
    rows: dict[float, set] = {g1: set(grid) for g1 in grid}
    for g1 in cfg.gamma1_table:
        rows.setdefault(round(float(g1), 6), set(grid)).update([round(float(g), 6) for g in cfg.gamma2_table] + dense)
    return {g1: sorted(g2s) for g1, g2s in sorted(rows.items())}


def cells(cfg: OodConfig) -> list[dict]:
    out = [{"part": "pretrain", "seed": cfg.seed}, {"part": "ood", "seed": cfg.seed}]
    out += [{"part": "forget", "gamma1": g1, "gamma2": g2s, "seed": cfg.seed} for g1, g2s in gamma_rows(cfg).items()]
    out += [
        {"part": "tiny", "layers": int(n), "seed": cfg.seed, "replicate": i}
        for i in range(cfg.tiny_seeds)
        for n in cfg.tiny_layers
    ]
    if cfg.minilm:
        out += [{"part": "minilm", "seed": cfg.seed}, {"part": "minilm_shift", "seed": cfg.seed}]
    return out


def shared(cfg: OodConfig) -> dict:
    """The two SGD-pre-trained merged-Q runs: ``{"K4": pretrain(K, d), "K2": pretrain(2, d_k2)}``."""
    return {"K4": pretrain(cfg, cfg.K, cfg.d), "K2": pretrain(cfg, 2, cfg.d_k2)}


def run_cell(cfg: OodConfig, cell: dict, shared_runs) -> dict:
    part = cell["part"]
    if part in ("pretrain", "ood", "forget") and shared_runs is None:
        shared_runs = shared(cfg)
    if part == "pretrain":
        return pretrain_cell(cfg, shared_runs)
    if part == "ood":
        return ood_cell(cfg, shared_runs)
    if part == "forget":
        return forgetting_cell(cfg, cell, shared_runs)
    if part == "tiny":
        return tiny_cell(cfg, cell)
    if part == "minilm":
        return minilm_cell(cfg)
    if part == "minilm_shift":
        return minilm_shift_cell(cfg)
    raise ConfigError("part", part, "pretrain, ood, forget, tiny, minilm or minilm_shift")


def budget(cfg: OodConfig) -> list[Need]:
    r"""The largest cell (fp64 prompts of ``n_tokens`` tokens in dimension ``d``): an SGD batch, the OOD evaluation
    prompts (all at once), the tiny transformers' batches and evaluation prompts; time ~ steps · batch · N · d² flops."""
    d, n = max(cfg.d, cfg.d_k2), cfg.n_tokens
    tiny = max(cfg.tiny_width, cfg.tiny_d) * cfg.tiny_n_tokens * max(cfg.tiny_layers)
    shape = {"n_tokens": n, "d": cfg.d}
    tiny_shape = {"tiny_width": cfg.tiny_width, "tiny_n_tokens": cfg.tiny_n_tokens}
    minilm_seconds = (cfg.minilm_steps + cfg.minilm_ft_steps * len(cfg.minilm_thetas_deg)) * 1e6 / 1e9
    return [
        Need(
            {"batch_size": cfg.batch_size, **shape},
            memory=8.0 * 8 * cfg.batch_size * n * d,
            seconds=20.0 * (cfg.max_steps + cfg.ft_max_steps) * cfg.batch_size * n * d * d / 5e9,
        ),
        Need(
            {"ood_prompts": cfg.ood_prompts, **shape},
            memory=8.0 * 8 * cfg.ood_prompts * n * d,
            seconds=len(cfg.thetas_deg) * cfg.ood_prompts * n * d * d / 1e9,
        ),
        Need(
            {"tiny_batch": cfg.tiny_batch, **tiny_shape, "tiny_steps": cfg.tiny_steps},
            memory=4.0 * 32 * cfg.tiny_batch * tiny
            + 4.0 * 4 * cfg.tiny_batch * cfg.tiny_n_tokens**2 * max(cfg.tiny_layers),
            seconds=60.0
            * (cfg.tiny_steps + cfg.tiny_ft_steps * len(cfg.tiny_gamma2))
            * cfg.tiny_batch
            * tiny
            * cfg.tiny_width
            / 2e10,
        ),
        Need(
            {"tiny_eval": cfg.tiny_eval, **tiny_shape},
            memory=4.0 * 16 * cfg.tiny_eval * tiny + 4.0 * 4 * cfg.tiny_eval * cfg.tiny_n_tokens**2,
        ),
        Need(
            {"minilm": cfg.minilm, "minilm_steps": cfg.minilm_steps, "minilm_ft_steps": cfg.minilm_ft_steps},
            memory=5e8 if cfg.minilm else 0.0,
            seconds=minilm_seconds if cfg.minilm else 0.0,
        ),
    ]
