"""Argument rules of iclab's public functions: one small set of validators that every module applies at the entry of
its public functions (``iclab.theory``, ``iclab.stats``, ``iclab.budget``).

Each validator takes the argument's name and value, returns the value in the form the formula needs (a Python
``int``/``float``, a float NumPy array) and raises one :class:`~iclab.errors.ConfigError` naming the argument, its
value and what is allowed when the value breaks the rule: sizes at least their minimum, probabilities in range,
scales positive, values finite, integers that are not booleans, shapes that agree. A docstring states its function's
rule in one line (``Arguments: d, l integers >= 1; sigma a finite number >= 0``); ``docs/api/domain.md`` lists them.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Iterable, Sequence

import numpy as np

from iclab.errors import ConfigError, short_repr

__all__ = [
    "integer",
    "number",
    "positive",
    "nonnegative",
    "probability",
    "array",
    "choice",
    "same_length",
    "broadcastable",
    "finite_result",
    "bounds_words",
]

_NUMBER_KINDS = "iuf"  # NumPy dtype kinds of integers and floats (booleans are kind "b")


def bounds_words(
    low: float | None = None,
    high: float | None = None,
    above: float | None = None,
    below: float | None = None,
    many: bool = False,
) -> str:
    """``a finite number > 0``, ``finite numbers in [0, 1)`` …: the words of a rule on numbers."""
    noun = "finite numbers" if many else "a finite number"
    lo = (
        (f"[{low:g}", f">= {low:g}")
        if low is not None
        else (f"({above:g}", f"> {above:g}")
        if above is not None
        else None
    )
    hi = (
        (f"{high:g}]", f"<= {high:g}")
        if high is not None
        else (f"{below:g})", f"< {below:g}")
        if below is not None
        else None
    )
    if lo and hi:
        return f"{noun} in {lo[0]}, {hi[0]}"
    return f"{noun} {(lo or hi)[1]}" if (lo or hi) else noun


def _in_bounds(x, low, high, above, below):
    """Elementwise: whether ``x`` meets each bound given (True where no bound is given)."""
    ok = np.ones(np.shape(x), bool)
    for bound, op in ((low, np.greater_equal), (high, np.less_equal), (above, np.greater), (below, np.less)):
        if bound is not None:
            ok &= op(x, bound)
    return ok


def integer(name: str, value: Any, low: int = 1, high: int | None = None, why: str = "") -> int:
    """``value`` as an ``int``; a ConfigError unless it is an integer (Python or NumPy, never a boolean) in
    ``low..high`` (no upper bound when ``high`` is None)."""
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if not ok or value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in {low}..{high}"
        raise ConfigError(name, value, f"an integer {bound}" + (f" ({why})" if why else ""))
    return int(value)


def number(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    above: float | None = None,
    below: float | None = None,
    why: str = "",
    inf_ok: bool = False,
) -> float:
    """``value`` as a ``float``; a ConfigError unless it is a finite real number (not a boolean, not a string)
    meeting each bound given (``low <= x``, ``x <= high``, ``above < x``, ``x < below``); ``inf_ok``: +inf too (a
    limit that is not there, such as infinite degrees of freedom)."""
    real = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    x = _as_float(value) if real else math.nan
    if inf_ok and x == math.inf:
        return x
    if not math.isfinite(x) or not _in_bounds(x, low, high, above, below):
        words = bounds_words(low, high, above, below) + (" or inf" if inf_ok else "") + (f" ({why})" if why else "")
        raise ConfigError(name, value, words)
    return x


def _as_float(value: numbers.Real) -> float:
    """``float(value)``, or inf for an integer too large for a double."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def real(name: str, value: Any, optional: bool = False) -> float | None:
    """``value`` as a float, NaN and ±inf included (a measurement that failed is still a measurement); a ConfigError
    unless it is a real number (not a boolean or a string), or None when ``optional``."""
    if optional and value is None:
        return None
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
        raise ConfigError(name, value, "a real number" + (" or None" if optional else ""))
    return _as_float(value)


def interval(name: str, value: Any) -> tuple[float, float]:
    """``value`` as two floats ``(low, high)`` as given (NaN allowed: an interval not measured); a ConfigError unless
    it is a pair of real numbers."""
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != 2:
        raise ConfigError(name, value, "two numbers (low, high)")
    return real(f"{name}[0]", value[0]), real(f"{name}[1]", value[1])


def positive(name: str, value: Any, why: str = "") -> float:
    """``value`` as a float; a ConfigError unless it is a finite number > 0 (a scale, a variance, a temperature)."""
    return number(name, value, above=0, why=why)


def nonnegative(name: str, value: Any, why: str = "") -> float:
    """``value`` as a float; a ConfigError unless it is a finite number >= 0 (a noise level, a tolerance)."""
    return number(name, value, low=0, why=why)


def probability(name: str, value: Any, open_low: bool = True, open_high: bool = True, why: str = "") -> float:
    """``value`` as a float; a ConfigError unless it is a number in (0, 1) (``[0`` / ``1]`` when not open)."""
    lo, hi = ({"above": 0} if open_low else {"low": 0}), ({"below": 1} if open_high else {"high": 1})
    return number(name, value, **lo, **hi, why=why)


def array(
    name: str,
    value: Any,
    *,
    ndim: int | Sequence[int] | None = None,
    shape: Sequence[int | None] | None = None,
    low: float | None = None,
    high: float | None = None,
    above: float | None = None,
    below: float | None = None,
    min_size: int = 1,
    finite: bool = True,
    why: str = "",
) -> np.ndarray:
    """``value`` as a float64 array; a ConfigError unless it holds numbers (not booleans, strings or objects), has
    ``ndim`` axes (one of them, when a list) and ``shape`` (None: any length on that axis), at least ``min_size``
    entries, every entry finite and within the bounds given (``finite=False``: NaN and ±inf allowed, NaN whatever
    the bounds)."""
    arr = np.asarray(value) if not isinstance(value, (str, bytes)) else np.asarray(object())
    if arr.dtype.kind not in _NUMBER_KINDS:
        raise ConfigError(name, value, "numbers (an array of integers or floats, not booleans or strings)")
    arr = arr.astype(float)
    ndims = (ndim,) if isinstance(ndim, int) else ndim
    if ndims is not None and arr.ndim not in ndims:
        raise ConfigError(name, f"shape {arr.shape}", f"{' or '.join(map(str, ndims))} axes")
    if shape is not None and (
        arr.ndim != len(shape) or any(s is not None and s != n for s, n in zip(shape, arr.shape))
    ):
        want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
        raise ConfigError(name, f"shape {arr.shape}", f"shape {want}" + (f" ({why})" if why else ""))
    if arr.size < min_size:
        raise ConfigError(name, f"shape {arr.shape}", f"at least {min_size} entries")
    with np.errstate(invalid="ignore"):
        outside = ~_in_bounds(arr, low, high, above, below)
    bad = (~np.isfinite(arr) | outside) if finite else (outside & ~np.isnan(arr))
    if bad.any():
        words = bounds_words(low, high, above, below, many=True) + (f" ({why})" if why else "")
        shown = value if arr.size == 1 else f"<array with entry {arr[bad].flat[0]!r}>"
        raise ConfigError(name, shown, words if finite else words.replace("finite ", ""))
    return arr


def choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """``value``; a ConfigError listing ``allowed`` unless it is one of them."""
    allowed = tuple(allowed)
    if not any(type(value) is type(a) and value == a for a in allowed):
        raise ConfigError(name, value, "one of " + ", ".join(map(repr, allowed)))
    return value


def same_length(name: str, value: np.ndarray, length: int, other: str, axis: int = 0) -> None:
    """A ConfigError naming ``name`` unless ``value`` has ``length`` entries on ``axis``, as ``other`` has."""
    if value.shape[axis] != length:
        raise ConfigError(name, f"shape {value.shape}", f"{length} entries on axis {axis}, as {other} has")


def broadcastable(name: str, value: np.ndarray, other: str, against: np.ndarray) -> None:
    """A ConfigError naming ``name`` unless ``value`` broadcasts against ``other`` (numpy's rules)."""
    try:
        np.broadcast_shapes(value.shape, against.shape)
    except ValueError:
        raise ConfigError(
            name, f"shape {value.shape}", f"a shape that broadcasts against {other} {against.shape}"
        ) from None


def finite_result(value: Any, **arguments: Any) -> Any:
    """``value``; a ConfigError naming ``arguments`` (name -> value) when it holds a NaN or an infinity: in-domain
    arguments whose result leaves double precision (``exp(1000)``) are refused, never returned as inf."""
    parts = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else (value,)
    if all(np.isfinite(np.asarray(p, dtype=float)).all() for p in parts):
        return value
    shown = ", ".join(f"{k}={short_repr(v)}" for k, v in arguments.items())
    first = next(iter(arguments), "arguments")
    raise ConfigError(
        first,
        arguments.get(first),
        message=f"invalid {shown}: the result overflows double precision (not finite); use smaller magnitudes",
    )
