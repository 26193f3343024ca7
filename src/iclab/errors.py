"""Errors that iclab raises on bad input: one clear message naming the field, the value and what is allowed."""

from __future__ import annotations

__all__ = ["IclabError", "ConfigError", "RunFolderError", "UnsupportedModelError", "short_repr"]

_REPR_LIMIT = 120


def short_repr(value: object, limit: int = _REPR_LIMIT) -> str:
    """``repr(value)``, cut to about ``limit`` characters with the full length said (a 100k-character value is
    never echoed in full). A one-element array or tensor shows as its number, a larger one as its shape."""
    shape = getattr(value, "shape", None)
    if shape is not None and callable(getattr(value, "tolist", None)):  # a NumPy array or torch tensor
        if len(shape) == 0 or _size(shape) == 1:
            return repr(value.reshape(-1).tolist()[0] if len(shape) else value.tolist())
        return f"<{type(value).__name__} of shape {tuple(shape)}>"
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f"{len(value)} characters" if isinstance(value, str) else f"{len(text)} characters as text"
    return f"{text[: limit - 40]}… ({size})"


def _size(shape) -> int:
    size = 1
    for n in shape:
        size *= int(n)
    return size


class IclabError(Exception):
    """Base class of every error iclab raises on purpose (the CLI prints these without a traceback)."""


class ConfigError(IclabError, ValueError):
    """A configuration value is not allowed.

    ``ConfigError("lr", -1.0, "a positive float")`` reads
    ``invalid lr=-1.0: expected a positive float``. Long values are cut (:func:`short_repr`).
    """

    def __init__(self, field: str, value: object = None, allowed: str = "", *, message: str | None = None) -> None:
        self.field, self.value, self.allowed = field, value, allowed
        if message is None:
            shown = short_repr(value)
            message = f"invalid {field}={shown}: expected {allowed}" if allowed else f"invalid {field}={shown}"
        super().__init__(message)


class RunFolderError(IclabError):
    """A run folder holds results of another config or iclab version (never mixed)."""


class UnsupportedModelError(IclabError, TypeError):
    """A model or attention implementation cannot take the requested feature."""
