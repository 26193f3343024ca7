"""Settings of the ``dispersion`` experiment (arXiv:2410.01104, "Softmax is not enough (for sharp size
generalisation)"; settings in docs/papers/dispersion.md §5): the frozen config, its presets (``quick``, ``paper``:
the paper's settings where they fit about an hour on 2 CPU cores, ``full``), the β grid of the β(H) refit and the
bins of the logit-spread histogram.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from iclab.config import Config, MAX_SEEDS, check_choice, check_int, check_nonnegative, check_scale
from iclab.errors import ConfigError

__all__ = ["DispersionConfig", "PRESETS", "PAPER_TEST_SIZES", "PAPER_D", "DELTA_BINS", "beta_grid"]

_VARIANTS = ("softmax", "sigmoid", "ssmax")
_TASKS = ("minimum", "sorting", "running_max")
_REAL_MODELS = ("minilm", "smollm2", "gemma3-270m")  # models iclab.hf.load_model knows (gemma3-270m: once it does)
_REAL_TEXTS = ("pydoc", "country")

DELTA_BINS = np.arange(0.0, 40.5, 0.5)  # histogram bins of the logit spread δ of pretrained models


@dataclass(frozen=True)
class DispersionConfig(Config):
    """Settings of the ``dispersion`` experiment (docs/papers/dispersion.md §5).

    Fields:
        seed: base seed of every random stream.
        seeds: softmax-trained max-retrieval models (paired softmax vs adaptive test across them).
        variants: normalisers trained for max retrieval (``softmax`` always; ``sigmoid``, ``ssmax``).
        variant_seeds: models per non-softmax variant.
        sigmoid_bias: sigmoid attention bias (None: Ramapuram et al.'s -log n over visible keys).
        train_min: smallest training set size (App. A, second-hand: 5).
        train_max: largest training set size (App. A, second-hand: 16).
        test_sizes: test set sizes.
        eval_sets: fresh test sets per size and model.
        d: width of the MLPs ψ_x, ψ_q, φ and of W_Q, W_K, W_V (App. A, second-hand: 128).
        depth: hidden layers of each MLP (the paper says "deep"; docs/papers/dispersion.md §3.6).
        steps: AdamW training steps of a max-retrieval model.
        batch_size: training batch (App. A, second-hand: 128).
        lr: AdamW learning rate (App. A, second-hand: 1e-3).
        weight_decay: AdamW weight decay (App. A, second-hand: 1e-3).
        fit_sizes: set sizes of the sets used for the β(H) refit.
        fit_sets: sets per fit size and model.
        beta_max: largest β of the refit grid [1, beta_max].
        beta_step: step of the refit β grid.
        entropy_bin: entropy bin width (nats) of the refit.
        delta_models: pretrained models whose logit spread δ is measured (``minilm``, ``smollm2``,
            ``gemma3-270m``; empty: skip).
        delta_tokens: length (tokens) of the text fed to them (MiniLM at most 512).
        lookup_models: pretrained causal LMs of the key–value lookup (``gemma3-270m``, ``smollm2``; empty: skip).
        lookup_tasks: retrieval tasks (``kv``: key–value lookup, the list grows; ``passkey``: one pass-key line among
            filler lines that grow).
        lookup_sizes: lines in the lookup list or filler lines around the pass key (about 7 tokens per line).
        lookup_lists: lists per (model, size); ``passkey`` draws lists × queries haystacks of one question.
        lookup_queries: queries per list.
        clrs_tasks: CLRS-style tasks (``minimum``, ``sorting``, ``running_max``).
        clrs_seeds: models per (task, normaliser).
        clrs_train_max: longest training sequence (the shortest is 4).
        clrs_test_sizes: test sequence lengths.
        clrs_eval: test sequences per length.
        clrs_steps: AdamW training steps of a CLRS-style model.
        clrs_batch: its training batch.
        clrs_lr: its learning rate.
        clrs_d_model: its width.
        clrs_layers: its layers.
        clrs_heads: its heads per layer (a divisor of clrs_d_model).
        clrs_vocab: distinct token values of the CLRS-style tasks.
        sharp_eps: a head is (1 − sharp_eps)-sharp when its largest coefficient is at least 1 − sharp_eps (the
            spread that needs, log((n − 1)(1 − ε)/ε), is compared with the trained heads' weights;
            docs/papers/dispersion.md §4.2).
        real_models: pretrained models whose heads' largest coefficient is measured as the context grows
            (``minilm``, ``smollm2``, ``gemma3-270m``; Thm 2.2, docs/papers/dispersion.md §5.7; empty: skip).
        real_sizes: context lengths n (tokens) of that measurement (MiniLM stops at 512).
        real_segments: text segments per model (the unit of the confidence intervals).
        real_text: the offline text: ``pydoc`` (the Python documentation behind ``help()``, consecutive
            segments) or ``country`` (countryinfo sentences, one shuffle per segment).
    """

    seed: int = 0
    seeds: int = 3
    variants: tuple[str, ...] = _VARIANTS
    variant_seeds: int = 1
    sigmoid_bias: float | None = None
    train_min: int = 5
    train_max: int = 16
    test_sizes: tuple[int, ...] = (16, 64, 256, 1024, 4096)
    eval_sets: int = 500
    d: int = 64
    depth: int = 2
    steps: int = 1000
    batch_size: int = 128
    lr: float = 1e-3
    weight_decay: float = 1e-3
    fit_sizes: tuple[int, ...] = (16, 64, 256, 1024)
    fit_sets: int = 256
    beta_max: float = 5.0
    beta_step: float = 0.1
    entropy_bin: float = 0.25
    MAY_BE_EMPTY: ClassVar[tuple[str, ...]] = ("delta_models", "lookup_models", "real_models")  # empty: skip
    delta_models: tuple[str, ...] = ("minilm", "smollm2", "gemma3-270m")
    delta_tokens: int = 512
    lookup_models: tuple[str, ...] = ("gemma3-270m", "smollm2")
    lookup_tasks: tuple[str, ...] = ("kv", "passkey")
    lookup_sizes: tuple[int, ...] = (8, 32, 128)
    lookup_lists: int = 3
    lookup_queries: int = 12
    clrs_tasks: tuple[str, ...] = _TASKS
    clrs_seeds: int = 1
    clrs_train_max: int = 12
    clrs_test_sizes: tuple[int, ...] = (8, 16, 32, 64)
    clrs_eval: int = 256
    clrs_steps: int = 600
    clrs_batch: int = 64
    clrs_lr: float = 3e-3
    clrs_d_model: int = 32
    clrs_layers: int = 2
    clrs_heads: int = 2
    clrs_vocab: int = 32
    sharp_eps: float = 0.01
    real_models: tuple[str, ...] = ("minilm", "smollm2")
    real_sizes: tuple[int, ...] = (32, 64, 128, 256, 512, 1024)
    real_segments: int = 3
    real_text: str = "pydoc"

    def __post_init__(self) -> None:
        check_int("seed", self.seed, 0)
        for name in ("seeds", "variant_seeds", "clrs_seeds", "real_segments"):
            check_int(name, getattr(self, name), 1, MAX_SEEDS)
        for name in (
            "seeds",
            "variant_seeds",
            "train_min",
            "eval_sets",
            "d",
            "depth",
            "steps",
            "batch_size",
            "fit_sets",
            "delta_tokens",
            "lookup_lists",
            "lookup_queries",
            "clrs_seeds",
            "clrs_eval",
            "clrs_steps",
            "clrs_batch",
            "clrs_d_model",
            "clrs_layers",
            "clrs_heads",
            "real_segments",
        ):
            check_int(name, getattr(self, name), 1)
        check_int("train_max", self.train_max, self.train_min)
        check_int("clrs_train_max", self.clrs_train_max, 4)
        check_int("clrs_vocab", self.clrs_vocab, 2)
        for name in ("lr", "beta_step", "entropy_bin", "clrs_lr"):
            check_scale(name, getattr(self, name))
        check_nonnegative("weight_decay", self.weight_decay)
        if not self.beta_max >= 1.0:
            raise ConfigError("beta_max", self.beta_max, "a number >= 1")
        if self.sigmoid_bias is not None and not math.isfinite(self.sigmoid_bias):
            raise ConfigError("sigmoid_bias", self.sigmoid_bias, "a finite number or None (-log n)")
        if "softmax" not in self.variants:
            raise ConfigError("variants", self.variants, "a tuple containing 'softmax' (plus 'sigmoid', 'ssmax')")
        for v in self.variants:
            check_choice("variants", v, _VARIANTS)
        for t in self.clrs_tasks:
            check_choice("clrs_tasks", t, _TASKS)
        for m in self.delta_models:
            check_choice("delta_models", m, ("minilm", "smollm2", "gemma3-270m"))
        for m in self.lookup_models:
            check_choice("lookup_models", m, ("gemma3-270m", "smollm2"))
        for t in self.lookup_tasks:
            check_choice("lookup_tasks", t, ("kv", "passkey"))
        for n in self.lookup_sizes:
            check_int("lookup_sizes", n, 1)
        for m in self.real_models:
            check_choice("real_models", m, _REAL_MODELS)
        check_choice("real_text", self.real_text, _REAL_TEXTS)
        if not 0.0 < self.sharp_eps < 1.0:
            raise ConfigError("sharp_eps", self.sharp_eps, "a number in (0, 1)")
        for name in ("test_sizes", "fit_sizes", "clrs_test_sizes", "real_sizes"):
            sizes = getattr(self, name)
            if not sizes:
                raise ConfigError(name, sizes, "a non-empty tuple of set sizes >= 1")
            for n in sizes:
                check_int(name, n, 1)
        if self.clrs_d_model % self.clrs_heads:
            raise ConfigError("clrs_heads", self.clrs_heads, f"a divisor of clrs_d_model={self.clrs_d_model}")


_POW2 = tuple(2**k for k in range(4, 15))  # 16 ... 16384
PAPER_TEST_SIZES = _POW2  # the max-retrieval table's sizes (docs/papers/dispersion.md §3.7)
PAPER_D = 128  # App. A width (second-hand)
_REAL_PAPER = ("minilm", "smollm2", "gemma3-270m")
_REAL_SIZES_PAPER = (32, 64, 128, 256, 512, 1024, 2048, 4096)

PRESETS = {
    "quick": DispersionConfig(),
    # the paper's max-retrieval settings (App. A: d = 128, sets of 5-16 items, AdamW 1e-3/1e-3, batch 128; the
    # table's test sizes 16 ... 16384, 1000 sets each); 5000 steps (a reimplementation's; the paper's length and
    # seed count are unknown) and 6 seeds fit about an hour on 2 cores; real models to 4096 tokens; CLRS-style
    # with 3 seeds for paired tests; lookup at quick's sizes with 8 lists x 20 queries (160 per model and size:
    # the rule-of-three floor 3/160 lies below LOOKUP_SMALLEST = 0.05, so a null can agree; quick's 36 cannot)
    "paper": DispersionConfig(
        seeds=6,
        variant_seeds=1,
        test_sizes=_POW2,
        eval_sets=1000,
        d=PAPER_D,
        depth=2,
        steps=5000,
        fit_sizes=(16, 64, 256, 1024, 2048),
        fit_sets=256,
        delta_tokens=2048,
        lookup_lists=8,
        lookup_queries=20,
        clrs_seeds=3,
        clrs_test_sizes=(8, 16, 32, 64, 128),
        clrs_steps=600,
        real_models=_REAL_PAPER,
        real_sizes=_REAL_SIZES_PAPER,
        real_segments=5,
    ),
    "full": DispersionConfig(
        seeds=10,
        variant_seeds=3,
        test_sizes=_POW2,
        eval_sets=1000,
        d=128,
        depth=2,
        steps=20000,
        fit_sizes=(16, 64, 256, 1024, 4096, 16384),
        fit_sets=1024,
        delta_tokens=2048,
        lookup_sizes=(8, 32, 128, 512, 1024, 2048),
        lookup_lists=8,
        lookup_queries=20,
        clrs_seeds=3,
        clrs_test_sizes=(8, 16, 32, 64, 128, 256),
        clrs_eval=512,
        clrs_steps=4000,
        clrs_d_model=64,
        clrs_layers=3,
        clrs_heads=4,
        real_models=_REAL_PAPER,
        real_sizes=_REAL_SIZES_PAPER + (8192,),
        real_segments=10,
    ),
}


def beta_grid(config: DispersionConfig) -> np.ndarray:
    """The β grid of the refit: 1, 1 + beta_step, …, beta_max (rounded to 6 decimals)."""
    return np.round(np.arange(1.0, config.beta_max + 1e-9, config.beta_step), 6)
