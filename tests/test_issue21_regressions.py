"""Issue 21 regressions the other test modules leave open, each on a made-up results table judged by the real
``compare`` / judge (the rest of the audit's defects: tests/test_judge_rules.py, tests/test_verdicts_*.py,
tests/test_claim_identities.py, tests/test_report.py, tests/test_calibration.py).

- categorical: every paper accuracy (``acc/L=…``, ``acc/blocks=…``), not only ``acc/L=2048/gd``, 5 or 8 SE from the
  paper's value with three W_e draws agreed; dropping a draw flipped one to three of them to "agrees";
- dispersion: every ``lookup/{task}/{model}`` claim, not only the key–value one of SmolLM2, fell back to 32 lines
  when its 128-line cells failed;
- no family: a real experiment's table with no effect gave "agrees" by chance and the run said nothing of how many
  chance alone would give.
"""

import numpy as np
import pandas as pd
import pytest
from test_verdicts_categorical import CFG as CAT_CFG
from test_verdicts_categorical import DRAWS, synthetic_table
from test_verdicts_dispersion import _lookup
from test_verdicts_ood import CFG as OOD_CFG
from test_verdicts_ood import _table as ood_table
from test_verdicts_temperature_gpt2_regression import EXP as GPT2
from test_verdicts_temperature_gpt2_regression import _table as gpt2_table

from iclab import stats
from iclab.experiments import chance_line, family_summary, get_experiment, judge_run
from iclab.claims._cells import cell_mask
from iclab.experiments.categorical.claims import claims as categorical_claims
from iclab.experiments.ood.claims import claims as ood_claims
from iclab.experiments.temperature.gpt2.claims import claims as gpt2_claims
from iclab.stats import AGREES, NOMINAL, NOT_JUDGED

#: the paper preset with the lookup lists that ``lookup/kv/smollm2``'s minimum (fixed from a pilot) asks
DISPERSION = get_experiment("dispersion").config("paper").with_overrides({"lookup_lists": 10})
categorical_compare = get_experiment("categorical").compare
dispersion_compare = get_experiment("dispersion").compare
ood_compare = get_experiment("ood").compare
gpt2_compare = get_experiment("temperature-gpt2-regression").compare


def _accuracy_claims(table: pd.DataFrame) -> list:
    """The paper-accuracy records of the test config that have rows in ``table``."""
    recs = [c for c in categorical_claims(CAT_CFG) if c.id.startswith("acc/")]
    return [c for c in recs if cell_mask(table, c.measure.where).any()]


@pytest.mark.parametrize("ses_away", [5.0, 8.0])
def test_no_categorical_accuracy_5_or_8_se_away_agrees_nor_after_losing_a_draw(ses_away):
    """Each paper accuracy set ``ses_away`` SE (the SE over the three W_e draws) from the paper's value: the band
    (t(2) on draws 0.05 apart in difficulty) contained it and agreed. Now none agrees, with all three draws or with
    any one of them lost (two draws: too few units)."""
    table = synthetic_table(True)
    recs = _accuracy_claims(table)
    assert {"acc/L=2048/gd", "acc/blocks=1/gd", "acc/blocks=3/gd"} <= {c.id for c in recs}
    for c in recs:
        rows = cell_mask(table, c.measure.where)
        m, se, n = stats.mean_se(table.loc[rows, "acc"])
        assert n == len(DRAWS)
        table.loc[rows, "acc"] += c.rule.paper + ses_away * se - m
    judged = categorical_compare(CAT_CFG, table)
    for c in recs:
        v = judged[c.id]
        assert v.verdict == NOT_JUDGED and "too little power" in v.reason, (c.id, v)
    for lost in DRAWS:
        judged = categorical_compare(CAT_CFG, table[table["embedding_seed"] != lost])
        for c in recs:
            v = judged[c.id]
            assert v.verdict == NOT_JUDGED and "too few units" in v.reason, (lost, c.id, v)


@pytest.mark.parametrize("task", ["kv", "passkey"])
@pytest.mark.parametrize("model", ["smollm2", "gemma3-270m"])
def test_no_lookup_claim_falls_back_to_a_shorter_list(task, model):
    """``lookup/{task}/{model}`` is judged at the largest lookup_sizes (128 lines): with that one cell failed it was
    judged at 32 lines and agreed. Now "not measured", naming the 128-line cell; every other lookup claim keeps its
    verdict."""
    df = pd.DataFrame(_lookup(DISPERSION, True, np.random.default_rng(0)))
    cid, largest = f"lookup/{task}/{model}", max(DISPERSION.lookup_sizes)
    full = dispersion_compare(DISPERSION, df)
    lookups = [k for k in full if k.startswith("lookup/")]
    assert len(lookups) == 4 and all(full[k].verdict == AGREES for k in lookups), {k: full[k] for k in lookups}
    shorter = df[(df["task"] == task) & (df["model"] == model) & (df["n_pairs"] < largest)]
    assert len(shorter) > 0  # the shorter lists are there to fall back on
    lost = dispersion_compare(
        DISPERSION, df[~((df["task"] == task) & (df["model"] == model) & (df["n_pairs"] == largest))]
    )
    v = lost[cid]
    assert v.verdict == NOT_JUDGED and "not measured" in v.reason and f"n_pairs = {largest}" in v.reason, v
    assert {k: lost[k].verdict for k in lookups if k != cid} == {k: AGREES for k in lookups if k != cid}


@pytest.mark.parametrize(
    "name, table, cfg, claims, compare",
    [
        ("temperature-gpt2-regression", lambda: gpt2_table(False, seeds=3), GPT2.config("quick"), gpt2_claims,
         gpt2_compare),
        ("ood", lambda: ood_table(False), OOD_CFG, ood_claims, ood_compare),
    ],
)  # fmt: skip
def test_a_table_with_no_effect_says_how_many_agreements_chance_gives(name, table, cfg, claims, compare):
    """A table with no effect anywhere showed at least one "agrees" in 10–34 % of draws and nothing said how many
    chance alone would give. The run's family summary now counts the judged claims and the agreements expected by
    chance under no effect (at most the nominal 5 % each, + Monte Carlo error), names the headline family Holm
    controls, and the ledger line says so."""
    rows, errors = judge_run(
        paper=name, experiment=name, config=cfg, results=table(), failed=pd.DataFrame(), claims=claims, compare=compare
    )
    assert not errors
    summary = family_summary(rows, draws=400)
    chance, holm = summary["chance_agrees"], summary["holm"]
    assert chance["claims"] == len(rows) == len(claims(cfg))
    judged = chance["judged"]
    assert 1 <= judged <= len(rows) and chance["untested"] == len(rows) - judged
    mc = 2 * np.sqrt(NOMINAL * (1 - NOMINAL) / 400)
    assert 0 < chance["expected"] <= judged * (NOMINAL + mc), chance
    headline = {r.id for r in rows if r.headline}
    tested = {r.id for r in rows if r.headline and r.test_record and not r.test_record.get("gate")}
    assert tested and tested == set(holm["p_adjusted"]) and holm["family"] == len(tested), (tested, holm)
    assert set(holm["headline_untested"]) == headline - tested
    assert holm["outside"] == []  # no headline "agrees" stands outside the family correction
    line = chance_line([summary])
    assert line.startswith(f"Expected agreements by chance under no effect: {chance['expected']:.2f} (of {judged} ")
    assert "Holm family-wise α = 0.05" in line
