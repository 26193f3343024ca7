"""Row-level calibration of an every-cell claim (issue 43, item 2; :mod:`iclab.claims._calibrate_rows` for the
other kinds): the claim agrees when every cell's 95 % interval lies within ±ε of the cell's target
(:func:`iclab.stats.judge_every_cell`), so its least favourable truth puts one cell exactly at the edge of its margin,
target·(1 ± ε), and every other cell at its target. Each draw resamples every cell's own units with replacement and
shifts them so that the cell's combined estimate sits at its truth (a cell of one unit: its value drawn from a normal
law at the truth with its own SE), then judges the cells through the run's code path
(:func:`~iclab.claims._every_cell.judge_cell_parts` and the record's gates). Up to :data:`MAX_EDGE_CELLS` cells, picked
at random, are each put at both edges; the worst rate is reported, in the three settings of the other kinds (all
units; one unit lost; one cell failed, where a claim that names its cells is "not measured"), each over fewer lost
units and failed cells than the other kinds (every cell's sample is rebuilt per table).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from iclab.claims._cells import cell_mask
from iclab.claims._every_cell import every_cell_parts, judge_cell_parts
from iclab.claims._records import ClaimRecord, Sample, _gated, _sample
from iclab.claims._resample import _Units, centre, follows_shift
from iclab.stats import AGREES, Verdict, quantile

__all__ = ["MAX_EDGE_CELLS", "every_cell_rates", "failed_tables", "lost_tables", "unit_sd"]

#: cells put at the edge of their margin per claim (each at both edges)
MAX_EDGE_CELLS = 3
_NO_OFFSET = {"judge": "every cell"}  # centre()'s record: the truth is the cell's estimate itself

Parts = Sequence[tuple[str, Sample, float]]


def lost_tables(rec: ClaimRecord, rows: pd.DataFrame, sample: Sample, rng, most: int) -> list[pd.DataFrame]:
    """``rows`` with every row of one of the sample's units removed (a model, a seed, a question group lost
    everywhere), for up to ``most`` units picked at random."""
    unit = [c for c in rec.measure.unit if c in rows.columns]
    keys = sample.rows.index.to_frame(index=False)[unit].drop_duplicates() if unit else pd.DataFrame()
    picks = np.arange(len(keys))
    if len(picks) > most:
        picks = np.sort(rng.choice(picks, most, replace=False))
    return [rows[~np.asarray(cell_mask(rows, keys.iloc[i].to_dict()), dtype=bool)] for i in picks]


def failed_tables(rec: ClaimRecord, config: Any, rows: pd.DataFrame, rng, most: int) -> list[pd.DataFrame]:
    """``rows`` with one row of the claim's cells removed (the selection, the baseline and every cell
    ``Measure.cells`` names), for up to ``most`` rows picked at random."""
    m = rec.measure
    mask = np.zeros(len(rows), dtype=bool)
    for w in m.selections() + m.named_cells(config):
        mask |= np.asarray(cell_mask(rows, w), dtype=bool)
    positions = np.flatnonzero(mask)
    if len(positions) > most:
        positions = np.sort(rng.choice(positions, most, replace=False))
    return [rows.iloc[np.delete(np.arange(len(rows)), p)] for p in positions]


def unit_sd(rec: ClaimRecord, config: Any, s: Sample) -> float:
    """The SE a one-unit sample's estimate states (its combine rule's SE, from the unit's own spread, else its
    interval's half-width / 1.96), or 0."""
    est = rec.measure.combine(config, s)
    if est.refused:
        return 0.0
    if est.se is not None and np.isfinite(est.se):
        return float(est.se)
    if est.ci is not None:
        return abs(float(est.ci[1]) - float(est.ci[0])) / (2 * quantile(0.95))
    return 0.0


def _cells_of(rec, config, rows, planned) -> tuple[Sample, Parts] | Verdict:
    sample = _sample(rec, config, rows, planned)
    if isinstance(sample, Verdict):
        return sample
    parts = every_cell_parts(rec, config, rows, sample)
    return parts if isinstance(parts, Verdict) else (sample, parts)


def every_cell_rates(
    rec: ClaimRecord, config: Any, rows: pd.DataFrame, planned, screens: Mapping[str, Verdict], draws: int, rng,
    most: int,
) -> tuple[str, dict[str, float], int] | str:  # fmt: skip
    """``(the worst truth, its rate of "agrees" per setting, the units)`` of an every-cell record, or why it is not
    simulated (no sample; a cell whose combine rule does not follow a shift; a one-unit cell without an SE)."""
    whole = _cells_of(rec, config, rows, planned)
    if isinstance(whole, Verdict):
        return f"no sample: {whole.reason}"
    sample, parts = whole
    for label, sub, _ in parts:
        if not follows_shift(rec, config, sub):
            return f"its combine rule reads whole rows in cell {label}: its estimate does not follow a shift"
        if len(sub.values) == 1 and not unit_sd(rec, config, sub) > 0:
            return f"cell {label} is one unit without an uncertainty of its own: nothing to draw"
    settings = {
        "all units": [whole],
        "one unit lost": [_cells_of(rec, config, t, planned) for t in lost_tables(rec, rows, sample, rng, most)],
        "one cell failed": [_cells_of(rec, config, t, planned) for t in failed_tables(rec, config, rows, rng, most)],
    }
    settings = {k: v or [whole] for k, v in settings.items()}
    edges = rng.choice(len(parts), min(MAX_EDGE_CELLS, len(parts)), replace=False)
    worst: tuple[float, str, dict[str, float]] | None = None
    for c in sorted(int(i) for i in edges):
        for sign in (+1, -1):
            label = f"{parts[c][0]} at {sign * rec.rule.rel_tol:+.3g} of its target, the other cells at theirs"
            rates = {k: _rate(rec, config, v, parts[c][0], sign, screens, draws, rng) for k, v in settings.items()}
            if worst is None or max(rates.values()) > worst[0]:
                worst = (max(rates.values()), label, rates)
    assert worst is not None
    return worst[1], worst[2], sum(len(sub.values) for _, sub, _ in parts)


def _rate(rec, config, options, edge: str, sign: int, screens, draws: int, rng) -> float:
    """The rate of "agrees" over ``draws`` draws, each from one of ``options`` (the cells of the whole table, of a
    table with a unit lost or a cell failed, or the verdict that loss gives): every cell's units resampled and
    centred at its truth, the cell ``edge`` (else the first cell, when that cell was lost) at target·(1 + sign·ε).
    The claim agrees exactly when every cell does (a cell within its tolerance is never wholly outside it), so the
    edge cell is drawn and judged first and the other cells only when it agrees: the same rate, at a fraction of
    the cost on a table of hundreds of cells."""
    agrees, ready = 0, {}
    for _ in range(draws):
        k = int(rng.integers(len(options)))
        option = options[k]
        if isinstance(option, Verdict):
            agrees += option.verdict == AGREES
            continue
        sample, parts = option
        if k not in ready:
            at = next((i for i, (label, _, _) in enumerate(parts) if label == edge), 0)
            ready[k] = at, [_centred(rec, config, sub, target * (1 + sign * rec.rule.rel_tol) if i == at else target)
                            for i, (_, sub, target) in enumerate(parts)]  # fmt: skip
        at, cells = ready[k]
        edge_cell = _draw(parts[at], cells[at], rng)  # the claim agrees only when every cell does: this one first
        try:
            if judge_cell_parts(rec, config, [edge_cell]).verdict != AGREES:
                continue
            drawn = [edge_cell if i == at else _draw(parts[i], cells[i], rng) for i in range(len(parts))]
            v = _gated(judge_cell_parts(rec, config, drawn), rec, config, sample, screens)
        except Exception:  # noqa: BLE001 - a claim whose judging raises is "not judged" in a run too
            continue
        agrees += v.verdict == AGREES
    return agrees / draws


def _draw(part: tuple[str, Sample, float], ready: tuple[_Units, float, float], rng) -> tuple[str, Sample, float]:
    """One cell drawn: its units resampled and moved to its truth (one unit: plus its own SE's noise)."""
    (label, sub, target), (units, delta, sd) = part, ready
    n = len(sub.values)
    noise = float(rng.normal(0.0, sd)) if n == 1 else 0.0
    return label, units.draw(rng.integers(n, size=n), delta + noise), target


def _centred(rec, config, sub: Sample, truth: float) -> tuple[_Units, float, float]:
    """A cell's units ready to draw: the shift that puts its estimate at ``truth`` and, for one unit, its SE."""
    delta = centre(rec, config, sub, truth, _NO_OFFSET)
    sd = unit_sd(rec, config, sub) if len(sub.values) == 1 else 0.0
    return _Units(rec, sub), 0.0 if delta is None else delta, sd
