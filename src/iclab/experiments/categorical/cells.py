"""The grid of the ``categorical`` experiment (Wang et al., arXiv:2405.17248) and its cell function.

Every cell has ``part`` (which measurement) and ``seed``: ``synthetic`` (GD model or trained transformer on
synthetic prompts: the training-set-size sweep and the number-of-blocks sweep, docs/papers/categorical.md §5.2),
``stationarity`` (§5.3), ``features`` (unseen-class classification on real features vs a per-context linear probe,
§5.4) and ``language`` (character-level language models, §5.5). The feature banks (digits, sentence embeddings)
are ``shared``, computed once in the driver.
"""

from __future__ import annotations

import functools
import json
from typing import Iterator

from iclab.budget import Need
from iclab.experiments.categorical.config import CategoricalConfig
from iclab.experiments.categorical.features import feature_banks, features_cell
from iclab.experiments.categorical.language import language_cell
from iclab.experiments.categorical.stationarity import stationarity_cell
from iclab.experiments.categorical.synthetic import synthetic_cell

__all__ = ["cells", "run_cell", "shared", "budget"]


def _synthetic_cells(cfg: CategoricalConfig, seed: int, embedding_seed: int) -> Iterator[dict]:
    sizes = {"softmax": cfg.train_sizes, "rbf": cfg.rbf_train_sizes, "linear": cfg.linear_train_sizes}
    for kernel in cfg.kernels:
        for blocks in cfg.layers:
            for L in sizes[kernel]:
                for model in cfg.models:
                    yield {
                        "part": "synthetic",
                        "model": model,
                        "kernel": kernel,
                        "blocks": blocks,
                        "erase": "distance",
                        "L": L,
                        "embedding_seed": embedding_seed,
                        "seed": seed,
                    }


def _blocks_cells(cfg: CategoricalConfig, seed: int, embedding_seed: int) -> Iterator[dict]:
    """The number-of-blocks sweep: synthetic cells at ``blocks_L`` (a cell already in the L sweep is not repeated).
    The GD model runs with each erase head of ``blocks_erase``; the authors' ``dot`` head only from 3 blocks, since
    up to 2 blocks it computes the same function as ``distance`` (docs/papers/categorical.md §4.2a)."""
    for blocks in cfg.blocks_sweep:
        for model in cfg.blocks_models:
            for erase in cfg.blocks_erase if model == "gd" else ("distance",):
                if erase == "dot" and blocks <= 2:
                    continue
                yield {
                    "part": "synthetic",
                    "model": model,
                    "kernel": "softmax",
                    "blocks": blocks,
                    "erase": erase,
                    "L": cfg.blocks_L,
                    "embedding_seed": embedding_seed,
                    "seed": seed,
                }


def _stationarity_cells(cfg: CategoricalConfig, seed: int) -> Iterator[dict]:
    for kernel in cfg.stationarity_kernels:
        yield {
            "part": "stationarity",
            "kernel": kernel,
            "blocks": cfg.stationarity_blocks,
            "covariate": "gaussian",
            "seed": seed,
        }


def _features_cells(cfg: CategoricalConfig, seed: int) -> Iterator[dict]:
    """``blocks`` = 0 is the per-context linear probe."""
    for ds in cfg.feature_datasets:
        for blocks in (0, *cfg.feature_blocks):
            yield {
                "part": "features",
                "dataset": ds,
                "blocks": blocks,
                "kernel": cfg.feature_kernel if blocks else "probe",
                "seed": seed,
            }


def _language_cells(cfg: CategoricalConfig, seed: int) -> Iterator[dict]:
    for model in cfg.lm_models:
        yield {"part": "language", "model": model, "seed": seed}


_PART_CELLS = (
    ("synthetic", _synthetic_cells),
    ("blocks", _blocks_cells),
    ("stationarity", _stationarity_cells),
    ("features", _features_cells),
    ("language", _language_cells),
)


_DRAWS_W_E = ("synthetic", "blocks")  # parts whose cells run once per draw of the data embedding W_e


def cells(cfg: CategoricalConfig) -> list[dict]:
    """Per seed, the selected ``parts`` in a fixed order (synthetic ones once per ``embedding_seeds`` draw);
    duplicates dropped, first occurrence kept."""
    out, seen = [], set()
    for seed in range(cfg.n_seeds):
        for part, part_cells in _PART_CELLS:
            if part not in cfg.parts:
                continue
            part_grid = (
                (c for es in cfg.embedding_seeds for c in part_cells(cfg, seed, es))
                if part in _DRAWS_W_E
                else part_cells(cfg, seed)
            )
            for cell in part_grid:
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


def budget(cfg: CategoricalConfig) -> list[Need]:
    r"""The largest cell (fp32): the training pool (``train_sizes`` prompts of ``n_context`` tokens of width
    d + C), a batch and the test prompts through the deepest model (attention n_context² per block), the
    language models' windows, the stationarity prompts and the real-feature contexts; time ~ steps · batch ·
    n_context² · width · blocks flops at ~2e10/s."""
    from iclab.config import check_device_available

    check_device_available("device", cfg.device)
    if "features" in cfg.parts and "sentences" in cfg.feature_datasets:
        _check_sentence_classes(cfg)
    width = cfg.d + cfg.d_embed + cfg.n_classes
    blocks = max([*cfg.layers, *cfg.blocks_sweep, *cfg.feature_blocks, cfg.stationarity_blocks, 1])
    pool = max([*cfg.train_sizes, *cfg.rbf_train_sizes, *cfg.linear_train_sizes, cfg.blocks_L, 1])
    n = cfg.n_context
    per_prompt = n * width + blocks * n * n
    lm = cfg.lm_seq_len * (cfg.lm_width * 4 + cfg.lm_heads * cfg.lm_seq_len)
    ctx = cfg.n_way * cfg.shots + 1
    prompt = {"n_context": n, "n_classes": cfg.n_classes}
    lm_shape = {"lm_seq_len": cfg.lm_seq_len, "lm_width": cfg.lm_width}
    return [
        Need({"train_sizes": pool, **prompt}, memory=4.0 * 2 * pool * n * width),
        Need(
            {"batch_size": cfg.batch_size, **prompt},
            memory=4.0 * 12 * cfg.batch_size * per_prompt,
            seconds=20.0 * max(cfg.steps, cfg.stationarity_steps) * cfg.batch_size * per_prompt * width / 2e10,
        ),
        Need(
            {"n_test": max(cfg.n_test, cfg.n_val), **prompt},
            memory=4.0 * 4 * max(cfg.n_test, cfg.n_val) * (n * width + n * n),
        ),
        Need(
            {"lm_batch": cfg.lm_batch, **lm_shape},
            memory=4.0 * 12 * cfg.lm_batch * lm,
            seconds=20.0 * cfg.lm_steps * cfg.lm_batch * lm * cfg.lm_width / 2e10,
        ),
        Need({"lm_eval_windows": cfg.lm_eval_windows, **lm_shape}, memory=4.0 * 3 * cfg.lm_eval_windows * lm),
        Need(
            {"stationarity_prompts": cfg.stationarity_prompts, **prompt},
            memory=4.0 * 4 * cfg.stationarity_prompts * n * width / 16 + 4.0 * 4 * cfg.stationarity_prompts,
        ),
        Need(
            {"feature_train_contexts": cfg.feature_train_contexts, "feature_dim": cfg.feature_dim},
            memory=4.0 * 4 * cfg.feature_train_contexts * ctx * (cfg.feature_dim + cfg.n_way) + 2e8,
        ),
        Need(
            {"feature_steps": cfg.feature_steps, "probe_steps": cfg.probe_steps},
            seconds=20.0
            * cfg.batch_size
            * ctx
            * (cfg.feature_dim + cfg.n_way)
            * blocks
            * ctx
            * (cfg.feature_steps + cfg.probe_steps)
            / 2e10,
        ),
    ]


@functools.lru_cache(maxsize=4)
def _sentence_classes(max_per_class: int) -> int:
    from iclab.data import country_sentences

    return len(set(country_sentences(max_per_class)[1]))


def _check_sentence_classes(cfg: CategoricalConfig) -> None:
    """``sentence_test_classes`` within the sentence bank's classes (the rest train; at least ``n_way`` each)."""
    classes = _sentence_classes(cfg.max_sentences_per_class)
    if not cfg.n_way <= cfg.sentence_test_classes <= classes - cfg.n_way:
        from iclab.errors import ConfigError

        raise ConfigError(
            "sentence_test_classes",
            cfg.sentence_test_classes,
            f"between n_way={cfg.n_way} and {classes - cfg.n_way} (the bank has {classes} classes)",
        )
