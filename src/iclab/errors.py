"""Errors that iclab raises on bad input: one clear message naming the field, the value and what is allowed."""

from __future__ import annotations

import reprlib

__all__ = ["IclabError", "ConfigError", "RunFolderError", "UnsupportedModelError", "short_repr"]

_REPR_LIMIT = 120


def short_repr(value: object, limit: int = _REPR_LIMIT) -> str:
    """``repr(value)``, cut to about ``limit`` characters (a string with its full length said): a 100k-character
    value is never echoed in full, and a nested value is shown a few levels and elements deep without building its
    whole repr (a YAML alias bomb expands to billions of elements). A one-element array or tensor shows as its number, a larger one as its shape."""
    shape = getattr(value, "shape", None)
    if shape is not None and callable(getattr(value, "tolist", None)):  # a NumPy array or torch tensor
        if len(shape) == 0 or _size(shape) == 1:
            return repr(value.reshape(-1).tolist()[0] if len(shape) else value.tolist())
        return f"<{type(value).__name__} of shape {tuple(shape)}>"
    if isinstance(value, str):
        text = repr(value[:limit])  # never the whole of a 1 MB string
        return (
            text if len(value) <= limit and len(text) <= limit else f"{text[: limit - 40]}… ({len(value)} characters)"
        )
    text = _BOUNDED.repr(value)  # bounded depth and width: a YAML alias bomb is never expanded into text
    return text if len(text) <= limit else f"{text[: limit - 40]}… (cut)"


_BOUNDED = reprlib.Repr()  # a few levels and elements of a nested value (keyword arguments need Python 3.12)
_BOUNDED.maxlevel, _BOUNDED.maxstring = 4, _REPR_LIMIT
_BOUNDED.maxlong = _BOUNDED.maxother = _REPR_LIMIT
_BOUNDED.maxtuple = _BOUNDED.maxlist = _BOUNDED.maxdict = _BOUNDED.maxset = 8


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
