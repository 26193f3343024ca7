"""In-context predictors with no pretraining (OLS, ridge, Bayes, GD variants, the per-context softmax probe), batched
in torch."""

from iclab.estimators._regression import *  # noqa: F401,F403
from iclab.estimators._gd import *  # noqa: F401,F403
from iclab.estimators._probe import *  # noqa: F401,F403
from iclab.estimators import _regression, _gd, _probe

__all__ = [*_regression.__all__, *_gd.__all__, *_probe.__all__]
