"""Verdicts on the declared claims of the ``dispersion`` experiment (arXiv:2410.01104; docs/papers/dispersion.md §6):
one test of :mod:`iclab.stats` per claim of :mod:`iclab.experiments.dispersion.claims`, on the results table.

The units of uncertainty: trained max-retrieval models (seeds) for every max-retrieval and β(H) claim, the pairing
being the same test sets for softmax and adaptive; training seeds (per task) or tasks (pooled) for the CLRS-style
claims; text segments for the real transformers. With few units, intervals use Student's t.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from iclab.experiments._judge import unmeasured
from iclab.experiments.dispersion.claims import (
    BETA_ENTROPIES,
    BETA_MAX_STEP,
    BETA_TOL,
    CLRS_SMALLEST,
    FIG2_SMALLEST,
    ONSET_N,
    ONSET_TOKENS,
    LOOKUP_SMALLEST,
    OOD_PAPER_SIZES,
    RATE_TOL,
    SMALLEST_GAIN,
    SMALLEST_SLOPE,
    TABLE_TOL,
    claims,
)
from iclab.experiments.dispersion.lookup import lookup_summary
from iclab.experiments.dispersion.notes import notes
from iclab.experiments.dispersion.tables import (
    PAPER_TABLE,
    beta_window_per_seed,
    clrs_ood,
    global_heads,
    loglog_slope,
    onset_delta,
    real_tables,
    retrieval_seeds,
)
from iclab.stats import (
    Verdict,
    binary_floor_ci,
    judge_absence,
    judge_direction,
    judge_equivalence,
    judge_value,
    mean_se,
    not_judged,
)
from iclab.theory.dispersion import beta_of_entropy, required_spread

__all__ = ["claims", "compare", "notes", "real_slopes"]


def _say(verdict: Verdict, measured: str) -> Verdict:
    """``verdict`` with a measured value that says what was measured."""
    return dataclasses.replace(verdict, measured=measured)


def _t_direction(values, *, sign: int = +1, smallest: float = 0.0, unit: str = "") -> Verdict:
    """Mean ± SE of ``values`` (one per seed, segment or task) against zero, Student's t."""
    m, se, n = mean_se(values)
    return judge_direction(m, se, sign=sign, smallest=smallest, n=n, dof=n - 1 if n > 1 else None, unit=unit)


def _t_value(values, paper: float, paper_se: float, what: str, tol: float, step: float = 0.0) -> Verdict:
    """Paper value from ``values`` (one per seed): disagrees outside t·√(SE² + paper_se²) of ``paper``, t the
    two-sided 95 % Student-t quantile with n − 1 dof (a band of 2 would misjudge about 18 % of true agreements with
    3 seeds); agrees inside only when that band is within ±``tol`` (:func:`iclab.stats.judge_value`). Values read
    off a grid of ``step`` are resolved only to its rounding error step/√12: the SE is at least that (seeds that
    all pick one grid point have SE 0, which is no uncertainty, not certainty)."""
    m, se, n = mean_se(values)
    se = max(se, step / math.sqrt(12)) if math.isfinite(se) else se
    if n < 2:
        return not_judged(f"not judged: {n} {what} (a mean ± SE needs at least 2)", f"{m:.3g}")
    return judge_value(m, se, paper, paper_se=paper_se, tol=tol, n=n, dof=n - 1, unit="seeds")


def compare(config, df: pd.DataFrame) -> dict[str, Verdict]:
    """Every claim the results can support (the others are "not measured")."""
    return {
        **_retrieval_verdicts(config, df),
        **_beta_verdicts(config, df),
        **_clrs_verdicts(config, df),
        **_real_verdicts(config, df),
        **_lookup_verdicts(df),
        **unmeasured(df, _lookup_cells(config)),
    }


def _lookup_cells(config) -> dict[str, list[dict]]:
    """Each lookup claim's cell: its (task, model) at the largest ``lookup_sizes``; a smaller list never stands in."""
    top = max(config.lookup_sizes, default=0)
    return {
        f"lookup/{t}/{m}": [{"part": "lookup", "task": t, "model": m, "n_pairs": top}]
        for t in config.lookup_tasks
        for m in config.lookup_models
    }


# ---- max retrieval (Fig. 2, the table, Prop. 3.1) ----


def _retrieval_verdicts(config, df: pd.DataFrame) -> dict[str, Verdict]:
    s = retrieval_seeds(df)
    if s is None:
        return {}
    n, k = s["n"], len(s["acc"])
    out: dict[str, Verdict] = {}
    grow = n >= config.train_max
    if grow.sum() >= 2:
        slopes = loglog_slope(n[grow], s["max_coef"][:, grow])  # (seeds,)
        out["fig2/disperses"] = _say(
            _t_direction(slopes, sign=-1, smallest=FIG2_SMALLEST),
            f"slope {np.mean(slopes):+.3f} (max coef. {s['max_coef'][:, grow].mean(0)[0]:.2f}"
            f" → {s['max_coef'][:, grow].mean(0)[-1]:.2f}, n {int(n[grow][0])}–"
            f"{int(n[grow][-1])}, {k} seeds)",
        )
    gain = s["acc_adaptive"] - s["acc"]  # (seeds, sizes) points
    ood = n > config.train_max
    if ood.any():
        g = gain[:, ood].mean(1)
        out["table/gain-ood"] = _say(
            _t_direction(g, smallest=SMALLEST_GAIN, unit=" points"),
            f"{g.mean():+.2f} points over n = {int(n[ood][0])}–{int(n[ood][-1])} ({k} seeds)",
        )
    for size in (16,) + OOD_PAPER_SIZES:
        if size not in n:
            continue
        j = int(np.flatnonzero(n == size)[0])
        ps, pa, _, _ = PAPER_TABLE[size]
        out[f"table/softmax/n={size}"] = _say(
            _t_value(s["acc"][:, j], ps, 0.05, "softmax seed(s)", TABLE_TOL),
            f"{s['acc'][:, j].mean():.1f} % ({k} seeds)",
        )
        if size > 16:
            out[f"table/gain/n={size}"] = _say(
                _t_direction(gain[:, j], smallest=pa - ps, unit=" points"),
                f"{s['acc'][:, j].mean():.1f} → {s['acc_adaptive'][:, j].mean():.1f} % ({gain[:, j].mean():+.2f})",
            )
    allowed = s["allowed_spread"]
    if np.isfinite(allowed).any():
        need = float(required_spread(n.max(), config.sharp_eps))
        out["prop3.1/weights-limit"] = _say(
            _t_direction(np.log(need / allowed)),
            f"allowed {np.nanmean(allowed):.3g} vs required {need:.3g} at n = "
            f"{int(n.max())} (δ_sup {np.mean(s['delta_sup']):.3g})",
        )
    return out


# ---- β(H) refit (Fig. 4 / Fig. 6) ----


def _beta_verdicts(config, df: pd.DataFrame) -> dict[str, Verdict]:
    out: dict[str, Verdict] = {}
    best = {}
    for h in BETA_ENTROPIES:
        b, counts = beta_window_per_seed(config, df, h)
        if not len(b):
            continue
        best[h] = b
        ok = b[np.isfinite(b)]
        cid = f"fig6/beta/H={h:g}"
        if len(ok) < 2:
            out[cid] = not_judged(
                f"not measured: {len(ok)} seed(s) with ≥ 20 fit sets of head entropy within ±0.25 "
                f"nats of {h:g} (sets per seed: {', '.join(str(int(c)) for c in counts)})"
            )
            continue
        out[cid] = _say(_beta_value(config, ok, float(beta_of_entropy(h))), f"β* = {ok.mean():.2f} ({len(ok)} seeds)")
    lo, hi = BETA_ENTROPIES[0], BETA_ENTROPIES[-1]
    if lo in best and hi in best:
        rise = best[hi] - best[lo]
        rise = rise[np.isfinite(rise)]
        out["fig6/beta-rises"] = (
            _say(_t_direction(rise, smallest=2 * config.beta_step), f"{rise.mean():+.2f} ({len(rise)} seeds)")
            if len(rise)
            else not_judged(f"not measured: no seed has fit sets near both {lo:g} and {hi:g} nats")
        )
    return out


def _beta_value(config, best: np.ndarray, paper: float) -> Verdict:
    """β* per seed (``best``) against P(H): the Student-t 95 % CI of the mean (the grid's quantisation adds
    beta_step²/12 per seed) within ``paper ± BETA_TOL`` (an equivalence test, so a β* drawn at random from the grid
    does not agree); not judgeable on a grid coarser than ``BETA_MAX_STEP``."""
    if config.beta_step > BETA_MAX_STEP:
        return not_judged(
            f"not judgeable at this grid: beta_step = {config.beta_step:g} puts fewer than 5 grid points in "
            f"P(H) ± {BETA_TOL:g} (needs ≤ {BETA_MAX_STEP:g})",
            f"{best.mean():.3g}",
        )
    m, se, n = mean_se(best)
    se = math.sqrt(se**2 + config.beta_step**2 / 12 / n)
    return judge_equivalence(m, se, paper, rel_tol=BETA_TOL / paper, n=n, dof=n - 1)


# ---- CLRS-style tasks ----


def _clrs_verdicts(config, df: pd.DataFrame) -> dict[str, Verdict]:
    tab = clrs_ood(config, df)
    out: dict[str, Verdict] = {}
    pooled: dict[str, list[float]] = {"trained": [], "inference-only": []}
    for task, arms in tab.items():
        for cid, a, b in (("trained", "adaptive", "softmax"), ("inference-only", "adaptive", "inference")):
            if a not in arms or b not in arms:
                continue
            seeds = arms[a].index.intersection(arms[b].index)  # paired on the seed, not on the row order
            if not len(seeds):
                continue
            x, y = arms[a][seeds].to_numpy(), arms[b][seeds].to_numpy()
            d = x - y  # (seeds,) points
            pooled[cid].append(float(d.mean()))
            out[f"clrs/{cid}/{task}"] = _say(
                _t_direction(d, smallest=CLRS_SMALLEST, unit=" points"),
                f"{y.mean():.1f} → {x.mean():.1f} % ({d.mean():+.1f}, {len(d)} paired seed(s))",
            )
    for cid, d in pooled.items():
        if d:
            out[f"clrs/{cid}"] = _say(
                _t_direction(d, unit=" points"),
                f"{np.mean(d):+.1f} points averaged over {len(d)} tasks (per task "
                + ", ".join(f"{x:+.1f}" for x in d)
                + ")",
            )
    return out


# ---- real transformers (Thm 2.2, Lemma 2.1) ----


def real_slopes(t: dict) -> np.ndarray:
    """Per text segment: the mean over global heads of the log–log slope of the largest coefficient against n."""
    g = global_heads(t)
    slopes = loglog_slope(t["n"], t["max_coef"][:, g])  # (segments, L_global, H)
    return slopes.reshape(len(slopes), -1).mean(1)


def _real_verdicts(config, df: pd.DataFrame) -> dict[str, Verdict]:
    out: dict[str, Verdict] = {}
    for m, t in real_tables(df).items():
        if "reason" in t:
            for cid in ("thm2.2/disperses", "thm2.2/rate", "lemma2.1/onset"):
                out[f"{cid}/{m}"] = not_judged(f"not measured: the model could not be loaded here ({t['reason']})")
            continue
        slopes = real_slopes(t)
        g = int(global_heads(t).sum() * t["max_coef"].shape[2])
        what = (
            f"slope {slopes.mean():+.3f} ({g} global heads, n {int(t['n'][0])}–{int(t['n'][-1])}, "
            f"{len(slopes)} segments)"
        )
        out[f"thm2.2/disperses/{m}"] = _say(_t_direction(slopes, sign=-1, smallest=SMALLEST_SLOPE), what)
        ms, se, k = mean_se(slopes)
        out[f"thm2.2/rate/{m}"] = _say(
            judge_equivalence(ms, se, -1.0, rel_tol=RATE_TOL, n=k, dof=k - 1 if k > 1 else None), what
        )
        delta = onset_delta(t)
        out[f"lemma2.1/onset/{m}"] = (
            not_judged(
                f"not measured: no context length ≤ {ONSET_N} tokens among the measured n "
                f"({', '.join(str(int(x)) for x in t['n'])}; real_sizes needs one)"
            )
            if delta is None
            else _say(
                _t_direction(math.log(ONSET_TOKENS) - delta),
                f"median δ {delta.mean():.2f} → onset e^δ ≈ {math.exp(delta.mean()):.3g} tokens",
            )
        )
    return out


# ---- key–value lookup on pretrained LMs (inference-only adaptive temperature) ----


def _lookup_verdicts(df: pd.DataFrame) -> dict[str, Verdict]:
    """At each model's largest list size: adaptive − softmax with its two-level bootstrap interval (at least
    ±3/queries wide), judged by :func:`iclab.stats.judge_absence` within ±``LOOKUP_SMALLEST`` (an absence claim on
    both sides: adaptive hurting is a disagreement, not "no gain")."""
    lk = df[df["part"] == "lookup"] if "part" in df else df.iloc[:0]
    if not len(lk):
        return {}
    out: dict[str, Verdict] = {}
    for (t, m), g in lookup_summary(lk).groupby(["task", "model"]):
        r = g.iloc[-1]
        curve = ", ".join(f"{int(x.n_pairs)}: {x.softmax:.2f}→{x.adaptive:.2f}" for x in g.itertuples())
        lo, hi = binary_floor_ci(r["diff"], r["diff_lo"], r["diff_hi"], int(r["queries"]))
        v = judge_absence(r["diff"], (lo, hi), smallest=LOOKUP_SMALLEST, n=int(r["queries"]))
        out[f"lookup/{t}/{m}"] = _say(
            v,
            f"gain {r['diff']:+.3f}, 95 % CI [{lo:+.3f}, {hi:+.3f}] at {int(r['n_pairs'])} "
            f"lines, {int(r['tokens'])} tokens (softmax→adaptive by lines: {curve})",
        )
    return out
