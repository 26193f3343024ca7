"""One-layer ICL attention with the (V, M) reparametrisation (work in progress)."""

__all__: list[str] = []
