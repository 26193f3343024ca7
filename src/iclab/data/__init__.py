"""Prompt distributions, shifts and offline corpora: frozen dataclasses with ``sample(batch, generator) -> Batch``
and shift constructors; every draw is a pure function of ``(seed, *keys)`` (``generator_for``)."""

from iclab.data._rng import derive_seed, generator_for
from iclab.data._gaussian import GaussianRegression, RegressionBatch, token_matrix, mean_along_ones
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

__all__ = [
    "derive_seed",
    "generator_for",
    "GaussianRegression",
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
