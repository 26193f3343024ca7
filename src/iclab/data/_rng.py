"""Deterministic random streams: every sample is a pure function of ``(seed, *keys)``.

``generator_for(seed, "train", step)`` returns a fresh ``torch.Generator`` whose state depends only on the
seed and the keys (hashed with SHA-256), so a resumed run, another executor, or another process draws the
same numbers. Model constructors (``torch.nn`` layers) draw their initial weights from torch's global RNG;
:func:`seeded_init` is the one place that seeds it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

import torch

__all__ = ["derive_seed", "generator_for", "seeded_init"]


def derive_seed(seed: int, *keys: object) -> int:
    """A 63-bit seed derived from ``seed`` and any printable keys."""
    text = "/".join([str(int(seed))] + [str(k) for k in keys])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") & ((1 << 63) - 1)


def generator_for(seed: int, *keys: object, device: str | torch.device = "cpu") -> torch.Generator:
    """A ``torch.Generator`` seeded by ``derive_seed(seed, *keys)``."""
    g = torch.Generator(device=device)
    g.manual_seed(derive_seed(seed, *keys))
    return g


@contextmanager
def seeded_init(seed: int, *keys: object) -> Iterator[None]:
    """Within the block, torch's global CPU RNG is seeded by ``derive_seed(seed, *keys)``; on exit its previous
    state is restored.

    Why the global RNG at all: ``torch.nn`` layers (``nn.Linear``, ``nn.Embedding``, ...) and Hugging Face heads draw
    their initial weights from it and take no generator, so a model's initialisation can only be keyed by seeding it.
    This helper is the one place in iclab that does so (``tests/test_seeding.py`` enforces it); restoring the state
    keeps the seeding local: nothing after the block depends on it. Construct models on the CPU inside the block
    (the CUDA generators are neither seeded nor restored).
    """
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(derive_seed(seed, *keys))
        yield
