"""Verdicts of ``temperature-gpt2-regression`` (arXiv:2511.01292 §5 footnote, docs/papers/temperature.md §5.2) on
made-up result tables, and the cross-fitted gain that replaces "the best τ beats τ = 1" (which a model whose error
ignores τ passes by chance)."""

import numpy as np
import pandas as pd
import pytest

from iclab.experiments import get_experiment
from iclab.claims._judge import judge_run
from iclab.experiments.temperature.gpt2 import claims as C
from iclab.experiments.temperature.gpt2.cells import cross_fitted_gain, tau_statistics
from iclab.stats import AGREES, DISAGREES, NOT_JUDGED

EXP = get_experiment("temperature-gpt2-regression")
TAUS = (0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0)


def _row(shift, seed, *, err1=0.3, gain=0.0, best=1.0, boot=None):
    """One (shift, trained model) cell with the columns the comparisons read."""
    boot = [best] * 200 if boot is None else boot
    return {
        "part": "error_vs_tau",
        "shift": shift,
        "train_seed": seed,
        "err_tau1": err1,
        "err_tau1_se": 0.003,
        "cf_gain_all": gain,
        "cf_gain_all_se": 0.001,
        "cf_taus_all": [best, best],
        "best_err_all": err1 - gain,
        "best_tau_all": best,
        "best_tau_all_boot": boot,
        "theory_tau": 1.5,
        "theory_gain_all": gain,
    }


def _c_ratio() -> float:
    """c = Tr(AB) + σ² under the mean shift over c without it (each cell normalises by its own c)."""
    from iclab.experiments.temperature.gpt2.shifts import shift_distribution, zero_predictor_error

    cfg = EXP.config("quick")
    return zero_predictor_error(shift_distribution(cfg, "mean_x=1")) / zero_predictor_error(
        shift_distribution(cfg, "none")
    )


_MEAN_C_RATIO = _c_ratio()


def _table(effect: bool, seeds: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for s in range(seeds):
        if effect:  # covariance hurts, τ helps under every shift, the best τ grows, the mean shift is harmless
            spec = {
                "none": (0.30, 0.0, 1.0),
                "cov_x*2": (0.60, 0.05, 2.0),
                "cov_x*0.5": (0.35, 0.02, 0.7),
                "cov_w*3": (0.31, 0.01, 1.4),
                "noise=1": (0.40, 0.02, 1.4),
                "noise=2": (0.55, 0.05, 2.8),
                # the raw error unchanged: the shifted cell's error normalised by its own, larger c
                "mean_x=1": (0.301 / _MEAN_C_RATIO, 0.0, 1.0),
            }
        else:  # errors that ignore τ and the shift, except a mean shift that hurts
            spec = {k: (0.30, 0.0, 1.0) for k in ("none", "cov_x*2", "cov_x*0.5", "cov_w*3", "noise=1", "noise=2")}
            spec["mean_x=1"] = (0.45, 0.0, 1.0)
        for shift, (err1, gain, best) in spec.items():
            boot = (
                list(rng.choice([best / 1.4, best, best * 1.4], size=200, p=[0.1, 0.8, 0.1]))
                if not effect
                else [best] * 200
            )
            jitter = rng.normal(0, 0.002, size=2) * (seeds > 1)  # model-to-model spread
            rows.append(_row(shift, s, err1=err1 + jitter[0], gain=gain + jitter[1], best=best, boot=boot))
    return pd.DataFrame(rows)


def _verdicts(df, cfg=None, failed=None):
    cfg = EXP.config("quick") if cfg is None else cfg
    rows, errors = judge_run(
        paper="temperature",
        experiment=EXP.name,
        config=cfg,
        results=df,
        failed=pd.DataFrame() if failed is None else failed,
        claims=C.claims,
        compare=get_experiment("temperature-gpt2-regression").compare,
    )
    assert not errors
    return {r.id: r for r in rows}


@pytest.mark.parametrize("seeds", [1, 3])
def test_effects_agree_and_null_effects_never_do(seeds):
    yes, no = _verdicts(_table(True, seeds)), _verdicts(_table(False, seeds))
    assert len(yes) == len(C.claims(EXP.config("quick"))) == 9
    assert {k: v.verdict for k, v in yes.items() if v.verdict != AGREES} == {}
    assert all(v.verdict != AGREES for v in no.values()), [k for k, v in no.items() if v.verdict == AGREES]
    for shift in C.HELPED_SHIFTS:  # a model whose error ignores τ: "τ helps" is absent, not a tie that passes
        assert no[f"gpt2/tau-helps/{shift}"].verdict == (DISAGREES if seeds == 1 else NOT_JUDGED)
    assert no["gpt2/mean-shift-harmless"].verdict == DISAGREES
    if seeds == 3:
        assert "across 3 models" in yes["gpt2/tau-helps/cov_x*2"].statistic


def test_best_tau_on_the_grid_edge_is_not_judged():
    df = _table(True)
    df.loc[df["shift"] == "noise=2", "best_tau_all"] = 4.0  # the largest τ of the quick grid
    v = _verdicts(df)["gpt2/best-tau-grows/noise=2"]
    assert v.verdict == NOT_JUDGED and "edge of the grid" in v.reason


def test_missing_shift_is_not_measured():
    df = _table(True)
    by = _verdicts(df[df["shift"] != "cov_w*3"], failed=pd.DataFrame({"_error": ["boom"]}))
    assert by["gpt2/tau-helps/cov_w*3"].verdict == NOT_JUDGED and "not measured" in by["gpt2/tau-helps/cov_w*3"].reason


def test_cross_fitting_removes_the_selection_bias():
    """Errors that do not depend on τ (independent noise per τ): the in-sample best τ 'beats' τ = 1 by chance, the
    cross-fitted gain does not."""
    rng = np.random.default_rng(1)
    in_sample, cross = [], []
    for _ in range(200):
        err = rng.chisquare(1, size=(7, 400))  # (n_tau, prompts), τ-free
        in_sample.append(err[2].mean() - err.mean(1).min())
        cross.append(cross_fitted_gain(err, 2)[0])
    assert np.mean(in_sample) > 0.05  # biased upward
    assert abs(np.mean(cross)) < 3 * np.std(cross) / np.sqrt(len(cross))  # unbiased


def test_identical_errors_give_zero_gain():
    err = np.tile(np.linspace(1.0, 2.0, 50), (len(TAUS), 1))  # error ignores τ exactly
    stats = tau_statistics(err, TAUS, 1.5, 0, "all")
    assert stats["cf_gain_all"] == 0.0 and stats["theory_gain_all"] == 0.0


def test_re_tuning_that_picks_tau_1_is_not_judged_without_uncertainty():
    """Both halves pick τ = 1: the per-prompt differences are exactly 0 (SE 0). A zero-width interval is never a
    verdict (it used to disagree here, and a NaN SE made one that agreed): "not judged: no uncertainty"."""
    df = _table(True)
    sel = df["shift"] == "cov_x*2"
    df.loc[sel, "cf_gain_all"], df.loc[sel, "cf_gain_all_se"] = 0.0, 0.0
    v = _verdicts(df)["gpt2/tau-helps/cov_x*2"]
    assert v.verdict == NOT_JUDGED and "no uncertainty" in v.reason


def test_mean_shift_is_judged_on_the_raw_error():
    """A normalised error that stays put while c doubles is a doubled raw error: not harmless."""
    df = _table(True)
    df.loc[df["shift"] == "mean_x=1", "err_tau1"] = 0.301  # G/c unchanged, so G itself grew by the c ratio
    assert _MEAN_C_RATIO > 1.5
    assert _verdicts(df)["gpt2/mean-shift-harmless"].verdict == "disagrees"
