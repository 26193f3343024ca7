"""Declared constraints on config values: the rules, the ``*_field`` helpers that state a rule once on a dataclass
field, and :func:`check_fields`, the one validator that applies them.

A rule is a small frozen object with ``ok(value)`` and the words of what it allows; ``check(field, value)`` raises
one :class:`~iclab.errors.ConfigError` naming the field, the value and those words. A config declares a field's
rule where the field is declared::

    d: int = int_field(50, low=2)
    l_values: tuple[int, ...] = ints_field((10, 20), low=2, why="context pairs + query")
    centring: str = choice_field("global", ("global", "prompt"))

and :class:`iclab.config.Config` runs :func:`check_fields` before the config's own ``__post_init__``, which keeps
only the rules between fields (``check_ordered``, a divisor, a bound that names another field). A list field's
rule holds for each element; its error names the whole list. A field typed ``T | None`` may also be None. The
``check_*`` functions are the same rules for a value that is not a config field (a function argument, a CLI flag).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from typing import Any, Iterable

from iclab.errors import ConfigError

__all__ = [
    "Rule",
    "Integer",
    "Number",
    "Scale",
    "Choice",
    "Device",
    "Each",
    "rule_field",
    "int_field",
    "ints_field",
    "number_field",
    "numbers_field",
    "scale_field",
    "scales_field",
    "choice_field",
    "choices_field",
    "device_field",
    "field_rule",
    "check_fields",
    "check_ordered",
    "check_int",
    "check_positive",
    "check_nonnegative",
    "check_probability",
    "check_scale",
    "check_choice",
    "check_device",
]

SCALE_RANGE = (1e-30, 1e30)  # no product of a few such numbers leaves double precision
DEVICE_HELP = "'cpu', 'cuda', 'cuda:N' or 'mps'"
_RULE = "iclab.rule"  # the metadata key of a field's rule


def _is_number(value: object) -> bool:
    """An int or a float, not a boolean."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class Rule:
    """A constraint on one value: :meth:`ok` says whether ``value`` meets it, :meth:`words` what it allows (``many``:
    worded for the elements of a list), ``why`` a reason shown in parentheses after the words."""

    why: str = ""

    def ok(self, value: Any) -> bool:
        """Whether ``value`` meets the rule."""
        raise NotImplementedError

    def words(self, many: bool = False) -> str:
        """What the rule allows: for one value (``an integer >= 2``) or, ``many``, for a list's (``integers >= 2``)."""
        raise NotImplementedError

    def allowed(self, optional: bool = False) -> str:
        """The ``allowed`` text of the error: the words, ``or None`` for an optional field, then ``(why)``."""
        return self.words() + (" or None" if optional else "") + (f" ({self.why})" if self.why else "")

    def check(self, field: str, value: Any, optional: bool = False) -> None:
        """ConfigError naming ``field`` unless ``value`` meets the rule (or is None, when ``optional``)."""
        if not (optional and value is None) and not self.ok(value):
            raise ConfigError(field, value, self.allowed(optional))


@dataclasses.dataclass(frozen=True)
class Integer(Rule):
    """An integer (not a boolean) in ``low..high`` (no upper bound when ``high`` is None), or 0 when ``zero_ok``."""

    low: int = 1
    high: int | None = None
    zero_ok: bool = False
    why: str = ""

    def ok(self, value: Any) -> bool:
        if not isinstance(value, int) or isinstance(value, bool):
            return False
        return (self.zero_ok and value == 0) or (self.low <= value and (self.high is None or value <= self.high))

    def words(self, many: bool = False) -> str:
        noun = "integers" if many else "an integer"
        bound = f">= {self.low}" if self.high is None else f"in {self.low}..{self.high}"
        return ("0 or " if self.zero_ok else "") + f"{noun} {bound}"


@dataclasses.dataclass(frozen=True)
class Number(Rule):
    """A finite number (not a boolean) with ``low <= x``, ``x <= high``, ``above < x``, ``x < below`` for each bound
    given (at most one of ``low``/``above`` and of ``high``/``below``)."""

    low: float | None = None
    high: float | None = None
    above: float | None = None
    below: float | None = None
    why: str = ""

    def ok(self, value: Any) -> bool:
        if not _is_number(value) or not math.isfinite(value):
            return False
        return (
            (self.low is None or value >= self.low)
            and (self.high is None or value <= self.high)
            and (self.above is None or value > self.above)
            and (self.below is None or value < self.below)
        )

    def words(self, many: bool = False) -> str:
        lower = (f"[{self.low:g}", f">= {self.low:g}") if self.low is not None else None
        lower = (f"({self.above:g}", f"> {self.above:g}") if self.above is not None else lower
        upper = (f"{self.high:g}]", f"<= {self.high:g}") if self.high is not None else None
        upper = (f"{self.below:g})", f"< {self.below:g}") if self.below is not None else upper
        if lower and upper:
            return ("numbers" if many else "a number") + f" in {lower[0]}, {upper[0]}"
        bound = lower or upper
        return ("finite numbers" if many else "a finite number") + (f" {bound[1]}" if bound else "")


@dataclasses.dataclass(frozen=True)
class Scale(Rule):
    """A number in [1e-30, 1e30] (or 0, when ``zero_ok``): a scale, a noise level or a norm whose powers must stay
    inside double precision."""

    zero_ok: bool = False
    why: str = ""

    def ok(self, value: Any) -> bool:
        if not _is_number(value):
            return False
        return (self.zero_ok and value == 0) or (math.isfinite(value) and SCALE_RANGE[0] <= value <= SCALE_RANGE[1])

    def words(self, many: bool = False) -> str:
        if many:
            return "numbers that are 0 or in [1e-30, 1e30]" if self.zero_ok else "numbers in [1e-30, 1e30]"
        return ("0 or " if self.zero_ok else "") + "a number in [1e-30, 1e30]"


@dataclasses.dataclass(frozen=True)
class Choice(Rule):
    """One of ``options`` (compared with ``==``)."""

    options: tuple = ()
    why: str = ""

    def ok(self, value: Any) -> bool:
        return value in self.options

    def words(self, many: bool = False) -> str:
        return ("values among " if many else "one of ") + ", ".join(map(repr, self.options))


@dataclasses.dataclass(frozen=True)
class Device(Rule):
    """The name of a torch device: ``cpu``, ``cuda``, ``cuda:N`` or ``mps`` (whether this machine has it is
    :func:`iclab.config.check_device_available`'s question, asked before a run)."""

    why: str = ""

    def ok(self, value: Any) -> bool:
        kind, _, index = value.partition(":") if isinstance(value, str) else ("", "", "")
        return kind in ("cpu", "cuda", "mps") and not (index and (kind != "cuda" or not index.isdigit()))

    def words(self, many: bool = False) -> str:
        return DEVICE_HELP


@dataclasses.dataclass(frozen=True)
class Each(Rule):
    """A tuple or list whose every element meets ``rule``, with at least ``at_least`` elements, all different when
    ``distinct``, and one equal to ``contains`` unless that is None. Whether a list may be empty is the one list
    rule's (:func:`iclab.config.check_list_fields`), which runs first."""

    rule: Rule = dataclasses.field(default_factory=Integer)
    distinct: bool = False
    contains: Any = None
    at_least: int = 0
    why: str = ""

    def ok(self, value: Any) -> bool:
        return (
            isinstance(value, (tuple, list))
            and len(value) >= self.at_least
            and all(self.rule.ok(v) for v in value)
            and (not self.distinct or len(set(value)) == len(value))
            and (self.contains is None or self.contains in value)
        )

    def words(self, many: bool = False) -> str:
        words = ("distinct " if self.distinct else "") + self.rule.words(many=True)
        words = (f"at least {self.at_least} " if self.at_least > 1 else "") + words
        return words + (f" including {self.contains!r}" if self.contains is not None else "")


def rule_field(default: Any, rule: Rule) -> Any:
    """A dataclass field with ``default`` whose values :func:`check_fields` holds to ``rule``."""
    return dataclasses.field(default=default, metadata={_RULE: rule})


def int_field(default: int, low: int = 1, high: int | None = None, *, zero_ok: bool = False, why: str = "") -> Any:
    """An integer field in ``low..high`` (or 0, when ``zero_ok``): :class:`Integer`."""
    return rule_field(default, Integer(low, high, zero_ok, why))


def ints_field(default: tuple, low: int = 1, high: int | None = None, *, distinct: bool = False, why: str = "") -> Any:
    """A list of integers in ``low..high`` (all different when ``distinct``)."""
    return rule_field(default, Each(Integer(low, high), distinct=distinct, why=why))


def number_field(default: float | None, *, why: str = "", **bounds: float) -> Any:
    """A finite-number field within ``bounds`` (``low``, ``high``, ``above``, ``below``): :class:`Number`."""
    return rule_field(default, Number(**bounds, why=why))


def numbers_field(default: tuple, *, contains: float | None = None, why: str = "", **bounds: float) -> Any:
    """A list of finite numbers within ``bounds``, one of them ``contains`` unless that is None."""
    return rule_field(default, Each(Number(**bounds), contains=contains, why=why))


def scale_field(default: float, zero_ok: bool = False) -> Any:
    """A scale in [1e-30, 1e30] (or 0, when ``zero_ok``): :class:`Scale`."""
    return rule_field(default, Scale(zero_ok))


def scales_field(default: tuple, zero_ok: bool = False) -> Any:
    """A list of scales in [1e-30, 1e30] (each may be 0, when ``zero_ok``)."""
    return rule_field(default, Each(Scale(zero_ok)))


def choice_field(default: Any, options: Iterable[Any]) -> Any:
    """A field whose value is one of ``options``."""
    return rule_field(default, Choice(tuple(options)))


def choices_field(
    default: tuple, options: Iterable[Any], *, distinct: bool = False, contains: Any = None, at_least: int = 0
) -> Any:
    """A list of values among ``options`` (see :class:`Each` for ``distinct``, ``contains``, ``at_least``)."""
    return rule_field(default, Each(Choice(tuple(options)), distinct=distinct, contains=contains, at_least=at_least))


def device_field(default: str = "cpu") -> Any:
    """A torch device name: :class:`Device`."""
    return rule_field(default, Device())


def field_rule(field: dataclasses.Field) -> Rule | None:
    """The rule declared on a dataclass field, or None."""
    return field.metadata.get(_RULE)


def _kinds(hint: Any) -> frozenset[str]:
    """What a type hint admits: ``"list"`` (a tuple or list), ``"none"`` (None) or ``"other"``; a union admits what
    its members do."""
    origin = typing.get_origin(hint)
    if origin in (tuple, list):
        return frozenset({"list"})
    if origin in (typing.Union, types.UnionType):
        return frozenset().union(*map(_kinds, typing.get_args(hint)))
    return frozenset({"none" if hint is type(None) else "other"})


@functools.cache
def _field_kinds(cls: type) -> dict[str, frozenset[str]]:
    """``{name: what its declared type admits}`` (:func:`_kinds`) for each field of the dataclass ``cls``: the one
    walk over a config's type hints, read by :func:`check_fields` (may a field be None?) and
    :func:`iclab.config.check_list_fields` (is it a list?)."""
    hints = typing.get_type_hints(cls)
    return {f.name: _kinds(hints[f.name]) for f in dataclasses.fields(cls)}


@functools.cache
def _declared(cls: type) -> tuple[tuple[str, Rule, bool], ...]:
    """``(name, rule, may be None)`` for each field of the dataclass ``cls`` that declares a rule."""
    kinds = _field_kinds(cls)
    fields = dataclasses.fields(cls)
    return tuple((f.name, field_rule(f), "none" in kinds[f.name]) for f in fields if field_rule(f) is not None)


def check_fields(config: Any) -> None:
    """The one validator of declared rules: ConfigError naming the first field (in declaration order) whose value
    breaks its rule; None passes where the field's type admits it."""
    for name, rule, optional in _declared(type(config)):
        rule.check(name, getattr(config, name), optional)


def check_ordered(config: Any, low: str, high: str) -> None:
    """ConfigError naming the field ``high`` unless ``config.low < config.high`` (a grid from ``low`` to ``high``)."""
    lo, hi = getattr(config, low), getattr(config, high)
    if not lo < hi:
        raise ConfigError(high, hi, f"a value > {low}={lo}")


def check_int(field: str, value: int, minimum: int = 1, maximum: int | None = None) -> None:
    """A ConfigError naming ``field`` unless ``value`` is an integer in ``minimum..maximum`` (not a boolean; no
    upper bound when ``maximum`` is None)."""
    Integer(minimum, maximum).check(field, value)


def check_positive(field: str, value: float) -> None:
    """A ConfigError naming ``field`` unless ``value`` is a finite number > 0 (booleans are not numbers)."""
    Number(above=0).check(field, value)


def check_nonnegative(field: str, value: float) -> None:
    """A ConfigError naming ``field`` unless ``value`` is a finite number >= 0 (booleans are not numbers)."""
    Number(low=0).check(field, value)


def check_probability(field: str, value: float) -> None:
    """A ConfigError naming ``field`` unless ``value`` is a number in [0, 1] (not a boolean)."""
    Number(low=0, high=1).check(field, value)


def check_scale(field: str, value: float, zero_ok: bool = False) -> None:
    """ConfigError unless ``value`` is a finite number in [1e-30, 1e30] (or 0, when ``zero_ok``): a scale, a noise
    level or a norm whose powers must stay inside double precision."""
    Scale(zero_ok).check(field, value)


def check_choice(field: str, value: object, allowed: Iterable[object]) -> None:
    """A ConfigError naming ``field`` and listing ``allowed`` unless ``value`` is one of them."""
    Choice(tuple(allowed)).check(field, value)


def check_device(field: str, value: object) -> None:
    """ConfigError unless ``value`` names a torch device: ``cpu``, ``cuda``, ``cuda:N`` or ``mps`` (its
    availability is checked before a run, by :func:`iclab.config.check_device_available`, not here: a config
    recorded on a GPU machine must still load on a laptop)."""
    Device().check(field, value)
