"""``torch.nn.Module`` models of the five papers; every one takes its normaliser from the attention registry."""

from iclab.models._tiny_transformer import MultiHeadSelfAttention, TinyTransformer
from iclab.models._icl_attention import *  # noqa: F401,F403
from iclab.models._multihead import MultiHeadRegressionAttention as MultiHeadRegressionAttention
from iclab.models._multihead import regression_mse as regression_mse
from iclab.models._merged_q import *  # noqa: F401,F403
from iclab.models._max_retrieval import *  # noqa: F401,F403
from iclab.models._functional_gd import *  # noqa: F401,F403
from iclab.models._multihead_diagnostics import corr_with as corr_with
from iclab.models._multihead_diagnostics import distance_to_debiased_gd as distance_to_debiased_gd
from iclab.models._multihead_diagnostics import head_parameters as head_parameters
from iclab.models._multihead_diagnostics import kq_block as kq_block
from iclab.models._multihead_diagnostics import pattern_diagnostics as pattern_diagnostics
from iclab.models import _icl_attention, _merged_q, _max_retrieval, _functional_gd

__all__ = ["TinyTransformer", "MultiHeadSelfAttention", *_icl_attention.__all__, "MultiHeadRegressionAttention",
           "regression_mse", *_merged_q.__all__, *_max_retrieval.__all__, *_functional_gd.__all__, "head_parameters",
           "pattern_diagnostics", "distance_to_debiased_gd", "kq_block", "corr_with"]
