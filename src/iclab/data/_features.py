"""Orthonormal-feature prompts (OOD paper) (work in progress)."""

__all__: list[str] = []
