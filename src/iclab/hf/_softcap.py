r"""Soft-capped attention for :mod:`iclab.hf._scaling_rules`: Gemma 2's attention-logit soft-capping
(:math:`c \tanh(e / c)` on the logits, transformers ``gemma2``, ``attn_logit_softcapping``) for any model whose
attention runs through iclab, as an attention function in blocks of query rows sized so that a block's scores stay
near :data:`_ELEMENTS` values (cache-sized, instead of ``(B, H, q, k)`` at once).

The cap is computed as a logistic: :math:`c \tanh(y) = 2c\,\sigma(2y) - c`, and softmax ignores a constant added to
every logit of a row, so :math:`\mathrm{softmax}(c \tanh(e/c) + m) = \mathrm{softmax}(2c\,\sigma(2e/c) + m)` exactly
(up to float rounding: about :math:`2c` ulps of :math:`\sigma` on a logit). On CPU the logistic costs a sixth of
``tanh`` (``benchmarks/bench_scaling_rules.py``).
"""

from __future__ import annotations

import torch

__all__ = ["capped_attention"]

_ROWS = 512  # at most this many query rows per block
_ELEMENTS = 1 << 21  # scores per block (8 MB in float32): fewer rows when a row sees many keys, at least _MIN_ROWS
_MIN_ROWS = 16


def capped_attention(module, query, key, value, attention_mask, scaling, dropout, cap):
    r"""Soft-capped attention, :math:`\mathrm{softmax}(c \tanh(e / c) + \text{mask})\,v` with
    :math:`e = q^\top k\, s` (Gemma 2's order: cap, then mask), in blocks of query rows. A causal module's block
    reads only the keys its last row can see (key ``j`` visible to row ``i`` iff ``j \le k - q + i``) and, without
    a mask, masks only its diagonal square; the query heads that share a key/value head are stacked into one matrix
    product with it (no copies of keys or values); half precision runs in float32 as stock eager softmax does.
    ``query (B, H, q, d)``, ``key/value (B, H_kv, k, d)``, ``scaling`` a float, ``cap`` > 0 finite; returns
    ``(out (B, q, H, d_v), None)``."""
    B, H, q, d = query.shape
    Hkv, k = key.shape[1], key.shape[2]
    G, offset, dev = H // Hkv, k - q, query.device
    work = torch.promote_types(query.dtype, torch.float32)
    qg = (query.to(work) * (2 * scaling / cap)).reshape(B, Hkv, G, q, d)  # 2e / c in one product
    kt = key.to(work).transpose(-1, -2)  # (B, H_kv, d, k)
    causal = bool(getattr(module, "is_causal", False))
    low = torch.finfo(work).min
    outs, start = [], 0
    while start < q:  # blocks of rows, not samples: bounds the score memory
        seen = offset + min(start + _ROWS, q) if causal else k  # keys the block's last row can see, at most
        rows = min(_ROWS, max(_MIN_ROWS, _ELEMENTS // (B * H * seen)))
        end = min(start + rows, q)
        P, kend = end - start, (offset + end if causal else k)
        qb = qg[:, :, :, start:end].reshape(B, Hkv, G * P, d)  # (B, H_kv, G·P, d): a group's heads stacked
        e = (qb @ kt[..., :kend]).sigmoid_().mul_(2 * cap).view(B, H, P, kend)  # 2c σ(2e/c) = c tanh(e/c) + c
        if attention_mask is not None:
            m = attention_mask[..., :kend]
            m = m[:, :, start:end] if m.shape[2] > 1 else m  # (B, 1, P|1, kend)
            e = e.masked_fill_(~m, low) if m.dtype == torch.bool else e.add_(m.to(work))
        elif causal and P > 1:  # keys before the block's first row are visible to all its rows
            tri = torch.ones(P, P, dtype=torch.bool, device=dev).triu_(1)  # (P, P)
            e[..., offset + start :].masked_fill_(tri, low)
        w = torch.softmax(e, dim=-1)
        if dropout:
            w = torch.nn.functional.dropout(w, p=dropout)
        w = w.to(value.dtype).view(B, Hkv, G * P, kend)
        outs.append((w @ value[:, :, :kend]).view(B, H, P, -1))  # (B, H, P, d_v)
        start = end
    return torch.cat(outs, dim=2).transpose(1, 2).contiguous(), None  # (B, q, H, d_v)
