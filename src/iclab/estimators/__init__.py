"""In-context predictors with no training (OLS, ridge, Bayes, GD variants), batched in torch."""

from iclab.estimators._regression import *  # noqa: F401,F403
from iclab.estimators._gd import *  # noqa: F401,F403
from iclab.estimators import _regression, _gd

__all__ = [*_regression.__all__, *_gd.__all__]
