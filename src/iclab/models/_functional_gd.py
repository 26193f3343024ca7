"""Functional-GD transformer (categorical paper) (work in progress)."""

__all__: list[str] = []
