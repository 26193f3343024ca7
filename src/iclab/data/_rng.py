"""Deterministic random streams: every sample is a pure function of ``(seed, *keys)``.

``generator_for(seed, "train", step)`` returns a fresh ``torch.Generator`` whose state depends only on the
seed and the keys (hashed with SHA-256), so a resumed run, another executor, or another process draws the
same numbers.
"""

from __future__ import annotations

import hashlib

import torch

__all__ = ["derive_seed", "generator_for"]


def derive_seed(seed: int, *keys: object) -> int:
    """A 63-bit seed derived from ``seed`` and any printable keys."""
    text = "/".join([str(int(seed))] + [str(k) for k in keys])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") & ((1 << 63) - 1)


def generator_for(seed: int, *keys: object, device: str | torch.device = "cpu") -> torch.Generator:
    """A ``torch.Generator`` seeded by ``derive_seed(seed, *keys)``."""
    g = torch.Generator(device=device)
    g.manual_seed(derive_seed(seed, *keys))
    return g
