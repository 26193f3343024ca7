"""Dispersion diagnostics (work in progress)."""

__all__: list[str] = []
