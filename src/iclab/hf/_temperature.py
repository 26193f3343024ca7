r"""Attention temperature for Hugging Face transformers through ``AttentionInterface``: the test-time temperature
of arXiv:2511.01292 (§5.2, Fig. 3) in every layer and head of a real transformer (docs/papers/temperature.md §3.9,
§5.4).

Every attention score is divided by a temperature, :math:`\mathrm{softmax}(q^\top k \cdot s / \tau_{\ell h})` with
``s`` the model's own ``scaling`` (``1/\sqrt{d_k}``), so τ is dimension-free and τ = 1 is the stock model. τ is one
float, one value per layer ``(L,)``, one per layer and head ``(L, H)``, or ``"adaptive"``: the entropy rule of
Veličković et al., arXiv:2410.01104 Fig. 4 (docs/papers/dispersion.md §3.5), :math:`\beta(H) = \max(P(H), 1)` when
:math:`H > 0.5`, taken from the attention registry (``adaptive_softmax``). Fixed τ multiplies ``scaling`` by 1/τ (per
head: scales the query of that head) and delegates to the model's own sdpa/eager/flex function, so τ = 1 is
bit-identical to the stock model; adaptive τ runs the streaming O(n)-memory kernel of ``iclab.attention`` (which
backend takes which mode: ``iclab.hf._backends``). The function and its mask function are registered under
``iclab_<base>`` in ``AttentionInterface`` **and** ``AttentionMaskInterface`` (without the mask registration padding
masks are silently dropped); model code is never copied or patched. A model whose attention bypasses the interface
raises :class:`UnsupportedModelError` on its first forward, never silently running at τ = 1. What a τ setting may be
(and its ``(L, H)`` table) is :mod:`iclab.hf._tau_setting`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from typing import TYPE_CHECKING, Any, Iterator, Sequence, TypeVar

import torch

from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf._backends import adaptive_forward, check_backend
from iclab.hf._arguments import check_model, check_tau_range
from iclab.hf._tau_setting import AdaptiveTemperature, TauSetting, _tau_table, model_shape

if TYPE_CHECKING:  # annotations only: importing iclab.hf does not import transformers or numpy
    import numpy as np  # noqa: F401  # TauSetting's "np.ndarray" resolves here, in the functions it annotates
    from transformers import PreTrainedModel

__all__ = [
    "set_temperature",
    "reset_temperature",
    "with_temperature",
    "get_temperature",
]

ModelT = TypeVar("ModelT", bound="PreTrainedModel")  # the functions that take a model return that same model
_PREFIX = "iclab_"
_CONTROLS: dict[int, "_Control"] = {}  # id(attention module config) -> control of the model that owns it
_EAGER_BY_CLASS: dict[type, Any] = {}


class _Control:
    """Temperature (and probes) of one model: the τ table, the original implementation, the call counter."""

    def __init__(self, model, base: str):
        self.model, self.base = model, base
        self.L, self.H = model_shape(model)
        self.probes: list[Any] = []
        self.table = None  # (L, H) float64, None = τ 1 everywhere
        self.adaptive: AdaptiveTemperature | None = None
        self.rule, self.calls = None, 0  # rule: named scaling rules (iclab.hf.set_scaling_rule), None = none
        self.configs = {id(m.config): m.config for m in model.modules() if getattr(m, "config", None) is not None}
        self.hooks = (
            model.register_forward_pre_hook(self._reset_calls),
            model.register_forward_hook(self._check_called),
        )

    def _reset_calls(self, module, args) -> None:
        self.calls = 0

    def _check_called(self, module, args, output) -> None:
        """After every forward: iclab's attention function must have run, else τ was silently not applied."""
        if self.calls == 0:
            impl = self.model.config._attn_implementation
            why = (
                f"its attention implementation was changed to {impl!r} after set_temperature"
                if not impl.startswith(_PREFIX)
                else "it bypasses transformers.AttentionInterface"
            )
            raise UnsupportedModelError(
                f"{type(self.model).__name__}: the forward pass did not call iclab's attention "
                f"function ({why}); the temperature was not applied"
            )

    @property
    def table(self) -> torch.Tensor | None:
        return self._table

    @table.setter
    def table(self, table: torch.Tensor | None) -> None:
        """Store the ``(L, H)`` table and precompute, per layer, a float (uniform row) or the ``(H,)`` row."""
        self._table = table
        self._inv: dict = {}  # (layer, device, dtype) -> (1, H, 1, 1) tensor of 1/τ
        if table is None:
            self._rows, self._uniform = [1.0] * self.L, True
        else:
            self._rows = [float(r[0]) if bool((r == r[0]).all()) else r for r in table]
            self._uniform = bool((table == table[0, 0]).all())

    def layer_of(self, module) -> int:
        layer = getattr(module, "layer_idx", None)
        if not isinstance(layer, int) or not 0 <= layer < self.L:
            if self._uniform and not self.probes:
                return 0  # uniform τ: the layer does not matter
            raise UnsupportedModelError(
                f"{type(module).__name__}: cannot tell its layer (no layer_idx attribute); "
                "per-layer τ and probes need it"
            )
        return layer

    def tau_heads(self, layer: int) -> float | torch.Tensor:
        """1.0, one float, or an ``(H,)`` float64 tensor for this layer."""
        return self._rows[layer]

    def inverse_tau(self, layer: int, like: torch.Tensor) -> torch.Tensor:
        """``(1, H, 1, 1)`` tensor of 1/τ for a layer with per-head τ, on ``like``'s device and dtype (cached)."""
        key = (layer, like.device, like.dtype)
        if key not in self._inv:
            self._inv[key] = (1.0 / self._rows[layer]).to(like.device, like.dtype).view(1, -1, 1, 1)
        return self._inv[key]


def _control_for(module) -> "_Control":
    ctl = _CONTROLS.get(id(getattr(module, "config", None)))
    if ctl is None or ctl.configs.get(id(module.config)) is not module.config:
        raise UnsupportedModelError(
            f"{type(module).__name__} runs an iclab attention implementation but this model object has no temperature: "
            "a copy (copy.deepcopy, pickle) keeps the setting, not the temperature; call set_temperature on the copy"
        )
    return ctl


def _base_function(module, base: str):
    """The model's own attention function for ``base``: the modeling file's ``eager_attention_forward`` for eager."""
    if base == "eager":
        cls = type(module)
        if cls not in _EAGER_BY_CLASS:
            _EAGER_BY_CLASS[cls] = getattr(sys.modules.get(cls.__module__), "eager_attention_forward", None)
        fn = _EAGER_BY_CLASS[cls]
        if fn is None:
            raise UnsupportedModelError(f"{cls.__name__}: no eager_attention_forward in {cls.__module__}")
        return fn
    from transformers import AttentionInterface

    return AttentionInterface._global_mapping[base]


def _iclab_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """The registered attention function: τ per (layer, head), probes, then the model's own function."""
    ctl = _control_for(module)
    ctl.calls += 1
    if query.shape[1] != ctl.H:
        raise UnsupportedModelError(f"{type(module).__name__}: {query.shape[1]} query heads, config says {ctl.H}")
    if scaling is None:
        scaling = query.shape[-1] ** -0.5
    if ctl.rule is not None:  # position-dependent logit factors of iclab.hf.set_scaling_rule, on the query rows
        query = ctl.rule.scale_query(module, query, key, kwargs, ctl.adaptive is not None)
    layer = 0 if ctl._uniform and not ctl.probes else ctl.layer_of(module)
    tau = ctl.tau_heads(layer)
    for probe in ctl.probes:
        eff = scaling / tau if not torch.is_tensor(tau) else scaling / tau.to(query.device)
        probe.observe(module, layer, query, key, attention_mask, eff, ctl.adaptive, kwargs.get("is_causal"))
    if ctl.adaptive is not None:
        _check_adaptive_kwargs(module, key, attention_mask, kwargs)
        return adaptive_forward(
            module, query, key, value, attention_mask, scaling, dropout, ctl.adaptive.params(), kwargs.get("is_causal")
        )
    if torch.is_tensor(tau):
        query = query * ctl.inverse_tau(layer, query)  # (B, H, q, d): per-head scale
    elif tau != 1.0:
        scaling = scaling / tau
    fn = ctl.rule.attention if getattr(ctl.rule, "cap", None) is not None else _base_function(module, ctl.base)
    return fn(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout, **kwargs)


def _check_adaptive_kwargs(module, key, attention_mask, kwargs) -> None:
    """The adaptive path honours the mask it is given; refuse what it would silently ignore (soft-capping, sinks,
    a sliding window that no mask encodes)."""
    unsupported = sorted(k for k in ("softcap", "s_aux") if kwargs.get(k) is not None)
    window = kwargs.get("sliding_window")
    if window is not None and attention_mask is None and key.shape[2] > window:
        unsupported.append("sliding_window without a mask")
    if unsupported:
        raise UnsupportedModelError(
            f"{type(module).__name__}: adaptive temperature does not support "
            f"{', '.join(unsupported)}; use a fixed tau for this model"
        )


def _base_of(model) -> str:
    """The attention implementation the model runs now (its base when iclab's is installed)."""
    ctl = _find(model)
    return ctl.base if ctl is not None else (model.config._attn_implementation or "sdpa")


def _install(model) -> _Control:
    """Register ``iclab_<base>`` (attention + mask) and switch the model to it; return its control."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    if (found := _find(model)) is not None:
        return found
    if not hasattr(model, "set_attn_implementation") or not hasattr(model, "config"):
        raise UnsupportedModelError(f"{type(model).__name__} is not a Hugging Face PreTrainedModel")
    can = getattr(model, "_can_set_attn_implementation", lambda: False)()
    if not can or not type(model).is_backend_compatible():
        raise UnsupportedModelError(
            f"{type(model).__name__} does not route attention through transformers."
            "AttentionInterface, so its attention temperature cannot be set"
        )
    base = model.config._attn_implementation or "sdpa"
    check_backend(model, base, "fixed")
    mask_fns = AttentionMaskInterface._global_mapping
    if base not in mask_fns or (base != "eager" and base not in AttentionInterface._global_mapping):
        raise UnsupportedModelError(f"{type(model).__name__}: transformers has no {base!r} attention or mask function")
    if base == "eager" and getattr(model.config, "reorder_and_upcast_attn", False):
        raise UnsupportedModelError(
            f"{type(model).__name__}: eager attention with reorder_and_upcast_attn=True runs "
            "its own code path, not the interface; load it with attn_implementation='sdpa'"
        )
    name = _PREFIX + base
    AttentionInterface.register(name, _iclab_attention)
    AttentionMaskInterface.register(name, mask_fns[base])
    ctl = _Control(model, base)
    for cid in ctl.configs:
        _CONTROLS[cid] = ctl
    model.set_attn_implementation(name)
    if model.config._attn_implementation != name:
        _uninstall(ctl)
        raise UnsupportedModelError(f"{type(model).__name__} refused attn_implementation={name!r}")
    return ctl


def _uninstall(ctl: _Control) -> None:
    for hook in ctl.hooks:
        hook.remove()
    for cid in list(ctl.configs):
        if _CONTROLS.get(cid) is ctl:
            del _CONTROLS[cid]
    if ctl.model.config._attn_implementation != ctl.base:
        ctl.model.set_attn_implementation(ctl.base)


def _find(model) -> _Control | None:
    for c in _CONTROLS.values():
        if c.model is model:
            return c
    return None


def set_temperature(
    model: ModelT,
    tau: TauSetting = 1.0,
    *,
    coeffs: Sequence[float] | None = None,
    threshold: float | None = None,
) -> ModelT:
    r"""Set the attention temperature of every layer and head of ``model`` (in place; returns the model).

    ``model``: a ``transformers.PreTrainedModel`` whose attention goes through ``AttentionInterface`` (``ModelT``:
    the same object comes back, with its own type).

    ``tau``: a float (all layers and heads), ``L`` per-layer values, an ``(L, H)`` per-(layer, head) array,
    ``"adaptive"`` (entropy rule, with optional ``coeffs``/``threshold``) or an :class:`AdaptiveTemperature`.
    Scores become :math:`q^\top k\, s/\tau_{\ell h}`. Undo with :func:`reset_temperature`.

    Arguments: ``tau`` a number (not a bool), ``L`` per-layer values or an ``(L, H)`` table (a nested list, an array or
    a tensor), every entry finite and > 0, real, and in the range the model's dtype holds with its inverse (float16:
    [1.5e-5, 65504]); or ``"adaptive"`` or an :class:`AdaptiveTemperature`; ``coeffs`` None or a non-empty sequence of
    finite numbers and ``threshold`` None or a finite number, given only with an adaptive ``tau``; ``model`` a Hugging
    Face model (:func:`model_shape`) whose attention goes through ``AttentionInterface`` and whose backend takes the
    mode (:func:`~iclab.hf.check_backend`; else UnsupportedModelError).
    """
    if isinstance(tau, bool) or (isinstance(tau, str) and tau != "adaptive"):
        raise ConfigError("tau", tau, "a float, a per-layer list, an (L, H) array or 'adaptive'")
    adaptive = None
    if isinstance(tau, (AdaptiveTemperature, str)):
        base = tau if isinstance(tau, AdaptiveTemperature) else AdaptiveTemperature()
        over = {k: v for k, v in (("coeffs", coeffs), ("threshold", threshold)) if v is not None}
        adaptive = dataclasses.replace(base, **over)
    elif coeffs is not None or threshold is not None:
        raise ConfigError("coeffs/threshold", (coeffs, threshold), "only with tau='adaptive'")
    L, H = model_shape(model)  # also refuses what is not a Hugging Face model
    table = None if adaptive is not None else _tau_table(check_tau_range(tau, model.dtype), L, H)  # (L, H)
    uniform = adaptive is not None or bool((table == table[:, :1]).all())
    mode = "adaptive" if adaptive is not None else ("fixed" if uniform else "per-head")
    check_backend(model, _base_of(model), mode)  # before the first forward
    ctl = _install(model)
    ctl.adaptive, ctl.table = adaptive, (None if table is not None and bool((table == 1).all()) else table)
    return model


def get_temperature(model: PreTrainedModel) -> torch.Tensor | AdaptiveTemperature | None:
    """The current ``(L, H)`` τ table, the :class:`AdaptiveTemperature`, or ``None`` when the model is stock.

    Arguments: ``model`` a Hugging Face ``PreTrainedModel`` (else UnsupportedModelError); a stock one gives None."""
    check_model(model)
    ctl = _find(model)
    if ctl is None:
        return None
    if ctl.adaptive is not None:
        return ctl.adaptive
    return ctl.table.clone() if ctl.table is not None else torch.ones(ctl.L, ctl.H, dtype=torch.float64)


def reset_temperature(model: ModelT) -> ModelT:
    """Restore the model's original attention implementation (no-op for a stock model); returns the model.
    UnsupportedModelError for what is not a Hugging Face model.

    Arguments: ``model`` a Hugging Face ``PreTrainedModel`` (else UnsupportedModelError) without an attached probe
    (:func:`~iclab.hf.probe_attention`; else UnsupportedModelError)."""
    check_model(model)
    ctl = _find(model)
    if ctl is not None:
        if ctl.probes:
            raise UnsupportedModelError("reset_temperature while probes are attached; leave the probe context first")
        _uninstall(ctl)
    return model


@contextlib.contextmanager
def with_temperature(
    model: ModelT,
    tau: TauSetting = 1.0,
    *,
    coeffs: Sequence[float] | None = None,
    threshold: float | None = None,
) -> Iterator[ModelT]:
    """Context manager: ``with with_temperature(model, 1.5): model(**batch)``; restores the previous state on exit.

    Arguments: ``model``, ``tau``, ``coeffs`` and ``threshold`` as :func:`set_temperature` takes them, checked when the
    ``with`` block is entered."""
    ctl = _find(model)
    previous = None if ctl is None else (ctl.table, ctl.adaptive)
    set_temperature(model, tau, coeffs=coeffs, threshold=threshold)
    try:
        yield model
    finally:
        if previous is None:
            if not (c := _find(model)) or not c.probes:
                reset_temperature(model)
            else:
                c.table, c.adaptive = None, None
        else:
            c = _find(model)
            c.table, c.adaptive = previous
