"""Prompt distributions: frozen dataclasses with ``sample(batch, generator) -> Batch`` and shift constructors."""

from iclab.data._rng import derive_seed, generator_for
from iclab.data._gaussian import *  # noqa: F401,F403
from iclab.data._features import *  # noqa: F401,F403
from iclab.data._retrieval import *  # noqa: F401,F403
from iclab.data._categorical import *  # noqa: F401,F403
from iclab.data._multitask import MultiTaskBatch as MultiTaskBatch
from iclab.data._multitask import MultiTaskRegression as MultiTaskRegression
from iclab.data._multitask import toeplitz_cov as toeplitz_cov
from iclab.data import _gaussian, _features, _retrieval, _categorical

__all__ = ["derive_seed", "generator_for", *_gaussian.__all__, *_features.__all__, *_retrieval.__all__,
           *_categorical.__all__, "MultiTaskBatch", "MultiTaskRegression", "toeplitz_cov"]
