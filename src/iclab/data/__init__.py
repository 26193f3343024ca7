"""Prompt distributions, shifts and offline corpora: frozen dataclasses with ``sample(batch, generator) -> Batch``
and shift constructors; every draw is a pure function of ``(seed, *keys)`` (``generator_for``)."""

# each name below is exported through its module's __all__ (spliced into this package's __all__)
from iclab.data._rng import derive_seed, generator_for, seeded_init  # noqa: F401
from iclab.data._precision import Float64Prompts  # noqa: F401
from iclab.data._gaussian import (  # noqa: F401
    GaussianRegression,
    RegressionBatch,
    token_matrix,
    mean_along_ones,
    as_covariance,
    as_mean,
)
from iclab.data._features import (  # noqa: F401
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
from iclab.data._retrieval import RetrievalBatch, MaxRetrieval, SequenceBatch, AlgorithmicTask, ALGORITHMIC_TASKS  # noqa: F401
from iclab.data._categorical import CategoricalBatch, CategoricalICL, FeatureClassPrompts  # noqa: F401
from iclab.data._multitask import MultiTaskBatch, MultiTaskRegression, toeplitz_cov  # noqa: F401
from iclab.data._char_corpus import pydoc_text, stdlib_source_text, CharCorpus, TokenBatch  # noqa: F401
from iclab.data._country_regions import REGION_DOMAINS, WORLD_REGIONS, region_domain_sentences, region_sentences  # noqa: F401
from iclab.data._country_text import country_text  # noqa: F401
from iclab.data._country_subregions import country_sentences  # noqa: F401
from iclab.data._digits import digits_features  # noqa: F401
from iclab.data._lookup import lookup_lists, passkey_haystacks  # noqa: F401
from iclab.data._long_context import (  # noqa: F401
    LONG_CONTEXT_TASKS,
    variable_tracking,
    common_words,
    long_context_groups,
)
from iclab.data._qa_tasks import (  # noqa: F401
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
from iclab.data._qa_prompts import (  # noqa: F401
    PromptSet,
    DemoGroup,
    n_noisy,
    split_items,
    question_split,
    build_prompts,
    demo_groups,
)
from iclab.data import (
    _categorical,
    _char_corpus,
    _country_regions,
    _country_subregions,
    _country_text,
    _digits,
    _features,
    _gaussian,
    _lookup,
    _long_context,
    _multitask,
    _precision,
    _qa_prompts,
    _qa_tasks,
    _retrieval,
    _rng,
)

# every public name is listed once, in its module's __all__
__all__ = [
    *_rng.__all__,
    *_precision.__all__,
    *_gaussian.__all__,
    *_features.__all__,
    *_retrieval.__all__,
    *_categorical.__all__,
    *_multitask.__all__,
    *_char_corpus.__all__,
    *_country_regions.__all__,
    *_country_text.__all__,
    *_country_subregions.__all__,
    *_digits.__all__,
    *_lookup.__all__,
    *_long_context.__all__,
    *_qa_tasks.__all__,
    *_qa_prompts.__all__,
]
