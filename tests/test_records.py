"""Claims as data (:mod:`iclab.claims._records`, issue 21 item 1): the generic judge of claim records on made-up
tables — selection and missing cells, one row per unit, pairing on the unit, each test kind with the refusals of
:mod:`iclab.stats` — and the records of ``temperature-gpt2-regression``, the first package converted."""

from dataclasses import dataclass

import dataclasses

import numpy as np
import pandas as pd
import pytest

from iclab.experiments import get_experiment
from iclab.claims._judge import Claim
from iclab.claims._records import (
    BASE,
    ClaimRecord,
    Estimate,
    Measure,
    MinUnits,
    RAISED,
    TEST_KINDS,
    Rule,
    StandIn,
    across_units,
    declared,
    judge_records,
)
from iclab.experiments import paper_experiments
from iclab.experiments.temperature.gpt2 import claims as gpt2
from iclab.stats import AGREES, DISAGREES, NOT_JUDGED


@dataclass(frozen=True)
class Cfg:
    arms: tuple = ("a", "b")
    n_test: int = 500


def _rec(measure: Measure, rule: Rule, **kw) -> ClaimRecord:
    """A record of the kind its rule tests: an effect for a direction test, else closeness (the can-fail check)."""
    kind = "effect direction" if rule.kind == "direction" else "theory vs simulation"
    base = dict(id="x/claim", claim="a claim", source="arXiv:0000.00000, Fig. 1", kind=kind, quantity="q")
    return ClaimRecord(**(base | kw), measure=measure, rule=rule)


def _table(effect: float, seeds: int = 5, noise: float = 0.01, arms=("a", "b")) -> pd.DataFrame:
    """Arm ``b`` is arm ``a`` plus ``effect`` on the same seeds (a paired design), with per-seed noise."""
    rng = np.random.default_rng(3)
    rows = []
    for s in range(seeds):
        base = 1.0 + rng.normal(0, 0.3)  # a large seed effect that pairing removes
        for arm in arms:
            acc = base + (effect if arm == "b" else 0.0) + rng.normal(0, noise)
            rows.append({"part": "p", "arm": arm, "seed": s, "acc": acc, "theory": 1.0, "l": s % 2})
    return pd.DataFrame(rows)


PAIRED = Measure({"part": "p", "arm": "b"}, "acc", ("seed",), base={"part": "p", "arm": "a"})


def _judge(rec, df, cfg=Cfg()):
    return judge_records([rec], cfg, df)[rec.id]


def test_a_paired_effect_agrees_and_no_effect_is_absent():
    rec = _rec(PAIRED, Rule("direction", smallest=0.05))
    assert _judge(rec, _table(0.1)).verdict == AGREES
    null = _judge(rec, _table(0.0))
    assert null.verdict == DISAGREES and "no effect" in null.reason
    assert _judge(_rec(PAIRED, Rule("direction", sign=-1, smallest=0.02)), _table(0.1)).verdict == DISAGREES


def test_pairing_removes_the_unit_effect():
    """Unpaired, the seed-to-seed spread (0.3) hides a 0.1 effect; paired on the seed it does not."""
    unpaired = _rec(Measure({"part": "p", "arm": "b"}, "acc", ("seed",)), Rule("direction", smallest=0.02))
    ci = _judge(unpaired, _table(0.1)).uncertainty
    paired = _judge(_rec(PAIRED, Rule("direction", smallest=0.02)), _table(0.1))
    assert paired.verdict == AGREES and paired.uncertainty != ci


def test_missing_cells_are_named_and_nothing_stands_in():
    df = _table(0.1, arms=("a", "c"))
    v = _judge(_rec(PAIRED, Rule("direction", smallest=0.02)), df)
    assert v.verdict == NOT_JUDGED and "not measured" in v.reason and "arm = b" in v.reason


def test_a_repeated_row_is_one_unit():
    df = _table(0.1, seeds=3)
    rec = _rec(PAIRED, Rule("direction", smallest=0.02))
    assert _judge(rec, pd.concat([df, df], ignore_index=True)) == _judge(rec, df)


def test_too_few_units_and_no_uncertainty_are_refused():
    rec = _rec(PAIRED, Rule("direction", smallest=0.02))
    two = _judge(rec, _table(0.1, seeds=2))
    assert two.verdict == NOT_JUDGED and "too few units" in two.reason
    one = _judge(rec, _table(0.1, seeds=1))
    assert one.verdict == NOT_JUDGED and "no uncertainty" in one.reason


def test_equivalence_against_a_number_and_against_the_baseline():
    df = _table(0.0, seeds=12)  # enough seeds that the band holds when they are resampled (small_sample_gate)
    near = _rec(Measure({"part": "p", "arm": "b"}, "acc", ("seed",)), Rule("equivalence", rel_tol=1.0, target=1.0))
    assert _judge(near, df).verdict == AGREES
    far = _rec(Measure({"part": "p", "arm": "b"}, "acc", ("seed",)), Rule("equivalence", rel_tol=0.01, target=3.0))
    assert _judge(far, df).verdict == DISAGREES
    same = _rec(PAIRED, Rule("equivalence", rel_tol=0.1, target=BASE, against="arm a"))
    # the tolerance is 10 % of arm a's mean, which the seeds' large common effect moves: with 12 seeds the judge's
    # resampling finds the test agreeing too often at the edge (small_sample_gate); 30 seeds hold it
    v = _judge(same, _table(0.0, seeds=30))
    assert v.verdict == AGREES and "of arm a" in v.statistic
    assert _judge(same, _table(0.5)).verdict == DISAGREES


def test_absence_excludes_effects_on_both_sides():
    rec = _rec(PAIRED, Rule("absence", smallest=0.05))
    assert _judge(rec, _table(0.0, seeds=12)).verdict == AGREES
    for effect in (0.2, -0.2):  # an effect of either sign is not "no effect"
        assert _judge(rec, _table(effect)).verdict == DISAGREES


def test_paper_value_band_and_power():
    m = Measure({"part": "p", "arm": "b"}, "acc", ("seed",))
    df = _table(0.0, seeds=8)
    mean = float(df[df["arm"] == "b"]["acc"].mean())
    assert _judge(_rec(m, Rule("value", paper=mean + 5.0, tol=0.5), kind="paper value"), df).verdict == DISAGREES
    wide = _judge(_rec(m, Rule("value", paper=mean, tol=1e-4), kind="paper value"), df)
    assert wide.verdict == NOT_JUDGED and "too little power" in wide.reason
    assert _judge(_rec(m, Rule("value", paper=mean, tol=0.5), kind="paper value"), df).verdict == AGREES


def test_every_cell_names_the_cell_that_fails():
    df = _table(0.0, seeds=8, noise=0.01)
    m = Measure({"part": "p", "arm": "a"}, "acc", ("seed",))
    rule = Rule("every cell", rel_tol=2.0, target="theory", by=("l",))
    assert _judge(_rec(m, rule, kind="theory vs simulation"), df).verdict == AGREES
    df.loc[(df["l"] == 1) & (df["arm"] == "a"), "acc"] += 50.0
    v = _judge(_rec(m, rule, kind="theory vs simulation"), df)
    assert v.verdict == DISAGREES and "l = 1" in v.reason


def test_named_statistics_note_and_gate():
    def half(cfg, s):
        return Estimate(float(s.values.mean()) / 2, 0.01, how="halved")

    def note(cfg, s, est):
        return f"{len(s.units)} units"

    m = Measure({"part": "p", "arm": "b"}, "acc", ("seed",), base={"part": "p", "arm": "a"}, combine=half, note=note)
    v = _judge(_rec(m, Rule("direction", smallest=0.01)), _table(0.1))
    assert v.verdict == AGREES and v.statistic.startswith("5 units; halved; effect 0.0")
    gated = Measure(m.where, "acc", ("seed",), base=m.base, gates=(MinUnits(6, "in the table"),))
    g = _judge(_rec(gated, Rule("direction", smallest=0.01)), _table(0.1))
    assert g.verdict == NOT_JUDGED
    assert g.reason == "not measured: 5 of 5 seeds in the table (needs 6) (at these settings the test gave: agrees)"
    with pytest.raises(ValueError, match="not declared gates"):  # a gate is declared, never a text-writing function
        Measure(m.where, "acc", ("seed",), gates=(lambda cfg, s: "gated",))


def test_declared_follows_the_config():
    a = _rec(PAIRED, Rule("direction", smallest=0.05), id="x/a", runs_if={"arms": ("a", "b")})
    c = _rec(PAIRED, Rule("direction", smallest=0.05), id="x/c", runs_if={"arms": "c", "n_test": 500})
    assert [r.id for r in declared([a, c], Cfg())] == ["x/a"]
    assert [r.id for r in declared([a, c], Cfg(arms=("a", "b", "c")))] == ["x/a", "x/c"]
    assert declared([a, c], Cfg(arms=("c",), n_test=10)) == []


def test_records_refuse_incomplete_definitions():
    with pytest.raises(ValueError, match="kind"):
        Rule("vibes")
    with pytest.raises(ValueError, match="rel_tol"):
        Rule("equivalence", target=1.0)
    with pytest.raises(ValueError, match="unit"):
        Measure({"part": "p"}, "acc", ())
    with pytest.raises(ValueError, match="baseline"):
        _rec(Measure({"part": "p"}, "acc", ("seed",)), Rule("equivalence", rel_tol=0.1, target=BASE))
    with pytest.raises(ValueError, match="measure"):
        ClaimRecord("x", "c", "s", "effect direction", "t")


def test_across_units_is_the_student_t_default():
    est = across_units(None, type("S", (), {"values": np.array([1.0, 2.0, 3.0])})())
    assert est.value == 2.0 and est.dof == 2 and est.se == pytest.approx(1 / np.sqrt(3))


def test_gpt2_claims_are_records_judged_by_the_generic_judge():
    exp = get_experiment("temperature-gpt2-regression")
    cfg = exp.config("quick")
    declared_claims = exp.claims(cfg)
    assert len(declared_claims) == 9 and all(
        isinstance(c, ClaimRecord) and isinstance(c, Claim) for c in declared_claims
    )
    assert [c.id for c in declared_claims] == [r.id for r in gpt2.RECORDS]
    fewer = cfg.with_overrides({"shifts": ("none", "noise=2")})
    assert [c.id for c in exp.claims(fewer)] == ["gpt2/tau-helps/noise=2", "gpt2/best-tau-grows/noise=2"]


def test_every_cell_pairs_within_each_cell_and_names_a_missing_baseline():
    df = _table(0.0, seeds=8)
    m = Measure({"part": "p", "arm": "b"}, "acc", ("seed",), base={"part": "p", "arm": "a"})
    rule = Rule("every cell", rel_tol=0.5, target="theory", by=("l",))
    # the paired difference is ~0 in every cell, its target (the column "theory") 1.0: outside in every cell
    v = _judge(_rec(m, rule, kind="theory vs simulation"), df)
    assert v.verdict == DISAGREES and "l = 0" in v.reason and "l = 1" in v.reason
    gone = df[~((df["arm"] == "a") & (df["l"] == 1))]
    w = _judge(_rec(m, rule, kind="theory vs simulation"), gone)
    assert w.verdict == NOT_JUDGED and "not measured" in w.reason


def test_every_categorical_claim_is_a_record():
    exp = get_experiment("categorical")
    for preset in ("quick", "paper"):
        declared_claims = exp.claims(exp.config(preset))
        assert len(declared_claims) >= 15 and all(isinstance(c, ClaimRecord) for c in declared_claims)


def test_a_paper_value_of_zero_is_a_value_and_needs_an_absolute_tolerance():
    with pytest.raises(ValueError, match="absolute tol"):
        Rule("value", paper=0.0)
    with pytest.raises(ValueError, match="needs paper"):
        Rule("value")
    diff = _rec(PAIRED, Rule("value", paper=0.0, tol=0.05), kind="paper value")
    assert _judge(diff, _table(0.0, seeds=8)).verdict == AGREES  # arm b − arm a is 0 within ±0.05
    assert _judge(diff, _table(0.3, seeds=8)).verdict == DISAGREES


def test_every_cell_by_a_text_and_a_number_column_finds_its_cells_and_applies_not_run_and_gates():
    df = _table(0.0, seeds=8)
    df["kind"] = np.where(df["seed"] % 2 == 0, "even", "odd")
    m = Measure({"part": "p", "arm": "b"}, "acc", ("seed",))
    rule = Rule("every cell", rel_tol=0.5, target="theory", by=("kind", "l"))
    v = _judge(_rec(m, rule, kind="theory vs simulation"), df)
    assert "not measured" not in v.reason and "kind = even, l = 0" in v.reason  # l stayed a number: the cell is found
    gated = _rec(dataclasses.replace(m, gates=(StandIn("a toy gradient", "the free gradient"),)), rule)
    g = _judge(gated, df)
    assert g.verdict == NOT_JUDGED and "a toy gradient stands in for the free gradient" in g.reason
    not_run = _rec(m, rule, not_run=lambda cfg, rec: "this config runs no such cell")
    assert _judge(not_run, df).reason.startswith("this config runs no such cell")


# --- the test text is generated from the rule (it cannot drift from what the judge does) ------------------------


def _records():
    """Every record of every experiment at its quick and paper presets."""
    for exp in paper_experiments():
        for preset in ("quick", "paper"):
            yield from (c for c in exp.claims(exp.presets[preset]) if isinstance(c, ClaimRecord))


def _num(x) -> str:
    return f"{float(x):.4g}".replace("-", "−")


def _pct(x) -> str:
    return f"{100 * float(x):.3g} %"


def _thresholds(rule: Rule) -> dict:
    """The thresholds a kind's text must state, as (field, text), and a changed value for each."""
    out = {}
    if rule.kind in ("direction", "absence") and rule.smallest and not rule.relative_to:
        out["smallest"] = (_num(rule.smallest), rule.smallest * 1.37)
    if rule.kind in ("equivalence", "every cell"):
        out["rel_tol"] = (_pct(rule.rel_tol), rule.rel_tol * 1.37)
    if rule.kind == "equivalence" and rule.target != BASE:
        out["target"] = (_num(rule.target), rule.target * 1.37 + 0.1)
    if rule.kind == "value":
        out["paper"] = (_num(rule.paper), rule.paper * 1.37 + 0.1)
        if rule.tol is not None and not rule.relative_to:
            out["tol"] = (_num(rule.tol), rule.tol * 1.37)
        if rule.paper_se:
            out["paper_se"] = (_num(rule.paper_se), rule.paper_se * 1.37)
        if rule.k is not None:
            out["k"] = (_num(rule.k), rule.k * 1.37)
    return out


def test_every_record_states_its_rule_and_its_numbers():
    """For every record of every experiment, of every kind: the test text is the quantity, then the rule's own text
    (:meth:`Rule.describe`), which names the unit (default combine) and states each threshold with its value."""
    kinds = set()
    for rec in _records():
        kinds.add(rec.rule.kind)
        assert rec.test.startswith(rec.quantity + "; ") and rec.rule.describe(rec.measure) in rec.test, rec.id
        for name, (text, _) in _thresholds(rec.rule).items():
            assert text in rec.test, (rec.id, name, text, rec.test)
        if rec.measure.combine is across_units:
            units = rec.rule.units if rec.rule.units != "units" else f"{rec.measure.unit[0]}s"
            assert f"mean ± SE over {units}" in rec.test or len(rec.measure.unit) > 1, (rec.id, rec.test)
    assert kinds == set(TEST_KINDS)  # the real records cover every kind


def test_changing_a_threshold_changes_the_text():
    seen = set()
    for rec in _records():
        for name, (_, other) in _thresholds(rec.rule).items():
            if (rec.rule.kind, name) in seen:
                continue
            seen.add((rec.rule.kind, name))
            changed = dataclasses.replace(rec, test="", rule=dataclasses.replace(rec.rule, **{name: other}))
            assert changed.test != rec.test, (rec.id, name)
    assert {("direction", "smallest"), ("absence", "smallest"), ("equivalence", "rel_tol")} <= seen
    assert {("every cell", "rel_tol"), ("value", "paper"), ("value", "tol")} <= seen


def test_the_text_states_the_unit_the_band_and_the_power_rule():
    unit = _rec(PAIRED, Rule("direction", smallest=0.05)).test
    assert "mean ± SE over seeds, Student t with n − 1 dof (fewer than 3 seeds: not judged)" in unit
    assert "paired per unit (minus the baseline cells arm = a)" in unit and "excludes every effect ≥ 0.05" in unit
    value = _rec(Measure({"part": "p"}, "acc", ("seed",)), Rule("value", paper=0.7, paper_se=0.01, tol=0.02)).test
    assert "|measured − paper| > k·√(SE² + 0.01²)" in value and "within the tolerance ±0.02" in value
    assert "at least 5 units" in value and "else not judged (too little power)" in value
    rel = _rec(Measure({"part": "p"}, "acc", ("model",)), Rule("value", paper=2.0, units="models")).test
    assert "10 % of |2| = 0.2" in rel and "at least 5 models" in rel
    extra = _rec(PAIRED, Rule("direction", smallest=0.05), extra="A gate.").test
    assert extra.endswith(". A gate.")


def test_a_record_cannot_carry_a_hand_written_test():
    with pytest.raises(ValueError, match="quantity"):
        _rec(PAIRED, Rule("direction", smallest=0.05), test="agrees when I say so")
    with pytest.raises(ValueError, match="quantity"):
        _rec(PAIRED, Rule("direction", smallest=0.05), quantity=" ")
    rec = _rec(PAIRED, Rule("direction", smallest=0.05))
    assert dataclasses.replace(rec, headline=True).test == rec.test  # replace passes the generated text back


# --- one record's error costs only its own verdict ----------------------------------------------------------------


def _odd(rows: pd.DataFrame) -> np.ndarray:
    raise KeyError("no column 'acc_odd' in this table")


def test_a_record_that_raises_is_not_judged_and_the_others_are():
    good = _rec(PAIRED, Rule("direction", smallest=0.05), id="x/good")
    bad = _rec(Measure({"part": "p", "arm": "b"}, _odd, ("seed",)), Rule("direction", smallest=0.05), id="x/bad")
    verdicts = judge_records([bad, good], Cfg(), _table(0.2))
    assert verdicts["x/good"].verdict == AGREES
    assert verdicts["x/bad"].verdict == NOT_JUDGED
    assert verdicts["x/bad"].reason.startswith(RAISED) and "KeyError" in verdicts["x/bad"].reason
    assert "acc_odd" in verdicts["x/bad"].reason


def test_an_agreement_from_few_uneven_units_is_refused_by_resampling_them():
    """Issue 43: five paired seeds, one far from the other four (+0.030 against about −0.005). The t band from the
    five says "no effect beyond ±0.05"; resampled at the least favourable truth (+0.05), the test agrees about a
    quarter of the time (a resample misses the far seed, and the four left are tight), so the judge refuses it.
    Twelve seeds of the same law agree (the test above)."""
    v = _judge(_rec(PAIRED, Rule("absence", smallest=0.05)), _table(0.0))
    assert v.verdict == NOT_JUDGED and v.reason.startswith("too few units to trust the band: resampling its 5 units")
    assert "at these settings the test gave: agrees" in v.reason
