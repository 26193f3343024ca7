"""Max-retrieval sets and algorithmic size-generalisation tasks (dispersion paper) (work in progress)."""

__all__: list[str] = []
