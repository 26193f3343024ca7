"""The stationarity cell of the ``categorical`` experiment (Theorems 1–2 of Wang et al., arXiv:2405.17248;
docs/papers/categorical.md §3.7, §5.3): the ICL-loss gradient of every transformer parameter at a GD configuration,
measured at a random GD configuration and again after training the GD parameters (float64, a small problem with
Gaussian, reflection-invariant covariates)."""

from __future__ import annotations

import torch

from iclab.data import CategoricalICL, Float64Prompts, derive_seed, generator_for
from iclab.experiments.categorical.training import fit_classifier
from iclab.models import FunctionalGDModel, stationarity_check

__all__ = ["stationarity_cell"]


def stationarity_cell(cfg, cell: dict) -> dict:
    """z, RMS of the mean gradient and RMS of its standard error per group (``free``, ``x_coupling``, ``other``,
    ``W_e``), ``init_*`` at the random GD configuration and ``trained_*`` after ``stationarity_steps`` Adam steps on
    the GD parameters."""
    seed = derive_seed(cfg.seed, "replicate", cell["seed"])
    data = CategoricalICL(
        n_classes=7, d=5, d_embed=3, n_context=15, n_clusters=3, scale=3.0, covariate=cell["covariate"]
    )
    gd = FunctionalGDModel(
        5,
        7,
        3,
        n_blocks=cell["blocks"],
        kernel=cell["kernel"],
        dtype=torch.float64,
        generator=generator_for(seed, "init"),
    )
    before = stationarity_check(
        data, gd, n_prompts=cfg.stationarity_prompts, n_chunks=16, seed=derive_seed(seed, "check", "init")
    )
    val = data.sample(512, generator_for(seed, "val"), dtype=torch.float64)
    fit_classifier(
        gd,
        Float64Prompts(data, dtype=torch.float64),  # the trainer would sample in the default float32
        val,
        steps=cfg.stationarity_steps,
        batch_size=256,
        lr=0.05,
        optimizer="adam",
        seed=seed,
        pool_size=None,
        eval_every=max(1, cfg.stationarity_steps // 5),
        schedule="cosine",
    )
    after = stationarity_check(
        data, gd, n_prompts=cfg.stationarity_prompts, n_chunks=16, seed=derive_seed(seed, "check", "trained")
    )
    out = {}
    for tag, r in (("init", before), ("trained", after)):
        for grp, v in r.items():
            out[f"{tag}_{grp}_z"] = v["z"]
            out[f"{tag}_{grp}_rms"] = v["rms_mean"]
            out[f"{tag}_{grp}_se"] = v["rms_se"]
    return out
