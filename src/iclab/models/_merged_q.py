"""Merged-Q softmax attention (OOD paper) (work in progress)."""

__all__: list[str] = []
