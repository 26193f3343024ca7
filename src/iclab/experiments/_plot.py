"""Drawing steps every experiment's ``figures.py`` repeats, on top of the house style of :mod:`iclab.plotting`
(theory as lines, measurement as markers with error bars, each figure saved as PNG with its CSV): one call for a
panel's labels, scales, limits, title and legend; a measured curve in the palette's ``i``-th colour with its error
bars; asymmetric error bars from a confidence interval's columns; and the papers' values, as crosses or as the
authors' curves. Private to the experiments layer."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from numpy.typing import ArrayLike

from iclab.plotting import color

__all__ = ["ci_err", "curve", "panel", "paper_values"]


def panel(ax: Axes, *, legend: bool | float | Mapping[str, Any] = False, **props: Any) -> None:
    """Set the panel's properties in the order given (``xlabel``, ``ylabel``, ``title``, ``xscale``, ``yscale``,
    ``xlim``, ``ylim``, … as :meth:`matplotlib.axes.Axes.set` takes them) and draw its legend: ``legend=True`` at
    the default size, a number as the font size, a mapping as :meth:`~matplotlib.axes.Axes.legend`'s arguments."""
    ax.set(**props)
    if legend is True:
        ax.legend()
    elif isinstance(legend, Mapping):
        ax.legend(**legend)
    elif legend:
        ax.legend(fontsize=legend)


def curve(
    ax: Axes, x: ArrayLike, y: ArrayLike, err: ArrayLike | None = None, *, i: int = 0, fmt: str = "o-", **kw: Any
) -> None:
    """A measured curve in the palette's ``i``-th colour: ``fmt`` markers (joined by a line unless ``fmt`` says
    otherwise) with error bars ``err`` (one half-width per point, or ``(below, above)`` rows as from
    :func:`ci_err`); ``kw`` goes to :meth:`~matplotlib.axes.Axes.errorbar` (``label``, ``ms``, ``mfc``, ``color``
    in place of the palette's, …)."""
    yerr = None if err is None else np.asarray(err, float)
    ax.errorbar(np.asarray(x), np.asarray(y, float), yerr=yerr, fmt=fmt, **({"color": color(i), "capsize": 2} | kw))


def ci_err(frame: pd.DataFrame, mid: str, lo: str, hi: str) -> np.ndarray:
    """Asymmetric error bars ``(2, n)``: distances from ``frame[mid]`` down to ``frame[lo]`` and up to
    ``frame[hi]`` (a confidence interval around an estimate)."""
    return np.vstack([frame[mid] - frame[lo], frame[hi] - frame[mid]])


def paper_values(
    ax: Axes,
    values: Mapping[Any, Any],
    *,
    col: int | None = None,
    keys: Sequence[Any] | None = None,
    fmt: str = "x",
    color: str = "k",
    **kw: Any,
) -> None:
    """A paper's values ``{x: y}`` at ``keys`` (every key, sorted, by default) — ``y[col]`` where each value is a
    row of several — as black crosses, or as ``fmt`` in ``color`` (the authors' curves: ``fmt="--"``); ``kw``
    goes to :meth:`~matplotlib.axes.Axes.plot` (``label``, ``ms``, …). Crosses are drawn at size 8."""
    xs = sorted(values) if keys is None else list(keys)
    ys = [values[x] if col is None else values[x][col] for x in xs]
    ax.plot(xs, ys, fmt, color=color, **({"ms": 8} | kw))
