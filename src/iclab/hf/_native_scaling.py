"""The attention scaling a Hugging Face model's own config already applies (:func:`native_scaling`): Llama 4's
temperature tuning, Ministral 3's Llama-4 beta, Qwen-1's log-n, a RoPE attention factor (YaRN, LongRoPE) and Gemma 2's
soft-cap, each by the kind of rule it is (``context``, ``constant``, ``cap``). :func:`iclab.hf.set_scaling_rule`
refuses a rule of a kind the model already applies, naming the config field, so no scaling is applied twice
(docs/howto/hf-temperature.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclab.hf._arguments import check_model

if TYPE_CHECKING:
    from transformers import PreTrainedModel

__all__ = ["native_scaling"]


def native_scaling(model: PreTrainedModel) -> dict[str, tuple[str, object]]:
    """The scaling a model's own config already applies: ``{config field: (kind, value)}`` for Llama 4's
    ``attn_temperature_tuning``, Ministral 3's ``rope_parameters.llama_4_scaling_beta``, Qwen-1's ``use_logn_attn``,
    a ``rope_parameters.attention_factor`` other than 1 (or, when it is unset, a ``yarn``/``longrope`` type with a
    scale > 1, whose factor is implied: field ``mscale`` or ``rope_type``) and Gemma 2's
    ``attn_logit_softcapping``. ``rope_scaling`` stands in for ``rope_parameters`` in older configs.
    UnsupportedModelError for what is not a Hugging Face model.

    Arguments: ``model`` a Hugging Face ``PreTrainedModel`` (else UnsupportedModelError)."""
    check_model(model)
    cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    found: dict[str, tuple[str, object]] = {}
    for field, kind in (("attn_temperature_tuning", "context"), ("use_logn_attn", "context")):
        if getattr(cfg, field, None):
            found[field] = (kind, getattr(cfg, field))
    if getattr(cfg, "attn_logit_softcapping", None) is not None:
        found["attn_logit_softcapping"] = ("cap", cfg.attn_logit_softcapping)
    attr = "rope_parameters" if getattr(cfg, "rope_parameters", None) else "rope_scaling"  # one is the other's alias
    rope = getattr(cfg, attr, None)
    for params in (rope.values() if _nested(rope) else [rope]) if isinstance(rope, dict) else []:
        if params.get("llama_4_scaling_beta"):
            found[f"{attr}.llama_4_scaling_beta"] = ("context", params["llama_4_scaling_beta"])
        factor = params.get("attention_factor")
        if factor is not None and factor != 1:
            found[f"{attr}.attention_factor"] = ("constant", factor)
        elif factor is None and params.get("rope_type") in ("yarn", "longrope") and (params.get("factor") or 1) > 1:
            key = "mscale" if params.get("mscale") else "rope_type"  # the factor is implied by the scale s
            found[f"{attr}.{key}"] = ("constant", params[key])
    return found


def _nested(rope: dict) -> bool:
    """Per-layer-type RoPE parameters (Gemma 3: ``{"full_attention": {...}, "sliding_attention": {...}}``)."""
    return bool(rope) and all(isinstance(v, dict) for v in rope.values())
