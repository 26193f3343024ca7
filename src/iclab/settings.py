"""iclab's environment settings: every ``ICLAB_*`` variable iclab reads, parsed here and only here.

Each :class:`Setting` names its variable, its type and range, its default and what it does; :func:`setting` reads
one when it is used (never at import, so a bad value cannot break ``import iclab``) and refuses a value outside its
range with the error a bad config value gets: one :class:`~iclab.errors.ConfigError` naming the variable, its
value and what is allowed (the CLI prints it as one line and exits 2). An unset or empty variable means the
default. ``docs/configs.md`` lists them (its table is checked against :data:`SETTINGS` by the docs tests).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Any, Callable

from iclab.errors import ConfigError

__all__ = ["Setting", "SETTINGS", "setting", "settings_table"]

_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _positive_float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value > 0 else None


def _modules(text: str) -> tuple[str, ...] | None:
    names = tuple(m.strip() for m in text.split(","))
    return names if all(_MODULE.match(m) for m in names) else None


def _text(text: str) -> str | None:
    return text if text.strip() and "\n" not in text and "\0" not in text else None


@dataclass(frozen=True)
class Setting:
    """One ``ICLAB_*`` variable: its ``kind`` and range in words (``allowed``), its ``default`` (None: computed
    where it is used, as ``default_words`` says) and what it does (``doc``); ``parse`` turns the text into the
    value or None when the text is not allowed."""

    name: str
    allowed: str
    default: Any
    default_words: str
    doc: str
    parse: Callable[[str], Any]


SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting(
            "ICLAB_MEMORY_LIMIT_GB",
            "a finite number > 0 (gigabytes)",
            None,
            "the machine's physical memory",
            "memory one cell or one theory call may use; larger estimates are refused",
            _positive_float,
        ),
        Setting(
            "ICLAB_CELL_SECONDS_LIMIT",
            "a finite number > 0 (seconds)",
            24 * 3600.0,
            "86400",
            "CPU seconds one cell or one theory call may need; larger estimates are refused",
            _positive_float,
        ),
        Setting(
            "ICLAB_RAY_CONNECT_TIMEOUT",
            "a finite number > 0 (seconds)",
            30.0,
            "30",
            "how long `--executor ray` waits for a cluster address to answer",
            _positive_float,
        ),
        Setting(
            "ICLAB_EXPERIMENT_MODULES",
            "comma-separated Python module names (a.b,c)",
            (),
            "none",
            "extra modules that register experiments (spawned workers inherit it)",
            _modules,
        ),
        Setting(
            "ICLAB_CACHE",
            "a folder path",
            None,
            "~/.cache/iclab",
            "the model cache (converted GGUF checkpoints)",
            _text,
        ),
        Setting(
            "ICLAB_CHROMIUM",
            "a program name or path",
            None,
            "chromium or chrome on PATH",
            "the browser that checks HTML reports",
            _text,
        ),
    )
}


def setting(name: str) -> Any:
    """The value of the ``ICLAB_*`` variable ``name``: its default when unset or empty, else its parsed value; a
    ConfigError naming the variable, its value and what is allowed when the value is not allowed."""
    spec = SETTINGS[name]
    text = os.environ.get(name, "")
    if not text:
        return spec.default
    value = spec.parse(text)
    if value is None:
        raise ConfigError(name, text, spec.allowed + " (an environment variable; unset it for the default)")
    return value


def settings_table() -> str:
    """The Markdown table of every setting (variable, type and range, default, what it does) for the docs."""
    rows = ["| variable | type and range | default | what it does |", "|---|---|---|---|"]
    rows += [f"| `{s.name}` | {s.allowed} | {s.default_words} | {s.doc} |" for s in SETTINGS.values()]
    return "\n".join(rows)
