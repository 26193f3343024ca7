"""Experiment ``multihead``: in-context linear regression with multi-head softmax attention (He, Pan, Chen,
Yang, ICML 2025; spec multihead-softmax-regression.md).

Cells (see ``_multihead_cells``): the analytic baselines of spec §5.2; one trained model per (H, attention,
seed) at n = 40 (training dynamics, KQ/OV patterns, error vs prompt length, head ablation, linear attention);
length generalisation from n = 20 (softmax vs linear); anisotropic covariates (learned KQ vs Σ⁻¹); multi-task
regression (superposition across heads). Figures and the paper comparison are in ``_multihead_report``.
"""

from __future__ import annotations

from dataclasses import dataclass

from iclab.config import Config, check_choice, check_int, check_positive
from iclab.errors import ConfigError
from iclab.experiments import Experiment, lazy, register

__all__ = ["MultiheadConfig"]

KINDS = ("baseline", "iso", "lengthgen", "aniso", "multitask")


@dataclass(frozen=True)
class MultiheadConfig(Config):
    """Settings of the ``multihead`` experiment.

    Fields:
        seed: base seed (initialisation, batches, evaluation prompts); seeds: trained seeds per setting.
        d, n_train, sigma2: input dimension, training context length, noise variance (spec §3.2: 5, 40, 0.1).
        heads: head counts trained at n_train (spec: 1, 2, 4, 8); linear: also train H = 1 linear attention.
        steps, batch_size, lr, log_every: Adam training (spec §3.2: 5e5 steps, 256, 1e-3).
        n_monitor: held-out prompts for the loss curve; n_eval: test prompts per length; n_mc: MC prompts
            per length for the analytic baselines.
        eval_lengths: test context lengths; paper_lengths: lengths of the spec §5.2/§5.3 comparison rows.
        lengthgen_train, lengthgen_heads: length-generalisation training length and softmax head count.
        aniso_rho, aniso_heads: Toeplitz Σ_ij = ρ^|i−j| and heads for the anisotropic run (spec §3.3).
        mt_d, multitask_heads: multi-task dimension and head counts (spec §3.4: d = 6; H = 3, 4).
        kinds: which cell kinds to run (subset of baseline, iso, lengthgen, aniso, multitask).
        device: torch device for training.
    """

    seed: int = 0
    seeds: int = 1
    d: int = 5
    n_train: int = 40
    sigma2: float = 0.1
    heads: tuple[int, ...] = (1, 2, 4, 8)
    linear: bool = True
    steps: int = 1500
    batch_size: int = 256
    lr: float = 3e-3
    log_every: int = 50
    n_monitor: int = 1000
    n_eval: int = 4000
    n_mc: int = 20000
    eval_lengths: tuple[int, ...] = (10, 20, 30, 40, 60, 80, 100)
    paper_lengths: tuple[int, ...] = (10, 20, 40, 100)
    lengthgen_train: int = 20
    lengthgen_heads: int = 2
    aniso_rho: float = 0.5
    aniso_heads: int = 2
    mt_d: int = 6
    multitask_heads: tuple[int, ...] = (3, 4)
    kinds: tuple[str, ...] = KINDS
    device: str = "cpu"

    def __post_init__(self) -> None:
        for f in ("seeds", "d", "n_train", "steps", "batch_size", "log_every", "n_monitor", "n_eval", "n_mc",
                  "lengthgen_train", "lengthgen_heads", "aniso_heads"):
            check_int(f, getattr(self, f), 1)
        check_int("seed", self.seed, 0)
        check_int("mt_d", self.mt_d, 6)
        check_positive("sigma2", self.sigma2)
        check_positive("lr", self.lr)
        if not 0 <= self.aniso_rho < 1:
            raise ConfigError("aniso_rho", self.aniso_rho, "a number in [0, 1)")
        for f in ("heads", "eval_lengths", "paper_lengths", "multitask_heads"):
            vals = getattr(self, f)
            if not vals or any(not isinstance(v, int) or v < 1 for v in vals):
                raise ConfigError(f, vals, "a non-empty tuple of integers >= 1")
        for k in self.kinds:
            check_choice("kinds", k, KINDS)


_QUICK = MultiheadConfig()
_FULL = MultiheadConfig(seeds=3, heads=(1, 2, 3, 4, 8), steps=500_000, lr=1e-3, log_every=1000, n_eval=20_000,
                        n_mc=50_000, n_monitor=5000, multitask_heads=(1, 2, 3, 4),
                        eval_lengths=(10, 15, 20, 25, 30, 35, 40, 50, 60, 70, 80, 90, 100))


def _cells(cfg: MultiheadConfig) -> list[dict]:
    cells: list[dict] = []
    if "baseline" in cfg.kinds:
        cells.append({"kind": "baseline", "seed": cfg.seed})
    for s in range(cfg.seeds):
        seed = cfg.seed + s
        if "iso" in cfg.kinds:
            cells += [{"kind": "iso", "H": H, "attention": "softmax", "seed": seed} for H in cfg.heads]
            if cfg.linear:
                cells.append({"kind": "iso", "H": 1, "attention": "linear", "seed": seed})
        if "lengthgen" in cfg.kinds:
            cells += [{"kind": "lengthgen", "H": cfg.lengthgen_heads, "attention": "softmax", "seed": seed},
                      {"kind": "lengthgen", "H": 1, "attention": "linear", "seed": seed}]
        if "aniso" in cfg.kinds:
            cells.append({"kind": "aniso", "H": cfg.aniso_heads, "attention": "softmax", "seed": seed})
        if "multitask" in cfg.kinds:
            cells += [{"kind": "multitask", "H": H, "attention": "softmax", "seed": seed}
                      for H in cfg.multitask_heads]
    return cells






register(Experiment(
    name="multihead",
    paper="multihead",
    title="Multi-head softmax attention for in-context linear regression: emergent patterns and debiased GD",
    claim="A one-layer multi-head softmax attention trained on Gaussian in-context regression learns diagonal, "
          "homogeneous KQ circuits (ω^(h) I_d, |ω^(h)| = γ) and last-entry, zero-sum OV circuits with "
          "sign(ω) = sign(μ); with H ≥ 2 heads it implements debiased one-step GD with η ≈ η* = "
          "(1 + (1+σ²)d/L)⁻¹, beats the single head (a Nadaraya–Watson kernel regressor), is within a constant "
          "of the Bayes risk, generalises to longer prompts (linear attention does not), learns KQ ∝ Σ⁻¹ for "
          "anisotropic inputs and shares heads across tasks (superposition) when 2 < H < 2N (spec §1, §4, §5).",
    config_cls=MultiheadConfig,
    presets={"quick": _QUICK, "full": _FULL},
    cells=_cells,
    run_cell=lazy("iclab.experiments._multihead_cells:run_cell"),
    figures=lazy("iclab.experiments._multihead_report:figures"),
    compare=lazy("iclab.experiments._multihead_report:compare"),
    notes=lazy("iclab.experiments._multihead_report:notes"),
    order=40,
))
