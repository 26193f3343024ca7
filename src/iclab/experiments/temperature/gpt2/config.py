r"""Config of ``temperature-gpt2-regression``: a trained GPT-2 on the in-context regression of arXiv:2511.01292
(Demir & Doğan, §5 footnote; v1 Fig. 6), with inference-time attention temperature under shift
(docs/papers/temperature.md §5.2).

The paper gives no size or training details (its appendix was not available; note §5.5), so no preset can be
"the paper's setting". ``PRESETS["paper"]`` is iclab's defensible stand-in that fits about an hour on 2 CPU cores:
the one-layer experiment's l ≈ 4d regime (d = 5, n = 20), a 4-layer × 4-head × 64-wide GPT-2 trained 6000 Adam steps,
three independently trained models (so the claims carry the model-to-model spread) and 4000 test prompts per
shift; ``PRESETS["quick"]`` one smaller model (1000 steps, about a minute); ``PRESETS["full"]`` Garg et al.'s
(2022) size, 12 layers × 8 heads × width 256 at d = 20, n = 40 — a GPU run (``--set device=cuda``).
"""

from __future__ import annotations

from dataclasses import dataclass

from iclab.config import Config, MAX_SEEDS, check_choice, check_device, check_int, check_scale
from iclab.errors import ConfigError

__all__ = ["SHIFTS", "TemperatureGPT2Config", "PRESETS"]

#: shift name -> (cov_x scale a, cov_w scale b, mu_w per coordinate · sqrt(d), test sigma or None, mu_x per coord)
SHIFTS = {
    "none": (1.0, 1.0, 0.0, None, 0.0),
    "cov_x*2": (2.0, 1.0, 0.0, None, 0.0),
    "cov_x*0.5": (0.5, 1.0, 0.0, None, 0.0),
    "cov_w*3": (1.0, 3.0, 0.0, None, 0.0),
    "noise=1": (1.0, 1.0, 0.0, 1.0, 0.0),
    "noise=2": (1.0, 1.0, 0.0, 2.0, 0.0),
    "mean_x=1": (1.0, 1.0, 0.0, None, 1.0),
}


@dataclass(frozen=True)
class TemperatureGPT2Config(Config):
    """Settings of ``temperature-gpt2-regression``.

    Fields:
        d: input dimension.
        n: context pairs, in training and test (l = n + 1 tokens with the query).
        sigma_train: training label noise.
        n_layer: GPT-2 layers.
        n_head: attention heads per layer (head dim = n_embd / n_head).
        n_embd: GPT-2 width.
        steps: training steps (Adam, cosine schedule, 5 % warm-up).
        batch_size: prompts per training step.
        lr: peak learning rate.
        train_seeds: independently trained models (error bars across them).
        taus: inference temperatures (all layers; the first-layer-only curve uses the same grid).
        shifts: test shifts, names from ``SHIFTS``.
        n_test: test prompts per (shift, τ) (the same prompts for every τ).
        device: torch device for training and evaluation.
        seed: base seed.
    """

    d: int = 5
    n: int = 20
    sigma_train: float = 0.1
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 64
    steps: int = 4000
    batch_size: int = 128
    lr: float = 3e-3
    train_seeds: int = 1
    taus: tuple[float, ...] = (0.5, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0)
    shifts: tuple[str, ...] = tuple(SHIFTS)
    n_test: int = 2000
    device: str = "cpu"
    seed: int = 0

    def __post_init__(self) -> None:
        for f in ("d", "n", "n_layer", "n_head", "n_embd", "steps", "batch_size", "train_seeds", "n_test"):
            check_int(f, getattr(self, f), 1)
        if self.n_embd % self.n_head:
            raise ConfigError("n_embd", self.n_embd, f"a multiple of n_head={self.n_head}")
        check_scale("sigma_train", self.sigma_train, zero_ok=True)
        check_scale("lr", self.lr)
        if not self.taus or any(not isinstance(t, (int, float)) or not t > 0 for t in self.taus):
            raise ConfigError("taus", self.taus, "a non-empty tuple of temperatures > 0")
        if 1.0 not in self.taus:
            raise ConfigError("taus", self.taus, "a grid that contains 1.0 (the trained model)")
        for s in self.shifts:
            check_choice("shifts", s, SHIFTS)
        check_int("seed", self.seed, 0)
        check_int("train_seeds", self.train_seeds, 1, MAX_SEEDS)
        check_device("device", self.device)
        if not self.shifts:
            raise ConfigError("shifts", self.shifts, "a non-empty subset of " + ", ".join(SHIFTS))


_FINE_TAUS = (0.35, 0.5, 0.6, 0.7, 0.85, 1.0, 1.2, 1.4, 1.7, 2.0, 2.5, 3.0, 4.0, 5.0)
QUICK = TemperatureGPT2Config(
    n_layer=3, steps=1000, batch_size=96, n_test=1000, taus=(0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0)
)
PAPER = TemperatureGPT2Config(steps=6000, train_seeds=3, n_test=4000, taus=_FINE_TAUS)
FULL = TemperatureGPT2Config(
    d=20,
    n=40,
    n_layer=12,
    n_head=8,
    n_embd=256,
    steps=50000,
    batch_size=64,
    lr=1e-4,
    train_seeds=3,
    n_test=4000,
    taus=_FINE_TAUS,
)
PRESETS = {"quick": QUICK, "paper": PAPER, "full": FULL}
