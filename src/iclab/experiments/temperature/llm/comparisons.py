"""Claims and verdicts of ``temperature-llm``: arXiv:2511.01292 (Demir & Doğan), §5.2, Fig. 3
(docs/papers/temperature.md §5.3–5.4). The paper reports figures only, no numbers, so every claim is an effect
direction judged by :func:`iclab.stats.judge_direction` on a group-bootstrap interval (:mod:`.tables`).

The paper's claims are about repairing the harm of noisy demonstrations. Where noise does not lower EM, τ has nothing
to repair, and a "no gain" would say nothing about the paper. So a screen, fixed before the run, decides per model and
task: on questions of a separate split, noisy demonstrations must lower EM at τ = 1 by at least ``screen_harm`` with
the interval above 0 (:func:`.tables.screen_table`); otherwise that model's and task's claims read "not judged"
with the measured harm. The screen's own claim (``noise-hurts``) is the paper's premise and is judged like any other."""

from __future__ import annotations

import numpy as np
import pandas as pd

from iclab.experiments._judge import Claim
from iclab.experiments.temperature.llm.config import TemperatureLLMConfig
from iclab.experiments.temperature.llm.tables import screen_table, summary_table, trend
from iclab.stats import Verdict, binary_floor_ci, judge_direction, not_judged

__all__ = ["claims", "compare", "SMALLEST_GAIN", "SMALLEST_SLOPE"]

SOURCE = "arXiv:2511.01292 §5.2, Fig. 3"
SMALLEST_GAIN = 0.02  # EM: a gain below 2 points is no gain worth the name
SMALLEST_SLOPE = float(np.log(1.25) / 0.8)  # best τ up by 25 % from noise 0 to 0.8


def claims(cfg: TemperatureLLMConfig) -> list[Claim]:
    """Per model and task: best τ grows with noise; per noisy cell: the held-out τ beats τ = 1; per model and task:
    the spread rule τ_ℓ beats τ = 1 at the largest noise ratio."""
    out = []
    top = max(cfg.noise_ratios)
    for m in cfg.models:
        for t in cfg.tasks:
            if cfg.screen_questions and top > 0:
                out.append(
                    Claim(
                        f"{m}/{t}/noise-hurts",
                        f"{m}, {t}: noisy demonstrations (noise {top:g}) lower EM at τ = 1",
                        SOURCE + " (the premise of Fig. 3)",
                        "effect direction",
                        f"EM(clean) − EM(noisy), the same demonstrations, on {cfg.screen_questions} screening "
                        f"questions, paired, group-bootstrap CI (at least ±3/questions wide) > 0 (disagrees: CI < "
                        f"{SMALLEST_GAIN}); the other claims of this model and task are judged only when the harm is "
                        f"≥ {cfg.screen_harm:g} with its CI above 0",
                        "EM drops with noise",
                    )
                )
            if len(cfg.noise_ratios) >= 2:
                out.append(
                    Claim(
                        f"{m}/{t}/trend",
                        f"{m}, {t}: the best τ grows with the noise ratio",
                        SOURCE,
                        "effect direction",
                        "bootstrap CI of the slope of log(best τ) on the noise ratio "
                        f"excludes 0 upward (disagrees: CI below {SMALLEST_SLOPE:.2f})",
                        "increasing, τ_opt > 1",
                        headline=True,
                    )
                )
            for r in cfg.noise_ratios:
                if r > 0:
                    out.append(
                        Claim(
                            f"{m}/{t}/gain/{r:g}",
                            f"{m}, {t}, noise {r:g}: tuning τ improves EM over τ = 1",
                            SOURCE,
                            "effect direction",
                            "EM gain of the τ chosen on the other half of the "
                            f"questions, paired, group-bootstrap CI (at least ±3/questions wide) > 0 (disagrees: "
                            f"CI < {SMALLEST_GAIN})",
                            "gains (no numbers)",
                        )
                    )
            if cfg.moment_rule and top > 0:
                out.append(
                    Claim(
                        f"{m}/{t}/moment",
                        f"{m}, {t}, noise {top:g}: the moment (spread) rule's τ_ℓ improves EM over τ = 1",
                        SOURCE + " (rule stated in words; note §5.4)",
                        "effect direction",
                        f"paired EM gain, group-bootstrap CI (at least ±3/questions wide) > 0 (disagrees: CI < "
                        f"{SMALLEST_GAIN})",
                        "τ from score moments helps",
                    )
                )
    return out


def _gain_verdict(est, lo, hi, n) -> Verdict:
    """EM gain against τ = 1 with its group-bootstrap interval, at least ±3/n wide (:func:`iclab.stats.binary_floor_ci`:
    when the chosen τ changes no greedy answer the bootstrap has zero width)."""
    lo, hi = binary_floor_ci(est, lo, hi, n)
    return judge_direction(est, ci=(lo, hi), smallest=SMALLEST_GAIN, n=n)


def _screened_out(cfg: TemperatureLLMConfig, screen: pd.DataFrame, m: str, t: str) -> str | None:
    """Why model ``m`` on task ``t`` is not judged (the screen failed or did not finish), or None."""
    if not cfg.screen_questions or max(cfg.noise_ratios) == 0:
        return None
    row = screen[(screen["model"] == m) & (screen["task"] == t)] if len(screen) else screen
    if not len(row):
        return f"not measured: the screening cell of {m}, {t} did not finish (it decides whether this is judged)"
    r = row.iloc[0]
    if r["passes"]:
        return None
    return (
        f"noise does not hurt {m} on {t} enough to test this: EM {r['em_clean']:.3f} clean vs {r['em_noisy']:.3f} "
        f"at noise {r['noise_ratio']:g}, harm {r['harm']:+.3f} [{r['harm_lo']:+.3f}, {r['harm_hi']:+.3f}] on "
        f"{r['questions']} screening questions; the rule (fixed before the run) needs ≥ {cfg.screen_harm:g} with "
        "the interval above 0"
    )


def compare(cfg: TemperatureLLMConfig, df: pd.DataFrame) -> dict[str, Verdict]:
    screen = screen_table(cfg, df)
    out: dict[str, Verdict] = {}
    for _, r in screen.iterrows():
        out[f"{r['model']}/{r['task']}/noise-hurts"] = _gain_verdict(
            r["harm"], r["harm_lo"], r["harm_hi"], r["questions"]
        )
    for (m, t), verdicts in _judged_claims(cfg, df).items():
        why = _screened_out(cfg, screen, m, t)
        for key, v in verdicts.items():
            out[key] = not_judged(why, v.measured, v.uncertainty) if why else v
    return out


def _judged_claims(cfg: TemperatureLLMConfig, df: pd.DataFrame) -> dict[tuple[str, str], dict[str, Verdict]]:
    """Per (model, task): the trend, held-out gain and spread-rule verdicts, before the screen."""
    tab = summary_table(cfg, df)
    out: dict[tuple[str, str], dict[str, Verdict]] = {}
    if tab.empty:
        return out
    top = max(cfg.noise_ratios)
    for (m, t), g in tab[tab["part"] == "noise"].groupby(["model", "task"]):
        v = out.setdefault((m, t), {})
        slope, lo, hi, cells = trend(cfg, df[(df["model"] == m) & (df["task"] == t)])
        if len(cfg.noise_ratios) >= 2:
            v[f"{m}/{t}/trend"] = (
                judge_direction(slope, ci=(lo, hi), smallest=SMALLEST_SLOPE)
                if cells >= 2
                else not_judged("fewer than two noise ratios finished")
            )
        for _, r in g.iterrows():
            if r["noise_ratio"] > 0:
                v[f"{m}/{t}/gain/{r['noise_ratio']:g}"] = _gain_verdict(
                    r["heldout_gain"], r["heldout_lo"], r["heldout_hi"], r["n_questions"]
                )
        at_top = g[g["noise_ratio"] == top]
        if cfg.moment_rule and top > 0 and len(at_top) and "moment_gain" in at_top:
            r = at_top.iloc[0]
            v[f"{m}/{t}/moment"] = _gain_verdict(r["moment_gain"], r["moment_lo"], r["moment_hi"], r["n_questions"])
    return out
