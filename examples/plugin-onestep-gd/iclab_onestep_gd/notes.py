"""Notes of ``onestep-gd``."""


def notes(config, results) -> str:
    return f"d = {config.d}, n = {config.n}: a single GD step from 0 is not least squares unless n ≫ d."
