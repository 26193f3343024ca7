"""Config and presets of the ``multihead`` experiment: arXiv:2503.12734 (He, Pan, Chen, Yang, ICML 2025),
multi-head softmax attention trained on in-context linear regression (settings: docs/papers/multihead.md §5)."""

from __future__ import annotations

from dataclasses import dataclass

from iclab.config import Config, MAX_SEEDS, check_choice, check_device, check_int, check_scale
from iclab.errors import ConfigError

__all__ = ["MultiheadConfig", "PARTS", "PRESETS"]

# The measurements of the experiment: the value of every cell's "part" (docs/papers/multihead.md §5.1).
PARTS = ("baseline", "iso", "lengthgen", "aniso", "multitask")


@dataclass(frozen=True)
class MultiheadConfig(Config):
    """Settings of the ``multihead`` experiment (the paper's values: docs/papers/multihead.md §5.2).

    Fields:
        seed: base seed (initialisation, batches, evaluation prompts).
        seeds: trained seeds per setting.
        d: input dimension (paper: 5).
        n_train: training context length (paper: 40).
        sigma2: noise variance σ² (paper: 0.1).
        heads: head counts trained at n_train (paper: 1, 2, 4, 8).
        linear: also train an H = 1 linear-attention model at n_train.
        steps: Adam steps per trained model (paper: 5e5).
        batch_size: prompts per step (paper: 256).
        lr: Adam learning rate (paper: 1e-3).
        log_every: steps between points of the loss and pattern curves.
        n_monitor: held-out prompts for the loss curve.
        n_eval: test prompts per evaluation length.
        n_mc: Monte Carlo prompts per length for the analytic baselines.
        eval_lengths: test context lengths of the trained models.
        paper_lengths: lengths of the rows compared with the paper's tables.
        lengthgen_train: training length of the length-generalisation models.
        lengthgen_heads: head count of the softmax length-generalisation model.
        aniso_rho: ρ of the anisotropic input covariance Σ_ij = ρ^|i−j|.
        aniso_heads: head count of the anisotropic model.
        mt_d: input dimension of the multi-task prompts (paper: 6).
        multitask_heads: head counts of the multi-task models (paper: 1, 2, 3, 4).
        kinds: which parts to run (subset of baseline, iso, lengthgen, aniso, multitask).
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
    kinds: tuple[str, ...] = PARTS
    device: str = "cpu"

    def __post_init__(self) -> None:
        for f in ("seeds", "d", "n_train", "steps", "batch_size", "log_every", "n_monitor", "n_eval", "n_mc",
                  "lengthgen_train", "lengthgen_heads", "aniso_heads"):
            check_int(f, getattr(self, f), 1)
        check_int("seed", self.seed, 0)
        check_int("seeds", self.seeds, 1, MAX_SEEDS)
        check_device("device", self.device)
        if not self.kinds:
            raise ConfigError("kinds", self.kinds, "a non-empty subset of " + ", ".join(PARTS))
        check_int("mt_d", self.mt_d, 6)
        check_scale("sigma2", self.sigma2)
        check_scale("lr", self.lr)
        if not 0 <= self.aniso_rho < 1:
            raise ConfigError("aniso_rho", self.aniso_rho, "a number in [0, 1)")
        for f in ("heads", "eval_lengths", "paper_lengths", "multitask_heads"):
            vals = getattr(self, f)
            if not vals or any(not isinstance(v, int) or v < 1 for v in vals):
                raise ConfigError(f, vals, "a non-empty tuple of integers >= 1")
        for k in self.kinds:
            check_choice("kinds", k, PARTS)


PRESETS = {
    "quick": MultiheadConfig(),
    "full": MultiheadConfig(seeds=3, heads=(1, 2, 3, 4, 8), steps=500_000, lr=1e-3, log_every=1000, n_eval=20_000,
                            n_mc=50_000, n_monitor=5000, multitask_heads=(1, 2, 3, 4),
                            eval_lengths=(10, 15, 20, 25, 30, 35, 40, 50, 60, 70, 80, 90, 100)),
}
