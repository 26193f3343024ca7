"""Prompt distributions: frozen dataclasses with ``sample(batch, generator) -> Batch`` and shift constructors."""

from iclab.data._rng import derive_seed, generator_for

__all__ = ["derive_seed", "generator_for"]
