"""Sigmoid attention and length-scaled softmax (work in progress)."""

__all__: list[str] = []
