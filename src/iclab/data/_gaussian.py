"""Gaussian in-context regression prompts (work in progress)."""

__all__: list[str] = []
