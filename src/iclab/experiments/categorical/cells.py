"""The grid of the ``categorical`` experiment (Wang et al., arXiv:2405.17248) and its cell function.

Every cell has ``part`` (which measurement) and ``seed``: ``synthetic`` (GD model or trained transformer on
synthetic prompts: the training-set-size sweep and the number-of-blocks sweep, docs/papers/categorical.md §5.2),
``stationarity`` (§5.3), ``features`` (unseen-class classification on real features vs a per-context linear probe,
§5.4) and ``language`` (character-level language models, §5.5). The feature banks (digits, sentence embeddings)
are ``shared``, computed once in the driver.
"""

from __future__ import annotations

import json
from typing import Iterator

from iclab.experiments.categorical.config import CategoricalConfig
from iclab.experiments.categorical.features import feature_banks, features_cell
from iclab.experiments.categorical.language import language_cell
from iclab.experiments.categorical.stationarity import stationarity_cell
from iclab.experiments.categorical.synthetic import synthetic_cell

__all__ = ["cells", "run_cell", "shared"]


def _synthetic_cells(cfg: CategoricalConfig, seed: int) -> Iterator[dict]:
    sizes = {"softmax": cfg.train_sizes, "rbf": cfg.rbf_train_sizes, "linear": cfg.linear_train_sizes}
    for kernel in cfg.kernels:
        for blocks in cfg.layers:
            for L in sizes[kernel]:
                for model in cfg.models:
                    yield {"part": "synthetic", "model": model, "kernel": kernel, "blocks": blocks, "L": L,
                           "seed": seed}


def _blocks_cells(cfg: CategoricalConfig, seed: int) -> Iterator[dict]:
    """The number-of-blocks sweep: synthetic cells at ``blocks_L`` (a cell already in the L sweep is not repeated)."""
    for blocks in cfg.blocks_sweep:
        for model in cfg.blocks_models:
            yield {"part": "synthetic", "model": model, "kernel": "softmax", "blocks": blocks, "L": cfg.blocks_L,
                   "seed": seed}


def _stationarity_cells(cfg: CategoricalConfig, seed: int) -> Iterator[dict]:
    for kernel in cfg.stationarity_kernels:
        yield {"part": "stationarity", "kernel": kernel, "blocks": cfg.stationarity_blocks, "covariate": "gaussian",
               "seed": seed}


def _features_cells(cfg: CategoricalConfig, seed: int) -> Iterator[dict]:
    """``blocks`` = 0 is the per-context linear probe."""
    for ds in cfg.feature_datasets:
        for blocks in (0, *cfg.feature_blocks):
            yield {"part": "features", "dataset": ds, "blocks": blocks,
                   "kernel": cfg.feature_kernel if blocks else "probe", "seed": seed}


def _language_cells(cfg: CategoricalConfig, seed: int) -> Iterator[dict]:
    for model in cfg.lm_models:
        yield {"part": "language", "model": model, "seed": seed}


_PART_CELLS = (("synthetic", _synthetic_cells), ("blocks", _blocks_cells), ("stationarity", _stationarity_cells),
               ("features", _features_cells), ("language", _language_cells))


def cells(cfg: CategoricalConfig) -> list[dict]:
    """Per seed, the selected ``parts`` in a fixed order; duplicates dropped, first occurrence kept."""
    out, seen = [], set()
    for seed in range(cfg.seed, cfg.seed + cfg.n_seeds):
        for part, part_cells in _PART_CELLS:
            if part not in cfg.parts:
                continue
            for cell in part_cells(cfg, seed):
                key = json.dumps(cell, sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    out.append(cell)
    return out


def shared(cfg: CategoricalConfig):
    """The real-feature banks ``{dataset: (features, labels, class names)}``, or None without ``features`` cells."""
    if "features" not in cfg.parts:
        return None
    return feature_banks(cfg.feature_datasets, cfg.max_sentences_per_class)


def run_cell(cfg: CategoricalConfig, cell: dict, shared) -> dict:
    """The metrics of one cell, by its ``part``."""
    part = cell["part"]
    if part == "synthetic":
        return synthetic_cell(cfg, cell)
    if part == "stationarity":
        return stationarity_cell(cfg, cell)
    if part == "features":
        return features_cell(cfg, cell, shared)
    return language_cell(cfg, cell)
