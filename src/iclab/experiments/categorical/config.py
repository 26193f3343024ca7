"""The config and presets of the ``categorical`` experiment (Wang et al., arXiv:2405.17248; settings in
docs/papers/categorical.md §5)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from iclab.config import (
    Config,
    MAX_SEEDS,
    check_choice,
    check_device,
    check_int,
    check_nonnegative,
    check_positive,
    check_scale,
)
from iclab.errors import ConfigError

__all__ = ["CategoricalConfig", "PARTS", "PRESETS"]

PARTS = ("synthetic", "blocks", "features", "language", "stationarity")
_KERNELS = ("softmax", "rbf", "linear")
_ERASE = ("distance", "dot")
_MODELS = ("gd", "tf")
_LM_MODELS = ("gd", "gd_ff", "transformer")
_FEATURE_DATASETS = ("digits", "sentences")


@dataclass(frozen=True)
class CategoricalConfig(Config):
    """Settings of the ``categorical`` experiment (docs/papers/categorical.md §5).

    Fields:
        seed: base seed; the cells' seeds are the replicates ``0 .. n_seeds - 1``, each keying its draws by
            ``derive_seed(seed, "replicate", r)``.
        n_seeds: seeds per setting.
        parts: cell families to run, a subset of synthetic, blocks, features, language, stationarity.
        n_classes: C, classes of the synthetic prompts (25, §5.1).
        d: covariate dimension of the synthetic prompts (10).
        d_embed: d', class-embedding dimension (5), at most ``n_classes``.
        n_context: N, context points per synthetic prompt (125).
        latent_scale: λ, scale of the synthetic latent function (10).
        embedding_seeds: draws of the data class embeddings W_e (§5.1): every synthetic cell runs once per draw and
            accuracies are averaged over draws (a draw sets the task's difficulty, §6.1).
        models: ``gd`` and/or ``tf`` (trained transformer) for the training-set-size sweep.
        kernels: update-head kernels of the training-set-size sweep (softmax, rbf, linear).
        layers: blocks of the training-set-size sweep.
        train_sizes: L, fixed pool of training contexts, for the softmax kernel.
        rbf_train_sizes: L for the RBF kernel.
        linear_train_sizes: L for the linear kernel.
        blocks_sweep: blocks of the number-of-blocks sweep (softmax kernel, §5.2).
        blocks_models: models of the number-of-blocks sweep.
        blocks_erase: erase heads of the GD model in the number-of-blocks sweep: ``distance`` (iclab, exact GD) and
            ``dot`` (the authors' code, exact only up to 2 blocks; run from 3 blocks, §4.2a).
        blocks_L: L of the number-of-blocks sweep.
        steps: optimiser steps on synthetic prompts (the most, with ``stop_plateau``).
        stop_plateau: stop a synthetic cell's training once its validation NLL fell by at most this fraction over the
            last quarter of the validations, after at least 8 (0: always train ``steps``; §5.2).
        batch_size: prompts per step (synthetic and real features).
        lr_gd: Adam learning rate of the GD model.
        lr_tf: AdamW learning rate of the trained transformer.
        grad_clip: gradient-norm clip on synthetic prompts (None: no clipping).
        eval_every: steps between validation checks (early stopping keeps the best validation NLL).
        n_val: validation contexts.
        n_test: test contexts.
        feature_datasets: real-feature banks, digits and/or sentences (§5.4).
        feature_blocks: blocks of the GD model on real features (0, the linear probe, is always added).
        feature_kernel: update-head kernel on real features.
        n_way: classes per real-feature context.
        shots: examples per class in a real-feature context.
        feature_dim: PCA width fitted on training classes (0 = raw features).
        digits_test_classes: unseen digit classes, between ``n_way`` and ``10 - n_way``.
        sentence_test_classes: unseen sub-region classes of the sentence bank.
        feature_train_contexts: fixed pool of training contexts on real features.
        feature_steps: Adam steps of the GD model on real features.
        probe_steps: Adam steps of the per-context linear probe.
        max_sentences_per_class: sentences kept per sub-region class.
        lm_models: language models, among gd, gd_ff, transformer (§5.5).
        lm_width: width of the language models.
        lm_heads: heads of the language models.
        lm_seq_len: characters per training window.
        lm_steps: AdamW steps of the language models.
        lm_batch: windows per step.
        lm_lr: AdamW learning rate of the language models.
        lm_eval_windows: held-out windows for the perplexity.
        stationarity_kernels: kernels of the stationarity check (§5.3).
        stationarity_blocks: blocks of the stationarity check.
        stationarity_steps: Adam steps that train the GD parameters before the second check.
        stationarity_prompts: Monte-Carlo prompts per gradient estimate.
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
    embedding_seeds: tuple[int, ...] = (42, 43, 44)
    models: tuple[str, ...] = ("gd", "tf")
    kernels: tuple[str, ...] = ("softmax", "rbf")
    layers: tuple[int, ...] = (1, 2)
    train_sizes: tuple[int, ...] = (2048, 4096, 8192, 16384, 32768)
    rbf_train_sizes: tuple[int, ...] = (2048, 8192, 32768)
    linear_train_sizes: tuple[int, ...] = (2048,)
    blocks_sweep: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    blocks_models: tuple[str, ...] = ("gd", "tf")
    blocks_erase: tuple[str, ...] = ("distance", "dot")
    blocks_L: int = 2048
    steps: int = 3000
    stop_plateau: float = 0.0
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
        check_int("seed", self.seed, 0)
        check_int("n_seeds", self.n_seeds, 1, MAX_SEEDS)
        check_device("device", self.device)
        if not self.parts:
            raise ConfigError("parts", self.parts, "a non-empty subset of " + ", ".join(PARTS))
        for f in (
            "n_seeds",
            "n_classes",
            "d",
            "d_embed",
            "n_context",
            "blocks_L",
            "steps",
            "batch_size",
            "eval_every",
            "n_val",
            "n_test",
            "n_way",
            "shots",
            "feature_train_contexts",
            "feature_steps",
            "probe_steps",
            "max_sentences_per_class",
            "lm_width",
            "lm_heads",
            "lm_seq_len",
            "lm_steps",
            "lm_batch",
            "lm_eval_windows",
            "stationarity_blocks",
            "stationarity_steps",
            "stationarity_prompts",
            "digits_test_classes",
            "sentence_test_classes",
        ):
            check_int(f, getattr(self, f), 1)
        check_int("feature_dim", self.feature_dim, 0)
        check_nonnegative("stop_plateau", self.stop_plateau)
        for f in ("latent_scale", "lr_gd", "lr_tf", "lm_lr"):
            check_scale(f, getattr(self, f))
        if self.grad_clip is not None:
            check_positive("grad_clip", self.grad_clip)
        tuples = {
            "parts": PARTS,
            "models": _MODELS,
            "blocks_models": _MODELS,
            "kernels": _KERNELS,
            "stationarity_kernels": _KERNELS,
            "feature_datasets": _FEATURE_DATASETS,
            "lm_models": _LM_MODELS,
            "blocks_erase": _ERASE,
        }
        for f, allowed in tuples.items():
            for v in getattr(self, f):
                if v not in allowed:
                    raise ConfigError(f, getattr(self, f), "values among " + ", ".join(allowed))
        for f in ("layers", "train_sizes", "rbf_train_sizes", "linear_train_sizes", "blocks_sweep", "feature_blocks"):
            for v in getattr(self, f):
                check_int(f, v, 1)
        if not self.embedding_seeds or len(set(self.embedding_seeds)) != len(self.embedding_seeds):
            raise ConfigError("embedding_seeds", self.embedding_seeds, "one or more distinct seeds")
        for v in self.embedding_seeds:
            check_int("embedding_seeds", v, 0)
        check_choice("feature_kernel", self.feature_kernel, _KERNELS)
        if self.d_embed > self.n_classes:
            raise ConfigError("d_embed", self.d_embed, f"at most n_classes={self.n_classes}")
        if self.digits_test_classes > 10 - self.n_way or self.digits_test_classes < self.n_way:
            raise ConfigError(
                "digits_test_classes",
                self.digits_test_classes,
                f"between n_way={self.n_way} and {10 - self.n_way} (digits has 10 classes)",
            )


_QUICK = CategoricalConfig(
    n_context=40,
    kernels=("softmax",),
    layers=(2,),
    train_sizes=(2048,),
    rbf_train_sizes=(2048,),
    blocks_sweep=(1, 2, 3),
    blocks_models=("gd",),
    steps=150,
    batch_size=96,
    lr_gd=5e-2,
    lr_tf=3e-3,
    eval_every=25,
    n_val=256,
    n_test=1024,
    feature_blocks=(1, 2),
    feature_steps=150,
    feature_train_contexts=1024,
    probe_steps=200,
    feature_dim=32,
    max_sentences_per_class=30,
    lm_width=64,
    lm_heads=4,
    lm_seq_len=64,
    lm_steps=300,
    lm_batch=32,
    lm_lr=3e-3,
    lm_eval_windows=256,
    stationarity_kernels=("softmax",),
    stationarity_steps=150,
    stationarity_prompts=4096,
)

# The authors' synthetic setting (N = 125, C = 25, d = 10, d' = 5) for the GD model, three W_e draws, blocks 1-4
# with both erase heads, each cell trained until its validation NLL plateaus (at most 1500 steps); blocks 5-6 and the
# trained transformer at the authors' budget (20k-320k steps of 512 prompts) do not fit in about an hour on 2 CPU
# cores. Features and language keep the quick sizes (their claims need ImageNet and GPT-4o either way).
# docs/papers/categorical.md §5.6.
_PAPER = dataclasses.replace(
    _QUICK,
    n_context=125,
    models=("gd",),
    train_sizes=(2048, 32768),
    blocks_sweep=(1, 2, 3, 4),
    steps=1500,
    stop_plateau=0.01,
    eval_every=30,
    n_val=1024,
    n_test=2048,
    stationarity_kernels=("softmax", "rbf", "linear"),
    stationarity_steps=1500,
    stationarity_prompts=16384,
)

PRESETS = {"quick": _QUICK, "paper": _PAPER, "full": CategoricalConfig(n_seeds=3, embedding_seeds=(42, 43, 44, 45, 46))}
