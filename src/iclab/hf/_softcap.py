r"""Soft-capped attention for :mod:`iclab.hf._scaling_rules`: Gemma 2's attention-logit soft-capping
(:math:`c \tanh(e / c)` on the logits, transformers ``gemma2``, ``attn_logit_softcapping``) for any model whose
attention runs through iclab, as an attention function in blocks of query rows, so the score memory stays
``(B, H, 512, k)`` at a time instead of ``(B, H, q, k)``.
"""

from __future__ import annotations

import torch

__all__ = ["capped_attention"]

_ROWS = 512  # query rows per block: (B, H, 512, k) scores at a time


def capped_attention(module, query, key, value, attention_mask, scaling, dropout, cap):
    r"""Soft-capped attention, :math:`\mathrm{softmax}(c \tanh(e / c) + \text{mask})\,v` with
    :math:`e = q^\top k\, s` (Gemma 2's order: cap, then mask), in blocks of query rows. A causal module's block
    reads only the keys its last row can see (key ``j`` visible to row ``i`` iff ``j \le k - q + i``) and, without
    a mask, masks only its diagonal square; grouped query heads share their key/value head without copies; half
    precision runs in float32 as stock eager softmax does. ``query (B, H, q, d)``, ``key/value (B, H_kv, k, d)``,
    ``scaling`` a float, ``cap`` > 0 finite; returns ``(out (B, q, H, d_v), None)``."""
    B, H, q, d = query.shape
    Hkv, k = key.shape[1], key.shape[2]
    G, offset, dev = H // Hkv, k - q, query.device
    work = torch.promote_types(query.dtype, torch.float32)
    qg = (query.to(work) * (scaling / cap)).reshape(B, Hkv, G, q, d)  # (B, H_kv, G, q, d): e / c in one product
    kt, vg = key.to(work).transpose(-1, -2)[:, :, None], value[:, :, None]  # (B, H_kv, 1, d, k), (B, H_kv, 1, k, d_v)
    causal = bool(getattr(module, "is_causal", False))
    low = torch.finfo(work).min
    outs = []
    for start in range(0, q, _ROWS):  # blocks of rows, not samples: bounds the score memory
        end = min(start + _ROWS, q)
        kend = offset + end if causal else k
        e = (qg[:, :, :, start:end] @ kt[..., :kend]).tanh_().mul_(cap).view(B, H, end - start, kend)  # (B,H,P,kend)
        if attention_mask is not None:
            m = attention_mask[..., :kend]
            m = m[:, :, start:end] if m.shape[2] > 1 else m  # (B, 1, P|1, kend)
            e = e.masked_fill_(~m, low) if m.dtype == torch.bool else e.add_(m.to(work))
        elif causal and end - start > 1:  # keys before the block's first row are visible to all its rows
            tri = torch.ones(end - start, end - start, dtype=torch.bool, device=dev).triu_(1)  # (P, P)
            e[..., offset + start :].masked_fill_(tri, low)
        w = torch.softmax(e, dim=-1)
        if dropout:
            w = torch.nn.functional.dropout(w, p=dropout)
        w = w.to(value.dtype).view(B, Hkv, G, end - start, kend)
        outs.append((w @ vg[:, :, :, :kend]).reshape(B, H, end - start, -1))  # (B, H, P, d_v)
    return torch.cat(outs, dim=2).transpose(1, 2).contiguous(), None  # (B, q, H, d_v)
