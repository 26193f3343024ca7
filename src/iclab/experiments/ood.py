"""Experiment ``ood``: attention dynamics for out-of-distribution ICL (spec ood-attention-dynamics.md).

Cells: ``pretrain`` (α/β trajectories with the per-feature stopping rule and the conservation law, §4.2–4.4),
``ood`` (error vs rotation angle, in-span rotations, random alignment, collapse cases, §4.5–4.6), ``forget``
(one per γ1: K = 2 fine-tuning over a list of γ2, §4.7–4.8; together they make the table, the dense sweep
and the (γ1, γ2) phase diagram), ``tiny`` (1–3 layer width-16 transformers), ``minilm`` (hidden states of
the pretrained MiniLM encoder rotated after one layer on a real sentence task). The two pre-trained merged-Q
models (K = 4, d = 8 and K = 2, d = 4) come from ``shared`` (trained once in the driver).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclab.config import Config, check_int, check_positive
from iclab.errors import ConfigError
from iclab.experiments import Experiment, lazy, register

__all__ = ["OodConfig"]


@dataclass(frozen=True)
class OodConfig(Config):
    """Settings of the ``ood`` experiment.

    Fields:
        seed: base seed (bases, batches, evaluation prompts).
        d, K: dimension and number of features of the pre-training / OOD study (spec: d = 8, K = 4).
        d_k2: dimension of the K = 2 forgetting study (needs d_k2 >= 4).
        n_tokens: prompt length N (features repeat; spec §6 default 40).
        c: loss prefactor (c = 1/2, spec §4.2); threshold: per-feature stopping level (ε/K = 0.0025).
        batch_size, lr, max_steps, ft_max_steps, log_every: plain SGD on Q, Q(0) = 0; the stopping rule is
            checked every ``log_every`` steps.
        thetas_deg: out-of-span rotation angles for the OOD curve; ood_prompts: MC prompts per angle.
        gamma1_table, gamma2_table: the K = 2 table (spec §5.2 uses γ1 = 0.5, 0.8; the seed says γ1 = 1).
        dense_gamma2: points of the dense γ2 sweep in [-1, 1] for each table γ1.
        phase_grid: points per axis of the (γ1, γ2) phase diagram over [-1, 1]².
        tiny_*: the tiny transformers (layers, width, prompts, Adam steps, fine-tuning γ's, evaluation size).
        minilm: run the MiniLM cell; minilm_layer: rotate hidden states after this encoder layer (0 = embeddings .. 5);
            minilm_thetas_deg: rotation angles; minilm_steps / minilm_ft_steps: full-batch Adam steps of the
            classification head on source / rotated features.
    """

    seed: int = 0
    d: int = 8
    K: int = 4
    d_k2: int = 4
    n_tokens: int = 40
    c: float = 0.5
    threshold: float = 0.0025
    batch_size: int = 256
    lr: float = 1.0
    max_steps: int = 5000
    ft_max_steps: int = 5000
    log_every: int = 5
    thetas_deg: tuple[float, ...] = (0, 15, 30, 45, 60, 75, 90)
    ood_prompts: int = 20000
    gamma1_table: tuple[float, ...] = (0.5, 0.8, 1.0)
    gamma2_table: tuple[float, ...] = (-0.9, -0.2, 0.0, 0.5, 0.95)
    dense_gamma2: int = 21
    phase_grid: int = 9
    tiny_layers: tuple[int, ...] = (1, 2, 3)
    tiny_width: int = 16
    tiny_d: int = 4
    tiny_n_tokens: int = 20
    tiny_steps: int = 1500
    tiny_ft_steps: int = 300
    tiny_batch: int = 128
    tiny_lr: float = 1e-3
    tiny_gamma1: float = 1.0
    tiny_gamma2: tuple[float, ...] = (-0.75, 0.0, 0.75)
    tiny_thetas_deg: tuple[float, ...] = (0, 30, 60, 90)
    tiny_eval: int = 4000
    minilm: bool = True
    minilm_layer: int = 5
    minilm_thetas_deg: tuple[float, ...] = (0, 30, 60, 90, 180)
    minilm_steps: int = 300
    minilm_ft_steps: int = 150

    def __post_init__(self) -> None:
        check_int("d", self.d, 2)
        check_int("K", self.K, 2)
        if 2 * self.K > self.d:
            raise ConfigError("d", self.d, f">= 2K = {2 * self.K} (rotation out of span V needs K more directions)")
        check_int("d_k2", self.d_k2, 4)
        check_int("n_tokens", self.n_tokens, 1)
        for name in ("c", "threshold", "lr", "tiny_lr"):
            check_positive(name, getattr(self, name))
        for name in ("batch_size", "max_steps", "ft_max_steps", "log_every", "ood_prompts", "dense_gamma2",
                     "phase_grid", "tiny_width", "tiny_n_tokens", "tiny_steps", "tiny_ft_steps", "tiny_batch",
                     "tiny_eval", "minilm_steps", "minilm_ft_steps"):
            check_int(name, getattr(self, name), 1)
        check_int("tiny_d", self.tiny_d, 4)
        check_int("minilm_layer", self.minilm_layer, 0)
        if self.minilm_layer > 5:
            raise ConfigError("minilm_layer", self.minilm_layer, "0..5 (0: embeddings; layers after it see rotated states)")
        for name in ("gamma1_table", "gamma2_table", "tiny_gamma2"):
            vals = getattr(self, name)
            if not vals or any(not -1 <= float(v) <= 1 for v in vals):
                raise ConfigError(name, vals, "overlaps gamma in [-1, 1]")
        if not -1 <= self.tiny_gamma1 <= 1:
            raise ConfigError("tiny_gamma1", self.tiny_gamma1, "an overlap gamma in [-1, 1]")
        if any(not 1 <= int(n) <= 6 for n in self.tiny_layers) or not self.tiny_layers:
            raise ConfigError("tiny_layers", self.tiny_layers, "depths between 1 and 6")


def _gamma_rows(cfg: OodConfig) -> dict[float, list[float]]:
    grid = [round(float(v), 6) for v in np.linspace(-1, 1, cfg.phase_grid)]
    dense = [round(float(v), 6) for v in np.linspace(-1, 1, cfg.dense_gamma2)]
    rows: dict[float, set] = {g1: set(grid) for g1 in grid}
    for g1 in cfg.gamma1_table:
        rows.setdefault(round(float(g1), 6), set(grid)).update([round(float(g), 6) for g in cfg.gamma2_table] + dense)
    return {g1: sorted(g2s) for g1, g2s in sorted(rows.items())}


def _cells(cfg: OodConfig) -> list[dict]:
    cells = [{"part": "pretrain", "seed": cfg.seed}, {"part": "ood", "seed": cfg.seed}]
    cells += [{"part": "forget", "gamma1": g1, "gamma2": g2s, "seed": cfg.seed} for g1, g2s in _gamma_rows(cfg).items()]
    cells += [{"part": "tiny", "layers": int(n), "seed": cfg.seed} for n in cfg.tiny_layers]
    if cfg.minilm:
        cells.append({"part": "minilm", "seed": cfg.seed})
    return cells


def _shared(cfg: OodConfig) -> dict:
    from iclab.experiments._ood_synthetic import pretrain

    return {"K4": pretrain(cfg, cfg.K, cfg.d), "K2": pretrain(cfg, 2, cfg.d_k2)}


def _run_cell(cfg: OodConfig, cell: dict, shared) -> dict:
    part = cell["part"]
    if part in ("pretrain", "ood", "forget"):
        from iclab.experiments import _ood_synthetic as syn

        if shared is None:
            shared = _shared(cfg)
        if part == "pretrain":
            return syn.pretrain_cell(cfg, shared)
        if part == "ood":
            return syn.ood_cell(cfg, shared)
        return syn.forgetting_cell(cfg, cell, shared)
    if part == "tiny":
        from iclab.experiments._ood_tiny import tiny_cell

        return tiny_cell(cfg, cell)
    if part == "minilm":
        from iclab.experiments._ood_minilm import minilm_cell

        return minilm_cell(cfg)
    raise ConfigError("part", part, "pretrain, ood, forget, tiny or minilm")





_QUICK = OodConfig(ood_prompts=8000, phase_grid=7, dense_gamma2=11, tiny_steps=800, tiny_ft_steps=200,
                   tiny_eval=3000)
_FULL = OodConfig(ood_prompts=50000, phase_grid=13, dense_gamma2=41, thetas_deg=tuple(range(0, 91, 5)),
                  tiny_steps=4000, tiny_ft_steps=600, tiny_gamma2=(-0.9, -0.75, -0.2, 0.0, 0.5, 0.75, 0.95),
                  tiny_thetas_deg=(0, 15, 30, 45, 60, 75, 90), tiny_eval=8000,
                  minilm_thetas_deg=(0, 15, 30, 45, 60, 90, 120, 150, 180))

register(Experiment(
    name="ood",
    paper="ood",
    title="Attention dynamics for OOD in-context learning: α/β weights, OOD error under rotation, forgetting",
    claim="A one-layer merged-Q softmax attention trained by GD on orthonormal-feature regression is described by "
          "α (own-feature) and β (other-feature) logits tied by a conservation law (α = −Σβ); its OOD error on a "
          "shifted feature set U follows from M = VᵀU and ⟨u_k, v̄⟩ (uniform attention = random guessing when U ⟂ V); "
          "fine-tuning on U raises source α and moves β by γ_mγ_k·Δβ_U, so for K = 2 feature k is forgotten iff "
          "−γ_kγ_m > γ_k², and otherwise fine-tuning helps the source task (spec §1, §4).",
    config_cls=OodConfig,
    presets={"quick": _QUICK, "full": _FULL},
    cells=_cells,
    run_cell=_run_cell,
    figures=lazy("iclab.experiments._ood_figures:figures"),
    compare=lazy("iclab.experiments._ood_figures:compare"),
    shared=_shared,
    notes=lazy("iclab.experiments._ood_figures:notes"),
    order=50,
))
