"""iclab.hf: attention temperature for Hugging Face transformers (through ``AttentionInterface``), score-moment
probes, τ estimation and offline model loading (temperature spec §4.2–4.3, open details 6–10; see DESIGN.md).

Importing this package does not import ``transformers``; the functions do, when called.
"""

from iclab.hf._loading import *  # noqa: F401,F403
from iclab.hf._temperature import *  # noqa: F401,F403
from iclab.hf._probes import *  # noqa: F401,F403
from iclab.hf._estimate import *  # noqa: F401,F403
from iclab.hf import _estimate, _loading, _probes, _temperature
from iclab.hf._hidden_rotation import givens_rotation as givens_rotation
from iclab.hf._hidden_rotation import encode_to_layer as encode_to_layer
from iclab.hf._hidden_rotation import run_encoder_layers as run_encoder_layers
from iclab.hf._hidden_rotation import rotated_pooled_features as rotated_pooled_features
from iclab.hf._tasks import (  # the in-context QA evaluation harness
    QAItem as QAItem, QATask as QATask, PromptSet as PromptSet, QA_TASKS as QA_TASKS, get_task as get_task,
    capital_task as capital_task, continent_task as continent_task, demonym_task as demonym_task,
    antonym_task as antonym_task, parse_wordnet_antonyms as parse_wordnet_antonyms,
    parse_wordnet_tagged as parse_wordnet_tagged, wordnet_adj_path as wordnet_adj_path, n_noisy as n_noisy,
    split_items as split_items, build_prompts as build_prompts, normalise_answer as normalise_answer,
    exact_match as exact_match, greedy_answers as greedy_answers)

__all__ = [*_loading.__all__, *_temperature.__all__, *_probes.__all__, *_estimate.__all__, "givens_rotation",
           "encode_to_layer", "run_encoder_layers", "rotated_pooled_features",
           "QAItem", "QATask", "PromptSet", "QA_TASKS", "get_task", "capital_task", "continent_task", "demonym_task",
           "antonym_task", "parse_wordnet_antonyms", "parse_wordnet_tagged", "wordnet_adj_path", "n_noisy", "split_items",
           "build_prompts", "normalise_answer", "exact_match", "greedy_answers"]
