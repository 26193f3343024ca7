"""The claims of ``temperature-llm`` as records: arXiv:2511.01292 (Demir & Doğan), §5.2, Fig. 3
(docs/papers/temperature.md §5.3–5.4). The paper reports figures only, so every claim is an effect direction, judged
by the generic judge (:mod:`iclab.claims._records`) on a group-bootstrap interval of one cell (:mod:`.tables`).
τ can only repair what noise breaks: the screen, fixed before the run, is the claim ``noise-hurts`` of each model and
task (noisy demonstrations lower EM at τ = 1 by ``screen_harm``, interval above 0); the other claims of that model and
task declare it as their screen (:class:`~iclab.claims._gates.Screen`), so the judge counts them only when it
agrees."""

from __future__ import annotations

from functools import partial
from itertools import product

import numpy as np
import pandas as pd

from iclab.claims import ClaimRecord, Estimate, Measure, Rule, Sample, Screen
from iclab.experiments.temperature.llm.config import TemperatureLLMConfig
from iclab.experiments.temperature.llm.tables import screen_table, summary_table, trend
from iclab.stats import binary_floor_ci

__all__ = ["claims", "judged_rows", "SMALLEST_GAIN", "SMALLEST_SLOPE"]

SOURCE = "arXiv:2511.01292 §5.2, Fig. 3"
SMALLEST_GAIN = 0.02  # EM: a gain below 2 points is no gain worth the name
SMALLEST_SLOPE = float(np.log(1.25) / 0.8)  # best τ up by 25 % from noise 0 to 0.8
CELL = ("noise_ratio",)  # one row per (part, model, task) and noise ratio: the cell is the replicate
#: id suffix -> the record's texts ({m} model, {t} task, {r} noise ratio, {top} the largest)
TEXTS = {
    "noise-hurts": dict(
        claim="{m}, {t}: noisy demonstrations (noise {top:g}) lower EM at τ = 1",
        source=SOURCE + " (the premise of Fig. 3)",
        quantity="EM(clean) − EM(noisy), the same demonstrations, on {q} screening questions, paired",
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
        quantity="EM gain over τ = 1 of the τ chosen on the other half of the questions, paired per question",
        paper_value="gains (no numbers)",
    ),
    "moment": dict(
        claim="{m}, {t}, noise {top:g}: the moment (spread) rule's τ_ℓ improves EM over τ = 1",
        source=SOURCE + " (rule stated in words; note §5.4)",
        quantity="EM gain over τ = 1 of the spread rule's τ_ℓ, paired per question",
        paper_value="τ from score moments helps",
    ),
}


def judged_rows(cfg: TemperatureLLMConfig, df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with each cell's statistics: the gains ``{heldout,moment}_{gain,lo,hi}``, ``n_questions`` and
    ``best_tau`` of :func:`.tables.summary_table`, and the harm ``harm_{gain,lo,hi}`` and ``questions`` of
    :func:`.tables.screen_table`."""
    df = df.reset_index(drop=True)
    screen, tab = screen_table(cfg, df), summary_table(cfg, df)
    stats = [f"{g}_{s}" for g in ("heldout", "moment") for s in ("gain", "lo", "hi")] + ["n_questions", "best_tau"]
    out = df.join(tab.reindex(columns=stats)).join(
        screen.reindex(columns=["harm_gain", "harm_lo", "harm_hi", "questions"])
    )
    return out


def floored_gain(name: str, n: str, cfg, s: Sample) -> Estimate:
    """The cell's paired EM gain ``name`` (held-out τ, spread rule, or the screen's harm) over ``n`` questions with
    its group-bootstrap interval, at least ±3/n wide (:func:`iclab.stats.binary_floor_ci`: when the chosen τ changes
    no greedy answer the bootstrap has zero width)."""
    r = s.rows.iloc[0]
    est, n = float(r[f"{name}_gain"]), int(r[n])
    return Estimate(est, ci=binary_floor_ci(est, r[f"{name}_lo"], r[f"{name}_hi"], n), n=n)


def log_tau_slope(cfg, s: Sample) -> Estimate:
    """The slope of log(best τ) on the noise ratio over the finished noise cells with its bootstrap interval, floored
    at the grid's resolution (:func:`.tables.trend`); ``n = 0``: more questions need not narrow it (the floor), so a
    "too little power" verdict asks for "a larger sample"."""
    slope, lo, hi, _ = trend(cfg, s.rows.reset_index())
    return Estimate(slope, ci=(lo, hi), n=0)


def noise_cells(cfg) -> list[dict]:
    """The cells the trend needs (``Measure.cells``): every configured noise ratio. A failed one makes the trend
    "not measured: n of N cells", never a slope over the ratios left."""
    return [{"noise_ratio": r} for r in cfg.noise_ratios]


def claims(cfg: TemperatureLLMConfig) -> list[ClaimRecord]:
    """Per model and task: noise hurts (the screen) and the best τ grows with noise; per noisy cell: the held-out τ
    beats τ = 1; at the largest noise ratio: the spread rule's τ_ℓ beats τ = 1."""
    top, out = max(cfg.noise_ratios), []
    gain, slope = Rule("direction", smallest=SMALLEST_GAIN), Rule("direction", smallest=SMALLEST_SLOPE)
    harms = Rule("direction", smallest=max(cfg.screen_harm, SMALLEST_GAIN))  # the screen: fixed before the run
    harm, held = partial(floored_gain, "harm", "questions"), partial(floored_gain, "heldout", "n_questions")
    moment = partial(floored_gain, "moment", "n_questions")
    for m, t in product(cfg.models, cfg.tasks):
        cell, judged = {"part": "noise", "model": m, "task": t}, ()
        rows = []
        if cfg.screen_questions and top > 0:
            rows.append(
                ("noise-hurts", top, Measure({**cell, "part": "screen"}, "harm_gain", CELL, combine=harm), harms)
            )
            judged = (Screen(f"{m}/{t}/noise-hurts", "noisy demonstrations lower EM at τ = 1"),)
        if len(cfg.noise_ratios) >= 2:
            trend_m = Measure(cell, "best_tau", CELL, combine=log_tau_slope, gates=judged, cells=noise_cells)
            rows.append(("trend", top, trend_m, slope))
        for r in (r for r in cfg.noise_ratios if r > 0):
            where = {**cell, "noise_ratio": r}
            rows.append(("gain/{r:g}", r, Measure(where, "heldout_gain", CELL, combine=held, gates=judged), gain))
        if cfg.moment_rule and top > 0:
            where = {**cell, "noise_ratio": top}
            rows.append(("moment", top, Measure(where, "moment_gain", CELL, combine=moment, gates=judged), gain))
        for key, r, measure, rule in rows:
            fill = {"m": m, "t": t, "r": r, "top": top, "q": cfg.screen_questions, "harm": cfg.screen_harm}
            texts = {name: text.format(**fill) for name, text in TEXTS[key].items()}
            cid, headline = f"{m}/{t}/" + key.format(**fill), key == "trend"
            out.append(
                ClaimRecord(cid, kind="effect direction", headline=headline, measure=measure, rule=rule, **texts)
            )
    return out
