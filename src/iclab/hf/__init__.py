"""iclab.hf: attention temperature for Hugging Face transformers (through ``AttentionInterface`` and
``AttentionMaskInterface``), score-moment probes, τ estimation, offline model loading, and greedy scoring of the
in-context question tasks (arXiv:2511.01292 §5.2, docs/papers/temperature.md §3.9, §5.3–5.4; the adaptive
temperature of arXiv:2410.01104 Fig. 4 and its logit spread δ, docs/papers/dispersion.md §3.5, §5.4). The tasks
themselves are data (:mod:`iclab.data`), exported there only.

Importing this package does not import ``transformers``; the functions do, when called. ``IclabHFLM`` (the
lm-evaluation-harness model ``iclab-hf``, ``iclab.hf._lm_eval``) is imported on first use and needs the ``lm-eval``
extra.
"""

from typing import Any

# each name below is exported through its module's __all__ (spliced into this package's __all__)
from iclab.hf._loading import (  # noqa: F401
    load_model,
    load_tokenizer,
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
from iclab.hf._model_cache import shared_model, clear_shared_models  # noqa: F401
from iclab.hf._backends import BACKEND_SUPPORT, TEMPERATURE_MODES, check_backend, attention_scores  # noqa: F401
from iclab.hf._tau_setting import AdaptiveTemperature, TauSetting, model_shape  # noqa: F401
from iclab.hf._temperature import (  # noqa: F401
    set_temperature,
    reset_temperature,
    with_temperature,
    get_temperature,
)
from iclab.hf._native_scaling import native_scaling  # noqa: F401
from iclab.hf._scaling_rules import (  # noqa: F401
    SCALING_RULES,
    ScalingRule,
    RuleSetting,
    parse_scaling_rule,
    set_scaling_rule,
    get_scaling_rule,
    with_scaling_rule,
)
from iclab.hf._probes import (  # noqa: F401
    ScoreMoments,
    ScoreProbe,
    probe_attention,
    probe_prompts,
    tokenize_batch,
)
from iclab.hf._prompt_length import check_prompts, max_tokens  # noqa: F401
from iclab.hf._estimate import (  # noqa: F401
    TauEstimate,
    DEFAULT_TAU_GRID,
    moment_rule_tau,
    spread_rule_tau,
    best_tau_index,
    grid_search_tau,
    estimate_tau,
)
from iclab.hf._logit_spread import logit_spreads  # noqa: F401
from iclab.hf._greedy import answer_argmax, greedy_answers, greedy_match, stop_token_mask  # noqa: F401
from iclab.hf._attention_extremes import attention_extremes, EXTREMES  # noqa: F401
from iclab.hf._hidden_rotation import (  # noqa: F401
    givens_rotation,
    plane_rotation,
    encode_to_layer,
    run_encoder_layers,
    rotated_pooled_features,
)
from iclab.hf._sentence_embeddings import mean_pooled_embeddings  # noqa: F401
from iclab.hf._linear_head import fit_head, head_scores, ce_per_example  # noqa: F401
from iclab.hf import (
    _attention_extremes,
    _backends,
    _estimate,
    _greedy,
    _hidden_rotation,
    _linear_head,
    _loading,
    _logit_spread,
    _model_cache,
    _native_scaling,
    _probes,
    _prompt_length,
    _scaling_rules,
    _sentence_embeddings,
    _tau_setting,
    _temperature,
)

# every public name is listed once, in its module's __all__
__all__ = [
    *_loading.__all__,
    *_model_cache.__all__,
    *_backends.__all__,
    *_tau_setting.__all__,
    *_temperature.__all__,
    *_native_scaling.__all__,
    *_scaling_rules.__all__,
    *_probes.__all__,
    *_prompt_length.__all__,
    *_estimate.__all__,
    *_logit_spread.__all__,
    *_greedy.__all__,
    *_attention_extremes.__all__,
    *_hidden_rotation.__all__,
    *_sentence_embeddings.__all__,
    *_linear_head.__all__,
]


def __getattr__(name: str) -> Any:
    """``iclab.hf.IclabHFLM`` is imported on first use: importing it imports (and registers with) lm-eval."""
    if name == "IclabHFLM":
        from iclab.hf._lm_eval import IclabHFLM

        return IclabHFLM
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
