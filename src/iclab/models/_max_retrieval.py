"""Max-retrieval network (dispersion paper) (work in progress)."""

__all__: list[str] = []
