"""Multi-head softmax attention for in-context regression (work in progress)."""

__all__: list[str] = []
