"""Errors that iclab raises on bad input: one clear message naming the field, the value and what is allowed."""

from __future__ import annotations


class IclabError(Exception):
    """Base class of every error iclab raises on purpose (the CLI prints these without a traceback)."""


class ConfigError(IclabError, ValueError):
    """A configuration value is not allowed.

    ``ConfigError("lr", -1.0, "a positive float")`` reads
    ``invalid lr=-1.0: expected a positive float``.
    """

    def __init__(self, field: str, value: object = None, allowed: str = "", *, message: str | None = None):
        self.field, self.value, self.allowed = field, value, allowed
        if message is None:
            message = f"invalid {field}={value!r}: expected {allowed}" if allowed else f"invalid {field}={value!r}"
        super().__init__(message)


class RunFolderError(IclabError):
    """A run folder holds results of another config or iclab version (never mixed)."""


class UnsupportedModelError(IclabError, TypeError):
    """A model or attention implementation cannot take the requested feature."""
