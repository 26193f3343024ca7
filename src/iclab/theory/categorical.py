"""Functional gradient descent for categorical ICL, and the stationarity check (categorical-ICL spec §4).

:func:`functional_gd` runs the recursion of spec §4.1 directly on ``(x, y)``, without tokens:

.. math:: f_{k+1}(x) = f_k(x) + \\operatorname{diag}(\\alpha_k)\\sum_{j=1}^N \\big[w_{e,y_j}-\\mathbb E_{f_k(x_j)}[w_e]\\big]
          \\,\\kappa_{\\cdot j}(x),\\qquad f_0\\equiv 0,\\qquad \\mathbb E_f[w_e]=\\sum_c w_{e,c}\\,\\mathrm{softmax}_c(W_e^\\top f),

with :math:`\\kappa_{\\cdot j}` the normalised kernel weights of spec §2.4 (linear/RBF divided by N, softmax
normalised over j). The functional-GD transformer must reproduce it block by block.

:func:`stationarity_check` evaluates the gradient of the ICL loss with respect to *every* parameter of the
fully parametrised transformer at the GD configuration (Theorems 1–2 as reconstructed in spec §4.2): entries
outside the GD sparsity pattern that couple x with other coordinates, or distinct x coordinates, vanish in
expectation when the covariates are rotation-invariant (reflection ``x -> Rx`` maps the loss to itself);
the check reports their Monte-Carlo mean and standard error per group.
"""

from __future__ import annotations

import math

import torch

__all__ = ["expected_embedding", "kernel_weights", "functional_gd", "gd_pattern", "stationarity_check"]


def expected_embedding(f: torch.Tensor, W_e: torch.Tensor) -> torch.Tensor:
    """:math:`\\mathbb E_f[w_e]=\\sum_c w_{e,c}\\,\\mathrm{softmax}_c(W_e^\\top f)`; ``f (..., d')``, ``W_e (d', C)`` -> ``(..., d')``."""
    return torch.softmax(f @ W_e, dim=-1) @ W_e.t()


def kernel_weights(x_query: torch.Tensor, x_keys: torch.Tensor, kernel: str, scale: float | torch.Tensor,
                   d_token: int | None = None) -> torch.Tensor:
    """Normalised kernel weights ``(B, T, N)`` of head 1 (spec §2.4):

    * linear: :math:`s\\,x_i^\\top x_j / N`; * RBF: :math:`\\exp(-\\|x_i-x_j\\|^2/(2s^2))/N`;
    * softmax: :math:`\\mathrm{softmax}_j(s\\,x_i^\\top x_j/\\sqrt{D})`, ``D = d_token`` (the token width d+3d').
    """
    n = x_keys.shape[1]
    if kernel == "linear":
        return scale * x_query @ x_keys.transpose(1, 2) / n
    if kernel == "rbf":
        sq = ((x_query[:, :, None, :] - x_keys[:, None, :, :]) ** 2).sum(-1)  # (B, T, N)
        return torch.exp(-sq / (2 * scale ** 2)) / n
    if kernel == "softmax":
        D = d_token if d_token is not None else x_query.shape[-1]
        return torch.softmax(scale * x_query @ x_keys.transpose(1, 2) / math.sqrt(D), dim=-1)
    raise ValueError(f"unknown kernel {kernel!r}")


def functional_gd(x: torch.Tensor, y: torch.Tensor, x_query: torch.Tensor, W_e: torch.Tensor,
                  alphas: torch.Tensor, kernel: str, scale: float | torch.Tensor = 1.0) -> tuple[list, list]:
    """K steps of categorical functional GD (spec §4.1), K = ``len(alphas)``.

    Shapes: ``x (B, N, d)``, ``y (B, N)``, ``x_query (B, Q, d)``, ``W_e (d', C)``, ``alphas (K, d')``.
    Returns ``(f_context, f_query)``: lists of K+1 tensors ``(B, N, d')`` and ``(B, Q, d')``, step 0 = zeros.
    """
    d, dp = x.shape[-1], W_e.shape[0]
    xs = torch.cat([x, x_query], 1)  # (B, T, d)
    kw = kernel_weights(xs, x, kernel, scale, d_token=d + 3 * dp)  # (B, T, N)
    w_lab = W_e.t()[y]  # (B, N, d')
    f = xs.new_zeros(xs.shape[0], xs.shape[1], dp)  # (B, T, d')
    n = x.shape[1]
    fc, fq = [f[:, :n]], [f[:, n:]]
    for a in alphas:
        resid = w_lab - expected_embedding(f[:, :n], W_e)  # (B, N, d')
        f = f + (kw @ resid) * a  # (B, T, d')
        fc.append(f[:, :n])
        fq.append(f[:, n:])
    return fc, fq


def gd_pattern(d: int, d_embed: int) -> dict[str, dict[str, torch.Tensor]]:
    """Boolean masks per block matrix (keys of ``iclab.models.BLOCK_KEYS``) of two groups of entries:

    ``"free"``: entries the GD model learns or that are non-zero in the construction;
    ``"x_coupling"``: off-pattern entries that couple an x coordinate with another coordinate (another x
    coordinate or a non-x slot) in head-1/head-2 Q, K, V or the cross-attention query — the ones whose expected
    gradient is zero by rotation/reflection invariance of x (spec §4.2). All other entries are ``"other"``.
    """
    from iclab.models._functional_gd import gd_block_params

    p = gd_block_params(d, d_embed, torch.full((d_embed,), 0.7, dtype=torch.float64), 1.3, "softmax", 4.0)
    out = {}
    xs = torch.zeros(d + 3 * d_embed, dtype=torch.bool)
    xs[:d] = True
    for k, M in p.items():
        free = M != 0
        if M.shape[0] == xs.numel() and M.shape[1] == xs.numel():
            xr, xc = xs[:, None], xs[None, :]
            coupling = (xr ^ xc) | (xr & xc & ~torch.eye(xs.numel(), dtype=torch.bool))
        elif M.shape[0] == xs.numel():  # qc (D, d'): rows reading x
            coupling = xs[:, None].expand_as(M).clone()
        elif M.shape[1] == xs.numel():  # pc (d', D): columns writing x
            coupling = xs[None, :].expand_as(M).clone()
        else:
            coupling = torch.zeros_like(free)
        out[k] = {"free": free, "x_coupling": coupling & ~free}
    return out


def stationarity_check(data, gd_model, n_prompts: int = 4096, n_chunks: int = 8, seed: int = 0) -> dict[str, dict]:
    """Monte-Carlo gradient of the ICL NLL w.r.t. every parameter of the fully parametrised transformer at the
    GD configuration of ``gd_model`` (spec §4.2, open details). A ``TrainedCategoricalTransformer`` is used
    as it is (e.g. a perturbed GD configuration, as a control that breaks the symmetry).

    ``data`` is a prompt distribution (e.g. ``CategoricalICL(covariate="gaussian")``). The gradient is averaged
    over ``n_chunks`` independent chunks of ``n_prompts / n_chunks`` prompts; for each group of entries
    (``free``, ``x_coupling``, ``other``, and ``W_e``) the result gives the RMS of the mean gradient
    (``rms_mean``), the RMS of its standard error (``rms_se``) and their ratio ``z`` — about 1 when the
    expected gradient is zero, >> 1 when it is not.
    """
    from iclab.data import generator_for
    from iclab.models._functional_gd import BLOCK_KEYS, TrainedCategoricalTransformer, categorical_loss

    tf = gd_model if isinstance(gd_model, TrainedCategoricalTransformer) else TrainedCategoricalTransformer.from_gd(gd_model)
    pattern = gd_pattern(tf.d, tf.d_embed)
    m = max(1, n_prompts // n_chunks)
    grads = []
    for c in range(n_chunks):
        batch = data.sample(m, generator_for(seed, "stationarity", c), dtype=tf.W_e.dtype)
        tf.zero_grad()
        loss, _ = categorical_loss(tf, batch)
        loss.backward()
        g = {f"{b}.{k}": tf.blocks[b][k].grad.detach().clone() for b in range(len(tf.blocks)) for k in BLOCK_KEYS}
        g["W_e"] = tf.W_e.grad.detach().clone()
        grads.append(g)
    out: dict[str, dict] = {}
    groups: dict[str, list[tuple[torch.Tensor, torch.Tensor]]] = {"free": [], "x_coupling": [], "other": [], "W_e": []}
    for name in grads[0]:
        G = torch.stack([g[name] for g in grads])  # (chunks, ...)
        mean, se = G.mean(0), G.std(0) / math.sqrt(n_chunks)
        if name == "W_e":
            groups["W_e"].append((mean.flatten(), se.flatten()))
            continue
        pat = pattern[name.split(".")[1]]
        other = ~(pat["free"] | pat["x_coupling"])
        for grp, mask in (("free", pat["free"]), ("x_coupling", pat["x_coupling"]), ("other", other)):
            groups[grp].append((mean[mask], se[mask]))
    for grp, parts in groups.items():
        mean = torch.cat([p[0] for p in parts]) if parts else torch.zeros(0)
        se = torch.cat([p[1] for p in parts]) if parts else torch.zeros(0)
        if mean.numel() == 0:
            continue
        rms_m, rms_s = float(mean.pow(2).mean().sqrt()), float(se.pow(2).mean().sqrt())
        out[grp] = {"n": int(mean.numel()), "rms_mean": rms_m, "rms_se": rms_s,
                    "z": rms_m / rms_s if rms_s > 0 else float("inf"),
                    "max_abs": float(mean.abs().max())}
    return out
