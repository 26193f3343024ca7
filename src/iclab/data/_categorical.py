"""Categorical ICL prompts (work in progress)."""

__all__: list[str] = []
