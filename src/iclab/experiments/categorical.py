"""Experiment ``categorical``: attention-based ICL for categorical data as functional GD (spec categorical-icl.md).

Cells: ``synthetic`` (GD model vs trained transformer, softmax/RBF kernels, 1-2 blocks, training-set size L,
and the number-of-blocks sweep, spec §5.3), ``features`` (unseen-class in-context classification on
``load_digits`` pixels and MiniLM embeddings of country-fact sentences vs a per-context linear probe, spec
§3.2 stand-in), ``language`` (character-level GD language model ± feed-forward vs a 1-layer transformer on
the ``pydoc_data`` text, held-out perplexity, spec §2.6 stand-in) and ``stationarity`` (gradient of the ICL
loss w.r.t. every transformer parameter at a trained GD configuration, spec §4.2). Feature banks (digits,
sentence embeddings) come from ``shared``, computed once in the driver.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from iclab.config import Config, check_choice, check_int, check_positive
from iclab.errors import ConfigError
from iclab.experiments import Experiment, lazy, register

__all__ = ["CategoricalConfig"]

PARTS = ("synthetic", "blocks", "features", "language", "stationarity")


@dataclass(frozen=True)
class CategoricalConfig(Config):
    """Settings of the ``categorical`` experiment.

    Fields:
        seed, n_seeds: base seed and number of seeds per setting (seeds ``seed .. seed+n_seeds-1``).
        parts: which cell families to run (subset of synthetic, blocks, features, language, stationarity).
        n_classes, d, d_embed, n_context, latent_scale: synthetic prompts (spec §3.1: 25, 10, 5, 125, 10).
        models: ``gd`` and/or ``tf`` for the L sweep; kernels: head-1 kernels (softmax, rbf, linear);
            layers: blocks for the L sweep; train_sizes: L (fixed pool of training contexts) for the softmax
            kernel; rbf_train_sizes / linear_train_sizes: L for the other kernels.
        blocks_sweep, blocks_models, blocks_L: the number-of-blocks sweep (softmax kernel, spec §5.3b).
        steps, batch_size, lr_gd, lr_tf, grad_clip, eval_every: optimiser (Adam for GD, AdamW for the trained
            transformer), early stopping on validation NLL checked every ``eval_every`` steps.
        n_val, n_test: validation / test contexts.
        feature_datasets, feature_blocks, feature_kernel, n_way, shots, feature_dim, digits_test_classes,
            sentence_test_classes, feature_train_contexts, feature_steps, probe_steps, max_sentences_per_class:
            the real-feature study (``feature_dim``: PCA width fitted on training classes, 0 = raw features).
        lm_models, lm_width, lm_heads, lm_seq_len, lm_steps, lm_batch, lm_lr, lm_eval_windows: language models.
        stationarity_kernels, stationarity_blocks, stationarity_steps, stationarity_prompts: the §4.2 check.
        device: torch device for training (``cpu``, ``cuda`` ...).
    """

    seed: int = 0
    n_seeds: int = 1
    parts: tuple[str, ...] = PARTS
    n_classes: int = 25
    d: int = 10
    d_embed: int = 5
    n_context: int = 125
    latent_scale: float = 10.0
    models: tuple[str, ...] = ("gd", "tf")
    kernels: tuple[str, ...] = ("softmax", "rbf")
    layers: tuple[int, ...] = (1, 2)
    train_sizes: tuple[int, ...] = (2048, 4096, 8192, 16384, 32768)
    rbf_train_sizes: tuple[int, ...] = (2048, 8192, 32768)
    linear_train_sizes: tuple[int, ...] = (2048,)
    blocks_sweep: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    blocks_models: tuple[str, ...] = ("gd", "tf")
    blocks_L: int = 2048
    steps: int = 3000
    batch_size: int = 512
    lr_gd: float = 1e-2
    lr_tf: float = 1e-3
    grad_clip: float | None = 10.0
    eval_every: int = 100
    n_val: int = 1024
    n_test: int = 2048
    feature_datasets: tuple[str, ...] = ("digits", "sentences")
    feature_blocks: tuple[int, ...] = (1, 2, 3)
    feature_kernel: str = "linear"
    n_way: int = 5
    shots: int = 10
    feature_dim: int = 64
    digits_test_classes: int = 5
    sentence_test_classes: int = 6
    feature_train_contexts: int = 2048
    feature_steps: int = 2000
    probe_steps: int = 500
    max_sentences_per_class: int = 60
    lm_models: tuple[str, ...] = ("gd", "gd_ff", "transformer")
    lm_width: int = 128
    lm_heads: int = 8
    lm_seq_len: int = 128
    lm_steps: int = 3000
    lm_batch: int = 64
    lm_lr: float = 1e-3
    lm_eval_windows: int = 1024
    stationarity_kernels: tuple[str, ...] = ("softmax", "rbf", "linear")
    stationarity_blocks: int = 2
    stationarity_steps: int = 1500
    stationarity_prompts: int = 16384
    device: str = "cpu"

    def __post_init__(self) -> None:
        for f in ("seed",):
            check_int(f, getattr(self, f), 0)
        for f in ("n_seeds", "n_classes", "d", "d_embed", "n_context", "blocks_L", "steps", "batch_size", "eval_every",
                  "n_val", "n_test", "n_way", "shots", "feature_train_contexts", "feature_steps", "probe_steps",
                  "max_sentences_per_class", "lm_width", "lm_heads", "lm_seq_len", "lm_steps", "lm_batch",
                  "lm_eval_windows", "stationarity_blocks", "stationarity_steps", "stationarity_prompts",
                  "digits_test_classes", "sentence_test_classes"):
            check_int(f, getattr(self, f), 1)
        check_int("feature_dim", self.feature_dim, 0)
        for f in ("latent_scale", "lr_gd", "lr_tf", "lm_lr"):
            check_positive(f, getattr(self, f))
        if self.grad_clip is not None:
            check_positive("grad_clip", self.grad_clip)
        tuples = {"parts": PARTS, "models": ("gd", "tf"), "blocks_models": ("gd", "tf"),
                  "kernels": ("softmax", "rbf", "linear"), "stationarity_kernels": ("softmax", "rbf", "linear"),
                  "feature_datasets": ("digits", "sentences"), "lm_models": ("gd", "gd_ff", "transformer")}
        for f, allowed in tuples.items():
            for v in getattr(self, f):
                if v not in allowed:
                    raise ConfigError(f, getattr(self, f), "values among " + ", ".join(allowed))
        for f in ("layers", "train_sizes", "rbf_train_sizes", "linear_train_sizes", "blocks_sweep", "feature_blocks"):
            for v in getattr(self, f):
                check_int(f, v, 1)
        check_choice("feature_kernel", self.feature_kernel, ("softmax", "rbf", "linear"))
        if self.d_embed > self.n_classes:
            raise ConfigError("d_embed", self.d_embed, f"at most n_classes={self.n_classes}")
        if self.digits_test_classes > 10 - self.n_way or self.digits_test_classes < self.n_way:
            raise ConfigError("digits_test_classes", self.digits_test_classes,
                              f"between n_way={self.n_way} and {10 - self.n_way} (digits has 10 classes)")


_QUICK = CategoricalConfig(
    n_context=40, train_sizes=(256, 2048), rbf_train_sizes=(2048,), blocks_sweep=(1, 2, 3),
    blocks_models=("gd",), steps=150, batch_size=96, lr_gd=5e-2, lr_tf=3e-3, eval_every=25, n_val=256, n_test=1024,
    feature_blocks=(1, 2), feature_steps=150, feature_train_contexts=1024, probe_steps=200,
    feature_dim=32, max_sentences_per_class=30, lm_width=64, lm_heads=4, lm_seq_len=64, lm_steps=300, lm_batch=32, lm_lr=3e-3,
    lm_eval_windows=256, stationarity_kernels=("softmax",), stationarity_steps=150, stationarity_prompts=4096)
_FULL = CategoricalConfig(n_seeds=3)


def _cells(cfg: CategoricalConfig) -> list[dict]:
    seeds = range(cfg.seed, cfg.seed + cfg.n_seeds)
    cells, seen = [], set()

    def add(cell):
        key = json.dumps(cell, sort_keys=True)
        if key not in seen:
            seen.add(key)
            cells.append(cell)

    sizes = {"softmax": cfg.train_sizes, "rbf": cfg.rbf_train_sizes, "linear": cfg.linear_train_sizes}
    for s in seeds:
        if "synthetic" in cfg.parts:
            for kernel in cfg.kernels:
                for blocks in cfg.layers:
                    for L in sizes[kernel]:
                        for model in cfg.models:
                            add({"part": "synthetic", "model": model, "kernel": kernel, "blocks": blocks, "L": L,
                                 "seed": s})
        if "blocks" in cfg.parts:
            for blocks in cfg.blocks_sweep:
                for model in cfg.blocks_models:
                    add({"part": "synthetic", "model": model, "kernel": "softmax", "blocks": blocks,
                         "L": cfg.blocks_L, "seed": s})
        if "stationarity" in cfg.parts:
            for kernel in cfg.stationarity_kernels:
                add({"part": "stationarity", "kernel": kernel, "blocks": cfg.stationarity_blocks,
                     "covariate": "gaussian", "seed": s})
        if "features" in cfg.parts:
            for ds in cfg.feature_datasets:
                for blocks in (0, *cfg.feature_blocks):
                    add({"part": "features", "dataset": ds, "blocks": blocks,
                         "kernel": cfg.feature_kernel if blocks else "probe", "seed": s})
        if "language" in cfg.parts:
            for model in cfg.lm_models:
                add({"part": "language", "model": model, "seed": s})
    return cells


def _shared(cfg: CategoricalConfig):
    if "features" not in cfg.parts:
        return None
    from iclab.experiments._categorical_features import feature_banks

    return feature_banks(cfg.feature_datasets, cfg.max_sentences_per_class)


def _run_cell(cfg: CategoricalConfig, cell: dict, shared) -> dict:
    part = cell["part"]
    if part == "synthetic":
        from iclab.experiments._categorical_synthetic import synthetic_cell

        return synthetic_cell(cfg, cell)
    if part == "stationarity":
        from iclab.experiments._categorical_synthetic import stationarity_cell

        return stationarity_cell(cfg, cell)
    if part == "features":
        from iclab.experiments._categorical_features import features_cell

        return features_cell(cfg, cell, shared)
    from iclab.experiments._categorical_language import language_cell

    return language_cell(cfg, cell)





register(Experiment(
    name="categorical",
    paper="categorical",
    title="Categorical ICL as functional GD: self-attention (update + erase) and cross-attention over class embeddings",
    claim="A transformer block of two self-attention heads (a kernel GD update of the latent function f and an "
          "erase head) and a cross-attention onto the class embeddings (which recomputes E[w_e | f] exactly) "
          "performs one step of functional gradient descent on the in-context cross-entropy; K blocks are K steps. "
          "The GD configuration is a stationary point of the ICL loss; the GD model, with a handful of learned "
          "parameters, matches or beats a fully trained transformer of the same shape and needs far less "
          "training data; on real features 2-3 GD blocks approach a per-context linear probe; a 1-layer GD "
          "language model comes close to a 1-layer transformer (spec §1, §5).",
    config_cls=CategoricalConfig,
    presets={"quick": _QUICK, "full": _FULL},
    cells=_cells,
    run_cell=_run_cell,
    figures=lazy("iclab.experiments._categorical_report:figures"),
    compare=lazy("iclab.experiments._categorical_report:compare"),
    shared=_shared,
    notes=lazy("iclab.experiments._categorical_report:notes"),
    order=70,
))
