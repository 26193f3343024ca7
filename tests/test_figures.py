"""The drawing steps the experiments' figure modules share (``experiments/_plot.py``) and what ``save_figure`` and
``log_ticks`` of :mod:`iclab.plotting` do for them: each primitive draws what it says, in the palette's colours."""

from __future__ import annotations

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest

from iclab.experiments._plot import ci_err, curve, panel, paper_values
from iclab.plotting import color, log_ticks, new_figure, save_figure


def _close(fig) -> None:
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_panel_sets_the_properties_and_the_legend():
    fig, ax = new_figure()
    ax.plot([1, 10, 100], [1, 2, 3], label="a")
    panel(ax, xscale="log", ylim=(0, 5), xlabel="n", ylabel="acc", title="t", legend=6)
    assert ax.get_xscale() == "log" and ax.get_ylim() == (0.0, 5.0) and ax.get_title() == "t"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("n", "acc")
    assert ax.get_legend().get_texts()[0].get_fontsize() == 6
    panel(ax, legend={"fontsize": 9, "title": "models"})
    assert ax.get_legend().get_texts()[0].get_fontsize() == 9 and ax.get_legend().get_title().get_text() == "models"
    panel(ax, yscale="log")  # no legend asked: the one drawn stays, none added
    assert ax.get_yscale() == "log" and len(ax.get_legend().get_texts()) == 1
    _close(fig)


def test_curve_draws_markers_and_error_bars_in_the_palette_colour():
    fig, ax = new_figure()
    curve(ax, [1, 2, 3], [1.0, 2.0, 4.0], [0.1, 0.2, 0.3], i=2, label="m")
    (cont,) = ax.containers
    line, caps, (bars,) = cont.lines
    assert mcolors.to_hex(line.get_color()) == color(2).lower() and line.get_marker() == "o"
    assert len(caps) == 2  # capped, below and above
    segs = bars.get_segments()
    assert np.allclose([s[:, 1] for s in segs], [[0.9, 1.1], [1.8, 2.2], [3.7, 4.3]])
    curve(ax, [1], [1.0], color="k", fmt="s", label="k")  # colour given: it wins over the palette
    assert ax.containers[1].lines[0].get_color() == "k"
    _close(fig)


def test_ci_err_gives_the_distances_to_the_interval():
    t = pd.DataFrame({"m": [1.0, 2.0], "lo": [0.5, 1.0], "hi": [1.25, 4.0]})
    assert np.array_equal(ci_err(t, "m", "lo", "hi"), [[0.5, 1.0], [0.25, 2.0]])
    fig, ax = new_figure()
    curve(ax, [1, 2], t["m"], ci_err(t, "m", "lo", "hi"), i=0)
    segs = ax.containers[0].lines[2][0].get_segments()
    assert np.allclose([s[:, 1] for s in segs], [[0.5, 1.25], [1.0, 4.0]])  # asymmetric: the interval itself
    _close(fig)


def test_paper_values_plot_the_papers_numbers_at_their_keys():
    fig, ax = new_figure()
    table = {64: (94.3, 94.5), 16: (98.6, 98.6), 256: (81.3, 82.1)}
    paper_values(ax, table, col=1, fmt="--", color="0.3", label="authors")
    paper_values(ax, {30: 0.0182, 60: 0.145, 90: 0.375}, keys=(30, 60))
    curve_line, crosses = ax.get_lines()
    assert list(curve_line.get_xdata()) == [16, 64, 256] and list(curve_line.get_ydata()) == [98.6, 94.5, 82.1]
    assert curve_line.get_linestyle() == "--" and curve_line.get_label() == "authors"
    assert list(crosses.get_xdata()) == [30, 60] and list(crosses.get_ydata()) == [0.0182, 0.145]
    assert (crosses.get_marker(), crosses.get_color(), crosses.get_markersize()) == ("x", "k", 8)
    _close(fig)


def test_save_figure_pads_columns_of_unequal_length(tmp_path):
    fig, _ = new_figure()
    path = save_figure(fig, tmp_path / "f", {"L": [10, 20, 40], "paper": np.array([0.5]), "H": 2})
    back = pd.read_csv(path.with_suffix(".csv"))
    assert list(back["L"]) == [10, 20, 40] and back["paper"].iloc[0] == 0.5 and back["paper"].iloc[1:].isna().all()
    assert list(back["H"]) == [2, 2, 2]  # a scalar fills its column
    row = pd.Series({"theta": [0, 30], "loss": [0.1, 0.2], "name": "x"})
    path = save_figure(new_figure()[0], tmp_path / "g", row[["theta", "loss"]])  # a results row's list columns
    assert pd.read_csv(path.with_suffix(".csv")).to_dict("list") == {"theta": [0, 30], "loss": [0.1, 0.2]}


@pytest.mark.parametrize("values", [[0.25, 1, 4], [16, 256, 4096]])
def test_log_ticks_label_the_measured_values_only(values):
    fig, ax = new_figure()
    ax.plot(values, [1, 2, 3])
    log_ticks(ax, values)
    assert ax.get_xscale() == "log" and list(ax.get_xticks()) == values
    assert [t.get_text() for t in ax.get_xticklabels()] == [f"{v:g}" for v in values]
    assert not any(t.get_text() for t in ax.xaxis.get_minorticklabels())
    _close(fig)
