"""iclab.hf: attention temperature for Hugging Face transformers (through ``AttentionInterface``), score-moment
probes, τ estimation and offline model loading (temperature spec §4.2–4.3, open details 6–10; see DESIGN.md).

Importing this package does not import ``transformers``; the functions do, when called.
"""

from iclab.hf._loading import *  # noqa: F401,F403
from iclab.hf._temperature import *  # noqa: F401,F403
from iclab.hf._probes import *  # noqa: F401,F403
from iclab.hf._estimate import *  # noqa: F401,F403
from iclab.hf import _estimate, _loading, _probes, _temperature
from iclab.hf._logit_spread import logit_spreads as logit_spreads

__all__ = [*_loading.__all__, *_temperature.__all__, *_probes.__all__, *_estimate.__all__, "logit_spreads"]
