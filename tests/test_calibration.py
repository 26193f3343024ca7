"""Calibration by simulation: every test of iclab.stats says "agrees" at most 5 % (+ 2 Monte Carlo SE) of the time
under its least favourable false claim, at noise levels chosen by hypothesis; a broken test fails the same check;
each verdict carries a test record that reproduces it; Holm and the chance count of a run."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fixtures_experiments  # noqa: F401 - registers fx_sweep in this process
from fixtures_experiments import fixture_env
from iclab.cli import main
from iclab.experiments import Claim, Comparison, chance_line, family_summary, judge_run
from iclab.stats import (
    AGREES,
    DISAGREES,
    NOMINAL,
    NOT_JUDGED,
    Verdict,
    calibrate,
    calibration_table,
    judge_absence,
    judge_direction,
    judge_equivalence,
    judge_every_cell,
    judge_value,
    quantile,
    rejudge,
)
from iclab.stats._rules import band_false_agree

DRAWS = 200
scale = st.floats(1e-3, 1e3, allow_nan=False)
dofs = st.one_of(st.none(), st.integers(2, 200).map(float))
ratio = st.floats(0.05, 50.0)  # a threshold in units of the SE


def _passes(record) -> bool:
    cal = calibrate(record, DRAWS, np.random.default_rng(7))
    assert cal.draws == DRAWS and 0 <= cal.rate <= 1
    return cal.rate <= NOMINAL + 2 * cal.mc_se


@settings(max_examples=25)
@given(se=scale, dof=dofs, sign=st.sampled_from([1, -1]), smallest=st.floats(0, 5), z=st.floats(-6, 6))
def test_direction_is_calibrated(se, dof, sign, smallest, z):
    v = judge_direction(z * se, se, sign=sign, smallest=smallest * se, dof=dof, n=10)
    assert _passes(v.test_record)
    half = se * quantile(0.95)  # an explicit (symmetric) interval
    w = judge_direction(z * se, ci=(z * se - half, z * se + half), sign=sign, smallest=smallest * se)
    assert _passes(w.test_record)


@settings(max_examples=25)
@given(se=scale, dof=dofs, target=st.floats(0.1, 1e3), rel=st.floats(0.005, 0.5), z=st.floats(-3, 3))
def test_equivalence_is_calibrated(se, dof, target, rel, z):
    v = judge_equivalence(target + z * se, se, target, rel_tol=rel, dof=dof, n=10)
    assert _passes(v.test_record)


@settings(max_examples=25)
@given(se=scale, smallest=ratio, z=st.floats(-3, 3), skew=st.floats(0.1, 10))
def test_absence_is_calibrated(se, smallest, z, skew):
    half = se * quantile(0.95)
    v = judge_absence(z * se, (z * se - half, z * se + half * skew), smallest=smallest * se, n=100)
    assert _passes(v.test_record)


@settings(max_examples=25)
@given(se=scale, sign=st.sampled_from([1, -1]), z=st.floats(-6, 6), skew=st.floats(0.1, 10))
def test_a_lopsided_interval_is_calibrated(se, sign, z, skew):
    """A percentile interval short on the side of zero (a skewed resampling distribution) is tested at its wider
    side; taken as it is, ``[est − L, est + 10 L]`` would agree about a third of the time at effect 0."""
    half = se * quantile(0.95)
    v = judge_direction(z * se, ci=(z * se - half, z * se + half * skew), sign=sign)
    assert _passes(v.test_record)


@settings(max_examples=25)
@given(se=scale, paper_se=st.floats(0, 2), dof=dofs, tol=ratio, z=st.floats(-2, 2), exact=st.booleans())
def test_paper_value_is_calibrated(se, paper_se, dof, tol, z, exact):
    se_used = 0.0 if exact and paper_se > 0 else se
    spread = math.hypot(se_used, paper_se * se)
    v = judge_value(1.0 + z * spread, se_used, 1.0, paper_se=paper_se * se, tol=tol * spread, dof=dof, exact=exact)
    assert v.test_record is not None and _passes(v.test_record)


@settings(max_examples=15)
@given(ses=st.lists(st.floats(1e-3, 1.0), min_size=1, max_size=7), rel=st.floats(0.01, 0.5))
def test_every_cell_is_calibrated(ses, rel):
    cells = [(f"l={i}", 1.0 + i, s, 1.0 + i) for i, s in enumerate(ses)]
    assert _passes(judge_every_cell(cells, rel_tol=rel).test_record)


def test_a_broken_test_fails_calibration():
    # a "95 %" interval at ±1 SE (confidence 68 %): equivalence agrees ~16 % of the time at the margin's edge
    narrow = judge_equivalence(1.0, 0.01, 1.0, rel_tol=0.1, confidence=0.6827).test_record
    assert not calibrate(narrow, DRAWS).passes
    lax = judge_direction(0.5, 0.1, confidence=0.6827).test_record  # one-sided 16 % at effect 0
    assert not calibrate(lax, DRAWS).passes
    # a paper value whose band is computed at ±6 SE: a value 5 SE away sits inside it (84 %); the judge's own
    # band rule refuses to agree, so the record is forced to skip it to show what calibration would catch
    wide = judge_value(1.0, 0.01, 1.0, k=6.0, tol=1.0).test_record
    assert wide["verdict"] == NOT_JUDGED and calibrate(wide, DRAWS).rate == 0
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("iclab.stats._calibration.value_can_agree", lambda *a: True)
        assert not calibrate(wide, DRAWS).passes


@pytest.mark.parametrize(("dof", "rate"), [(2, 0.281), (3, 0.101), (4, 0.0452), (None, 0.00118)])
def test_the_student_t_band_rule(dof, rate):
    k = quantile(0.95, dof)
    assert band_false_agree(k, dof) == pytest.approx(rate, abs=1e-3)
    v = judge_value(1.0, 0.01, 1.0, tol=1.0, dof=dof, n=None if dof is None else dof + 1)
    if rate > NOMINAL:  # three or four seeds: inside the band, but it cannot agree
        assert v.verdict == NOT_JUDGED and "too few units to agree" in v.reason and "at least 5 units" in v.reason
    else:
        assert v.verdict == AGREES
    assert judge_value(1.2, 0.01, 1.0, tol=1.0, dof=dof).verdict == DISAGREES  # a band this wide may still disagree


def _random_record(kind, rng):
    est, se, dof = rng.normal(), rng.uniform(0.05, 1), [None, 2.0, 9.0][rng.integers(3)]
    if kind == "value":
        return judge_value(est, se, 0.3, paper_se=0.1, tol=rng.uniform(0.1, 5), dof=dof, n=4)
    if kind == "equivalence":
        return judge_equivalence(1 + est * 0.1, se * 0.1, 1.0, rel_tol=0.2, dof=dof)
    if kind == "direction":
        return judge_direction(est, se, sign=[1, -1][rng.integers(2)], smallest=0.3, dof=dof)
    if kind == "absence":
        return judge_absence(est * 0.1, (est * 0.1 - se * 0.2, est * 0.1 + se * 0.3), smallest=0.3)
    return judge_every_cell([("a", 1 + est * 0.05, se * 0.05, 1.0), ("b", 2.0, 0.02, 2.0)], rel_tol=0.1)


@pytest.mark.parametrize("kind", ["value", "equivalence", "direction", "absence", "every_cell"])
def test_a_test_record_reproduces_its_verdict_and_is_json(kind):
    rng = np.random.default_rng(3)
    for _ in range(40):
        v = _random_record(kind, rng)
        rec = json.loads(json.dumps(v.test_record))  # what summary.json keeps
        assert rec["verdict"] == v.verdict and rejudge(rec).verdict == v.verdict
        assert rec["judge"] == kind and (v.verdict != AGREES or rec["p"] <= 0.5)


def test_refusals_and_hand_built_verdicts_have_no_record():
    assert judge_value(1.0, float("nan"), 1.0).test_record is None
    assert judge_direction(1.0, 0.1, dof=1).test_record is None  # too few units
    assert Verdict(AGREES).test_record is None and Verdict(AGREES) == Verdict(AGREES, test_record={"x": 1})


def test_calibration_table_and_errors():
    rows = [
        Comparison(
            "p",
            "e",
            "c",
            "s",
            "effect direction",
            "—",
            "",
            "",
            "",
            "",
            v.verdict,
            v.reason,
            f"c{i}",
            False,
            v.test_record,
        )  # fmt: skip
        for i, v in enumerate([judge_direction(1.0, 0.1), Verdict(AGREES)])
    ]
    table = calibration_table(rows, draws=DRAWS, seed=1)
    assert list(table["judge"]) == ["direction", "—"] and table["passes"].iloc[0] is True
    assert table["passes"].iloc[1] is None and math.isnan(table["false_agree"].iloc[1])
    again = calibration_table({"comparisons": [r.as_dict() for r in rows]}, draws=DRAWS, seed=1)
    assert again["false_agree"].iloc[0] == table["false_agree"].iloc[0]  # seeded by (seed, experiment, claim)
    with pytest.raises(ValueError, match="unknown judge"):
        calibrate({"judge": "nope"})


def _claim(cid, headline=True):
    return Claim(cid, f"claim {cid}", "arXiv:0000.00000", "effect direction", "CI excludes 0", headline=headline)


def _run(verdicts, headline=True, config=None):
    return judge_run(
        paper="p",
        experiment="e",
        config=config,
        results=[1],  # non-empty: compare is called
        failed=[],
        claims=lambda cfg: [_claim(c, headline) for c in verdicts],
        compare=lambda cfg, res: verdicts,
    )


def test_holm_demotes_a_headline_agreement_the_family_cannot_carry():
    weak = judge_direction(2.05, 1.0)  # agrees, p = 0.020
    strong = judge_direction(10.0, 1.0)  # agrees, p ~ 1e-23
    rows, errors = _run({"a": weak, "b": strong, "c": judge_direction(0.1, 1.0)})
    assert not errors
    by = {r.id: r for r in rows}
    assert by["b"].verdict == AGREES and by["c"].verdict == NOT_JUDGED
    # three in the family: 0.020 x 2 (the second smallest) = 0.040 <= 0.05 stays; with four, x 3 = 0.061 does not
    assert by["a"].verdict == AGREES and by["a"].test_record["holm"]["family"] == 3
    rows4, _ = _run({"a": weak, "b": strong, "c": judge_direction(0.1, 1.0), "d": judge_direction(0.2, 1.0)})
    a4 = next(r for r in rows4 if r.id == "a")
    assert a4.verdict == NOT_JUDGED and a4.reason.startswith("Holm: family of 4 headline claims, adjusted p = ")
    assert a4.test_record["holm"]["demoted"] and a4.test_record["verdict"] == AGREES
    summary = family_summary(rows4, draws=DRAWS)
    assert summary["holm"]["demoted"] == ["a"] and summary["holm"]["family"] == 4
    assert 0 < summary["chance_agrees"]["expected"] < 4 * (NOMINAL + 0.05) and summary["chance_agrees"]["judged"] == 4
    line = chance_line([json.loads(json.dumps(summary))])
    assert line.startswith("Expected agreements by chance under no effect: ") and "of 4 judged claims" in line
    assert "Holm family-wise α = 0.05" in line


def test_holm_leaves_other_claims_and_gates_alone():
    weak = judge_direction(2.2, 1.0)
    rows, _ = _run({"a": weak, "b": judge_direction(0.1, 1.0), "c": judge_direction(0.1, 1.0)}, headline=False)
    assert rows[0].verdict == AGREES and "holm" not in rows[0].test_record  # not a headline claim
    summary = family_summary(rows, draws=DRAWS)
    assert summary["holm"]["family"] == 0 and summary["chance_agrees"]["judged"] == 3
    old = Comparison(**{k: v for k, v in rows[0].as_dict().items() if k != "test_record"})  # an older summary.json
    assert old.test_record is None and family_summary([old])["chance_agrees"]["judged"] == 0
    by_hand, _ = _run({"a": Verdict(AGREES, "1", "—", "by hand")})  # a headline "agrees" no test stands behind
    summary = family_summary(by_hand)
    assert summary["holm"]["outside"] == ["a"] and "1 headline agreement(s) without a test record" in chance_line(
        [summary]
    )


def test_calibrate_command(tmp_path, capsys, monkeypatch):
    env = fixture_env()
    monkeypatch.setenv("ICLAB_EXPERIMENT_MODULES", env["ICLAB_EXPERIMENT_MODULES"])
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])
    run = tmp_path / "run"
    assert main(["run", "fx_sweep", "--executor", "serial", "--out", str(run), "--set", "n_cells=4"]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["chance_agrees"]["claims"] == len(summary["comparisons"]) and "holm" in summary
    assert "Expected agreements by chance under no effect: " in (run / "report.md").read_text()
    before = {p.name: p.stat().st_mtime_ns for p in run.iterdir()}
    capsys.readouterr()
    table = tmp_path / "cal.csv"
    assert main(["calibrate", str(run), "--draws", "200", "--out", str(table)]) == 0
    out = capsys.readouterr().out
    assert "0 above the nominal 5% + 2 MC SE (200 draws, seed 0)" in out and table.exists()
    assert {p.name: p.stat().st_mtime_ns for p in run.iterdir()} == before  # the run folder is only read
    assert main(["calibrate", str(run), "--draws", "200", "--out", str(table)]) == 2  # never replaced unasked
    assert "--force" in capsys.readouterr().err
    assert main(["calibrate", str(run), "--draws", "200", "--out", str(table), "--force"]) == 0
    assert main(["calibrate", str(run), "--draws", "5"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "--draws" in err and "\n" not in err
    assert main(["calibrate", str(tmp_path / "nothing")]) == 2
