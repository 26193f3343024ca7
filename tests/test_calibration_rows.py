"""Row-level calibration (issue 43, item 2; ``iclab.claims._calibrate_rows``): claims judged through the run's
own code path on units resampled at their least favourable truth. Made-up tables whose answer is known: a correct
test passes at the edge of its tolerance and at zero effect, a test that understates its uncertainty fails, a lost
unit under a minimum of units and a failed cell of a claim over a table never agree; and the table in
``docs/calibration.md`` is what the calibrator gives."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iclab.experiments import get_experiment
from iclab.claims._calibrate_rows import NOMINAL, calibrate_records
from iclab.claims._records import ClaimRecord, Estimate, Measure, MinUnits, Rule, across_units
from iclab.report._reference import reference_runs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
import gen_calibration_rows as gen  # noqa: E402 - the docs generator, imported by path

DRAWS = 1000


def _table(seeds: int = 12, mean: float = 1.0, sd: float = 0.02, cells=(10,)) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    rows = [
        {"part": "p", "N": n, "seed": s, "G": mean + rng.normal(0, sd), "theory": 1.0}
        for n in cells
        for s in range(seeds)
    ]
    return pd.DataFrame(rows)


def _record(rule: Rule, kind: str = "theory vs simulation", unit=("seed",), **measure) -> ClaimRecord:
    return ClaimRecord(
        "made/up",
        "G is what theory says",
        "arXiv:0000.00000, Fig. 1",
        kind,
        quantity="per seed, G",
        measure=Measure({"part": "p"}, "G", unit, **measure),
        rule=rule,
    )


def _one(rec: ClaimRecord, rows: pd.DataFrame, draws: int = DRAWS):
    (cal,) = calibrate_records([rec], None, rows, experiment="made-up", draws=draws, seed=0)
    return cal


def understated(config, sample) -> Estimate:
    """A broken combine rule: the SE across units divided by 10."""
    est = across_units(config, sample)
    return Estimate(est.value, est.se / 10, dof=est.dof, n=est.n)


def test_an_equivalence_on_normal_units_agrees_at_most_5_percent_at_its_edge():
    cal = _one(_record(Rule("equivalence", rel_tol=0.05, target=1.0)), _table())
    assert cal.passes and cal.draws == DRAWS and "gap at" in cal.truth
    assert 0.005 <= cal.rates["all units"] <= NOMINAL + 2 * cal.mc_se("all units"), cal.rates  # can agree, rarely


def test_a_combine_rule_that_understates_its_uncertainty_fails_its_calibration():
    """25 units: above the small-sample gate's 20, so the run's judge is the test alone. (From 2–20 units the gate
    resamples the claim's own units through the same broken rule and refuses its agreements.)"""
    cal = _one(_record(Rule("equivalence", rel_tol=0.05, target=1.0), combine=understated), _table(seeds=25))
    assert cal.passes is False and not cal.as_run and cal.rates["all units"] > 0.2, cal.rates


def test_an_effect_claim_is_drawn_at_zero_effect():
    rec = _record(Rule("direction", sign=+1, smallest=0.01), kind="effect direction")
    cal = _one(rec, _table(mean=0.05))
    assert cal.truth == "true effect 0" and cal.passes, cal
    assert cal.rates["all units"] <= NOMINAL + 2 * cal.mc_se("all units")


def test_a_lost_unit_under_the_minimum_of_units_never_agrees():
    rec = _record(Rule("equivalence", rel_tol=0.05, target=1.0), gates=(MinUnits(12),))
    cal = _one(rec, _table(seeds=12), draws=300)
    assert cal.rates["one unit lost"] == 0.0 and cal.rates["all units"] > 0.0, cal.rates


def test_a_failed_cell_of_a_claim_over_a_table_never_agrees():
    def every_n(config):  # every grid cell of the table: each (N, seed)
        return [{"N": n, "seed": s} for n in (10, 20) for s in range(12)]

    rec = _record(Rule("equivalence", rel_tol=0.05, target=1.0), unit=("N", "seed"), cells=every_n)
    cal = _one(rec, _table(cells=(10, 20)), draws=300)
    assert cal.rates["one cell failed"] == cal.rates["one unit lost"] == 0.0 < cal.rates["all units"], cal.rates


def _every_cell(combine=None, **measure) -> ClaimRecord:
    rule = Rule("every cell", rel_tol=0.05, target="theory", by=("N",))
    return _record(rule, unit=("N", "seed"), **({"combine": combine} if combine else {}), **measure)


def test_an_every_cell_claim_puts_one_cell_at_its_edge_and_the_others_at_their_targets():
    """Three cells of 25 normal seeds each: one cell at target·(1 ± 5 %), the others at target, each cell's seeds
    resampled: an intersection–union test agrees at most 5 % of the time there, and can agree."""
    cal = _one(_every_cell(), _table(seeds=25, cells=(10, 20, 40)), draws=400)
    assert cal.passes and "of its target, the other cells at theirs" in cal.truth and cal.units == 75, cal
    assert 0 < max(cal.rates.values()) <= NOMINAL + 2 * cal.mc_se("all units"), cal.rates


def test_an_every_cell_claim_whose_rule_understates_its_uncertainty_fails():
    cal = _one(_every_cell(understated), _table(seeds=25, cells=(10, 20, 40)), draws=400)
    assert cal.passes is False and cal.rates["all units"] > 0.2, cal.rates


def test_an_every_cell_claim_that_names_its_cells_is_not_measured_when_one_fails():
    def every_n(config):
        return [{"N": n, "seed": s} for n in (10, 20) for s in range(12)]

    cal = _one(_every_cell(cells=every_n), _table(cells=(10, 20)), draws=300)
    assert cal.rates["one cell failed"] == cal.rates["one unit lost"] == 0.0 < cal.rates["all units"], cal.rates


def _from_rows(config, sample) -> Estimate:
    """A combine rule that reads the rows (not the per-unit values): a shift of the values does not move it."""
    g = sample.rows["G"].to_numpy(float)
    return Estimate(float(g.mean()), float(g.std(ddof=1) / np.sqrt(len(g))), dof=len(g) - 1)


def _rows_at(config, sample, truth, rng):
    """Its rows redrawn at ``truth``: normal units of the run's spread around it."""
    rows = sample.rows.copy()
    g = rows["G"].to_numpy(float)
    rows["G"] = truth + rng.normal(0.0, g.std(ddof=1), len(g))
    return dataclasses.replace(sample, rows=rows)


def test_a_combine_rule_that_reads_whole_rows_is_named_not_simulated():
    cal = _one(_record(Rule("equivalence", rel_tol=0.05, target=1.0), combine=_from_rows), _table(), draws=10)
    assert cal.passes is None and "whole rows" in cal.why and not cal.rates


def test_a_combine_rule_that_reads_whole_rows_is_simulated_where_it_places_its_rows_at_a_truth(monkeypatch):
    """A rule that says how its rows sit at a truth (``combine.at_truth``) is simulated through it, in every setting
    (without it, the test above: named, not simulated)."""
    monkeypatch.setattr(_from_rows, "at_truth", _rows_at, raising=False)
    cal = _one(_record(Rule("equivalence", rel_tol=0.05, target=1.0), combine=_from_rows), _table(), draws=400)
    assert cal.passes and "rows placed by its combine rule" in cal.truth and 0 < cal.rates["all units"], cal


def test_the_curve_claims_place_their_rows_at_the_truth():
    """``temperature``'s RMS claims read every curve cell (an RMS is no mean of per-unit values): their rows are
    redrawn at the truth by the combine rule itself, the run's own pattern of gaps scaled to an RMS of exactly the
    tolerance plus each cell's sampling noise. Over 300 draws the estimate (mean square − TOL²) averages to the truth
    within Monte Carlo error, and the SE the rule states there is the spread of the draws."""
    from iclab.claims._records import _sample
    from iclab.experiments.temperature import statistics as S

    records, config, rows = gen.records_and_rows(get_experiment("temperature"), reference_runs()["temperature"])
    rec = next(r for r in records if r.id == "thm4.3-vs-mc-minimiser")
    sample = _sample(rec, config, rows, None)
    rng = np.random.default_rng(0)
    ests = [S.minimiser(config, S.minimiser.at_truth(config, sample, 0.0, rng)) for _ in range(300)]
    values, ses = np.array([e.value for e in ests]), np.array([e.se for e in ests])
    assert abs(values.mean()) < 4 * values.std(ddof=1) / np.sqrt(300), (values.mean(), values.std())
    assert 0.7 < values.std(ddof=1) / ses.mean() < 1.3, (values.std(ddof=1), ses.mean())


def _reference_sample(experiment: str, claim: str):
    from iclab.claims._records import _sample

    records, config, rows = gen.records_and_rows(get_experiment(experiment), reference_runs()[experiment])
    rec = next(r for r in records if r.id == claim)
    return rec, config, _sample(rec, config, rows, None)


def test_the_llm_trend_places_its_noise_cells_at_no_trend():
    """``temperature-llm``'s trend (a slope of grid argmaxes, no mean of per-unit values) is placed at no trend by
    making its noise cells exchangeable (question groups redrawn from one of the run's cells): over 300 draws its
    slope averages to 0 within Monte Carlo error, and each drawn cell keeps the run's number of question groups."""
    rec, config, sample = _reference_sample("temperature-llm", "gemma3-270m/antonym/trend")
    at, rng = rec.measure.combine.at_truth, np.random.default_rng(0)
    placed = [at(config, sample, 0.0, rng) for _ in range(300)]
    slopes = np.array([rec.measure.combine(config, p).value for p in placed])
    assert abs(slopes.mean()) < 4 * slopes.std(ddof=1) / np.sqrt(300), (slopes.mean(), slopes.std())
    assert slopes.std() > 0
    groups = {max(g) + 1 for p in placed[:5] for g in p.rows["group"]}
    assert groups == {max(g) + 1 for g in sample.rows["group"]}
    with pytest.raises(ValueError, match="no trend only"):
        at(config, sample, 0.1, rng)


@pytest.mark.parametrize("truth", [-0.05, 0.0])
def test_a_binomial_share_places_each_unit_s_hits_at_the_truth(truth):
    """``ood``'s shares of forget points (:func:`iclab.claims.binomial_share`): each point's hits redrawn as
    Binomial(its trials, truth); the share averages to the truth, and a share outside [0, 1] is refused."""
    rec, config, sample = _reference_sample("ood", "forget-sign-rule")
    share, rng = rec.measure.combine, np.random.default_rng(1)
    values = np.array([share(config, share.at_truth(config, sample, 1.0 + truth, rng)).value for _ in range(200)])
    n = int(sample.rows["sign_trials"].sum())
    assert abs(values.mean() - (1.0 + truth)) < 4 * np.sqrt((1 + truth) * -truth / n / 200) + 1e-12, values.mean()
    assert share.bounds == (0.0, 1.0)
    with pytest.raises(ValueError, match="outside"):
        share.at_truth(config, sample, 1.05, rng)


def test_multihead_sign_matching_places_each_seed_at_the_truth():
    """``fig2.2/sign-matching`` (each seed one Clopper–Pearson trial): each seed's live heads all match with
    probability 0.9 + truth; on n seeds the placed estimate is k/n − 0.9 for k seeds matching, k ~ Binomial(n, 0.9 +
    truth)."""
    rec, config, sample = _reference_sample("multihead", "fig2.2/sign-matching")
    n = config.seeds
    rng = np.random.default_rng(2)
    values = np.array([rec.measure.combine(config, rec.measure.combine.at_truth(config, sample, 0.0, rng)).value
                       for _ in range(400)])  # fmt: skip
    assert set(np.round(values, 12)) <= {round(k / n - 0.9, 12) for k in range(n + 1)}
    assert abs(values.mean()) < 4 * np.sqrt(0.09 / (400 * n)), values.mean()


def _doc_rows() -> dict[tuple[str, str], str]:
    text = (ROOT / gen.FILE).read_text()
    block = text.split(gen.BEGIN)[1].split(gen.END)[0]
    return {(m[1], m[2]): line for line in block.splitlines() if (m := re.match(r"\| `([^`]+)` \| `([^`]+)` \|", line))}


def test_the_docs_table_has_every_claim_of_every_shipped_reference():
    rows = _doc_rows()
    for name, folder in reference_runs().items():
        records, _, _ = gen.records_and_rows(get_experiment(name), folder)
        assert {(name, r.id) for r in records} <= set(rows), name


@pytest.mark.parametrize(
    ("experiment", "claim"),
    [("dispersion", "table/gain/n=64"), ("temperature-gpt2-regression", "gpt2/mean-shift-harmless")],
)
def test_the_docs_table_rows_are_the_calibrator_s(experiment, claim):
    """Any claim's row regenerates alone (its draws are seeded by the experiment and its id): the generated table
    is the code's, not typed."""
    (cal,) = gen.experiment_rows(get_experiment(experiment), reference_runs()[experiment], gen.DRAWS, only={claim})
    assert _doc_rows()[(experiment, claim)] == gen.table_line(cal), gen.REGENERATE


def test_a_claim_over_the_line_is_simulated_again_as_a_run_judges_it(monkeypatch):
    """Five units, one far from the rest: the test alone agrees at the edge of its tolerance far more than 5 % of the
    time (a resample that misses the far unit is tight). Such a claim is simulated again through the judge as a run
    calls it (``judge_as_run``: the small-sample gate included), and its row says so. The gate resamples what a run
    saw, so it cannot see a far unit the draw missed: the claim stays over the line, and only more units decide it."""
    import iclab.claims._resample as resample

    monkeypatch.setattr(resample, "GATE_DRAWS", 40)  # the gate's own resampling, smaller here for time
    vals = [1.0, 1.002, 0.998, 1.001, 1.09]
    rows = pd.DataFrame([{"part": "p", "N": 10, "seed": s, "G": v, "theory": 1.0} for s, v in enumerate(vals)])
    cal = _one(_record(Rule("equivalence", rel_tol=0.05, target=1.0)), rows, draws=200)
    assert cal.as_run and cal.alone > 0.2 and cal.draws == 200, cal
    assert cal.passes is False and cal.rates["all units"] > 0.1, cal.rates
    tight = _one(_record(Rule("equivalence", rel_tol=0.05, target=1.0)), _table(seeds=5), draws=300)
    assert tight.passes and not tight.as_run and tight.alone is None  # within the line: one simulation
