"""Frozen, validated configuration dataclasses: declared field rules, the ``check_*`` helpers, hashing and the
:class:`Config` mixin.

Every experiment config is a frozen dataclass deriving from :class:`Config`. A field states its constraint where it
is declared (``d: int = int_field(50, low=2)``; the rules and ``*_field`` helpers are in ``_rules``), so a bad value
raises one :class:`ConfigError` where it enters, naming the field, the value and what is allowed. Before a config's
own ``__post_init__`` (which keeps only the rules between fields), two rules run on every config: the list rule
(:func:`check_list_fields`: every list-valued field is a list that holds at least one element unless its default
is empty or the class names it in ``MAY_BE_EMPTY``, and no empty (blank) string element), then
:func:`check_fields`, the declared rule of each field. Parsing ``--set`` values and config files is in
``_values``; what ``iclab show`` prints, in ``_fields``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import typing
from typing import Any, ClassVar, Mapping

# each name below is exported through its module's __all__ (spliced into this package's __all__)
from iclab.config._fields import FieldInfo, describe_fields, field_docs  # noqa: F401
from iclab.config._rules import (  # noqa: F401
    Choice,
    Device,
    Each,
    Integer,
    Number,
    Rule,
    Scale,
    check_choice,
    check_device,
    check_fields,
    check_int,
    check_nonnegative,
    check_ordered,
    check_positive,
    check_probability,
    check_scale,
    choice_field,
    choices_field,
    device_field,
    _field_kinds,
    field_rule,
    int_field,
    ints_field,
    number_field,
    numbers_field,
    rule_field,
    scale_field,
    scales_field,
)
from iclab.config._values import (  # noqa: F401
    CONFIG_FILE_SUFFIXES,
    coerce_value,
    parse_overrides,
    read_config_file,
    strict_json_loads,
)
from iclab.config import _fields, _rules, _values
from iclab.errors import ConfigError, short_repr

# every public name is listed once: this module's own here, the others in their module's __all__
__all__ = [
    "Config",
    "config_hash",
    "stable_json",
    "check_list_fields",
    "check_device_available",
    "MAX_SEEDS",
    *_fields.__all__,
    *_rules.__all__,
    *_values.__all__,
]

MAX_SEEDS = 1000  # seeds or repeats that multiply a grid (more would make a sweep of millions of cells)


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


@functools.cache
def _list_fields(cls: type) -> dict[str, tuple[bool, bool]]:
    """``{name: (may be empty, may be None)}`` for the fields of the dataclass ``cls`` declared as a tuple or list,
    alone or in a union with None: a field may be empty when its class default is empty or ``cls.MAY_BE_EMPTY``
    names it."""

    def empty_default(f: dataclasses.Field) -> bool:
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        return isinstance(default, (tuple, list)) and not default

    named = getattr(cls, "MAY_BE_EMPTY", ())
    kinds = _field_kinds(cls)
    return {
        f.name: (f.name in named or empty_default(f), "none" in kinds[f.name])
        for f in dataclasses.fields(cls)
        if "list" in kinds[f.name] and kinds[f.name] <= {"list", "none"}
    }


def check_list_fields(config: Any) -> None:
    """The one rule for list-valued fields: ConfigError unless each is a list (or None, where its type admits it)
    that holds at least one element and no empty or blank string. A field may be empty only where the class says
    what empty means: its default is empty, or ``MAY_BE_EMPTY`` names it (e.g. "skip that part"). An empty list
    that a sweep would silently skip (a figure that disappears) is never a setting."""
    for name, (may_be_empty, may_be_none) in _list_fields(type(config)).items():
        value = getattr(config, name)
        if value is None and may_be_none:
            continue
        if not isinstance(value, (tuple, list)):
            raise ConfigError(name, value, "a list")
        if not value and not may_be_empty:
            raise ConfigError(name, value, "a non-empty list")
        if any(isinstance(v, str) and not v.strip() for v in value):
            raise ConfigError(name, value, "a list without empty elements")


class Config:
    """Mixin for frozen dataclass configs: ``to_dict``, ``with_overrides`` and a stable ``hash``; every subclass's
    ``__post_init__`` starts with :func:`check_list_fields` and :func:`check_fields` (the declared field rules)."""

    MAY_BE_EMPTY: ClassVar[tuple[str, ...]] = ()  # list fields for which empty is a documented setting

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__post_init__")
        if own is None and hasattr(cls, "__post_init__"):
            return  # inherited from a Config subclass, which checks already

        def __post_init__(self, *args: Any) -> None:
            check_list_fields(self)
            check_fields(self)
            if own is not None:
                own(self, *args)

        cls.__post_init__ = __post_init__  # type: ignore[attr-defined]

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
        return cls(**{k: coerce_value(k, v, hints[k]) for k, v in data.items()})  # type: ignore[call-arg]

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
        values = {k: coerce_value(k, v, hints[k]) for k, v in overrides.items()}
        return dataclasses.replace(self, **values)  # type: ignore[type-var]


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
