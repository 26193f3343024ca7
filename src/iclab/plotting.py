"""One figure style for every experiment: colour-blind-safe (Okabe–Ito) palette, print-readable sizes.

Sits below the experiments and the report (it imports nothing from iclab), so both draw in the same style.

Convention: theory is drawn as lines, simulation as markers with error bars (:func:`theory_vs_sim`).
Every figure is saved as PNG with its data as CSV beside it (:func:`save_figure`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from numpy.typing import ArrayLike  # noqa: E402

from iclab.files import atomic_write  # noqa: E402

__all__ = ["PALETTE", "MARKERS", "new_figure", "save_figure", "theory_vs_sim", "color", "log_ticks"]

# Okabe & Ito (2008) colour-universal-design palette.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")

_RC = {
    "figure.dpi": 110,
    "savefig.dpi": 130,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.8,
    "lines.markersize": 5,
}


def color(i: int) -> str:
    """The ``i``-th colour of the colour-blind-safe palette (cycling)."""
    return PALETTE[i % len(PALETTE)]


def new_figure(
    ncols: int = 1, nrows: int = 1, width: float = 4.2, height: float = 3.3, **kw: Any
) -> tuple[Figure, Any]:
    """``(fig, axes)`` in the house style; ``axes`` is a flat array when more than one panel."""
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False, **kw)
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)
    flat = axes.flatten()
    return fig, (flat[0] if flat.size == 1 else flat)


def save_figure(fig: Figure, path: str | Path, data: pd.DataFrame | Mapping[str, Sequence] | None = None) -> Path:
    """Save ``fig`` as ``path`` (.png) and ``data`` as CSV beside it (columns of a mapping may differ in length:
    the shorter end in blanks); close the figure; return the PNG path."""
    path = Path(path).with_suffix(".png")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    with atomic_write(path) as tmp:  # a crash or a full disk leaves the old figure or none, never half of one
        fig.savefig(tmp, format="png")
    plt.close(fig)
    if data is not None:
        if not isinstance(data, pd.DataFrame):
            data = pd.DataFrame({k: v if pd.api.types.is_scalar(v) else pd.Series(v) for k, v in dict(data).items()})
        with atomic_write(path.with_suffix(".csv")) as tmp:
            data.to_csv(tmp, index=False)
    return path


def theory_vs_sim(
    ax: Axes,
    x: ArrayLike,
    theory: ArrayLike | None = None,
    sim: ArrayLike | None = None,
    sim_err: ArrayLike | None = None,
    *,
    label: str,
    i: int = 0,
    x_theory: ArrayLike | None = None,
) -> None:
    """Theory as a line and simulation as markers with error bars, same colour, one legend entry each."""
    c, m = color(i), MARKERS[i % len(MARKERS)]
    if theory is not None:
        ax.plot(
            np.asarray(x if x_theory is None else x_theory), np.asarray(theory), "-", color=c, label=f"{label} (theory)"
        )
    if sim is not None:
        ax.errorbar(
            np.asarray(x),
            np.asarray(sim),
            yerr=None if sim_err is None else np.asarray(sim_err),
            fmt=m,
            color=c,
            mfc="white" if theory is not None else c,
            capsize=2,
            label=f"{label} (sim.)" if theory is not None else label,
        )


def log_ticks(ax: Axes, values: Sequence[float]) -> None:
    """A log-scale x axis labelled at the measured ``values`` only (a temperature grid, the test sizes; no minor
    labels)."""
    from matplotlib.ticker import NullFormatter

    ax.set_xscale("log")
    ax.set_xticks(list(values))
    ax.set_xticklabels([f"{v:g}" for v in values], fontsize=7)
    ax.xaxis.set_minor_formatter(NullFormatter())
