"""iclab.hf: attention temperature for Hugging Face transformers (through ``AttentionInterface`` and
``AttentionMaskInterface``), score-moment probes, τ estimation, offline model loading and the in-context question
tasks used to evaluate them (arXiv:2511.01292 §5, docs/papers/temperature.md; the adaptive temperature of
arXiv:2410.01104, docs/papers/dispersion.md).

Importing this package does not import ``transformers``; the functions do, when called.
"""

from iclab.hf._loading import load_model, cache_dir, MODEL_ALIASES
from iclab.hf._temperature import (
    AdaptiveTemperature, set_temperature, reset_temperature, with_temperature, get_temperature,
    attention_scores, model_shape,
)
from iclab.hf._probes import ScoreMoments, ScoreProbe, probe_attention, probe_prompts, tokenize_batch
from iclab.hf._estimate import (
    TauEstimate, DEFAULT_TAU_GRID, moment_rule_tau, best_tau_index, grid_search_tau, estimate_tau,
)
from iclab.hf._tasks import (
    QAItem, QATask, PromptSet, QA_TASKS, get_task, capital_task, continent_task, demonym_task, antonym_task,
    parse_wordnet_antonyms, parse_wordnet_tagged, wordnet_adj_path, n_noisy, split_items, build_prompts,
    normalise_answer, exact_match, greedy_answers,
)
from iclab.hf._logit_spread import logit_spreads
from iclab.hf._attention_extremes import attention_extremes, EXTREMES
from iclab.hf._hidden_rotation import givens_rotation, encode_to_layer, run_encoder_layers, rotated_pooled_features

__all__ = [
    "load_model", "cache_dir", "MODEL_ALIASES", "AdaptiveTemperature", "set_temperature", "reset_temperature",
    "with_temperature", "get_temperature", "attention_scores", "model_shape", "ScoreMoments", "ScoreProbe",
    "probe_attention", "probe_prompts", "tokenize_batch", "TauEstimate", "DEFAULT_TAU_GRID", "moment_rule_tau",
    "best_tau_index", "grid_search_tau", "estimate_tau", "QAItem", "QATask", "PromptSet", "QA_TASKS", "get_task",
    "capital_task", "continent_task", "demonym_task", "antonym_task", "parse_wordnet_antonyms",
    "parse_wordnet_tagged", "wordnet_adj_path", "n_noisy", "split_items", "build_prompts", "normalise_answer",
    "exact_match", "greedy_answers", "logit_spreads", "attention_extremes", "EXTREMES", "givens_rotation",
    "encode_to_layer", "run_encoder_layers", "rotated_pooled_features",
]
