"""iclab.hf: attention temperature for Hugging Face transformers (through ``AttentionInterface`` and
``AttentionMaskInterface``), score-moment probes, τ estimation, offline model loading, and greedy scoring of the
in-context question tasks (arXiv:2511.01292 §5.2, docs/papers/temperature.md §3.9, §5.3–5.4; the adaptive
temperature of arXiv:2410.01104 Fig. 4 and its logit spread δ, docs/papers/dispersion.md §3.5, §5.4). The tasks
themselves are data (:mod:`iclab.data`); their names are re-exported here.

Importing this package does not import ``transformers``; the functions do, when called. ``IclabHFLM`` (the
lm-evaluation-harness model ``iclab-hf``, ``iclab.hf._lm_eval``) is imported on first use and needs the ``lm-eval``
extra.
"""

from typing import Any

from iclab.hf._loading import (
    load_model,
    cache_dir,
    converted_cache,
    parse_dtype,
    ModelPackage,
    MODEL_ALIASES,
    MODEL_PACKAGES,
    GGUF_REQUIREMENTS,
    ATTN_IMPLEMENTATIONS,
    DTYPES,
)
from iclab.hf._model_cache import shared_model, clear_shared_models
from iclab.hf._backends import BACKEND_SUPPORT, TEMPERATURE_MODES, check_backend
from iclab.hf._temperature import (
    AdaptiveTemperature,
    set_temperature,
    reset_temperature,
    with_temperature,
    get_temperature,
    attention_scores,
    model_shape,
)
from iclab.hf._probes import (
    ScoreMoments,
    ScoreProbe,
    check_prompts,
    max_tokens,
    probe_attention,
    probe_prompts,
    tokenize_batch,
)
from iclab.hf._estimate import (
    TauEstimate,
    DEFAULT_TAU_GRID,
    moment_rule_tau,
    spread_rule_tau,
    best_tau_index,
    grid_search_tau,
    estimate_tau,
)
from iclab.hf._logit_spread import logit_spreads
from iclab.hf._greedy import answer_argmax, greedy_answers, greedy_match, stop_token_mask
from iclab.hf._attention_extremes import attention_extremes, EXTREMES
from iclab.hf._hidden_rotation import (
    givens_rotation,
    plane_rotation,
    encode_to_layer,
    run_encoder_layers,
    rotated_pooled_features,
)
from iclab.hf._sentence_embeddings import mean_pooled_embeddings
from iclab.hf._linear_head import fit_head, head_scores, ce_per_example

__all__ = [
    "load_model",
    "shared_model",
    "clear_shared_models",
    "cache_dir",
    "converted_cache",
    "parse_dtype",
    "ModelPackage",
    "MODEL_ALIASES",
    "MODEL_PACKAGES",
    "GGUF_REQUIREMENTS",
    "ATTN_IMPLEMENTATIONS",
    "DTYPES",
    "BACKEND_SUPPORT",
    "TEMPERATURE_MODES",
    "check_backend",
    "answer_argmax",
    "greedy_match",
    "stop_token_mask",
    "AdaptiveTemperature",
    "set_temperature",
    "reset_temperature",
    "with_temperature",
    "get_temperature",
    "attention_scores",
    "model_shape",
    "ScoreMoments",
    "ScoreProbe",
    "probe_attention",
    "probe_prompts",
    "tokenize_batch",
    "check_prompts",
    "max_tokens",
    "TauEstimate",
    "DEFAULT_TAU_GRID",
    "moment_rule_tau",
    "best_tau_index",
    "grid_search_tau",
    "estimate_tau",
    "greedy_answers",
    "logit_spreads",
    "givens_rotation",
    "encode_to_layer",
    "run_encoder_layers",
    "rotated_pooled_features",
    "mean_pooled_embeddings",
    "fit_head",
    "head_scores",
    "ce_per_example",
    "plane_rotation",
    "spread_rule_tau",
    "attention_extremes",
    "EXTREMES",
]


def __getattr__(name: str) -> Any:
    """``iclab.hf.IclabHFLM`` is imported on first use: importing it imports (and registers with) lm-eval."""
    if name == "IclabHFLM":
        from iclab.hf._lm_eval import IclabHFLM

        return IclabHFLM
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
