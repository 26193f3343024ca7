"""What ``iclab show`` and the docs print for each config field: its type, value, default, allowed values (as the
config's own validation words them) and its one-line meaning from the class docstring's ``Fields:`` section."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from iclab.errors import ConfigError

__all__ = ["FieldInfo", "field_docs", "describe_fields"]


@dataclasses.dataclass(frozen=True)
class FieldInfo:
    """One config field as ``iclab show`` prints it: name, type, value, class default, allowed values, meaning."""

    name: str
    type: str
    value: Any
    default: Any
    allowed: str
    doc: str


def field_docs(cls: type) -> dict[str, str]:
    """The one-line meaning of each field, read from the ``Fields:`` section of ``cls``'s docstring
    (``name: text``, continuation lines indented deeper)."""
    docs: dict[str, str] = {}
    lines = (cls.__doc__ or "").expandtabs().splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "Fields:"), None)
    if start is None:
        return docs
    indent, name = None, None
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        indent = depth if indent is None else indent
        if depth < indent:
            break  # the section ended
        key, sep, text = line.strip().partition(":")
        if depth == indent and sep and key.isidentifier():
            name = key
            docs[name] = text.strip()
        elif name is not None:
            docs[name] += " " + line.strip()
    return docs


def describe_fields(config: Any) -> list[FieldInfo]:
    """Every field of the config instance ``config``, in declaration order (see :class:`FieldInfo`)."""
    hints = typing.get_type_hints(type(config))
    docs = field_docs(type(config))
    out = []
    for f in dataclasses.fields(config):
        default = (
            f.default
            if f.default is not dataclasses.MISSING
            else (f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
        )  # type: ignore[misc]
        out.append(
            FieldInfo(
                f.name,
                _type_name(hints[f.name]),
                getattr(config, f.name),
                default,
                _allowed(config, f.name, hints[f.name]),
                docs.get(f.name, ""),
            )
        )
    return out


def _type_name(hint: Any) -> str:
    """``int``, ``tuple[float, ...]``, ``str | None`` …"""
    return hint.__name__ if isinstance(hint, type) and not typing.get_args(hint) else str(hint).replace("typing.", "")


def _allowed(config: Any, name: str, hint: Any) -> str:
    """What the field accepts, as its own validation says it: the ``allowed`` text of the ConfigError that a
    deliberately bad value raises for this field; the type when no probe is refused."""
    for probe in _bad_values(hint):
        try:
            dataclasses.replace(config, **{name: probe})
        except ConfigError as exc:
            if exc.field == name:
                return exc.allowed or str(exc)
        except Exception:  # noqa: BLE001 - a validator that trips over the probe says nothing about the field
            continue
    if hint is bool:
        return "true or false"
    return f"any {_type_name(hint)}"


def _bad_values(hint: Any) -> list[Any]:
    """Values that a validator of a field of type ``hint`` should refuse (probes for :func:`_allowed`)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return [v for a in args if a is not type(None) for v in _bad_values(a)]
    if origin in (tuple, list):
        return [origin(v for v in (item,)) for item in _bad_values(args[0] if args else str)] + [origin()]
    return {int: [-(10**9)], float: [float("nan"), -1e300], str: ["\x00(not a choice)"]}.get(hint, [])
