"""``torch.nn.Module`` models of the five papers; every one takes its normaliser from the attention registry."""

from iclab.models._tiny_transformer import MultiHeadSelfAttention, TinyTransformer
from iclab.models._icl_attention import *  # noqa: F401,F403
from iclab.models._multihead import *  # noqa: F401,F403
from iclab.models._merged_q import *  # noqa: F401,F403
from iclab.models._max_retrieval import *  # noqa: F401,F403
from iclab.models._functional_gd import *  # noqa: F401,F403
from iclab.models._multihead_diagnostics import *  # noqa: F401,F403
from iclab.models import _icl_attention, _multihead, _merged_q, _max_retrieval, _functional_gd, _multihead_diagnostics
from iclab.models._gpt2_regressor import GPT2Regressor as GPT2Regressor

__all__ = ["TinyTransformer", "MultiHeadSelfAttention", *_icl_attention.__all__, *_multihead.__all__,
           *_merged_q.__all__, *_max_retrieval.__all__, *_functional_gd.__all__, *_multihead_diagnostics.__all__,
           "GPT2Regressor"]
