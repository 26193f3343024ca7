r"""The ``minilm_shift`` cell: natural domain shift and the two weight-gap rotation scenarios on a real encoder
(arXiv:2609.36448, BERT-base on MNLI genres and "rotated hidden dimensions"; iclab's offline, CPU-sized version:
docs/papers/ood.md §5.9).

Features: the pretrained MiniLM (frozen), all six layers, mean-pooled, for the sentences of
:func:`iclab.data.region_domain_sentences` (one template per ``countryinfo`` field, labelled with the country's
region; the same countries in train/test in every domain).

- **Natural shift.** Per source domain s a linear head (``minilm_steps`` full-batch Adam steps on features
  standardised with s's training statistics) is scored (cross-entropy) on the test sentences of every domain t. The
  similarity of two domains is the cosine of their centroids of L2-normalised sentence embeddings.
- **Weight-gap scenarios.** The head of the ``capital`` domain reads standardised features z; let
  :math:`W_{:,i}` be its weights on coordinate i. The ``minilm_gap_planes`` · 2 coordinates with the largest
  :math:`\|W_{:,i}\|` are paired greedily (the most important free coordinate first) with the free partner of
  largest (scenario 1) or smallest (scenario 2) weight gap :math:`\|W_{:,i}-W_{:,j}\|`, and z is rotated by θ in
  every pair's plane (:func:`iclab.hf.plane_rotation`; a rotation of the last hidden layer's states, mean pooling being linear). Per θ over one full
  turn: the test cross-entropy per sentence, the rise L(180°) − L(0°) and the second-peak statistic of
  :func:`second_peak_excess` with a bootstrap interval over test sentences.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from iclab.data import WORLD_REGIONS, derive_seed, region_domain_sentences, seeded_init
from iclab.experiments.ood.minilm import load_minilm, paired_se
from iclab.hf import ce_per_example, encode_to_layer, fit_head, plane_rotation, rotated_pooled_features

__all__ = ["minilm_shift_cell", "gap_pairs", "peak_prominences", "second_peak_excess"]

_LAST = 6  # MiniLM-L6: features after every layer
_PEAK_FRACTION = 0.1  # a second peak counts when its prominence exceeds 10 % of the curve's range (fixed rule)
_BOOT = 2000


def _features(cfg, bert, tok, domains) -> dict:
    """``{domain: {"train": (x (n, D), y (n,)), "test": (...)}}``: mean-pooled last-layer MiniLM features."""
    data = region_domain_sentences(derive_seed(cfg.seed, "regions"), domains)
    out = {}
    for dom, parts in data.items():
        out[dom] = {}
        for part, (sents, y) in parts.items():
            buckets = encode_to_layer(bert, tok, sents, _LAST)
            out[dom][part] = (rotated_pooled_features(bert, buckets, _LAST, None, len(y)), y)
    return out


def _head(cfg, x: torch.Tensor, y: torch.Tensor):
    """A linear head fitted on standardised ``x``; returns ``(head, mu, sd)``."""
    mu, sd = x.mean(0), x.std(0) + 1e-6
    with seeded_init(cfg.seed, "shift-head"):
        head = nn.Linear(x.shape[1], len(WORLD_REGIONS))
    fit_head(head, (x - mu) / sd, y, cfg.minilm_steps)
    return head, mu, sd


def _natural_shift(cfg, feats: dict) -> dict:
    """Centroid cosine similarity of every pair of domains and the test cross-entropy of each source domain's head
    on every domain: ``domain_sim`` and ``domain_ce`` (source row, target column), ``domain_n_test``."""
    doms = list(cfg.minilm_domains)
    cent = {d: F.normalize(torch.cat([feats[d]["train"][0], feats[d]["test"][0]]), dim=1).mean(0) for d in doms}
    sim = [[float(F.cosine_similarity(cent[s], cent[t], dim=0)) for t in doms] for s in doms]
    ce = []
    for s in doms:
        head, mu, sd = _head(cfg, *feats[s]["train"])
        ce.append(
            [float(ce_per_example(head, (feats[t]["test"][0] - mu) / sd, feats[t]["test"][1]).mean()) for t in doms]
        )
    return {
        "domains": doms,
        "domain_sim": sim,
        "domain_ce": ce,
        "domain_n_test": [len(feats[d]["test"][1]) for d in doms],
    }


def gap_pairs(W: torch.Tensor, n_planes: int, large: bool) -> list[tuple[int, int]]:
    """Coordinate pairs for the weight-gap scenarios from head weights ``W (C, D)``: the ``2 n_planes`` coordinates
    of largest ``‖W[:, i]‖``, each (most important first) paired with the free coordinate of largest (``large``) or
    smallest weight gap ``‖W[:, i] − W[:, j]‖``."""
    free = torch.argsort(W.norm(dim=0), descending=True)[: 2 * n_planes].tolist()
    pairs = []
    while len(free) > 1:
        i = free.pop(0)
        gaps = (W[:, free] - W[:, i : i + 1]).norm(dim=0)  # (len(free),)
        pairs.append((i, free.pop(int(gaps.argmax() if large else gaps.argmin()))))
    return pairs


def peak_prominences(curve) -> list[float]:
    """Topographic prominence of every local maximum of a curve sampled around a circle (sorted, largest first):
    the height of the peak above the higher of the two lowest points met walking left and right until a higher
    point; the highest peak's prominence is its height above the minimum."""
    y = np.asarray(curve, dtype=float)
    n = len(y)
    out = []
    for i in range(n):
        if not (y[i] > y[i - 1] and y[i] >= y[(i + 1) % n]):
            continue
        cols = []
        for step in (1, -1):
            low, j = y[i], i
            for _ in range(n - 1):
                j = (j + step) % n
                if y[j] > y[i]:
                    break
                low = min(low, y[j])
            else:
                low = None  # no higher point: the highest peak
            cols.append(low)
        out.append(float(y[i] - y.min()) if None in cols else float(y[i] - max(cols)))
    return sorted(out, reverse=True)


def second_peak_excess(curve) -> float:
    """The second-highest prominence minus ``_PEAK_FRACTION`` of the curve's range: > 0 for a two-peaked curve,
    < 0 for a single-peaked one (0 prominence when there is no second peak)."""
    prom = peak_prominences(curve) + [0.0, 0.0]
    y = np.asarray(curve, dtype=float)
    return float(prom[1] - _PEAK_FRACTION * (y.max() - y.min()))


def _scenario(cfg, head, z: torch.Tensor, y: torch.Tensor, large: bool) -> dict:
    """One weight-gap scenario: per θ the mean test cross-entropy (and the SE of its paired change from θ = 0), the
    rise to 180° with its SE, and the second-peak excess with a bootstrap interval over test sentences."""
    W = head.weight.detach()  # (C, D)
    pairs = gap_pairs(W, cfg.minilm_gap_planes, large)
    thetas = [float(t) for t in cfg.minilm_gap_thetas_deg]
    per = (
        torch.stack(
            [ce_per_example(head, z @ plane_rotation(z.shape[1], pairs, math.radians(t)).T, y) for t in thetas], 1
        )
        .double()
        .numpy()
    )  # (n, n_theta)
    curve = per.mean(0)
    rng = np.random.default_rng(derive_seed(cfg.seed, "gap-bootstrap", large))
    boots = [second_peak_excess(per[rng.integers(0, len(per), len(per))].mean(0)) for _ in range(_BOOT)]
    i0 = thetas.index(0.0) if 0.0 in thetas else None
    i180 = thetas.index(180.0) if 180.0 in thetas else None
    rise = float(curve[i180] - curve[i0]) if None not in (i0, i180) else float("nan")
    rise_se = (
        paired_se(torch.as_tensor(per[:, i180]), torch.as_tensor(per[:, i0]))
        if None not in (i0, i180)
        else float("nan")
    )
    se = [
        paired_se(torch.as_tensor(per[:, k]), torch.as_tensor(per[:, i0])) if i0 is not None else float("nan")
        for k in range(len(thetas))
    ]
    return {
        "L": curve.tolist(),
        "L_se": se,
        "rise": rise,
        "rise_se": rise_se,
        "excess": second_peak_excess(curve),
        "excess_lo": float(np.quantile(boots, 0.025)),
        "excess_hi": float(np.quantile(boots, 0.975)),
        "prominences": peak_prominences(curve)[:3],
        "mean_gap": float(np.mean([float((W[:, i] - W[:, j]).norm()) for i, j in pairs])),
    }


def minilm_shift_cell(cfg) -> dict:
    """The natural-shift matrix over ``minilm_domains`` and the two weight-gap scenarios on the capital domain."""
    bert, tok = load_minilm()
    domains = tuple(dict.fromkeys(("capital",) + tuple(cfg.minilm_domains)))
    feats = _features(cfg, bert, tok, domains)
    out = _natural_shift(cfg, feats) if cfg.minilm_domains else {}
    (xtr, ytr), (xte, yte) = feats["capital"]["train"], feats["capital"]["test"]
    head, mu, sd = _head(cfg, xtr, ytr)
    out.update(
        {
            "gap_theta_deg": [float(t) for t in cfg.minilm_gap_thetas_deg],
            "gap_planes": cfg.minilm_gap_planes,
            "gap_n_test": len(yte),
        }
    )
    for name, large in (("gap1", True), ("gap2", False)):
        out.update({f"{name}_{k}": v for k, v in _scenario(cfg, head, (xte - mu) / sd, yte, large).items()})
    return out
