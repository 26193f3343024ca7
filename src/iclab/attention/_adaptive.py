"""Entropy-adaptive temperature softmax (work in progress)."""

__all__: list[str] = []
