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
from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf._arguments import check_tensor, check_text_list, check_tokenizer

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
    ``seed``; an odd last direction stays fixed).

    Arguments: ``dim`` an integer >= 1 whose dim × dim float64 QR fits this machine's memory and CPU-seconds limits
    (refused before allocating: :func:`iclab.budget.check_call`); ``theta`` a finite number (radians); ``seed`` an
    integer in 0..2**63 − 1."""
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

    Arguments: ``dim`` an integer >= 1 whose dim × dim matrix fits (:func:`iclab.budget.check_call`); ``pairs`` an
    iterable (not a string) of (i, j) pairs of integers in 0..dim − 1, i != j, no coordinate in two pairs (none: the
    identity); ``theta`` a finite number (radians)."""
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
    ``[(idx (b,), h (b, T, D), mask (b, T))]``.

    Arguments: ``bert`` a BERT-like torch module with ``embeddings`` and ``encoder.layer`` (else UnsupportedModelError);
    ``tok`` its tokenizer (callable; its own errors are its own); ``sents`` a list or tuple (not a string) of strings
    (none: ``[]``); ``L`` an integer in 0..number of layers (layers ``[:L]`` run); ``bucket`` an integer >= 1 (not a
    bool)."""
    layers = _encoder_layers(bert)
    check_tokenizer("tok", tok)
    sents = check_text_list("sents", sents)
    L = integer("L", L, low=0, high=len(layers), why="the layer count of the encoder")
    bucket = integer("bucket", bucket, why="sentences per forward pass")
    order = sorted(range(len(sents)), key=lambda i: len(sents[i]))
    out = []
    for start in range(0, len(order), bucket):
        idx = order[start : start + bucket]
        enc = tok([sents[i] for i in idx], padding=True, return_tensors="pt")
        with torch.no_grad():
            h = bert.embeddings(input_ids=enc["input_ids"], token_type_ids=enc.get("token_type_ids"))
            h = _run_layers(layers[:L], h, enc["attention_mask"])
        out.append((torch.tensor(idx), h, enc["attention_mask"]))
    return out


def run_encoder_layers(layers: Iterable[torch.nn.Module], h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Run BERT layers on ``h (B, T, D)`` with padding ``mask (B, T)`` (additive extended mask) -> ``(B, T, D)``.

    Arguments: ``layers`` an iterable of torch modules, BERT layers (none: ``h`` as given; what a layer raises is its
    own); ``h`` a floating-point tensor ``(B, T, D)``, not on the meta device; ``mask`` a bool or integer tensor
    ``(B, T)`` of 0s and 1s (1 = real token) on the device of ``h``."""
    try:
        layers = list(layers)
    except TypeError:
        raise ConfigError(
            "layers", f"<{type(layers).__name__}>", "an iterable of torch modules (BERT layers)"
        ) from None
    if not all(isinstance(layer, torch.nn.Module) for layer in layers):
        raise ConfigError("layers", f"<{type(layers).__name__}>", "an iterable of torch modules (BERT layers)")
    _check_states(h, mask)
    return _run_layers(layers, h, mask)


def _check_states(h, mask) -> None:
    """``h (B, T, D)`` floating point and ``mask (B, T)`` of 0/1 on its device (:func:`run_encoder_layers`)."""
    check_tensor("h", h)
    if h.dim() != 3:
        raise ConfigError("h", f"<tensor of shape {tuple(h.shape)}>", "hidden states (B, T, D)")
    check_tensor("mask", mask, floating=False)
    if (
        mask.shape != h.shape[:2]
        or mask.device != h.device
        or mask.is_floating_point()
        or mask.is_complex()
        or bool(((mask != 0) & (mask != 1)).any())
    ):
        shown = f"<tensor of dtype {str(mask.dtype).removeprefix('torch.')}, shape {tuple(mask.shape)}>"
        raise ConfigError("mask", shown, f"a 0/1 integer or bool tensor {tuple(h.shape[:2])} on the device of h")


def _encoder_layers(bert) -> torch.nn.ModuleList:
    """``bert.encoder.layer``; UnsupportedModelError for a module without ``embeddings`` and ``encoder.layer``."""
    layers = getattr(getattr(bert, "encoder", None), "layer", None)
    if not isinstance(bert, torch.nn.Module) or not callable(getattr(bert, "embeddings", None)) or layers is None:
        raise UnsupportedModelError(f"{type(bert).__name__} is not a BERT-like encoder (embeddings, encoder.layer)")
    return layers


def _run_layers(layers, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """:func:`run_encoder_layers` on checked arguments."""
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
    -> ``(n, D)`` in the original sentence order.

    Arguments: ``bert`` the BERT-like encoder that gave ``buckets`` (as :func:`encode_to_layer` takes it);
    ``buckets`` a sequence of ``(idx (b,) integer tensor, h (b, T, D) floating tensor, mask (b, T) 0/1 tensor)``, what
    :func:`encode_to_layer` returned for the same ``L`` (D the encoder's width); ``L`` an integer in 0..number of layers;
    ``R`` None or a floating-point ``(D, D)`` tensor (cast to the states' dtype and device); ``n`` an integer >= 0, more
    than every index in ``buckets``."""
    layers = _encoder_layers(bert)
    L = integer("L", L, low=0, high=len(layers), why="the layer count of the encoder")
    n = integer("n", n, low=0, why="the number of sentences")
    if isinstance(buckets, (str, bytes)) or not isinstance(buckets, Sequence):
        raise ConfigError("buckets", f"<{type(buckets).__name__}>", "the buckets encode_to_layer returned")
    D = getattr(bert.config, "hidden_size", None) if hasattr(bert, "config") else None
    for b in buckets:
        if not (isinstance(b, (tuple, list)) and len(b) == 3 and isinstance(b[0], torch.Tensor)):
            raise ConfigError("buckets", f"<{type(b).__name__}>", "(idx, h, mask) triples from encode_to_layer")
        idx, h, mask = b
        _check_states(h, mask)
        if idx.dim() != 1 or len(idx) != h.shape[0] or idx.is_floating_point() or idx.dtype == torch.bool:
            raise ConfigError("buckets", f"<idx of shape {tuple(idx.shape)}>", "one integer index per sentence")
        D = h.shape[-1] if D is None else D
        if h.shape[-1] != D:
            raise ConfigError("buckets", f"<states of width {h.shape[-1]}>", f"states of the encoder's width {D}")
        if len(idx) and (int(idx.min()) < 0 or int(idx.max()) >= n):
            raise ConfigError("n", n, f"more than every sentence index in buckets (the largest is {int(idx.max())})")
        if bool((mask.sum(1) == 0).any()):
            raise ConfigError("buckets", "a sentence without a real token", "at least one real token per sentence")
    if D is None:
        raise UnsupportedModelError(f"{type(bert).__name__} has no config.hidden_size (the width of its states)")
    if R is not None:
        check_tensor("R", R)
        if tuple(R.shape) != (D, D):
            raise ConfigError("R", f"<tensor of shape {tuple(R.shape)}>", f"None or a ({D}, {D}) rotation")
    out = torch.zeros(n, D)
    with torch.no_grad():
        for idx, h, mask in buckets:
            h = h if R is None else h @ R.to(h.device, h.dtype).T  # (b, T, D)
            h = _run_layers(layers[L:], h, mask)
            m = mask[..., None].float()  # (b, T, 1)
            out[idx] = (h * m).sum(1) / m.sum(1)
    return out
