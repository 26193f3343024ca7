"""Frozen, validated configuration dataclasses: the ``check_*`` helpers, hashing and the :class:`Config` mixin.

Every experiment config is a frozen dataclass deriving from :class:`Config`. Validation happens in
``__post_init__`` (call the ``check_*`` helpers) so a bad value raises one :class:`ConfigError` where
it enters, naming the field, the value and what is allowed. Before a config's own ``__post_init__``, one rule
holds every list-valued field (:func:`check_list_fields`): at least one element unless its default is empty or the
class names it in ``MAY_BE_EMPTY``, and no empty (blank) string element. Parsing ``--set`` values and config files is in
``_values``; what ``iclab show`` prints, in ``_fields``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import typing
from typing import Any, ClassVar, Iterable, Mapping

from iclab.config._fields import FieldInfo, describe_fields, field_docs
from iclab.config._values import CONFIG_FILE_SUFFIXES, coerce_value, parse_overrides, read_config_file
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
    "check_list_fields",
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


@functools.cache
def _list_fields(cls: type) -> dict[str, bool]:
    """``{name: may be empty}`` for the fields of the dataclass ``cls`` declared as a tuple or list (alone or in a
    union): a field may be empty when its class default is empty or ``cls.MAY_BE_EMPTY`` names it."""
    hints = typing.get_type_hints(cls)

    def is_list(hint: Any) -> bool:
        origin = typing.get_origin(hint)
        return origin in (tuple, list) or any(is_list(a) for a in typing.get_args(hint) if origin is not None)

    def empty_default(f: dataclasses.Field) -> bool:
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        return isinstance(default, (tuple, list)) and not default

    named = getattr(cls, "MAY_BE_EMPTY", ())
    return {f.name: f.name in named or empty_default(f) for f in dataclasses.fields(cls) if is_list(hints[f.name])}


def check_list_fields(config: Any) -> None:
    """The one rule for list-valued fields: ConfigError unless each holds at least one element and no element is
    an empty or blank string. A field may be empty only where the class says what empty means: its default is
    empty, or ``MAY_BE_EMPTY`` names it (e.g. "skip that part"). An empty list that a sweep would silently skip
    (a figure that disappears) is never a setting."""
    for name, may_be_empty in _list_fields(type(config)).items():
        value = getattr(config, name)
        if not isinstance(value, (tuple, list)):
            continue  # None, or a type error the config's own check names
        if not value and not may_be_empty:
            raise ConfigError(name, value, "a non-empty list")
        if any(isinstance(v, str) and not v.strip() for v in value):
            raise ConfigError(name, value, "a list without empty elements")


class Config:
    """Mixin for frozen dataclass configs: ``to_dict``, ``with_overrides`` and a stable ``hash``; every subclass's
    ``__post_init__`` starts with :func:`check_list_fields`."""

    MAY_BE_EMPTY: ClassVar[tuple[str, ...]] = ()  # list fields for which empty is a documented setting

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__post_init__")
        if own is None and hasattr(cls, "__post_init__"):
            return  # inherited from a Config subclass, which checks already

        def __post_init__(self, *args: Any) -> None:
            check_list_fields(self)
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
