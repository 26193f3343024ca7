"""Streaming two-pass adaptive attention (work in progress)."""

__all__: list[str] = []
