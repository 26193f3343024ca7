r"""Which Hugging Face attention backend takes which temperature mode, and the adaptive-temperature forward.

Support matrix (README "Attention backends"): every backend takes a fixed τ and a per-(layer, head) τ, because both
only rescale the logits (``scaling / τ``, or the query of one head by ``1/τ_h``) before the backend's own function
runs. The entropy-adaptive τ and the score probes need the pre-softmax scores and a dense mask, which ``sdpa`` and
``eager`` give (a bool or additive 4-D mask, or none when the mask is plain causal) and ``flex_attention`` does not (a
``BlockMask``); flash-attention backends are refused whole (transformers reads any registered name containing
"flash" as a hub kernel). Every refusal is an :class:`UnsupportedModelError` raised before the first forward.

The adaptive path runs :func:`iclab.attention.adaptive_attention`, a streaming two-pass kernel for the adaptive
temperature of arXiv:2410.01104 (Fig. 4; the two passes are iclab's, docs/papers/dispersion.md §4.5): pass 1
computes the row entropy :math:`H = \mathrm{lse}(e) - \sum_j p_j e_j` online, pass 2 is ordinary attention with
logits :math:`\beta(H)\,e`, so no ``n_q × n_k`` score matrix is stored (O(n) memory when the mask is plain causal;
a padded batch brings its own 4-D mask, as in stock sdpa).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import torch

from iclab.domain import number
from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf._arguments import check_model, check_tensor

if TYPE_CHECKING:  # annotations only: importing iclab.hf does not import transformers
    from transformers import PreTrainedModel

__all__ = ["BACKEND_SUPPORT", "TEMPERATURE_MODES", "check_backend", "attention_scores"]

TEMPERATURE_MODES = ("fixed", "per-head", "adaptive", "probes")
BACKEND_SUPPORT = {  # base attn_implementation -> modes that work (parity-tested in tests/test_hf_backends.py)
    "sdpa": TEMPERATURE_MODES,
    "eager": TEMPERATURE_MODES,
    "flex_attention": ("fixed", "per-head"),
}


def check_backend(model: PreTrainedModel, base: str, mode: str) -> None:
    """Raise :class:`UnsupportedModelError` unless ``mode`` (one of :data:`TEMPERATURE_MODES`) works on ``base``
    (and ``model`` is a Hugging Face model).

    Arguments: ``model`` a Hugging Face ``PreTrainedModel`` (else UnsupportedModelError); ``base`` one of ``"sdpa"``,
    ``"eager"``, ``"flex_attention"`` (else UnsupportedModelError); ``mode`` one of ``"fixed"``, ``"per-head"``,
    ``"adaptive"``, ``"probes"`` (else ConfigError) that ``base`` supports, and ``"adaptive"`` only on a model without
    ``attn_logit_softcapping`` (else UnsupportedModelError)."""
    check_model(model)
    name = type(model).__name__
    if not isinstance(base, str) or base not in BACKEND_SUPPORT:
        raise UnsupportedModelError(
            f"{name}: attention implementation {base!r} is not supported by iclab's temperature control; supported: "
            + "; ".join(f"{b!r} ({', '.join(m)})" for b, m in BACKEND_SUPPORT.items())
            + ". Load the model with attn_implementation='sdpa' (on a GPU it runs flash kernels itself)"
        )
    if not isinstance(mode, str) or mode not in TEMPERATURE_MODES:
        raise ConfigError("mode", mode, "one of " + ", ".join(map(repr, TEMPERATURE_MODES)))
    if mode not in BACKEND_SUPPORT[base]:
        able = [b for b, m in BACKEND_SUPPORT.items() if mode in m]
        raise UnsupportedModelError(
            f"{name}: {mode} temperature/probes need the attention scores, which "
            f"attention implementation {base!r} does not expose; it supports "
            f"{', '.join(BACKEND_SUPPORT[base])}. Use {' or '.join(map(repr, able))} "
            f"(model.set_attn_implementation('sdpa'))"
        )
    cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    if mode == "adaptive" and getattr(cfg, "attn_logit_softcapping", None) is not None:
        raise UnsupportedModelError(
            f"{name}: adaptive temperature does not support attention logit soft-capping "
            f"(attn_logit_softcapping={cfg.attn_logit_softcapping}); use a fixed tau"
        )


def visible_keys(module, attention_mask, q: int, k: int, is_causal) -> tuple[torch.Tensor | None, bool]:
    """``(mask, causal)`` for the attention kernels: a bool mask broadcastable to ``(B, H, q, k)`` (True = visible)
    from a bool or additive 4-D mask, or ``None`` and the module's causality when transformers skipped the mask."""
    if attention_mask is None:
        causal = getattr(module, "is_causal", False) if is_causal is None else is_causal
        return None, bool(causal) and q > 1
    m = attention_mask[..., :k]
    if m.dtype != torch.bool:
        m = m > torch.finfo(m.dtype).min / 2  # additive 0 / min masks
    return m, False


def attention_scores(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | torch.Tensor,
    rows: torch.Tensor | None = None,
    is_causal: bool | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pre-softmax scores and visibility of (selected) query rows, as the attention function sees them.

    ``module``: the attention module (its ``is_causal`` decides when the mask was skipped); ``query (B, H, q, d)``, ``key (B, H_kv, k, d)`` (grouped-query keys are repeated), ``scaling`` a float or ``(H,)``;
    ``rows`` an optional ``(B, P)`` long tensor of query positions. Returns ``scores (B, H, P|q, k)`` and a bool
    ``visible`` broadcastable to it (True = key visible), from a bool/float 4-D mask or, when the mask was skipped,
    the module's causality (upper-left aligned, as sdpa's ``is_causal``).

    Arguments: ``module`` a torch module, the attention module; ``query`` a floating-point tensor ``(B, H, q, d)`` and
    ``key`` one ``(B, H_kv, k, d)`` of its dtype and device (not on the meta device), H a multiple of H_kv;
    ``attention_mask`` None or a bool or additive floating 4-D mask on that device, of shape ``(B|1, H|1, q|1, >= k)``;
    ``scaling`` a finite number > 0 (not a bool) or a floating ``(H,)`` tensor of them; ``rows`` None or a ``(B, P)``
    integer tensor of positions in ``[0, q)`` on that device; ``is_causal`` None (the module's own ``is_causal``) or a
    bool. (iclab's attention functions call the unchecked kernel with what transformers passes.)
    """
    _check_scores_arguments(module, query, key, attention_mask, scaling, rows, is_causal)
    return _scores(module, query, key, attention_mask, scaling, rows, is_causal)


def _check_scores_arguments(module, query, key, attention_mask, scaling, rows, is_causal) -> None:
    """The rule of :func:`attention_scores`: one ConfigError naming the argument that breaks it."""
    if not isinstance(module, torch.nn.Module):
        raise ConfigError("module", f"<{type(module).__name__}>", "a torch.nn.Module (the attention module)")
    check_tensor("query", query)
    check_tensor("key", key)
    if query.dim() != 4 or 0 in query.shape[:2] or query.shape[-1] == 0:
        raise ConfigError("query", f"<tensor of shape {tuple(query.shape)}>", "a tensor (B, H, q, d), B, H, d >= 1")
    B, H, q, d = query.shape
    if key.dim() != 4 or key.shape[0] != B or key.shape[-1] != d or key.shape[1] == 0 or H % key.shape[1]:
        raise ConfigError(
            "key", f"<tensor of shape {tuple(key.shape)}>", f"a tensor ({B}, H_kv, k, {d}) with {H} a multiple of H_kv"
        )
    if key.dtype != query.dtype or key.device != query.device:
        raise ConfigError("key", f"<tensor of dtype {key.dtype} on {key.device}>", "the dtype and device of query")
    k = key.shape[2]
    if attention_mask is not None:
        m = attention_mask
        if (
            not isinstance(m, torch.Tensor)
            or not (m.dtype == torch.bool or m.is_floating_point())
            or m.device != query.device
            or m.dim() != 4
            or m.shape[0] not in (1, B)
            or m.shape[1] not in (1, H)
            or m.shape[2] not in (1, q)
            or m.shape[3] < k
        ):
            shown = f"<{type(m).__name__}{' of shape ' + str(tuple(m.shape)) if hasattr(m, 'shape') else ''}>"
            raise ConfigError(
                "attention_mask",
                shown,
                f"None or a bool or additive float mask ({B}|1, {H}|1, {q}|1, >= {k}) on the device of query",
            )
    allowed = f"a finite number > 0, or a floating ({H},) tensor of them on the device of query"
    if isinstance(scaling, torch.Tensor):
        if (
            not scaling.is_floating_point()
            or scaling.device != query.device
            or tuple(scaling.shape) != (H,)
            or not bool((torch.isfinite(scaling) & (scaling > 0)).all())
        ):
            raise ConfigError("scaling", f"<tensor of shape {tuple(scaling.shape)}>", allowed)
    else:
        try:
            number("scaling", scaling, above=0)
        except ConfigError:
            raise ConfigError("scaling", scaling, allowed) from None
    if rows is not None:
        if (
            not isinstance(rows, torch.Tensor)
            or rows.is_floating_point()
            or rows.is_complex()
            or rows.dtype == torch.bool
            or rows.device != query.device
            or rows.dim() != 2
            or rows.shape[0] != B
            or (rows.numel() and (int(rows.min()) < 0 or int(rows.max()) >= q))
        ):
            shown = (
                rows.tolist() if isinstance(rows, torch.Tensor) and rows.numel() <= 8 else f"<{type(rows).__name__}>"
            )
            raise ConfigError("rows", shown, f"None or a ({B}, P) integer tensor of query positions in [0, {q})")
    if is_causal is not None and not isinstance(is_causal, bool):
        raise ConfigError("is_causal", is_causal, "None (the module's own) or a bool")


def _scores(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | torch.Tensor,
    rows: torch.Tensor | None = None,
    is_causal: bool | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`attention_scores` without its checks, for iclab's attention functions (they pass what transformers
    gives them)."""
    B, H, q, _ = query.shape
    k = key.shape[2]
    if key.shape[1] != H:
        key = key.repeat_interleave(H // key.shape[1], dim=1)  # (B, H, k, d)
    if rows is not None:
        query = torch.gather(
            query, 2, rows[:, None, :, None].expand(B, H, rows.shape[1], query.shape[-1])
        )  # (B, H, P, d)
    scale = scaling.to(query.dtype).view(1, H, 1, 1) if torch.is_tensor(scaling) else scaling
    scores = (query @ key.transpose(-1, -2)) * scale  # (B, H, P|q, k)
    qpos = rows if rows is not None else torch.arange(q, device=query.device)[None, :].expand(B, q)  # (B, P)
    m, causal = visible_keys(module, attention_mask, q, k, is_causal)
    if m is None:
        if causal:
            visible = qpos[:, None, :, None] >= torch.arange(k, device=query.device)  # (B, 1, P, k)
        else:
            visible = torch.ones(1, 1, 1, k, dtype=torch.bool, device=query.device)
    else:
        m = m.expand(B, m.shape[1], q, k) if m.shape[2] == q else m.expand(B, m.shape[1], m.shape[2], k)
        visible = (
            torch.gather(m, 2, qpos[:, None, :, None].expand(B, m.shape[1], qpos.shape[1], k)) if m.shape[2] == q else m
        )
    return scores, visible


def observe_sdpa(model: PreTrainedModel, name: str, observe: Callable[..., None]) -> None:
    """Switch ``model`` to the attention implementation ``name``: the stock sdpa attention (so outputs are unchanged),
    after ``observe(module, query, key, attention_mask, scaling, is_causal)`` has seen the inputs of each call
    (:func:`attention_scores` of them are the exact logits). ``name`` is registered in ``AttentionInterface`` and,
    with sdpa's mask function, in ``AttentionMaskInterface`` (without it padding masks are dropped)."""
    from transformers import AttentionInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.masking_utils import AttentionMaskInterface

    def attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
        if scaling is None:
            scaling = query.shape[-1] ** -0.5
        observe(module, query, key, attention_mask, scaling, kwargs.get("is_causal"))
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, scaling=scaling, dropout=dropout, **kwargs
        )

    AttentionInterface.register(name, attention)
    AttentionMaskInterface.register(name, AttentionMaskInterface._global_mapping["sdpa"])
    model.set_attn_implementation(name)


def adaptive_forward(module, query, key, value, attention_mask, scaling, dropout, params, is_causal):
    """Adaptive-temperature attention, ``(out (B, q, H, d_v), None)``: the streaming kernel (dense weights only
    when training with dropout, which the kernel does not take). Half precision runs in float32, as stock eager
    softmax does."""
    from iclab.attention import adaptive_attention

    H, q, k = query.shape[1], query.shape[2], key.shape[2]
    if dropout and module.training:
        return _adaptive_dense(module, query, key, value, attention_mask, scaling, dropout, params, is_causal)
    if key.shape[1] != H:  # grouped-query attention: O(n) copies of keys and values
        key = key.repeat_interleave(H // key.shape[1], dim=1)  # (B, H, k, d)
        value = value.repeat_interleave(H // value.shape[1], dim=1)  # (B, H, k, d_v)
    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype
    mask, causal = visible_keys(module, attention_mask, q, k, is_causal)
    out = adaptive_attention(
        query.to(work), key.to(work), value.to(work), mask=mask, scale=float(scaling), causal=causal, **params
    )  # (B, H, q, d_v)
    return out.to(value.dtype).transpose(1, 2).contiguous(), None  # (B, q, H, d_v)


def _adaptive_dense(module, query, key, value, attention_mask, scaling, dropout, params, is_causal):
    """Dense adaptive attention with dropout on the weights (training only): ``(out (B, q, H, d_v), weights)``."""
    from iclab.attention import normalise

    H = query.shape[1]
    scores, visible = _scores(module, query, key, attention_mask, scaling, is_causal=is_causal)  # (B, H, q, k)
    w = normalise("adaptive_softmax", scores.float() if scores.dtype != torch.float64 else scores, visible, **params)
    w = torch.nn.functional.dropout(w, p=dropout)
    if value.shape[1] != H:
        value = value.repeat_interleave(H // value.shape[1], dim=1)  # (B, H, k, d_v)
    return (w.to(value.dtype) @ value).transpose(1, 2).contiguous(), w
