r"""Rotate the hidden states of a Hugging Face BERT encoder after one layer and run the rest of it: the
real-model shift of arXiv:2609.36448 ("rotated hidden layers"), as iclab builds it (docs/papers/ood.md §5.6).

:func:`givens_rotation` is a fixed orthogonal :math:`R_\theta` made of Givens rotations by θ in ``dim // 2``
disjoint random planes (every direction moves by θ; θ = π gives −I); :func:`plane_rotation` rotates chosen coordinate
planes instead. :func:`encode_to_layer` caches the hidden
states after layer L (length-sorted buckets); :func:`rotated_pooled_features` applies :math:`h \mapsto hR^\top` to
every token's state, runs layers L+1.. of the encoder and mean-pools over real tokens. The encoder stays frozen.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable, Sequence

import torch

from iclab.budget import check_call
from iclab.domain import integer, number
from iclab.errors import ConfigError

if TYPE_CHECKING:  # annotations only: importing iclab.hf does not import transformers
    from transformers import BertModel, PreTrainedTokenizerBase

__all__ = ["givens_rotation", "plane_rotation", "encode_to_layer", "run_encoder_layers", "rotated_pooled_features"]


def _dim_theta(dim, theta, cost: int) -> tuple[int, float]:
    """The checked ``dim`` (an integer >= 1 whose ``cost`` dim × dim float64 matrices fit in memory, with a cubic
    QR's time) and ``theta`` (finite)."""
    dim = integer("dim", dim, low=1)
    check_call({"dim": dim}, memory=8.0 * cost * dim * dim, seconds=cost * dim**3 / 1e10)
    return dim, number("theta", theta, why="an angle in radians")


def _disjoint_pairs(pairs, dim: int) -> list[tuple[int, int]]:
    """``pairs`` as a list of ``(i, j)``: distinct coordinates in 0..dim − 1, each in one pair at most."""
    allowed = f"a list of (i, j) pairs of distinct coordinates in 0..{dim - 1}, each coordinate in one pair at most"
    try:
        out = [(integer("pairs", i, low=0, high=dim - 1), integer("pairs", j, low=0, high=dim - 1)) for i, j in pairs]
    except (TypeError, ValueError):
        raise ConfigError("pairs", pairs, allowed) from None
    used = [k for pair in out for k in pair]
    if isinstance(pairs, (str, bytes)) or len(set(used)) != len(used):
        raise ConfigError("pairs", pairs, allowed)
    return out


def givens_rotation(dim: int, theta: float, seed: int) -> torch.Tensor:
    """Orthogonal R (dim, dim), float32: rotation by θ in dim/2 disjoint random 2-D planes (a random basis from
    ``seed``; an odd last direction stays fixed). ``dim``: an integer >= 1 (refused before allocating when its
    dim × dim float64 QR would not fit: :func:`iclab.budget.check_call`); ``theta``: a finite angle in radians;
    ``seed``: an integer >= 0 (ConfigError otherwise)."""
    dim, theta = _dim_theta(dim, theta, cost=3)
    g = torch.Generator().manual_seed(integer("seed", seed, low=0, high=2**63 - 1))
    basis, _ = torch.linalg.qr(torch.randn(dim, dim, generator=g, dtype=torch.float64))  # (dim, dim)
    c, s = math.cos(theta), math.sin(theta)
    block = torch.zeros(dim, dim, dtype=torch.float64)
    for i in range(0, dim - 1, 2):
        block[i, i], block[i + 1, i + 1], block[i, i + 1], block[i + 1, i] = c, c, -s, s
    if dim % 2:
        block[-1, -1] = 1.0
    return (basis @ block @ basis.T).float()


def plane_rotation(dim: int, pairs: list[tuple[int, int]], theta: float) -> torch.Tensor:
    """Orthogonal R (dim, dim), float32: rotation by θ in the plane of every coordinate pair (i, j) (disjoint
    pairs), identity elsewhere — :func:`givens_rotation` in chosen coordinate planes instead of random ones.
    ``dim`` and ``theta`` as :func:`givens_rotation`; ``pairs``: pairs of distinct coordinates in 0..dim − 1, no
    coordinate in two pairs (ConfigError otherwise)."""
    dim, theta = _dim_theta(dim, theta, cost=1)
    pairs = _disjoint_pairs(pairs, dim)
    R = torch.eye(dim)
    c, s = math.cos(theta), math.sin(theta)
    for i, j in pairs:
        R[i, i], R[j, j], R[i, j], R[j, i] = c, c, -s, s
    return R


def encode_to_layer(
    bert: BertModel, tok: PreTrainedTokenizerBase, sents: list[str], L: int, bucket: int = 64
) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Hidden states after layer L (0 = embeddings), in length-sorted buckets:
    ``[(idx (b,), h (b, T, D), mask (b, T))]``."""
    order = sorted(range(len(sents)), key=lambda i: len(sents[i]))
    out = []
    for start in range(0, len(order), bucket):
        idx = order[start : start + bucket]
        enc = tok([sents[i] for i in idx], padding=True, return_tensors="pt")
        with torch.no_grad():
            h = bert.embeddings(input_ids=enc["input_ids"], token_type_ids=enc.get("token_type_ids"))
            h = run_encoder_layers(bert.encoder.layer[:L], h, enc["attention_mask"])
        out.append((torch.tensor(idx), h, enc["attention_mask"]))
    return out


def run_encoder_layers(layers: Iterable[torch.nn.Module], h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Run BERT layers on ``h (B, T, D)`` with padding ``mask (B, T)`` (additive extended mask) -> ``(B, T, D)``."""
    ext = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min  # (B, 1, 1, T)
    for layer in layers:
        o = layer(h, attention_mask=ext)
        h = o[0] if isinstance(o, tuple) else o  # (B, T, D)
    return h


def rotated_pooled_features(
    bert: BertModel,
    buckets: Sequence[tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
    L: int,
    R: torch.Tensor | None,
    n: int,
) -> torch.Tensor:
    """Rotate the cached layer-L states by ``R`` (None: no rotation), run layers L+1.., mean-pool real tokens
    -> ``(n, D)`` in the original sentence order."""
    out = torch.zeros(n, bert.config.hidden_size)
    with torch.no_grad():
        for idx, h, mask in buckets:
            h = h if R is None else h @ R.T  # (b, T, D)
            h = run_encoder_layers(bert.encoder.layer[L:], h, mask)
            m = mask[..., None].float()  # (b, T, 1)
            out[idx] = (h * m).sum(1) / m.sum(1)
    return out
