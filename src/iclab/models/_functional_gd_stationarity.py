r"""The stationarity check of Theorems 1–2 of Wang et al., arXiv:2405.17248 (docs/papers/categorical.md §3.7,
§4.3, §4.4): the Monte-Carlo gradient of the in-context NLL with respect to *every* parameter of the fully
parametrised categorical transformer, evaluated at the GD configuration.

The theorems (statements reconstructed, not read) say the GD configuration is a stationary point of the ICL loss.
iclab checks the part that follows from symmetry alone: when the covariate law is invariant under reflecting one
coordinate of x, every entry outside the GD sparsity pattern that couples an x coordinate with another coordinate
has zero expected gradient (derivation in §4.3). :func:`gd_pattern` names those entries, :func:`stationarity_check`
measures the gradient of each group as a z statistic (§4.4): about 1 when the expected gradient is zero.
"""

from __future__ import annotations

import math

import torch

from torch import nn

from iclab.data import CategoricalICL, generator_for
from iclab.models._functional_gd import BLOCK_KEYS, TrainedCategoricalTransformer, categorical_loss, gd_block_params

__all__ = ["gd_pattern", "stationarity_check"]


def gd_pattern(d: int, d_embed: int) -> dict[str, dict[str, torch.Tensor]]:
    """Boolean masks per block matrix (keys of :data:`BLOCK_KEYS`) of two groups of entries:

    ``"free"``: entries the GD model learns or that are non-zero in the construction;
    ``"x_coupling"``: off-pattern entries that couple an x coordinate with another coordinate (another x
    coordinate or a non-x slot) in head-1/head-2 Q, K, V or the cross-attention query — the ones whose expected
    gradient is zero by reflection invariance of x (docs/papers/categorical.md §4.3). All other entries are
    ``"other"``.
    """
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


def _chunk_gradients(
    data, tf: TrainedCategoricalTransformer, n_prompts: int, n_chunks: int, seed: int
) -> list[dict[str, torch.Tensor]]:
    """The NLL gradient of every parameter, one dict per independent chunk of ``n_prompts / n_chunks`` prompts."""
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
    return grads


def _group_statistics(groups: dict[str, list[tuple[torch.Tensor, torch.Tensor]]]) -> dict[str, dict]:
    """Per group: entries ``n``, RMS of the mean gradient, RMS of its standard error, their ratio ``z``, max |mean|."""
    out: dict[str, dict] = {}
    for grp, parts in groups.items():
        mean = torch.cat([p[0] for p in parts]) if parts else torch.zeros(0)
        se = torch.cat([p[1] for p in parts]) if parts else torch.zeros(0)
        if mean.numel() == 0:
            continue
        rms_m, rms_s = float(mean.pow(2).mean().sqrt()), float(se.pow(2).mean().sqrt())
        out[grp] = {
            "n": int(mean.numel()),
            "rms_mean": rms_m,
            "rms_se": rms_s,
            "z": rms_m / rms_s if rms_s > 0 else float("inf"),
            "max_abs": float(mean.abs().max()),
        }
    return out


def stationarity_check(
    data: CategoricalICL, gd_model: nn.Module, n_prompts: int = 4096, n_chunks: int = 8, seed: int = 0
) -> dict[str, dict]:
    """Monte-Carlo gradient of the ICL NLL w.r.t. every parameter of the fully parametrised transformer at the
    GD configuration of ``gd_model`` (Theorems 1–2 of arXiv:2405.17248; docs/papers/categorical.md §3.7). A
    ``TrainedCategoricalTransformer`` is used as it is (e.g. a perturbed GD configuration, as a control that
    breaks the symmetry).

    ``data`` is a prompt distribution (e.g. ``CategoricalICL(covariate="gaussian")``). The gradient is averaged
    over ``n_chunks`` independent chunks of ``n_prompts / n_chunks`` prompts; for each group of entries
    (``free``, ``x_coupling``, ``other``, and ``W_e``) the result gives the RMS of the mean gradient
    (``rms_mean``), the RMS of its standard error (``rms_se``) and their ratio ``z`` — about 1 when the
    expected gradient is zero, >> 1 when it is not.
    """
    tf = gd_model
    if not isinstance(tf, TrainedCategoricalTransformer):
        tf = TrainedCategoricalTransformer.from_gd(gd_model)
    pattern = gd_pattern(tf.d, tf.d_embed)
    grads = _chunk_gradients(data, tf, n_prompts, n_chunks, seed)
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
    return _group_statistics(groups)
