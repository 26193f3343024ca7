"""The grid and the cell function of the ``dispersion`` experiment (arXiv:2410.01104; docs/papers/dispersion.md §5.1).

Every cell names its ``part`` and its ``seed``: ``retrieval`` cells (one per trained max-retrieval model:
``normaliser``, ``seed``), ``delta`` cells (one per pretrained ``model``), ``lookup`` cells (one per ``task``, pretrained causal
``model`` and size ``n_pairs``: softmax and adaptive on the same prompts), ``clrs`` cells (one per ``task``,
``attention`` normaliser and ``seed``) and ``real`` cells (one per pretrained ``model`` and text segment ``seed``).
Nothing is shared between cells.
"""

from __future__ import annotations

from iclab.budget import Need
from iclab.experiments.dispersion.clrs import run_clrs_cell
from iclab.experiments.dispersion.config import DispersionConfig
from iclab.experiments.dispersion.llm_spread import run_delta_cell
from iclab.experiments.dispersion.lookup import run_lookup_cell
from iclab.experiments.dispersion.real_dispersion import check_text_fits, run_real_cell
from iclab.experiments.dispersion.retrieval import run_retrieval_cell

__all__ = ["cells", "run_cell", "shared", "budget"]

_PARTS = {
    "retrieval": run_retrieval_cell,
    "delta": run_delta_cell,
    "clrs": run_clrs_cell,
    "lookup": run_lookup_cell,
    "real": run_real_cell,
}


def cells(config: DispersionConfig) -> list[dict]:
    """Softmax max-retrieval models first, then the other normalisers, the δ models, the CLRS-style models and the
    real models' dispersion."""
    out = [{"part": "retrieval", "normaliser": "softmax", "seed": s} for s in range(config.seeds)]
    out += [
        {"part": "retrieval", "normaliser": v, "seed": s}
        for v in config.variants
        if v != "softmax"
        for s in range(config.variant_seeds)
    ]
    out += [{"part": "delta", "model": m, "seed": 0} for m in config.delta_models]
    out += [
        {"part": "lookup", "model": m, "task": t, "n_pairs": n, "seed": 0}
        for t in config.lookup_tasks
        for m in config.lookup_models
        for n in config.lookup_sizes
    ]
    out += [
        {"part": "clrs", "task": t, "attention": a, "seed": s}
        for t in config.clrs_tasks
        for a in ("softmax", "adaptive_softmax")
        for s in range(config.clrs_seeds)
    ]
    out += [{"part": "real", "model": m, "seed": s} for m in config.real_models for s in range(config.real_segments)]
    return out


def run_cell(config: DispersionConfig, cell: dict, shared=None) -> dict:
    """The metrics of one cell (see the ``run_*_cell`` function of its part)."""
    return _PARTS[cell["part"]](config, cell)


def shared(config: DispersionConfig) -> None:
    """Nothing is computed once for all cells."""
    return None


def budget(config: DispersionConfig) -> list[Need]:
    r"""The largest cell (fp32; the max-retrieval query attends to every item once, so costs are linear in the
    set size): a training batch of ``train_max`` items through ``depth`` layers of width ``d``, the sampled test
    sets (``eval_sets`` · n items) evaluated in chunks of about 2¹⁷ items, the β grid of the refit, the CLRS
    transformer (its items attend pairwise), the pretrained models of the δ histogram (one layer's scores at a
    time) and the real-model cell of Thm 2.2 (docs/papers/dispersion.md §5.7): the model's weights and one run on
    T = max(real_sizes) tokens — the T × T mask and, where sdpa takes its math path, one layer's scores of up to
    12 heads, plus the float64 logits of a chunk of 128 query rows with their temporaries (an upper bound). First,
    the real cells' last text segment must fit the text (:func:`~iclab.experiments.dispersion.real_dispersion.check_text_fits`)."""
    check_text_fits(config)  # the run's last text segment fits the offline text (tokenizers only, no weights)
    n_test = max([*config.test_sizes, *config.fit_sizes])
    per_item = config.d * config.depth
    sets = max(config.eval_sets, config.fit_sets)
    clrs_n = max([config.clrs_train_max, *config.clrs_test_sizes])
    clrs_b = max(config.clrs_batch, config.clrs_eval)
    clrs = clrs_b * clrs_n * (config.clrs_d_model * config.clrs_layers + config.clrs_heads * clrs_n)
    n_beta = max(1.0, (config.beta_max - 1.0) / config.beta_step)
    width = {"d": config.d, "depth": config.depth}
    return [
        Need(
            {"batch_size": config.batch_size, "train_max": config.train_max, **width},
            memory=4.0 * 16 * config.batch_size * config.train_max * per_item,
            seconds=30.0 * config.steps * config.batch_size * config.train_max * per_item * config.d / 2e10,
        ),
        Need(
            {"test_sizes": n_test, "eval_sets": sets, **width},
            memory=4.0 * 8 * sets * n_test + 4.0 * 4 * 2**17 * per_item,
            seconds=4.0 * (config.eval_sets + config.fit_sets) * n_test * per_item * config.d / 2e10,
        ),
        Need(
            {"beta_step": config.beta_step, "beta_max": config.beta_max, "fit_sets": config.fit_sets},
            memory=8.0 * 4 * n_beta * config.fit_sets,
            seconds=n_beta * config.fit_sets * n_test / 1e8,
        ),
        Need(
            {"clrs_batch": clrs_b, "clrs_test_sizes": clrs_n, "clrs_d_model": config.clrs_d_model},
            memory=4.0 * 3 * clrs,
            seconds=30.0
            * config.clrs_steps
            * config.clrs_batch
            * clrs_n
            * config.clrs_d_model**2
            * config.clrs_layers
            / 2e10,
        ),
        Need(
            {"clrs_vocab": config.clrs_vocab, "clrs_d_model": config.clrs_d_model},
            memory=4.0 * 4 * config.clrs_vocab * config.clrs_d_model * (1 + config.clrs_batch),
        ),
        Need(
            {"delta_tokens": config.delta_tokens},
            memory=(1e9 if config.delta_models else 0.0) + 4.0 * 8 * 9 * config.delta_tokens**2,
        ),
        _real_need(config),
    ]


_REAL_PARAMS = 3e8  # the largest real model's parameters (Gemma 3 270M: about 2.7e8)
_REAL_HEADS, _REAL_LAYERS, _REAL_ROW_CHUNK = 12, 30, 128  # at most (MiniLM 12 heads, SmolLM2 30 layers)


def _real_need(config: DispersionConfig) -> Need:
    """One ``real`` cell: fp32 weights, the mask and one layer's scores on T = max(real_sizes) tokens, a chunk of
    float64 row logits (6 temporaries); one forward (2 flops a parameter and token) and the row statistics of about
    0.2 T rows (the rows in [0.9 n, n] of every n) against T keys in every head (about 20 flops each)."""
    if not config.real_models:
        return Need({"real_models": config.real_models})
    T = max(config.real_sizes)
    return Need(
        {"real_sizes": T, "real_models": config.real_models},
        memory=4.0 * _REAL_PARAMS + 4.0 * (1 + _REAL_HEADS) * T**2 + 8.0 * 6 * _REAL_ROW_CHUNK * _REAL_HEADS * T,
        seconds=(2.0 * _REAL_PARAMS * T + 20.0 * _REAL_LAYERS * _REAL_HEADS * 0.2 * T**2) / 2e10,
    )
