r"""Streaming adaptive-temperature attention in O(n·d) memory: the "streamable" adaptive temperature of
arXiv:2410.01104 ("Softmax is not enough"), with the passes and the backward derived in docs/papers/dispersion.md
§4.5–4.6.

``adaptive_attention(q, k, v)`` equals ``adaptive_softmax(q k^T * scale, mask) @ v`` (with the *exact* entropy,
``eps=0``; the reference ``+1e-9`` inside the log moves H by at most ``n_keys * 1e-9`` nats) but never stores an
``n_q x n_k`` matrix. Per query row, over key chunks:

* **Pass 1** (online log-sum-exp and entropy): running :math:`m=\max_j e_j`, :math:`Z=\sum_j e^{e_j-m}`,
  :math:`S=\sum_j (e_j-m)e^{e_j-m}`; on a new chunk max :math:`m'`, :math:`Z\leftarrow e^{m-m'}Z+\dots`,
  :math:`S\leftarrow e^{m-m'}(S+(m-m')Z)+\dots`; then :math:`H=\log Z-S/Z` and :math:`\beta=\beta(H)`.
  On CPU without a mask, pass 1 is instead one fused flash-kernel call (``aten._scaled_dot_product_flash_attention
  _for_cpu(q, k, k)``, which also returns the log-sum-exp): :math:`H=\mathrm{lse}-\mu` with
  :math:`\mu=\sum_jp_je_j=q_s\cdot\sum_jp_jk_j` (``FUSED_PASS1 = False`` forces the chunk loop).
* **Pass 2**: ordinary attention with the per-row scale :math:`\beta` (note §4.5): the fused, itself streaming
  ``F.scaled_dot_product_attention(q * scale * beta, k, v, scale=1)``; for causal attention with
  :math:`n_q \ne n_k` (sdpa aligns causal masks top-left) a chunk loop with the fixed shift
  :math:`\max_j\beta e_j = \beta m` (no online rescaling needed).

Backward is a custom ``autograd.Function`` that **recomputes** the chunk logits instead of saving them (autograd
through the chunk loop would keep every chunk, i.e. O(n²) again). With :math:`a=\mathrm{softmax}(\beta e)`,
:math:`p=\mathrm{softmax}(e)`, :math:`dt_j=a_j(dO\cdot v_j-dO\cdot o)`:
:math:`d\beta=\sum_j e_j\,dt_j`, :math:`dH=\beta'(H)\,d\beta` and
:math:`de_j=\beta\,dt_j - dH\,p_j(e_j-\mu)` with :math:`\mu=\sum_j p_je_j` (since
:math:`\partial H/\partial e_j=-p_j(e_j-\mu)`). So the gradient flows through :math:`\beta` exactly as in the
paper's JAX code (``detach_beta=True`` drops the :math:`dH` term). Backward makes two passes over the chunks (one
for the normaliser of :math:`a` and :math:`d\beta`, one for the gradients). Double backward is not supported.
A causal mask combined with an explicit ``mask`` is materialised once as a bool ``n_q x n_k`` tensor.

**Key spans.** Keys a row does not see add nothing to either pass (:math:`e^{-\infty}=0`), so when a mask confines
each block of :data:`SPAN_BLOCK` query rows to a narrow range of keys (a sliding window, as in Gemma 3's local
layers; a materialised causal mask), each block runs the two passes on its range ``[lo, hi)`` only: the work drops
from :math:`n_q n_k` to about :math:`n_q(\text{window} + \text{SPAN\_BLOCK})` logits, with the same result up to the
order of floating-point sums.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch

from iclab.attention._arguments import check_bool, check_same_kind, check_scale, check_tensor
from iclab.attention._adaptive import PAPER_COEFFS, PAPER_THRESHOLD, beta_of_entropy, check_coeffs, horner
from iclab.config import check_int
from iclab.errors import ConfigError

__all__ = ["adaptive_attention", "auto_chunk"]


def _poly_derivative(coeffs: Sequence[float]) -> tuple[float, ...]:
    deg = len(coeffs) - 1
    return tuple(c * (deg - i) for i, c in enumerate(coeffs[:-1])) or (0.0,)


def _chunk_logits(qs, k, mask_b, j0, j1, causal, offset):
    """Logits ``(..., n_q, c)`` of key chunk ``[j0, j1)`` for pre-scaled queries; invisible keys are ``-inf``."""
    s = qs @ k[..., j0:j1, :].transpose(-1, -2)  # (..., n_q, c)
    vis = None if mask_b is None else mask_b[..., j0:j1]
    if causal:
        rows = torch.arange(qs.shape[-2], device=qs.device)[:, None] + offset  # (n_q, 1)
        tri = rows >= torch.arange(j0, j1, device=qs.device)[None, :]  # (n_q, c)
        vis = tri if vis is None else vis & tri
    return s if vis is None else s.masked_fill_(~vis, float("-inf"))


FUSED_PASS1 = True  # use the fused CPU flash kernel for pass 1 where it applies (tests switch it off)


def _fused_pass1(qs, k, mask_b, causal):
    r"""Pass 1 in one fused call on CPU without a mask: ``(lse, mu)`` of the logits, or None where it does not apply.

    ``aten._scaled_dot_product_flash_attention_for_cpu(q, k, k)`` returns the attention-weighted mean key
    :math:`\bar k = \sum_j p_j k_j` and :math:`\mathrm{lse}_j(e)`; then :math:`\mu = \sum_j p_j e_j = q_s\cdot\bar k`.
    """
    op = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
    if (
        not FUSED_PASS1
        or op is None
        or qs.device.type != "cpu"
        or mask_b is not None
        or qs.dim() != 4
        or not ctx_sdpa_ok(causal, qs.shape[-2], k.shape[-2])
    ):
        return None
    try:
        kbar, lse = op(qs, k, k, 0.0, bool(causal), scale=1.0)  # (B, H, n_q, d), (B, H, n_q)
    except RuntimeError:
        return None
    return lse.unsqueeze(-1).to(qs.dtype), (qs * kbar).sum(-1, keepdim=True)


def _finite0(x: torch.Tensor) -> torch.Tensor:
    return torch.where(torch.isfinite(x), x, torch.zeros_like(x))


def _pass1_loop(qs, k, mask_b, chunk, causal, offset):
    """Pass 1 over key chunks: online max, Z and S (module docstring) -> ``(lse, mu, H, alive, m)``, each
    ``(..., n_q, 1)``."""
    n_k = k.shape[-2]
    masked = mask_b is not None or causal
    row = qs.shape[:-1] + (1,)
    m = torch.full(row, float("-inf"), dtype=qs.dtype, device=qs.device)
    Z = torch.zeros(row, dtype=qs.dtype, device=qs.device)
    S = torch.zeros_like(Z)
    for j0 in range(0, n_k, chunk):  # pass 1: online lse and entropy
        s = _chunk_logits(qs, k, mask_b, j0, min(j0 + chunk, n_k), causal, offset)  # (..., n_q, c)
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        m_safe = _finite0(m_new)
        alpha = torch.exp(m - m_safe)  # (..., n_q, 1); 0 while m = -inf
        shift = torch.where(Z > 0, m - m_safe, torch.zeros_like(m))
        d = s.sub_(m_safe)  # (..., n_q, c) logits - running max (in place)
        e = torch.exp(d)  # 0 on invisible keys
        # sum_j (e_j - m) exp(e_j - m); invisible keys give 0 * -inf = nan, which nansum drops
        s_blk = (e * d).nansum(-1, keepdim=True) if masked else torch.linalg.vecdot(e, d).unsqueeze(-1)
        S = alpha * (S + shift * Z) + s_blk
        Z = alpha * Z + e.sum(-1, keepdim=True)
        m = m_new
    alive = Z > 0  # rows with at least one visible key
    Zs = torch.where(alive, Z, torch.ones_like(Z))
    H = torch.where(alive, torch.log(Zs) - S / Zs, torch.zeros_like(Z))  # (..., n_q, 1)
    m1 = _finite0(m)
    lse1 = m1 + torch.log(Zs)
    mu = m1 + S / Zs  # E_p[e]
    return lse1, mu, H, alive, m1


class _AdaptiveAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, mask, mask_b, chunk, coeffs, threshold, scale, causal, detach_beta):
        lead, n_q, n_k = q.shape[:-2], q.shape[-2], k.shape[-2]
        offset = n_k - n_q
        row = lead + (n_q, 1)
        qs = q * scale  # (..., n_q, d): scale the queries, not the n_q x c logits
        fused = _fused_pass1(qs, k, mask_b, causal)
        if fused is not None:  # the fused flash kernel returns lse; mu = q . (sum_j p_j k_j), so H = lse - mu
            lse1, mu = fused
            H = lse1 - mu
            alive, base = torch.ones_like(H, dtype=torch.bool), lse1
            beta = beta_of_entropy(H, coeffs, threshold)  # (..., n_q, 1)
            if float(beta.max()) * math.log(max(n_k, 2)) > 60:  # exp(beta (e - lse)) could underflow: need the max
                fused = None
        if fused is None:
            lse1, mu, H, alive, base = _pass1_loop(qs, k, mask_b, chunk, causal, offset)
            beta = beta_of_entropy(H, coeffs, threshold)  # (..., n_q, 1)
        # pass 2: softmax(beta e) @ v = ordinary attention with per-row scale beta (note §4.5)
        qb = qs * beta  # (..., n_q, d)
        if ctx_sdpa_ok(causal, n_q, n_k):  # the fused flash kernel, itself streaming over keys
            out = torch.nn.functional.scaled_dot_product_attention(
                qb, k, v, attn_mask=mask, is_causal=causal, scale=1.0
            )  # (..., n_q, d_v)
            out = torch.where(alive, out, torch.zeros_like(out))  # fully masked rows: zeros, not NaN
        else:
            shift2 = beta * base  # >= max_j beta e_j (max, or lse <= max + log n): a fixed shift, no rescaling
            Z2 = torch.zeros(row, dtype=q.dtype, device=q.device)
            acc = torch.zeros(lead + (n_q, v.shape[-1]), dtype=v.dtype, device=v.device)
            for j0 in range(0, n_k, chunk):
                j1 = min(j0 + chunk, n_k)
                e = _chunk_logits(qb, k, mask_b, j0, j1, causal, offset).sub_(shift2).exp_()  # (..., n_q, c) <= 1
                Z2 += e.sum(-1, keepdim=True)
                acc += e @ v[..., j0:j1, :]  # (..., n_q, d_v)
            out = acc / torch.where(Z2 > 0, Z2, torch.ones_like(Z2))  # zeros on fully masked rows
        active = (H > threshold) & (horner(coeffs, H) > 1.0)
        gprime = torch.where(active, horner(_poly_derivative(coeffs), H), torch.zeros_like(H))
        ctx.save_for_backward(q, k, v, out, lse1, mu, beta, base, gprime)
        ctx.mask_b, ctx.chunk, ctx.scale, ctx.causal, ctx.detach_beta = mask_b, chunk, scale, causal, detach_beta
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dout):
        q, k, v, out, lse1, mu, beta, base, gprime = ctx.saved_tensors
        mask_b, chunk, scale, causal = ctx.mask_b, ctx.chunk, ctx.scale, ctx.causal
        n_q, n_k = q.shape[-2], k.shape[-2]
        offset = n_k - n_q
        D = (dout * out).sum(-1, keepdim=True)  # (..., n_q, 1)
        qs = q * scale
        shift2 = beta * base  # (..., n_q, 1) >= max_j beta e_j
        want_beta = not ctx.detach_beta and bool((gprime != 0).any())
        # backward pass A: Z2 = sum_j exp(beta e_j - shift2), and d beta = sum_j e_j dt_j (unnormalised)
        Z2 = torch.zeros_like(beta)
        num = torch.zeros_like(beta)
        for j0 in range(0, n_k, chunk):
            j1 = min(j0 + chunk, n_k)
            s = _chunk_logits(qs, k, mask_b, j0, j1, causal, offset)  # (..., n_q, c)
            u = torch.exp(s * beta - shift2)  # (..., n_q, c) unnormalised adaptive weights
            Z2 += u.sum(-1, keepdim=True)
            if want_beta:
                dp = dout @ v[..., j0:j1, :].transpose(-1, -2)  # (..., n_q, c)
                num += (u * (dp - D) * _finite0(s)).sum(-1, keepdim=True)
        Z2 = torch.where(Z2 > 0, Z2, torch.ones_like(Z2))
        lse2 = shift2 + torch.log(Z2)
        dH = num / Z2 * gprime if want_beta else None  # (..., n_q, 1)

        def chunk_terms(j0, j1):
            s = _chunk_logits(qs, k, mask_b, j0, j1, causal, offset)  # (..., n_q, c)
            a = torch.exp(s * beta - lse2)  # (..., n_q, c) adaptive weights
            dt = a * (dout @ v[..., j0:j1, :].transpose(-1, -2) - D)  # (..., n_q, c)
            return s, a, dt

        dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
        for j0 in range(0, n_k, chunk):  # backward pass B: gradients
            j1 = min(j0 + chunk, n_k)
            s, a, dt = chunk_terms(j0, j1)
            ds = beta * dt  # (..., n_q, c)
            if dH is not None:
                p = torch.exp(s - lse1)
                ds = ds - dH * p * _finite0(s - mu)
            dq += (ds @ k[..., j0:j1, :]) * scale  # (..., n_q, d)
            dk[..., j0:j1, :] = (ds.transpose(-1, -2) @ q) * scale  # (..., c, d)
            dv[..., j0:j1, :] = a.transpose(-1, -2) @ dout  # (..., c, d_v)
        return dq, dk, dv, None, None, None, None, None, None, None, None


SPAN_BLOCK = 512  # query rows per block when a mask leaves each block a narrow range of keys (module docstring)


def _key_spans(vis: torch.Tensor, n_q: int, n_k: int) -> list[tuple[int, int, int, int]] | None:
    """``[(i0, i1, lo, hi)]``: blocks ``[i0, i1)`` of :data:`SPAN_BLOCK` query rows and the range ``[lo, hi)`` outside
    which no row of the block sees a key (``vis``: bool, broadcastable to ``(..., n_q, n_k)``, True = visible); None
    where that would save less than a quarter of the logits (one call over every key is then as good)."""
    if n_q < 2 * SPAN_BLOCK or vis.shape[-2] == 1:  # one block, or a key-padding mask: the same range for every row
        return None
    rows = vis
    while rows.dim() > 2:  # visible to any batch entry or head: (n_q, n_k), reduced on the unbroadcast tensor
        rows = rows[0] if rows.shape[0] == 1 else rows.any(0)  # a size-1 dim is a view, not an n_q x n_k copy
    rows = rows.expand(n_q, n_k)
    spans = []
    for i0 in range(0, n_q, SPAN_BLOCK):
        i1 = min(i0 + SPAN_BLOCK, n_q)
        seen = rows[i0:i1].any(0).nonzero()  # (n_seen, 1) key indices
        spans.append((i0, i1, int(seen[0]), int(seen[-1]) + 1) if len(seen) else (i0, i1, 0, 1))
    work = sum((i1 - i0) * (hi - lo) for i0, i1, lo, hi in spans)
    return spans if work <= 0.75 * n_q * n_k else None


def ctx_sdpa_ok(causal: bool, n_q: int, n_k: int) -> bool:
    """Pass 2 can use ``scaled_dot_product_attention`` unless causal with n_q != n_k (sdpa aligns causal masks
    top-left; iclab aligns the last query with the last key)."""
    return not causal or n_q == n_k


AUTO_CHUNK_ELEMENTS = 1 << 22  # auto chunk: about this many logits per chunk (16 MiB in float32), >= 1024 keys


def auto_chunk(q: torch.Tensor) -> int:
    """Keys per chunk: ``max(1024, AUTO_CHUNK_ELEMENTS / (batch*heads*n_q))`` — independent of n_k, so memory stays
    flat in n while few queries still get matrix products large enough to be efficient.

    Arguments: ``q`` the queries, a floating-point tensor ``(..., n_q, d)`` with at least two axes, not on the meta
    device."""
    check_tensor("q", q)
    if q.dim() < 2:
        raise ConfigError("q", f"<tensor of shape {tuple(q.shape)}>", "a tensor of shape (..., n_queries, d)")
    rows = max(1, q[..., 0].numel())
    return max(1024, AUTO_CHUNK_ELEMENTS // rows)


def _empty_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The output ``(..., n_q, d_v)`` when there is nothing to attend: no query row, no batch entry (an empty
    tensor), or no key (every row sees no key: zeros, as for a fully masked row). Gradients are zeros."""
    out = v.new_zeros(q.shape[:-1] + (v.shape[-1],))  # (..., n_q, d_v)
    if q.requires_grad or k.requires_grad or v.requires_grad:
        out = out + 0.0 * (q.sum() + k.sum() + v.sum())  # sums of empty tensors are 0: keeps the graph
    return out


def adaptive_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    chunk: int | None = None,
    coeffs: Sequence[float] = PAPER_COEFFS,
    threshold: float = PAPER_THRESHOLD,
    scale: float | None = None,
    causal: bool = False,
    detach_beta: bool = False,
) -> torch.Tensor:
    """Adaptive-temperature attention in two streaming passes over key chunks (module docstring; docs/papers/dispersion.md §4.5).

    Args:
        q: ``(..., n_q, d)``; k: ``(..., n_k, d)``; v: ``(..., n_k, d_v)`` with equal leading dims (e.g. ``(B, H)``).
        mask: bool, broadcastable to ``(..., n_q, n_k)``, True = visible (a key-padding mask ``(B, 1, 1, n_k)``
            keeps memory O(n)); fully masked rows give zeros.
        chunk: keys per chunk (None: :func:`auto_chunk`, at least 1024). coeffs, threshold: the β(H) polynomial (highest degree first) and gate.
        scale: logit scale, a finite number > 0, default ``1/sqrt(d)``. causal: query ``i`` sees keys
            ``j <= i + n_k - n_q``.
    Returns: ``(..., n_q, d_v)``; with no query, batch entry or key, that (possibly empty) shape of zeros.

    Arguments: ``q``, ``k``, ``v`` floating-point tensors of one dtype and device, not on the meta device, shaped
    ``(..., n_q, d)``, ``(..., n_k, d)`` and ``(..., n_k, d_v)`` with equal leading axes and d >= 1 (a shape that
    disagrees is one ConfigError naming ``q/k/v``); ``mask`` None or a bool tensor (True = visible) on the device of
    ``q``, broadcastable to ``(..., n_q, n_k)`` (checked also when there is nothing to attend); ``chunk`` None or an
    integer >= 1; ``coeffs`` a non-empty iterable of finite numbers and ``threshold`` a finite number
    (:func:`~iclab.attention.check_coeffs`); ``scale`` None or a finite number > 0, not a bool; ``causal`` and
    ``detach_beta`` bools.
    """
    c = check_coeffs(coeffs, threshold)
    if chunk is not None:
        check_int("chunk", chunk, 1)
    causal, detach_beta = check_bool("causal", causal), check_bool("detach_beta", detach_beta)
    q, k, v = check_tensor("q", q), check_tensor("k", k), check_tensor("v", v)
    check_same_kind(q=q, k=k, v=v)
    if (
        q.dim() < 2
        or k.dim() != q.dim()
        or v.dim() != q.dim()
        or q.shape[:-2] != k.shape[:-2]
        or k.shape[:-2] != v.shape[:-2]
        or q.shape[-1] != k.shape[-1]
        or k.shape[-2] != v.shape[-2]
    ):
        raise ConfigError(
            "q/k/v",
            f"{tuple(q.shape)}/{tuple(k.shape)}/{tuple(v.shape)}",
            "(..., n_q, d), (..., n_k, d), (..., n_k, d_v) with equal leading dims",
        )
    if q.shape[-1] == 0:
        raise ConfigError("q/k", f"{tuple(q.shape)}/{tuple(k.shape)}", "a feature dimension d >= 1")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else check_scale("scale", scale)
    mask_b = None
    if mask is not None:
        check_tensor("mask", mask, floating=False)
        rows = q.shape[:-1] + (k.shape[-2],)  # (..., n_q, n_k)
        if mask.dtype != torch.bool or mask.device != q.device:
            shown = f"<tensor of dtype {str(mask.dtype).removeprefix('torch.')} on {mask.device}>"
            raise ConfigError("mask", shown, f"a bool tensor (True = visible) on the device of q ({q.device})")
        try:
            mask_b = torch.broadcast_to(mask, rows)  # a view: no n_q x n_k copy
        except RuntimeError:
            raise ConfigError(
                "mask", f"<tensor of shape {tuple(mask.shape)}>", f"broadcastable to {tuple(rows)}"
            ) from None
    if k.shape[-2] == 0 or math.prod(q.shape[:-1]) == 0:
        return _empty_attention(q, k, v)
    sdpa_mask = None
    if mask is not None and causal:  # combine once: a bool (..., n_q, n_k) mask, 1 byte per entry
        tri = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril(k.shape[-2] - q.shape[-2])
        mask_b, causal = mask_b & tri, False
        sdpa_mask = mask_b
    elif mask is not None:
        sdpa_mask = mask
        while sdpa_mask.dim() < q.dim():
            sdpa_mask = sdpa_mask[None]
    spans = None if sdpa_mask is None else _key_spans(sdpa_mask, q.shape[-2], k.shape[-2])
    if spans is None:
        return _AdaptiveAttention.apply(
            q,
            k,
            v,
            sdpa_mask,
            mask_b,
            chunk or auto_chunk(q),
            c,
            float(threshold),
            scale,
            bool(causal),
            bool(detach_beta),
        )
    outs = []  # one call per block of query rows on its range of keys (module docstring, "Key spans")
    for i0, i1, lo, hi in spans:
        qb = q[..., i0:i1, :]
        outs.append(
            _AdaptiveAttention.apply(
                qb,
                k[..., lo:hi, :],
                v[..., lo:hi, :],
                sdpa_mask[..., i0:i1, lo:hi],
                mask_b[..., i0:i1, lo:hi],
                chunk or auto_chunk(qb),
                c,
                float(threshold),
                scale,
                False,
                bool(detach_beta),
            )
        )
    return torch.cat(outs, dim=-2)
