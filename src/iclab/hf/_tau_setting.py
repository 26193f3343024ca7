r"""What an attention temperature may be for a Hugging Face model (:func:`iclab.hf.set_temperature`): one float, a
value per layer ``(L,)``, one per layer and head ``(L, H)`` (:func:`model_shape` reads ``L`` and ``H`` from the
model's config), or the entropy-adaptive rule of arXiv:2410.01104 Fig. 4 (:class:`AdaptiveTemperature`,
docs/papers/dispersion.md §3.5). A fixed setting becomes one ``(L, H)`` float64 table of finite τ > 0, or one
ConfigError naming what is allowed.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Literal, Sequence, Union

import torch

from iclab.config import Config
from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf._arguments import check_model

if TYPE_CHECKING:  # annotations only: importing iclab.hf does not import transformers or numpy
    import numpy as np
    from transformers import PreTrainedModel

__all__ = ["AdaptiveTemperature", "TauSetting", "model_shape"]


@dataclasses.dataclass(frozen=True)
class AdaptiveTemperature(Config):
    """Entropy-adaptive temperature of arXiv:2410.01104 Fig. 4 (docs/papers/dispersion.md §3.5): logits × β(H),
    β = max(polyval(coeffs, H), 1) when the row entropy H (nats) exceeds ``threshold``, else 1.

    Fields: ``coeffs`` — polynomial coefficients, highest degree first (the paper's degree-4 fit);
    ``threshold`` — entropy gate in nats.
    """

    coeffs: tuple[float, ...] = (-0.037, 0.481, -2.3, 4.917, -1.791)
    threshold: float = 0.5

    def __post_init__(self) -> None:
        from iclab.attention import check_coeffs

        object.__setattr__(self, "coeffs", check_coeffs(self.coeffs, self.threshold))
        object.__setattr__(self, "threshold", float(self.threshold))

    def params(self) -> dict[str, Any]:
        """``coeffs`` and ``threshold`` as keyword arguments of the ``adaptive_softmax`` normaliser."""
        return {"coeffs": self.coeffs, "threshold": self.threshold}


#: What a temperature may be (:func:`set_temperature`): one float, ``L`` per-layer values, an ``(L, H)`` table (a
#: nested list, an array or a tensor), ``"adaptive"`` or an :class:`AdaptiveTemperature`.
TauSetting = Union[
    float,
    Sequence[float],
    Sequence[Sequence[float]],
    "np.ndarray",
    torch.Tensor,
    Literal["adaptive"],
    AdaptiveTemperature,
]


def model_shape(model: PreTrainedModel) -> tuple[int, int]:
    """``(L, H)``: number of attention layers and of query heads of a Hugging Face model.

    Arguments: ``model`` a Hugging Face ``PreTrainedModel`` whose (text) config has integer ``num_hidden_layers`` and
    ``num_attention_heads`` (else UnsupportedModelError)."""
    check_model(model)
    cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    L = getattr(cfg, "num_hidden_layers", None)
    H = getattr(cfg, "num_attention_heads", None)
    if not isinstance(L, int) or not isinstance(H, int):
        raise UnsupportedModelError(f"{type(model).__name__}: config has no num_hidden_layers/num_attention_heads")
    return L, H


def _tau_table(tau, L: int, H: int) -> torch.Tensor:
    """τ spec → ``(L, H)`` float64 table (one value per layer and head); ConfigError on wrong shape or value."""
    try:
        t = torch.as_tensor(tau, dtype=torch.float64).detach().cpu()
    except (TypeError, ValueError, RuntimeError):
        raise ConfigError("tau", tau, f"a float, {L} per-layer values, an ({L}, {H}) array or 'adaptive'") from None
    scalar, bad = t.ndim == 0, int((~torch.isfinite(t) | (t <= 0)).sum())
    if scalar:
        t = t.expand(L, H)
    elif t.ndim == 1 and t.shape[0] == L:
        t = t[:, None].expand(L, H)
    elif not (t.ndim == 2 and tuple(t.shape) == (L, H)):
        raise ConfigError(
            "tau",
            f"array of shape {tuple(t.shape)}",
            f"a float, {L} per-layer values or an ({L}, {H}) per-(layer, head) array",
        )
    if bad:
        shown = tau if scalar else f"array with {bad} bad entries"
        raise ConfigError("tau", shown, "finite temperatures > 0")
    return t.clone()
