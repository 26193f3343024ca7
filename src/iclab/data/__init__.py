"""Prompt distributions, shifts and offline corpora: frozen dataclasses with ``sample(batch, generator) -> Batch``
and shift constructors; every draw is a pure function of ``(seed, *keys)`` (``generator_for``)."""

from iclab.data._rng import derive_seed, generator_for, seeded_init
from iclab.data._precision import Float64Prompts
from iclab.data._gaussian import (
    GaussianRegression,
    RegressionBatch,
    token_matrix,
    mean_along_ones,
    as_covariance,
    as_mean,
)
from iclab.data._features import (
    FeatureBatch,
    FeaturePrompts,
    feature_basis,
    rotated_features,
    overlap_features,
    aligned_features,
    in_span_rotation,
    shared_projection_features,
    mean_feature,
    check_gammas,
    check_orthonormal,
)
from iclab.data._retrieval import RetrievalBatch, MaxRetrieval, SequenceBatch, AlgorithmicTask, ALGORITHMIC_TASKS
from iclab.data._categorical import CategoricalBatch, CategoricalICL, FeatureClassPrompts
from iclab.data._multitask import MultiTaskBatch, MultiTaskRegression, toeplitz_cov
from iclab.data._char_corpus import pydoc_text, CharCorpus, TokenBatch
from iclab.data._country_regions import REGION_DOMAINS, WORLD_REGIONS, region_domain_sentences, region_sentences
from iclab.data._country_text import country_text
from iclab.data._country_subregions import country_sentences
from iclab.data._digits import digits_features
from iclab.data._lookup import lookup_lists, passkey_haystacks

from iclab.data._qa_tasks import (
    QAItem,
    QATask,
    QA_TASKS,
    get_task,
    capital_task,
    continent_task,
    demonym_task,
    antonym_task,
    continent_label_task,
    LABEL_WORDS,
    parse_wordnet_antonyms,
    parse_wordnet_tagged,
    wordnet_adj_path,
    normalise_answer,
    exact_match,
)
from iclab.data._qa_prompts import (
    PromptSet,
    DemoGroup,
    n_noisy,
    split_items,
    question_split,
    build_prompts,
    demo_groups,
)

__all__ = [
    "QAItem",
    "QATask",
    "PromptSet",
    "QA_TASKS",
    "get_task",
    "capital_task",
    "continent_task",
    "demonym_task",
    "antonym_task",
    "continent_label_task",
    "LABEL_WORDS",
    "parse_wordnet_antonyms",
    "parse_wordnet_tagged",
    "wordnet_adj_path",
    "n_noisy",
    "split_items",
    "build_prompts",
    "DemoGroup",
    "question_split",
    "demo_groups",
    "normalise_answer",
    "exact_match",
    "as_covariance",
    "as_mean",
    "derive_seed",
    "generator_for",
    "seeded_init",
    "GaussianRegression",
    "country_sentences",
    "digits_features",
    "lookup_lists",
    "passkey_haystacks",
    "Float64Prompts",
    "RegressionBatch",
    "token_matrix",
    "mean_along_ones",
    "FeatureBatch",
    "FeaturePrompts",
    "feature_basis",
    "rotated_features",
    "overlap_features",
    "aligned_features",
    "in_span_rotation",
    "shared_projection_features",
    "mean_feature",
    "check_gammas",
    "check_orthonormal",
    "RetrievalBatch",
    "MaxRetrieval",
    "SequenceBatch",
    "AlgorithmicTask",
    "ALGORITHMIC_TASKS",
    "CategoricalBatch",
    "CategoricalICL",
    "FeatureClassPrompts",
    "MultiTaskBatch",
    "MultiTaskRegression",
    "toeplitz_cov",
    "pydoc_text",
    "CharCorpus",
    "TokenBatch",
    "WORLD_REGIONS",
    "region_sentences",
    "REGION_DOMAINS",
    "region_domain_sentences",
    "country_text",
]
