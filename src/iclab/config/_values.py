"""Config values as users write them: ``--set key=value`` pairs, config files (TOML/YAML/JSON) and the coercion
of their strings and JSON values to each field's declared type.

One rule for every list-valued field, applied where a ``--set`` string is split: an empty element (``10,,20``, a
trailing comma, a blank string) is refused, never dropped; whether an empty list is allowed is the config's rule
(:func:`iclab.config.check_list_fields`).
"""

from __future__ import annotations

import functools
import json
import math
import types
import typing
from pathlib import Path
from typing import Any, Iterable

from iclab.errors import ConfigError

__all__ = ["parse_overrides", "read_config_file", "strict_json_loads", "CONFIG_FILE_SUFFIXES"]

CONFIG_FILE_SUFFIXES = (".toml", ".yaml", ".yml", ".json")


def parse_overrides(pairs: Iterable[str]) -> dict[str, str]:
    """Parse ``["a=1", "b=x"]`` into a dict; a pair without ``=`` is a ConfigError."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError("--set", pair, "key=value")
        out[key.strip()] = value.strip()
    return out


MAX_CONFIG_BYTES = 1 << 20  # a config file is a flat table of fields: 1 MiB is far more than any needs
MAX_CONFIG_VALUES = 100_000  # values in the parsed file, YAML aliases expanded (an alias bomb has billions)
MAX_CONFIG_DEPTH = 16  # nesting of lists (a field holds a list, or a list of lists)


def read_config_file(path: str | Path) -> dict[str, Any]:
    """Config fields from a TOML, YAML or JSON file (by suffix): one flat table/mapping ``{field: value}``.

    The values are overrides like ``--set`` ones (``iclab run NAME --config FILE``; ``--set`` wins over the file),
    checked by the config itself. A missing or unreadable file, one over :data:`MAX_CONFIG_BYTES`, text that is
    not UTF-8, an unknown suffix, bad syntax, a key given twice (in every format), more than
    :data:`MAX_CONFIG_VALUES` values (YAML aliases counted as expanded), nesting deeper than
    :data:`MAX_CONFIG_DEPTH` or a nested table is one ConfigError naming the file; nothing is read unbounded."""
    p = Path(path)
    if p.suffix.lower() not in CONFIG_FILE_SUFFIXES:
        raise ConfigError("--config", str(path), "a .toml, .yaml, .yml or .json file")
    if not p.is_file():
        raise ConfigError("--config", str(path), "an existing file")
    try:
        with p.open("rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError("--config", str(path), f"a config file of at most {MAX_CONFIG_BYTES} bytes")
        text = raw.decode("utf-8")
        data = _parse_config_text(text, p.suffix.lower())
        _check_size(data, str(path))
    except UnicodeDecodeError as exc:
        raise ConfigError("--config", str(path), f"UTF-8 text (byte {exc.start} is not)") from None
    except OSError as exc:
        raise ConfigError("--config", str(path), f"a readable file ({exc.strerror or exc})") from None
    except RecursionError:
        raise ConfigError("--config", str(path), f"values nested at most {MAX_CONFIG_DEPTH} deep") from None
    except ValueError as exc:  # tomllib, json and yaml errors all derive from ValueError here
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError("--config", str(path), f"valid {p.suffix.lstrip('.').upper()} ({exc})") from None
    if data is None:
        return {}
    if not isinstance(data, dict) or any(isinstance(v, dict) for v in data.values()):
        raise ConfigError("--config", str(path), "one flat table of config fields (field = value)")
    return data


def _check_size(data: Any, path: str) -> None:
    """ConfigError when ``data`` holds more than :data:`MAX_CONFIG_VALUES` values or nests deeper than
    :data:`MAX_CONFIG_DEPTH`; the walk stops at the limit, so a shared or self-referencing value costs no more."""
    stack, seen = [(data, 0)], 0
    while stack:
        value, depth = stack.pop()
        seen += 1
        if seen > MAX_CONFIG_VALUES:
            raise ConfigError("--config", path, f"at most {MAX_CONFIG_VALUES} values (YAML aliases count as expanded)")
        if depth > MAX_CONFIG_DEPTH:
            raise ConfigError("--config", path, f"values nested at most {MAX_CONFIG_DEPTH} deep")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend((v, depth + 1) for v in value)


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict; a key given twice is a ValueError (the last would silently win)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} given twice")
        out[key] = value
    return out


def strict_json_loads(text: str) -> Any:
    """JSON as iclab reads it from a user's file: ``json.loads`` where an object with a key given twice is a
    ValueError (plain JSON keeps the last), and so is nesting too deep for the parser (its RecursionError)."""
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except RecursionError:
        raise ValueError("values nested too deep") from None


def _parse_config_text(text: str, suffix: str) -> Any:
    if suffix == ".toml":
        import tomllib

        return tomllib.loads(text)  # refuses a key given twice itself
    if suffix == ".json":
        return json.loads(text, object_pairs_hook=_unique_pairs)
    import yaml

    loader = _yaml_loader()(text)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        raise ValueError(str(exc).replace("\n", " ")) from None
    finally:
        loader.dispose()


@functools.cache
def _yaml_loader() -> type:
    """``yaml.SafeLoader`` that refuses a mapping key given twice (plain PyYAML keeps the last), on libyaml's parser
    where PyYAML has it (``CSafeLoader``: a list of 300 000 numbers loads in 2 s instead of 12)."""
    import yaml

    class UniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        def construct_mapping(self, node, deep=False):
            keys = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in keys
                    keys.add(key)
                except TypeError:  # an unhashable key: yaml's own error follows
                    continue
                if duplicate:
                    raise yaml.constructor.ConstructorError(None, None, f"key {key!r} given twice", key_node.start_mark)
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader


def coerce_value(field: str, value: Any, hint: Any) -> Any:
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
                return coerce_value(field, value, a)
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
            parts = json.loads(text) if text.startswith("[") else _split_list(field, value, text)
            items = [coerce_value(field, p, elem) for p in parts]
            return tuple(items) if origin is tuple else items
    except ConfigError:
        raise
    except (ValueError, json.JSONDecodeError, RecursionError):  # RecursionError: '[[[[…' nested past the stack
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
        items = [coerce_value(field, v, elem) for v in value]
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


def _int64(field: str, raw: Any, value: int) -> int:
    """``value`` if it fits in 64 bits (larger sizes only overflow later, in NumPy or in float arithmetic)."""
    if not -(2**63) <= value < 2**63:
        raise ConfigError(field, raw, "an integer that fits in 64 bits")
    return value


def _split_list(field: str, raw: str, text: str) -> list[str]:
    """The comma-separated elements of ``text`` (``""`` is the empty list); an empty element is a ConfigError."""
    if not text:
        return []
    parts = [p.strip() for p in text.split(",")]
    if not all(parts):
        raise ConfigError(field, raw, "a comma-separated list without empty elements")
    return parts
