"""Prompt distributions: frozen dataclasses with ``sample(batch, generator) -> Batch`` and shift constructors."""

from iclab.data._rng import derive_seed, generator_for
from iclab.data._gaussian import *  # noqa: F401,F403
from iclab.data._features import *  # noqa: F401,F403
from iclab.data._retrieval import *  # noqa: F401,F403
from iclab.data._categorical import *  # noqa: F401,F403
from iclab.data._multitask import MultiTaskBatch as MultiTaskBatch
from iclab.data._multitask import MultiTaskRegression as MultiTaskRegression
from iclab.data._multitask import toeplitz_cov as toeplitz_cov
from iclab.data._char_corpus import CharCorpus as CharCorpus
from iclab.data._char_corpus import TokenBatch as TokenBatch
from iclab.data._char_corpus import pydoc_text as pydoc_text
from iclab.data import _gaussian, _features, _retrieval, _categorical
from iclab.data._country_regions import WORLD_REGIONS as WORLD_REGIONS
from iclab.data._country_regions import region_sentences as region_sentences
from iclab.data._country_regions import REGION_DOMAINS as REGION_DOMAINS
from iclab.data._country_regions import region_domain_sentences as region_domain_sentences

__all__ = ["derive_seed", "generator_for", *_gaussian.__all__, *_features.__all__, *_retrieval.__all__,
           *_categorical.__all__, "MultiTaskBatch", "MultiTaskRegression", "toeplitz_cov", "CharCorpus", "TokenBatch",
           "pydoc_text", "WORLD_REGIONS", "region_sentences",
           "REGION_DOMAINS", "region_domain_sentences"]
