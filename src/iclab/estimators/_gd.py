"""Debiased and one-step GD predictors (multi-head paper) (work in progress)."""

__all__: list[str] = []
