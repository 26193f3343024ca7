"""The judging rules of :mod:`iclab.stats` and :mod:`iclab.claims._judge`, one regression test per defect an
audit found on made-up results tables (issue 21, "What an audit found", bullets 1-4), each fed to the real
experiment's ``compare``, then unit tests of each rule.

1. a paper value agreed whenever its band was wide (t(1) from two seeds, or a spread between W_e draws);
2. a NaN or zero standard error passed (a zero-width interval);
3. duplicated rows counted as independent seeds;
4. another setting was judged silently when the named cells failed.
"""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_verdicts_categorical import CFG as CAT_CFG
from test_verdicts_categorical import synthetic_table
from test_verdicts_dispersion import _lookup, _softmax_at
from test_verdicts_dispersion import _table as dispersion_table
from test_verdicts_multihead import _judge as multihead_judge
from test_verdicts_multihead import _table as multihead_table
from test_verdicts_temperature import _table as temperature_table
from test_verdicts_temperature import _verdicts as temperature_verdicts
from test_verdicts_temperature_gpt2_regression import _table as gpt2_table
from test_verdicts_temperature_gpt2_regression import _verdicts as gpt2_verdicts

from iclab import stats
from iclab.experiments import get_experiment
from iclab.claims._cells import missing_cells, not_measured, one_per_unit
from iclab.claims._judge import downgrade
from iclab.experiments.dispersion.tables import PAPER_TABLE
from iclab.stats import AGREES, DISAGREES, MIN_UNITS, NOT_JUDGED, judge_direction, judge_equivalence, judge_value

categorical_compare, dispersion_compare = (get_experiment(n).compare for n in ("categorical", "dispersion"))

#: the paper preset with the lookup lists that ``lookup/kv/smollm2``'s minimum (fixed from a pilot) asks, at the
#: six softmax seeds of the reference these regressions were found on (the preset has 14 since issue 38)
DISPERSION = get_experiment("dispersion").config("paper").with_overrides({"lookup_lists": 10, "seeds": 6})
SRC = Path(__file__).resolve().parents[1] / "src" / "iclab"


def _old_band_agrees(values, paper: float, paper_se: float) -> bool:
    """What the judge said before the rules: agrees inside ``t(n−1)·√(SE² + paper_se²)``, whatever its width."""
    m, se, n = stats.mean_se(values)
    return abs(m - paper) <= stats.quantile(0.95, n - 1) * math.hypot(se, paper_se)


# ---- 1. a paper value "agrees" whenever its band is wide -------------------------------------------------------


def test_losing_a_softmax_seed_no_longer_turns_disagrees_into_agrees():
    """dispersion ``table/softmax/n=256``: three seeds 2-4 points below the paper disagree; with seed 1 lost, t(1)
    made the band ±12.7 SE and the same claim agreed. Two units are now too few."""
    ps = PAPER_TABLE[256][0]
    values = [ps - 4.0, ps - 3.0, ps - 2.0]
    config, df = _softmax_at(DISPERSION, 256, values)
    assert dispersion_compare(config, df)["table/softmax/n=256"].verdict == DISAGREES
    lost = df[~((df["normaliser"] == "softmax") & (df["seed"] == 1))]
    assert _old_band_agrees([values[0], values[2]], ps, 0.05)  # the old verdict
    v = dispersion_compare(config, lost)["table/softmax/n=256"]
    assert v.verdict == NOT_JUDGED and "too few units" in v.reason, v


def test_losing_a_pooled_seed_no_longer_turns_mu_plus_into_agrees():
    """multihead ``fig2.8/mu-plus-limit`` pools the trained H ≥ 2 models seed by seed (a seed's models share its
    batches): seeds at 3.0, 3.2, 3.1 against 3.45 disagree; without one seed t(1) made 3.0, 3.2 agree. Now not
    judged (too few units)."""
    cfg = get_experiment("multihead").config("full")
    df = multihead_table(True)
    iso = (df["part"] == "iso") & (df["attention"] == "softmax") & (df["H"] >= 2)
    seeded = pd.concat([df[~iso]] + [df[iso].assign(seed=s, diag_mu_plus=mu) for s, mu in enumerate((3.0, 3.2, 3.1))])
    assert multihead_judge(cfg, seeded)["fig2.8/mu-plus-limit"].verdict == DISAGREES
    assert _old_band_agrees([3.0, 3.2], 3.45, 0.05)
    v = multihead_judge(cfg, seeded[~(seeded["H"].ge(2) & seeded["seed"].eq(2) & (seeded["part"] == "iso"))])
    assert v["fig2.8/mu-plus-limit"].verdict == NOT_JUDGED and "too few units" in v["fig2.8/mu-plus-limit"].reason


@pytest.mark.parametrize("ses_away", [5.0, 8.0])
def test_a_categorical_accuracy_5_or_8_se_away_is_not_an_agreement(ses_away):
    """categorical ``acc/L=2048/gd``: one seed × three W_e draws whose difficulty differs by 0.05 make the band
    about 8.6 SE, so means 5 and 8 SE from the paper's 0.718 agreed. The band (±0.13) is wider than the claim's
    ±0.02: too little power; and with one W_e draw lost, too few units."""
    table = synthetic_table(True)
    rows = (table["model"] == "gd") & (table["kernel"] == "softmax") & (table["blocks"] == 2)
    m, se, _ = stats.mean_se(table.loc[rows, "acc"])
    table.loc[rows, "acc"] += 0.718 + ses_away * se - m
    v = categorical_compare(CAT_CFG, table)["acc/L=2048/gd"]
    assert v.verdict == NOT_JUDGED and "too little power" in v.reason, v
    assert f"band ±{stats.quantile(0.95, 2):.3g}" in v.statistic  # the old band, which agreed: t(2)·√(SE² + s_W² …)
    lost = table[table["embedding_seed"] != 44]
    v = categorical_compare(CAT_CFG, lost)["acc/L=2048/gd"]
    assert v.verdict == NOT_JUDGED and "too few units" in v.reason, v


# ---- 2. NaN or zero uncertainty passes ------------------------------------------------------------------------


def test_a_nan_standard_error_is_not_a_zero_width_interval_that_agrees():
    """temperature-gpt2-regression ``gpt2/tau-helps``: a tiny gain with a NaN SE became the interval [est, est] and
    agreed on a table with no effect."""
    df = gpt2_table(False)
    df["cf_gain_all"], df["cf_gain_all_se"] = 1e-3, float("nan")
    by = gpt2_verdicts(df)
    for shift in ("cov_x*2", "cov_x*0.5", "cov_w*3", "noise=1", "noise=2"):
        v = by[f"gpt2/tau-helps/{shift}"]
        assert v.verdict == NOT_JUDGED and "no uncertainty" in v.reason, (shift, v)


def test_the_rms_gap_refuses_a_zero_standard_error():
    """temperature: the RMS-gap equivalence took SE 0 as certainty (a zero-width interval that agreed)."""
    df = temperature_table(True)
    df["tau_opt_mc_se"] = 0.0
    df["G1_se"], df["Gopt_se"] = 0.0, 0.0
    by = temperature_verdicts(df)
    for cid in ("thm4.3-vs-mc-minimiser", "thm4.2-vs-mc/curves-l<d"):
        assert by[cid].verdict == NOT_JUDGED and "no uncertainty" in by[cid].reason, (cid, by[cid])


# ---- 3. duplicated rows count as independent seeds ------------------------------------------------------------


def _verdicts_of(by) -> dict:
    return {k: (v.verdict, v.statistic) for k, v in by.items()}


def test_duplicated_dispersion_rows_are_one_seed():
    """``table/gain/n=4096``: six seeds whose gain interval contains zero; the same rows twice (12 "seeds") gave
    an interval that excluded zero. Every claim is now the same on a doubled table."""
    config = DISPERSION
    df = dispersion_table(config, effect=True)
    j = list(config.test_sizes).index(4096)
    soft = (df["part"] == "retrieval") & (df["normaliser"] == "softmax")
    gains = 0.856 + np.array([-1.5, -1.0, -0.5, 0.5, 1.0, 1.5])  # points: mean 2 SE from zero
    df.loc[soft, "acc_adaptive"] = pd.Series(
        [[a + (g / 100 if i == j else 0.0) for i, a in enumerate(acc)] for acc, g in zip(df.loc[soft, "acc"], gains)],
        index=df.index[soft],
    )
    once = dispersion_compare(config, df)
    twice = dispersion_compare(config, pd.concat([df, df], ignore_index=True))
    assert once["table/gain/n=4096"].verdict != AGREES
    doubled = np.concatenate([gains, gains])
    m, se, n = stats.mean_se(doubled)
    assert judge_direction(m, se, dof=n - 1).verdict == AGREES  # the old verdict, counting each row as a seed
    assert _verdicts_of(twice) == _verdicts_of(once)


def test_duplicated_categorical_replicates_are_one_replicate():
    """The paired merge of ``categorical`` joined a repeated (seed, W_e draw) row with itself: more pairs, a
    smaller SE. A doubled table now gives the same verdicts."""
    t = synthetic_table(True)
    assert _verdicts_of(categorical_compare(CAT_CFG, pd.concat([t, t], ignore_index=True))) == _verdicts_of(
        categorical_compare(CAT_CFG, t)
    )


def test_duplicated_gpt2_rows_no_longer_make_compare_raise():
    """temperature-gpt2-regression: duplicated rows made ``compare`` raise (a non-unique seed index) and all 9
    claims read "not judged"."""
    df = gpt2_table(True, seeds=3)
    once = gpt2_verdicts(df)  # asserts judge_run met no error
    twice = gpt2_verdicts(pd.concat([df, df], ignore_index=True))
    assert sum(v.verdict == AGREES for v in twice.values()) == 9
    assert {k: (v.verdict, v.statistic) for k, v in twice.items()} == {
        k: (v.verdict, v.statistic) for k, v in once.items()
    }


# ---- 4. another setting is judged silently when cells fail ----------------------------------------------------


def test_fig2a_is_not_judged_at_another_sigma_when_its_cells_fail():
    """``fig2a`` names σ_test = 5 (the largest noise_sigmas); with those cells failed it was judged at a smaller σ
    and agreed. Now "not measured", naming the σ = 5 cells."""
    df = temperature_table(True)
    noise = df["part"] == "noise"
    df.loc[noise & (df["sigma_test"] == 2.0), "harm1"] = df.loc[noise & (df["sigma_test"] == 5.0), "harm1"].to_numpy()
    assert temperature_verdicts(df)["fig2a-noise-harm-fades"].verdict == AGREES
    v = temperature_verdicts(df[~(noise & (df["sigma_test"] == 5.0))])["fig2a-noise-harm-fades"]
    assert v.verdict == NOT_JUDGED and "not measured" in v.reason and "sigma_test = 5" in v.reason, v
    # the longest l failed: the harm is not read off the longest l that happens to be there
    v = temperature_verdicts(df[~(df["part"].isin(["task"]) & (df["l"] == 200))])["fig1c-task-harm-fades"]
    assert v.verdict == NOT_JUDGED and "l = 200" in v.reason, v


def test_the_lookup_claim_does_not_fall_back_to_a_shorter_list():
    """``lookup/kv/smollm2`` is judged at the largest lookup_sizes (128 lines); with those cells failed it was
    judged at 32 lines. Now "not measured", naming the 128-line cell; the other models are unaffected."""
    config = DISPERSION
    df = pd.DataFrame(_lookup(config, True, np.random.default_rng(0)))
    assert dispersion_compare(config, df)["lookup/kv/smollm2"].verdict == AGREES
    lost = df[~((df["task"] == "kv") & (df["model"] == "smollm2") & (df["n_pairs"] == max(config.lookup_sizes)))]
    by = dispersion_compare(config, lost)
    assert by["lookup/kv/smollm2"].verdict == NOT_JUDGED and "n_pairs = 128" in by["lookup/kv/smollm2"].reason
    assert by["lookup/kv/gemma3-270m"].verdict == AGREES


# ---- the rules, one at a time ---------------------------------------------------------------------------------

finite = st.floats(-1e6, 1e6, allow_nan=False)
no_se = st.sampled_from([float("nan"), 0.0, None, -1.0, float("inf")])


@given(measured=finite, paper=finite, se=no_se, paper_se=st.floats(0, 1e3), dof=st.sampled_from([None, 2, 10]))
def test_no_uncertainty_never_agrees(measured, paper, se, paper_se, dof):
    v = judge_value(measured, se, paper, paper_se=paper_se, dof=dof)
    assert v.verdict == NOT_JUDGED and "no uncertainty" in v.reason
    for w in (judge_direction(measured, se, dof=dof), judge_equivalence(measured, se, paper or 1.0, rel_tol=0.1)):
        assert w.verdict == NOT_JUDGED and "no uncertainty" in w.reason


@given(est=finite)
def test_a_zero_width_or_nan_interval_is_no_uncertainty(est):
    for ci in ((est, est), (float("nan"), est), (est, float("nan"))):
        v = judge_direction(est, ci=ci)
        assert v.verdict == NOT_JUDGED and "no uncertainty" in v.reason


def test_only_an_exact_value_may_have_se_zero():
    assert judge_value(0.41, 0.0, 0.40, paper_se=0.01, exact=True).verdict == AGREES
    assert judge_value(0.41, 0.0, 0.40, paper_se=0.01).verdict == NOT_JUDGED
    assert "no uncertainty" in judge_value(0.41, 0.0, 0.40, exact=True).reason  # nothing has a spread


@given(measured=finite, se=st.floats(1e-6, 1e3), dof=st.floats(0.1, MIN_UNITS - 1.01))
def test_a_student_t_band_from_too_few_units_is_refused(measured, se, dof):
    for v in (
        judge_value(measured, se, 0.0, dof=dof, tol=1e9),
        judge_direction(measured, se, dof=dof),
        judge_equivalence(measured, se, 1.0, rel_tol=0.5, dof=dof),
    ):
        assert v.verdict == NOT_JUDGED and "too few units" in v.reason
    three = judge_value(0.0, se, 0.0, dof=MIN_UNITS - 1, tol=1e9)  # three units may disagree, not agree: t(2)
    assert three.verdict == NOT_JUDGED and "too few units to agree" in three.reason  # lets 5 SE off agree 28 %
    assert judge_value(10 * se, se, 0.0, dof=MIN_UNITS - 1, tol=1e9).verdict == DISAGREES
    assert judge_value(0.0, se, 0.0, dof=4, tol=1e9).verdict == AGREES  # five units are enough (4.5 %)


@settings(max_examples=200)
@given(
    paper=st.floats(-100, 100),
    offset=st.floats(-10, 10),
    se=st.floats(1e-3, 10),
    paper_se=st.floats(0, 5),
    tol=st.floats(1e-3, 50),
    dof=st.sampled_from([None, 2, 5, 30]),
)
def test_power_rule(paper, offset, se, paper_se, tol, dof):
    """Agrees only when the band around the measured value lies within the tolerance (issue 43: an equivalence at
    the tolerance); outside the band disagrees whatever its width."""
    v = judge_value(paper + offset, se, paper, paper_se=paper_se, tol=tol, dof=dof, n=(dof or 9) + 1)
    k = stats.quantile(0.95, dof) if dof else 2.0
    half = k * math.hypot(se, paper_se)
    if abs(offset) > half * (1 + 1e-9):
        assert v.verdict == DISAGREES
    elif v.verdict == DISAGREES:  # only on the band's edge, where paper + offset − paper rounds past it
        assert abs(offset) >= half * (1 - 1e-9)
    elif v.verdict == AGREES:
        assert abs(offset) + half <= tol * (1 + 1e-9) + 1e-12 and dof != 2
    elif dof == 2 and half <= tol:  # t(2): a band from three units cannot agree (docs/calibration.md)
        assert v.verdict == NOT_JUDGED and "too few units to agree" in v.reason
    else:
        assert v.verdict == NOT_JUDGED and "too little power" in v.reason
        assert abs(offset) + half > tol * (1 - 1e-9) - 1e-12


def test_too_little_power_says_how_many_units_would_decide():
    v = judge_value(0.72, 0.015, 0.718, paper_se=0.003, tol=0.02, n=3, dof=2, unit="seeds")
    assert v.verdict == NOT_JUDGED and "too little power" in v.reason
    needed = int(v.reason.split("about ")[1].split(" seeds")[0].replace(",", ""))
    se = 0.015 * math.sqrt(3 / needed)  # SE shrinks as 1/√n
    assert judge_value(0.72, se, 0.718, paper_se=0.003, tol=0.02, n=needed, dof=needed - 1).verdict == AGREES
    assert (
        judge_value(0.72, 0.015 * math.sqrt(3 / (needed - 1)), 0.718, paper_se=0.003, tol=0.02, dof=needed - 2).verdict
        == NOT_JUDGED
    )
    wide = judge_value(0.72, 0.015, 0.718, paper_se=0.05, tol=0.02, n=3, dof=2)
    assert "no number of units decides" in wide.reason  # the paper's spread alone is wider than the tolerance


def test_a_direction_test_with_an_exact_interval_says_what_its_caller_counted():
    """An exact interval's count (``needs``) replaces the normal approximation's in the "too little power" reason;
    the verdict does not move."""
    approx = judge_direction(0.1, ci=(-0.875, 0.1), n=1, unit=" seeds")
    exact = judge_direction(0.1, ci=(-0.875, 0.1), n=1, needs="at least 36 seeds, every added one matching (now 1)")
    assert approx.verdict == exact.verdict == NOT_JUDGED and "about 96 samples (now 1)" in approx.reason
    assert exact.reason == (
        "too little power: the interval contains zero; deciding needs at least 36 seeds, every added one matching "
        "(now 1)"
    )
    assert {**exact.test_record, "needed": 0} == {**approx.test_record, "needed": 0}  # what rejudge and calibrate read
    assert (exact.test_record["needed"], approx.test_record["needed"]) == (36, 96)  # each count, as data
    assert judge_direction(0.1, ci=(0.01, 0.1), needs="x").verdict == AGREES  # only an undecided test says it


def test_default_tolerance_is_ten_percent_of_the_paper_value():
    assert judge_value(1.0, 0.01, 1.0).verdict == AGREES  # band ±0.02 within ±0.1
    assert judge_value(1.0, 0.06, 1.0).verdict == NOT_JUDGED  # band ±0.12 wider than ±0.1
    assert stats.DEFAULT_REL_TOL == 0.10


@settings(max_examples=50)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.floats(0, 1)), min_size=1, max_size=12))
def test_one_per_unit_counts_a_repeated_row_once(rows):
    df = pd.DataFrame(rows, columns=["seed", "setting", "acc"])
    once = one_per_unit(df, ["setting", "seed"])
    assert len(once) == len(df[["setting", "seed"]].drop_duplicates())
    twice = one_per_unit(pd.concat([df, df], ignore_index=True), ["setting", "seed"])
    assert twice.reset_index(drop=True).equals(once.reset_index(drop=True))


def test_missing_cells_are_named_and_never_substituted():
    df = pd.DataFrame({"part": ["noise"] * 2, "sigma_test": [1.0, 5.0], "l": [10, 10]})
    assert missing_cells(df, [{"part": "noise", "sigma_test": 5.0, "l": 10}]) == []
    gone = missing_cells(df, [{"part": "noise", "sigma_test": 5.0, "l": 200}, {"part": "task", "l": 10}])
    assert gone == ["part = noise, sigma_test = 5.0, l = 200", "part = task, l = 10"]
    v = not_measured(gone)
    assert v.verdict == NOT_JUDGED and "not measured" in v.reason and "l = 200" in v.reason


def test_the_settings_downgrade_exists_once():
    """One rule: a judged verdict becomes "not judged", keeping what the test gave; and no experiment writes it
    itself (the six copies the audit found are calls of ``downgrade``)."""
    agrees = judge_value(1.0, 0.01, 1.0)
    v = downgrade(agrees, "settings differ: d = 20 (paper 50)")
    assert (
        v.verdict == NOT_JUDGED
        and v.reason == "settings differ: d = 20 (paper 50) (at these settings the test gave: agrees)"
    )
    assert v.statistic == agrees.statistic and v.measured == agrees.measured
    already = stats.not_judged("too little power: …")
    assert downgrade(already, "why").reason == "why; too little power: …"
    assert downgrade(agrees, "") is agrees
    writers = [p for p in SRC.rglob("*.py") if "the test gave:" in p.read_text()]
    assert writers == [SRC / "claims" / "_judge.py"], writers


def test_a_grid_argmin_interval_is_at_least_half_a_step_wide():
    """Models or bootstrap draws that all pick one grid point: ± half the grid's smallest step, never zero width."""
    assert stats.grid_floor_ci(1.0, 1.0, 1.0, [0.0, 0.5, 1.0, 2.0]) == (0.75, 1.25)
    assert stats.grid_floor_ci(1.0, 0.2, 1.9, [0.0, 0.5, 1.0, 2.0]) == (0.2, 1.9)  # already wider: unchanged
    assert stats.grid_floor_ci(1.0, 1.0, 1.0, [1.0]) == (1.0, 1.0)  # no grid step known: the caller refuses it
