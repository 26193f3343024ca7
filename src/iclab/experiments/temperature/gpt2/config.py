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

from iclab.config import Config, MAX_SEEDS, choices_field, device_field, int_field, numbers_field, scale_field
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

    d: int = int_field(5)
    n: int = int_field(20)
    sigma_train: float = scale_field(0.1, zero_ok=True)
    n_layer: int = int_field(4)
    n_head: int = int_field(4)
    n_embd: int = int_field(64)
    steps: int = int_field(4000)
    batch_size: int = int_field(128)
    lr: float = scale_field(3e-3)
    train_seeds: int = int_field(1, high=MAX_SEEDS)
    taus: tuple[float, ...] = numbers_field(
        (0.5, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0), above=0, contains=1.0, why="1.0: the trained model"
    )
    shifts: tuple[str, ...] = choices_field(tuple(SHIFTS), SHIFTS)
    n_test: int = int_field(2000)
    device: str = device_field("cpu")
    seed: int = int_field(0, low=0)

    def __post_init__(self) -> None:
        if self.n_embd % self.n_head:
            raise ConfigError("n_embd", self.n_embd, f"a multiple of n_head={self.n_head}")


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
