"""Frozen, validated configuration dataclasses: parsing ``--set key=value`` overrides and hashing.

Every experiment config is a frozen dataclass deriving from :class:`Config`. Validation happens in
``__post_init__`` (call the ``check_*`` helpers) so a bad value raises one :class:`ConfigError` where
it enters, naming the field, the value and what is allowed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import types
import typing
from pathlib import Path
from typing import Any, Iterable, Mapping

from iclab.errors import ConfigError, short_repr

__all__ = [
    "Config",
    "check_positive",
    "check_nonnegative",
    "check_int",
    "check_choice",
    "check_scale",
    "check_probability",
    "config_hash",
    "stable_json",
    "parse_overrides",
    "check_device",
    "check_device_available",
    "MAX_SEEDS",
    "read_config_file",
    "CONFIG_FILE_SUFFIXES",
    "FieldInfo",
    "field_docs",
    "describe_fields",
]

MAX_SEEDS = 1000  # seeds or repeats that multiply a grid (more would make a sweep of millions of cells)
CONFIG_FILE_SUFFIXES = (".toml", ".yaml", ".yml", ".json")


def stable_json(obj: Any) -> str:
    """Canonical JSON (sorted keys, no spaces) used for hashing configs and cells."""
    return _STABLE_ENCODER.encode(obj)  # one encoder for every call: a sweep hashes each of its cells


def _json_default(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj):
        return dataclasses.asdict(obj)
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")


_STABLE_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=_json_default)


def config_hash(obj: Any, length: int = 16) -> str:
    """Hex digest of the canonical JSON of ``obj`` (a dict or a dataclass)."""
    return hashlib.sha256(stable_json(obj).encode()).hexdigest()[:length]


def check_positive(field: str, value: float) -> None:
    """A ConfigError naming ``field`` unless ``value`` is a finite number > 0 (booleans are not numbers)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        raise ConfigError(field, value, "a finite number > 0")


def check_nonnegative(field: str, value: float) -> None:
    """A ConfigError naming ``field`` unless ``value`` is a finite number >= 0 (booleans are not numbers)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
        raise ConfigError(field, value, "a finite number >= 0")


def check_int(field: str, value: int, minimum: int = 1, maximum: int | None = None) -> None:
    """A ConfigError naming ``field`` unless ``value`` is an integer in ``minimum..maximum`` (not a boolean; no
    upper bound when ``maximum`` is None)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError(
            field, value, f"an integer >= {minimum}" if maximum is None else f"an integer in {minimum}..{maximum}"
        )
    if maximum is not None and value > maximum:
        raise ConfigError(field, value, f"an integer in {minimum}..{maximum}")


SCALE_RANGE = (1e-30, 1e30)  # no product of a few such numbers leaves double precision


def check_scale(field: str, value: float, zero_ok: bool = False) -> None:
    """ConfigError unless ``value`` is a finite number in [1e-30, 1e30] (or 0, when ``zero_ok``): a scale, a noise
    level or a norm whose powers must stay inside double precision."""
    if zero_ok and value == 0 and not isinstance(value, bool):
        return
    if (
        not isinstance(value, (int, float))
        or isinstance(value, bool)
        or not math.isfinite(value)
        or not SCALE_RANGE[0] <= value <= SCALE_RANGE[1]
    ):
        raise ConfigError(field, value, ("0 or " if zero_ok else "") + "a number in [1e-30, 1e30]")


def check_choice(field: str, value: object, allowed: Iterable[object]) -> None:
    """A ConfigError naming ``field`` and listing ``allowed`` unless ``value`` is one of them."""
    allowed = list(allowed)
    if value not in allowed:
        raise ConfigError(field, value, "one of " + ", ".join(map(repr, allowed)))


def check_probability(field: str, value: float) -> None:
    """A ConfigError naming ``field`` unless ``value`` is a number in [0, 1] (not a boolean)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= value <= 1.0:
        raise ConfigError(field, value, "a number in [0, 1]")


class Config:
    """Mixin for frozen dataclass configs: ``to_dict``, ``with_overrides`` and a stable ``hash``."""

    def to_dict(self) -> dict[str, Any]:
        return json.loads(stable_json(dataclasses.asdict(self)))  # type: ignore[arg-type]

    @property
    def hash(self) -> str:
        return config_hash(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]):
        fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ConfigError(
                unknown[0],
                data[unknown[0]],
                message=f"unknown key {short_repr(unknown[0])} for "
                f"{cls.__name__}; allowed keys: " + ", ".join(sorted(fields)),
            )
        hints = typing.get_type_hints(cls)
        return cls(**{k: _coerce_value(k, v, hints[k]) for k, v in data.items()})  # type: ignore[call-arg]

    def with_overrides(self, overrides: Mapping[str, Any]):
        """A copy with ``overrides`` applied; string values (from ``--set key=value``) are parsed by field type."""
        if not overrides:
            return self
        fields = {f.name for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        for key in overrides:
            if key not in fields:
                raise ConfigError(
                    key,
                    overrides[key],
                    message=f"unknown key {short_repr(key)} for {type(self).__name__}; "
                    "allowed keys: " + ", ".join(sorted(fields)),
                )
        hints = typing.get_type_hints(type(self))
        values = {k: _coerce_value(k, v, hints[k]) for k, v in overrides.items()}
        return dataclasses.replace(self, **values)  # type: ignore[type-var]


def parse_overrides(pairs: Iterable[str]) -> dict[str, str]:
    """Parse ``["a=1", "b=x"]`` into a dict; a pair without ``=`` is a ConfigError."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError("--set", pair, "key=value")
        out[key.strip()] = value.strip()
    return out


def read_config_file(path: str | Path) -> dict[str, Any]:
    """Config fields from a TOML, YAML or JSON file (by suffix): one flat table/mapping ``{field: value}``.

    The values are overrides like ``--set`` ones (``iclab run NAME --config FILE``; ``--set`` wins over the file),
    checked by the config itself. A missing file, an unknown suffix, bad syntax or a nested table is a
    ConfigError naming the file."""
    p = Path(path)
    if p.suffix.lower() not in CONFIG_FILE_SUFFIXES:
        raise ConfigError("--config", str(path), "a .toml, .yaml, .yml or .json file")
    if not p.is_file():
        raise ConfigError("--config", str(path), "an existing file")
    text = p.read_text(encoding="utf-8")
    try:
        data = _parse_config_text(text, p.suffix.lower())
    except ValueError as exc:  # tomllib, json and yaml errors all derive from ValueError here
        raise ConfigError("--config", str(path), f"valid {p.suffix.lstrip('.').upper()} ({exc})") from None
    if data is None:
        return {}
    if not isinstance(data, dict) or any(isinstance(v, dict) for v in data.values()):
        raise ConfigError("--config", str(path), "one flat table of config fields (field = value)")
    return data


def _parse_config_text(text: str, suffix: str) -> Any:
    if suffix == ".toml":
        import tomllib

        return tomllib.loads(text)
    if suffix == ".json":
        return json.loads(text)
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc).replace("\n", " ")) from None


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


def _coerce_value(field: str, value: Any, hint: Any) -> Any:
    """Turn a ``--set`` string (or JSON value) into the type the dataclass field declares."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None or (isinstance(value, str) and value.lower() in ("none", "null")):
            if type(None) in args:
                return None
        inner = [a for a in args if a is not type(None)]
        errors = []
        for a in inner:
            try:
                return _coerce_value(field, value, a)
            except ConfigError as exc:
                errors.append(exc)
        raise errors[0]
    if not isinstance(value, str):
        return _coerce_json_value(field, value, hint)
    text = value.strip()
    try:
        if hint is bool:
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if hint is int:
            return _int64(field, value, int(text))
        if hint is float:
            number = float(text)
            if not math.isfinite(number):
                raise ConfigError(field, value, "a finite number (nan and inf are never a setting)")
            return number
        if hint is str or hint is Any:
            return text
        if origin in (tuple, list):
            elem = args[0] if args else str
            parts = json.loads(text) if text.startswith("[") else [p for p in text.split(",") if p.strip()]
            items = [_coerce_value(field, p, elem) for p in parts]
            return tuple(items) if origin is tuple else items
    except ConfigError:
        raise
    except (ValueError, json.JSONDecodeError):
        pass
    else:
        return text
    name = getattr(hint, "__name__", str(hint))
    raise ConfigError(field, value, f"a value of type {name}")


def _coerce_json_value(field: str, value: Any, hint: Any) -> Any:
    """A non-string value (from ``config.json`` or a JSON list in ``--set``) checked against the field's type."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (tuple, list):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(field, value, "a list")
        elem = args[0] if args else Any  # tuple[T, ...] / list[T]
        items = [_coerce_value(field, v, elem) for v in value]
        return tuple(items) if origin is tuple else items
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is float:
        if not is_number or not math.isfinite(value):
            raise ConfigError(field, value, "a finite number")
        return float(value)
    if hint is int and not (isinstance(value, int) and not isinstance(value, bool)):
        raise ConfigError(field, value, "an integer")
    if hint is int:
        return _int64(field, value, value)
    if hint is bool and not isinstance(value, bool):
        raise ConfigError(field, value, "true or false")
    if hint is str and not isinstance(value, str):
        raise ConfigError(field, value, "a string")
    return value


_DEVICE_HELP = "'cpu', 'cuda', 'cuda:N' or 'mps'"


def check_device(field: str, value: object) -> None:
    """ConfigError unless ``value`` names a torch device: ``cpu``, ``cuda``, ``cuda:N`` or ``mps`` (its
    availability is checked before a run, by :func:`check_device_available`, not here: a config recorded on
    a GPU machine must still load on a laptop)."""
    kind, _, index = value.partition(":") if isinstance(value, str) else ("", "", "")
    if kind not in ("cpu", "cuda", "mps") or (index and (kind != "cuda" or not index.isdigit())):
        raise ConfigError(field, value, _DEVICE_HELP)


def check_device_available(field: str, value: str) -> None:
    """ConfigError unless this machine has the device ``value`` (CUDA built and a GPU with that index, or MPS)."""
    import torch

    check_device(field, value)
    kind, _, index = value.partition(":")
    if kind == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if int(index or 0) >= count:
            raise ConfigError(
                field,
                value,
                f"a device this machine has: {count} CUDA device(s)"
                + (f", cuda:0..cuda:{count - 1}" if count else "; use cpu"),
            )
    if kind == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise ConfigError(field, value, "a device this machine has (no MPS here; use cpu)")


def _int64(field: str, raw: Any, value: int) -> int:
    """``value`` if it fits in 64 bits (larger sizes only overflow later, in NumPy or in float arithmetic)."""
    if not -(2**63) <= value < 2**63:
        raise ConfigError(field, raw, "an integer that fits in 64 bits")
    return value
