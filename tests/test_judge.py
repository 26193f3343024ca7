"""Declared claims fix the denominator: missing, failed, raising, off-settings and unreliable claims all show."""

from dataclasses import dataclass

import pandas as pd
import pytest

from iclab.claims._judge import Claim, judge_run, settings_differ
from iclab.stats import AGREES, NOT_JUDGED, judge_direction


@dataclass(frozen=True)
class _Cfg:
    n: int = 40
    steps: int = 150
    sizes: tuple = (1, 2)


CLAIMS = [
    Claim("gain", "adaptive beats softmax", "arXiv:0000.00000 Tab. 1", "effect direction", "CI of the gain > 0"),
    Claim(
        "acc",
        "accuracy 0.7 at N = 125",
        "arXiv:0000.00000 Fig. 2",
        "paper value",
        "|Δ| ≤ 2 SE",
        "0.7",
        paper_settings={"n": 125, "steps": 20000},
    ),
    Claim(
        "seed",
        "a second-hand number",
        "second-hand summary",
        "paper value",
        "|Δ| ≤ 2 SE",
        "0.4",
        unreliable="the summary's table is below the Bayes risk",
    ),
]


def _compare(config, df):
    gain = df["adaptive"] - df["softmax"]
    v = judge_direction(float(gain.mean()), float(gain.std(ddof=1) / len(gain) ** 0.5))
    return {"gain": v, "acc": v, "seed": v}


def _run(df, failed=None, compare=_compare, config=_Cfg()):
    return judge_run(
        paper="p",
        experiment="e",
        config=config,
        results=df,
        failed=pd.DataFrame() if failed is None else failed,
        claims=lambda c: CLAIMS,
        compare=compare,
    )


def test_every_declared_claim_gets_a_row_with_its_reason():
    df = pd.DataFrame({"softmax": [0.5, 0.52, 0.49, 0.51], "adaptive": [0.6, 0.63, 0.61, 0.6]})
    rows, errors = _run(df)
    assert not errors and [r.id for r in rows] == ["gain", "acc", "seed"]
    by = {r.id: r for r in rows}
    assert by["gain"].verdict == AGREES
    assert by["acc"].verdict == NOT_JUDGED and "n = 40 (paper 125)" in by["acc"].reason
    assert "steps = 150 (paper 20000)" in by["acc"].reason and by["acc"].measured != "—"
    assert by["seed"].verdict == NOT_JUDGED and "unreliable source" in by["seed"].reason
    ok, _ = _run(df, config=_Cfg(n=125, steps=20000))
    assert {r.id: r.verdict for r in ok}["acc"] == AGREES


def test_null_table_does_not_agree():
    df = pd.DataFrame({"softmax": [0.5, 0.52, 0.49, 0.51], "adaptive": [0.5, 0.52, 0.49, 0.51]})
    rows, _ = _run(df)
    assert all(r.verdict != AGREES for r in rows)


def test_failed_cells_and_a_raising_compare_give_not_measured():
    empty, _ = _run(pd.DataFrame(), failed=pd.DataFrame({"_error": ["boom"]}))
    assert [r.verdict for r in empty] == [NOT_JUDGED] * 3
    assert "not measured: no finished cells (1 failed cell(s)" in empty[0].reason

    def broken(config, df):
        raise KeyError("softmax")

    rows, errors = _run(pd.DataFrame({"x": [1]}), compare=broken)
    assert len(rows) == 3 and "raised KeyError" in rows[0].reason and errors == ["compare failed: KeyError: 'softmax'"]


def test_undeclared_and_duplicate_claims_are_errors():
    rows, errors = judge_run(
        paper="p",
        experiment="e",
        config=_Cfg(),
        results=pd.DataFrame({"x": [1]}),
        failed=pd.DataFrame(),
        claims=lambda c: CLAIMS[:1] * 2,
        compare=lambda c, d: {"other": judge_direction(1.0, 0.1)},
    )
    assert "claim id 'gain' is declared twice" in errors and "verdict for undeclared claim 'other'" in errors


def test_claim_contract_and_settings_text():
    with pytest.raises(ValueError, match="kind"):
        Claim("x", "c", "s", "vibes", "t")
    with pytest.raises(ValueError, match="test is empty"):
        Claim("x", "c", "s", "paper value", " ")
    assert settings_differ(_Cfg(), {"sizes": (1, 2)}) == ""
    assert settings_differ(_Cfg(), {"sizes": [1, 2, 4]}) == "settings differ: sizes = 1,2 (paper 1,2,4)"


@pytest.mark.parametrize(
    "name",
    ["temperature", "temperature-llm", "temperature-gpt2-regression", "ood", "dispersion", "multihead", "categorical"],
)
def test_every_paper_experiment_declares_claims_and_a_paper_preset(name):
    """The seven experiments of the five papers: declared claims at every preset (unique ids, a kind, a test and a
    source each) and a ``paper`` preset."""
    from iclab.experiments import get_experiment
    from iclab.stats import KINDS

    exp = get_experiment(name)
    assert {"quick", "paper", "full"} <= set(exp.presets)
    for preset in exp.presets:
        rows = exp.claims(exp.config(preset))
        assert rows and len({c.id for c in rows}) == len(rows), preset
        for c in rows:
            assert c.kind in KINDS and c.test.strip() and c.source.strip() and c.claim.strip(), c.id
