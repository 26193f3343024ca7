"""``torch.nn.Module`` models of the five papers; every one takes its normaliser from the attention registry."""

from iclab.models._icl_attention import ICLAttention, bayes_mimicking_weights, pretraining_covariance
from iclab.models._merged_q import (
    MergedQAttention,
    feature_prompt_loss,
    FeatureTransformer,
    prompt_mse_loss,
    MergedQStack,
)
from iclab.models._tiny_transformer import TinyTransformer, MultiHeadSelfAttention
from iclab.models._max_retrieval import MaxRetrievalNet, mlp
from iclab.models._multihead import MultiHeadRegressionAttention, regression_mse
from iclab.models._multihead_diagnostics import (
    head_parameters,
    head_pattern,
    pattern_diagnostics,
    distance_to_debiased_gd,
    kq_block,
    corr_with,
)
from iclab.models._functional_gd import (
    KERNELS,
    BLOCK_KEYS,
    categorical_forward,
    gd_block_params,
    embed_tokens,
    FunctionalGDModel,
    TrainedCategoricalTransformer,
    categorical_loss,
)
from iclab.models._functional_gd_stationarity import gd_pattern, stationarity_check
from iclab.models._gd_language_model import GDLanguageModel, OneHotLM
from iclab.models._gpt2_regressor import GPT2Regressor

__all__ = [
    "ICLAttention",
    "bayes_mimicking_weights",
    "pretraining_covariance",
    "MergedQAttention",
    "feature_prompt_loss",
    "FeatureTransformer",
    "prompt_mse_loss",
    "MergedQStack",
    "TinyTransformer",
    "MultiHeadSelfAttention",
    "MaxRetrievalNet",
    "mlp",
    "MultiHeadRegressionAttention",
    "regression_mse",
    "head_parameters",
    "head_pattern",
    "pattern_diagnostics",
    "distance_to_debiased_gd",
    "kq_block",
    "corr_with",
    "KERNELS",
    "BLOCK_KEYS",
    "categorical_forward",
    "gd_block_params",
    "embed_tokens",
    "FunctionalGDModel",
    "TrainedCategoricalTransformer",
    "categorical_loss",
    "gd_pattern",
    "stationarity_check",
    "GDLanguageModel",
    "OneHotLM",
    "GPT2Regressor",
]
