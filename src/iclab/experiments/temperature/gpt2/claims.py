"""The claims of ``temperature-gpt2-regression`` as records: do the one-layer trends of
arXiv:2511.01292 (Demir & Doğan; the Cases of §4.2, τ_opt of Thm 4.3, Figs. 1b, 2c) carry over to a trained GPT-2,
as the paper's §5 footnote (v1 Fig. 6) says? (docs/papers/temperature.md §5.2, §6.8).

Every claim is an effect judged on the same test prompts for every τ: "re-tuning τ helps under shift X" is the
cross-fitted paired gain over τ = 1 (τ picked on one half of the prompts, scored on the other) with its confidence
interval, so a model whose error ignores τ never passes. The claims are :data:`RECORDS`, read by the generic judge
(:mod:`iclab.claims._records`); this package keeps only its own statistics: :data:`models_or_prompts` (the
shared rule: with three or more trained models the uncertainty is the spread across them, Student's t; with fewer,
the prompt-level standard error of these models), :func:`log_best_tau_interval` (the best-τ interval, floored at
half a grid step), :func:`unshifted_c_units` (the mean shift judged on the raw error)
and the notes put before each statistic; the best-τ claims declare the grid-edge gate
(:class:`~iclab.claims._gates.GridEdge`: a best τ on the edge of ``taus`` is no argmin). The paper gives no size
or training details for its GPT-2, so no claim carries ``paper_settings``.
"""

from __future__ import annotations

import math

import numpy as np

from iclab.claims import (
    across_units_or,
    BASE,
    ClaimRecord,
    declared,
    Estimate,
    GridEdge,
    lost_units,
    Measure,
    measured_as,
    Rule,
    Sample,
)
from iclab.experiments.temperature.gpt2.config import TemperatureGPT2Config
from iclab.experiments.temperature.gpt2.shifts import shift_distribution, zero_predictor_error
from iclab.stats import grid_floor_ci, quantile

__all__ = ["RECORDS", "claims", "HELPED_SHIFTS"]

PAPER = "arXiv:2511.01292"
SOURCE = f"{PAPER}, §5 footnote (v1 Fig. 6: the one-layer trends carry over to GPT-2)"
#: shifts under which the one-layer theory says re-tuning τ helps (§4.2 Cases I(ii), II, III), with the case
HELPED_SHIFTS = {
    "cov_x*2": "Case I(ii), Fig. 1b",
    "cov_x*0.5": "Case I(ii)",
    "cov_w*3": "Case II, Fig. 1c",
    "noise=1": "Case III, Fig. 2b",
    "noise=2": "Case III, Fig. 2b",
}
REL_SMALLEST = 0.01  # smallest gain of interest: 1 % of the error at τ = 1
LOG_SMALLEST = math.log(1.1)  # smallest change of the best τ of interest: a factor 1.1
TOL_MEAN = 0.10  # "harmless": the error at τ = 1 within 10 %
MODEL = ("train_seed",)  # the unit of replication: one trained model


def _cells(shift: str) -> dict:
    return {"part": "error_vs_tau", "shift": shift}


# --- the package's own statistics (named, pure; referenced from the records) ------------------------------------


#: the mean over trained models: when the config trains three or more the SE across them (Student t, k − 1 dof),
#: with fewer the prompt-level SE of these models, their ``se_column``; a trained model without a result: not judged
#: (:func:`iclab.claims._statistics.across_units_or`)
models_or_prompts = across_units_or(unit="model", planned="train_seeds")


def log_best_tau_interval(cfg, s: Sample) -> Estimate:
    """log best τ under the shift minus without: estimate and 95 % interval (over models when the config trains ≥ 3,
    else a bootstrap over prompts; a trained model without a result: refused, as :data:`models_or_prompts`). Grid-best
    τ values are discrete: models (or bootstrap draws) that all pick the same grid points have zero spread, so either
    interval is at least ± half the grid's smallest step in log τ."""
    per_model, k = s.values, len(s.values)
    if k < cfg.train_seeds:
        return Estimate(math.nan, refused=lost_units(k, cfg.train_seeds, "model"))
    est = float(per_model.mean())
    grid = np.log(cfg.taus)
    if cfg.train_seeds >= 3:
        half = quantile(0.95, k - 1) * per_model.std(ddof=1) / math.sqrt(k)
        ci = grid_floor_ci(est, est - half, est + half, grid)
        return Estimate(est, ci=ci, how=f"t interval across {k} models (at least ± half a grid step)")
    boot = np.mean(
        [
            np.log(np.asarray(s.rows.loc[u, "best_tau_all_boot"]) / np.asarray(s.base.loc[u, "best_tau_all_boot"]))
            for u in s.units
        ],
        axis=0,
    )  # (n_boot,): the two cells' own prompts, resampled with the same bootstrap indices
    ci = grid_floor_ci(est, float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975)), grid)
    return Estimate(est, ci=ci, how="bootstrap over prompts (at least ± half a grid step)")


def unshifted_c_units(cfg) -> float:
    """c = Tr(AB) + σ² under the mean shift over c without it: the shifted cell's error (normalised by its own,
    larger c) times this is in units of the unshifted c — the raw error, which the shifted c would hide."""
    return zero_predictor_error(shift_distribution(cfg, "mean_x=1")) / zero_predictor_error(
        shift_distribution(cfg, "none")
    )


_cov_note = measured_as("err(τ=1) {rows[err_tau1]:.4f} vs {base[err_tau1]:.4f}")


def _tau_helps_note(cfg, s: Sample, est: Estimate) -> str:
    g, err1 = s.rows, float(s.rows["err_tau1"].mean())
    picked = ", ".join(f"{t:g}" for taus in g["cf_taus_all"] for t in taus)
    return (
        f"gain {est.value / err1:+.1%} of err(τ=1) {err1:.4f}; grid best {g['best_err_all'].mean():.4f} at τ "
        f"{', '.join(f'{t:g}' for t in g['best_tau_all'])}; cross-fitted τ {picked}; one-layer τ_opt "
        f"{g['theory_tau'].iloc[0]:.3g} (paired gain there {g['theory_gain_all'].mean():+.4f})"
    )


def _best_tau_note(cfg, s: Sample, est: Estimate) -> str:
    best = {"none": s.base["best_tau_all"], s.rows["shift"].iloc[0]: s.rows["best_tau_all"]}
    text = ", ".join(f"{name}: {', '.join(f'{t:g}' for t in b)}" for name, b in best.items())
    return f"best τ {text}; ratio {math.exp(est.value):.3g}"


_mean_measured = measured_as("{a:.4f} vs {b:.4f}")
_mean_note = measured_as("err(τ=1) in units of the unshifted c: {a:.4f} (shifted) vs {b:.4f}")


# --- the records ------------------------------------------------------------------------------------------------

RECORDS: tuple[ClaimRecord, ...] = (
    ClaimRecord(
        id="gpt2/cov-shift-harms",
        claim="An input-covariance shift Σx ×2 raises the trained GPT-2's error at τ = 1",
        source=f"{SOURCE}; §4.2 Case I(ii)",
        kind="effect direction",
        quantity="per trained model, the normalised error at τ = 1 under Σx ×2 (independent test prompts)",
        headline=True,
        runs_if={"shifts": ("none", "cov_x*2")},
        measure=Measure(
            _cells("cov_x*2"),
            "err_tau1",
            MODEL,
            se_column="err_tau1_se",
            base=_cells("none"),
            combine=models_or_prompts,
            note=_cov_note,
        ),
        rule=Rule("direction", smallest=REL_SMALLEST, relative_to="err_tau1", n="n_test"),
    ),
    *(
        ClaimRecord(
            id=f"gpt2/tau-helps/{shift}",
            claim="Re-tuning the attention temperature (all layers) lowers the "
            f"trained GPT-2's error under the shift {shift}",
            source=f"{SOURCE}; §4.2 {case}",
            kind="effect direction",
            quantity="per trained model, the cross-fitted paired gain err(τ = 1) − err(τ picked on the other half "
            "of the prompts)",
            headline=shift == "cov_x*2",
            runs_if={"shifts": (shift,)},
            measure=Measure(
                _cells(shift),
                "cf_gain_all",
                MODEL,
                se_column="cf_gain_all_se",
                combine=models_or_prompts,
                note=_tau_helps_note,
            ),
            # a NaN or zero SE (both halves picked τ = 1) is "not judged: no uncertainty" (iclab.stats.refusal)
            rule=Rule("direction", smallest=REL_SMALLEST, relative_to="err_tau1", n="n_test"),
        )
        for shift, case in HELPED_SHIFTS.items()
    ),
    *(
        ClaimRecord(
            id=f"gpt2/best-tau-grows/{shift}",
            claim=f"The trained GPT-2's best temperature grows with the {what}",
            source=f"{SOURCE}; {src}",
            kind="effect direction",
            quantity=f"per trained model, the grid-best τ under {shift} (a factor 1.1 is log 1.1 = 0.0953)",
            runs_if={"shifts": ("none", shift)},
            measure=Measure(
                _cells(shift),
                "best_tau_all",
                MODEL,
                base=_cells("none"),
                contrast="log ratio",
                combine=log_best_tau_interval,
                note=_best_tau_note,
                gates=(GridEdge("best_tau_all", "taus", "best τ"),),  # an argmin on the edge is none
            ),
            rule=Rule("direction", smallest=LOG_SMALLEST, n="n_test", unit=" (log τ)"),
        )
        for shift, what, src in (
            ("noise=2", "test noise (σ 0.1 → 2)", "Fig. 2c"),
            ("cov_x*2", "input covariance (×2)", "§4.5: τ_opt ∝ a"),
        )
    ),
    ClaimRecord(
        id="gpt2/mean-shift-harmless",
        claim="An input-mean shift (μx = 1 per coordinate) leaves the trained GPT-2's error at τ = 1 unchanged",
        source=f"{SOURCE}; Remark 3.4, §4.2 Case I(i)",
        kind="theory vs simulation",
        quantity="per trained model, the error at τ = 1 under the mean shift in units of the unshifted "
        "c = Tr(AB) + σ² (the shifted c grows with μx μxᵀ)",
        paper_value="unchanged",
        runs_if={"shifts": ("none", "mean_x=1")},
        measure=Measure(
            _cells("mean_x=1"),
            "err_tau1",
            MODEL,
            se_column="err_tau1_se",
            base=_cells("none"),
            scale=unshifted_c_units,
            combine=models_or_prompts,
            note=_mean_note,
            measured=_mean_measured,
        ),
        rule=Rule("equivalence", rel_tol=TOL_MEAN, target=BASE, n="n_test", against="the unshifted error"),
    ),
)


def claims(cfg: TemperatureGPT2Config) -> list[ClaimRecord]:
    """The claims judged for the configured shifts (fixed before the run)."""
    return declared(RECORDS, cfg)
