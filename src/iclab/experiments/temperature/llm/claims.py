"""The claims of ``temperature-llm`` as records: arXiv:2511.01292 (Demir & Doğan), §5.2, Fig. 3
(docs/papers/temperature.md §5.3–5.4). The paper reports figures only, so every claim is an effect direction, judged
by the generic judge (:mod:`iclab.claims._records`): the gains and the screen's harm on one row per question group
(the unit of replication, :func:`.tables.group_rows`), the trend on the noise cells' best τ.
τ can only repair what noise breaks: the screen, fixed before the run, is the claim ``noise-hurts`` of each model and
task (noisy demonstrations lower EM at τ = 1 by ``screen_harm``, interval above 0); the other claims of that model and
task declare it as their screen (:class:`~iclab.claims._gates.Screen`), so the judge counts them only when it
agrees."""

from __future__ import annotations

import dataclasses
from itertools import product

import numpy as np
import pandas as pd

from iclab.claims import ClaimRecord, Estimate, Measure, Rule, Sample, Screen, binary_units
from iclab.experiments.temperature.llm.config import TemperatureLLMConfig
from iclab.experiments.temperature.llm.tables import GROUP, group_rows, summary_table, trend

__all__ = ["claims", "judged_rows", "SMALLEST_GAIN", "SMALLEST_SLOPE"]

SOURCE = "arXiv:2511.01292 §5.2, Fig. 3"
SMALLEST_GAIN = 0.02  # EM: a gain below 2 points is no gain worth the name
SMALLEST_SLOPE = float(np.log(1.25) / 0.8)  # best τ up by 25 % from noise 0 to 0.8
CELL = ("noise_ratio",)  # the trend's rows: one stored cell per noise ratio (of one part, model and task)
CELL_VIEW = "cell"  # the stored cells among the judged rows; the per-group rows are the view GROUP
#: the combine rule of a per-group EM change (the group is the unit: its questions share demonstrations)
PER_GROUP = binary_units("questions", unit="question group")
#: id suffix -> the record's texts ({m} model, {t} task, {r} noise ratio, {top} the largest)
TEXTS = {
    "noise-hurts": dict(
        claim="{m}, {t}: noisy demonstrations (noise {top:g}) lower EM at τ = 1",
        source=SOURCE + " (the premise of Fig. 3)",
        quantity="per question group, EM(clean) − EM(noisy) on its screening questions (the same demonstrations), "
        "{q} screening questions in all",
        paper_value="EM drops with noise",
        extra="The other claims of this model and task count only when this one agrees (their screen)",
    ),
    "trend": dict(
        claim="{m}, {t}: the best τ grows with the noise ratio",
        source=SOURCE,
        quantity="per noise ratio, the best τ on the grid",
        paper_value="increasing, τ_opt > 1",
    ),
    "gain/{r:g}": dict(
        claim="{m}, {t}, noise {r:g}: tuning τ improves EM over τ = 1",
        source=SOURCE,
        quantity="per question group, the EM gain over τ = 1 of the τ chosen on the other half of the groups",
        paper_value="gains (no numbers)",
    ),
    "moment": dict(
        claim="{m}, {t}, noise {top:g}: the moment (spread) rule's τ_ℓ improves EM over τ = 1",
        source=SOURCE + " (rule stated in words; note §5.4)",
        quantity="per question group, the EM gain over τ = 1 of the spread rule's τ_ℓ",
        paper_value="τ from score moments helps",
    ),
}


def judged_rows(cfg: TemperatureLLMConfig, df: pd.DataFrame) -> pd.DataFrame:
    """The rows the records read: the stored cells (``view`` = ``cell``) with each noise and demonstrations cell's
    ``n_questions`` and ``best_tau`` (:func:`.tables.summary_table`), and one row per demonstration group of every
    cell (``view`` = ``group``, :func:`.tables.group_rows`): the gains and the screen's harm, per group."""
    df = df.reset_index(drop=True)
    stats = summary_table(cfg, df)
    cells = df.join(stats.reindex(columns=["n_questions", "best_tau"])).assign(view=CELL_VIEW)
    groups = group_rows(cfg, df)
    return cells if groups.empty else pd.concat([cells, groups], ignore_index=True)


def log_tau_slope(cfg, s: Sample) -> Estimate:
    """The slope of log(best τ) on the noise ratio over the finished noise cells with its bootstrap interval, floored
    at the grid's resolution (:func:`.tables.trend`); ``n = 0``: more questions need not narrow it (the floor), so a
    "too little power" verdict asks for "a larger sample"."""
    slope, lo, hi, _ = trend(cfg, s.rows.reset_index())
    return Estimate(slope, ci=(lo, hi), n=0)


def _no_trend(cfg, s: Sample, truth: float, rng: np.random.Generator) -> Sample:
    """The noise cells of ``s`` redrawn with no trend (the direction claim's least favourable truth, the row-level
    calibration's :func:`iclab.claims._resample.placed_rate`): every cell's questions are question groups drawn with
    replacement from one noise cell of the run, picked at random, so the cells are exchangeable — each has the same
    true best τ — and the slope on the noise ratio has expectation 0 (the ratios' deviations sum to 0)."""
    if truth != 0.0:
        raise ValueError(f"the trend is placed at no trend only, not at a slope of {truth:g}")
    rows = s.rows.copy()
    src = rows.iloc[int(rng.integers(len(rows)))]
    em, group = np.asarray(src["em"], dtype=float), np.asarray(src["group"])
    members = [np.flatnonzero(group == g) for g in range(int(group.max()) + 1)]
    ems, groups = [], []
    for _ in range(len(rows)):
        picks = rng.integers(len(members), size=len(members))
        ems.append(em[:, np.concatenate([members[g] for g in picks])].tolist())
        groups.append(np.repeat(np.arange(len(picks)), [len(members[g]) for g in picks]).tolist())
    rows["em"] = pd.Series(ems, index=rows.index, dtype=object)
    rows["group"] = pd.Series(groups, index=rows.index, dtype=object)
    return dataclasses.replace(s, rows=rows)


log_tau_slope.at_truth = _no_trend  # type: ignore[attr-defined]


def noise_cells(cfg) -> list[dict]:
    """The cells the trend needs (``Measure.cells``): every configured noise ratio. A failed one makes the trend
    "not measured: n of N cells", never a slope over the ratios left."""
    return [{"noise_ratio": r} for r in cfg.noise_ratios]


def _per_group(cell: dict, column: str, gates: tuple = (), **where) -> Measure:
    """``column`` of the per-group rows of the cells ``cell`` (+ ``where``): the question group is the unit."""
    return Measure({**cell, "view": GROUP, **where}, column, ("group",), combine=PER_GROUP, gates=gates)


def claims(cfg: TemperatureLLMConfig) -> list[ClaimRecord]:
    """Per model and task: noise hurts (the screen) and the best τ grows with noise; per noisy cell: the held-out τ
    beats τ = 1; at the largest noise ratio: the spread rule's τ_ℓ beats τ = 1."""
    top, out = max(cfg.noise_ratios), []
    gain, slope = Rule("direction", smallest=SMALLEST_GAIN), Rule("direction", smallest=SMALLEST_SLOPE)
    harms = Rule("direction", smallest=max(cfg.screen_harm, SMALLEST_GAIN))  # the screen: fixed before the run
    for m, t in product(cfg.models, cfg.tasks):
        cell, judged = {"part": "noise", "model": m, "task": t}, ()
        rows = []
        if cfg.screen_questions and top > 0:
            rows.append(("noise-hurts", top, _per_group(cell, "harm", part="screen"), harms))
            judged = (Screen(f"{m}/{t}/noise-hurts", "noisy demonstrations lower EM at τ = 1"),)
        if len(cfg.noise_ratios) >= 2:
            where = {**cell, "view": CELL_VIEW}
            trend_m = Measure(where, "best_tau", CELL, combine=log_tau_slope, gates=judged, cells=noise_cells)
            rows.append(("trend", top, trend_m, slope))
        for r in (r for r in cfg.noise_ratios if r > 0):
            rows.append(("gain/{r:g}", r, _per_group(cell, "heldout_gain", judged, noise_ratio=r), gain))
        if cfg.moment_rule and top > 0:
            rows.append(("moment", top, _per_group(cell, "moment_gain", judged, noise_ratio=top), gain))
        for key, r, measure, rule in rows:
            fill = {"m": m, "t": t, "r": r, "top": top, "q": cfg.screen_questions, "harm": cfg.screen_harm}
            texts = {name: text.format(**fill) for name, text in TEXTS[key].items()}
            cid, headline = f"{m}/{t}/" + key.format(**fill), key == "trend"
            out.append(
                ClaimRecord(cid, kind="effect direction", headline=headline, measure=measure, rule=rule, **texts)
            )
    return out
