"""The report notes (``<paper>/notes.py``) say only what no claim row says: a claim's measured value is its row's
(one place), and every number comes from the results or the config (experiments/_notes.py)."""

import dataclasses
import functools
import re

import numpy as np
import pandas as pd
import pytest
import test_experiment_temperature_llm as v_llm
import test_verdicts_categorical as v_categorical
import test_verdicts_dispersion as v_dispersion
import test_verdicts_multihead as v_multihead
import test_verdicts_ood as v_ood
import test_verdicts_temperature as v_temperature
import test_verdicts_temperature_gpt2_regression as v_gpt2

from iclab.experiments import get_experiment
from iclab.claims._judge import judge_run
from iclab.experiments._notes import labelled, md_table, pm, section
from iclab.experiments.temperature.llm.config import TemperatureLLMConfig
from iclab.experiments.temperature.llm.notes import _table_lines
from iclab.experiments.temperature import cells as temperature_cells
from iclab.experiments.temperature.claims import SIMCHECK
from iclab.experiments.temperature.config import TemperatureConfig
from iclab.experiments.temperature.notes import notes as temperature_notes


def _fill(df: pd.DataFrame, parts, **cols) -> pd.DataFrame:
    """``df`` with the values only the notes read (absent from the verdict tests' tables) set for the rows of
    ``parts``: a value, or a function of the row (a list column)."""
    df, rows = df.copy(), df["part"].isin(parts)
    for c, value in cols.items():
        vals = [value(r) if callable(value) else value for _, r in df[rows].iterrows()]
        kind = object if callable(value) else float
        df[c] = df[c].astype(kind) if c in df else pd.Series([None] * len(df), index=df.index, dtype=kind)
        df.loc[rows, c] = pd.Series(vals, index=df.index[rows], dtype=object if callable(value) else float)
    return df


def _ood(df: pd.DataFrame) -> pd.DataFrame:
    zeros = lambda key: lambda r: [0.0] * len(r[key])  # noqa: E731
    df = _fill(df, ["tiny"], dalpha1_src=zeros("gamma2_list"), dbeta1_src=zeros("gamma2_list"))
    df = _fill(df, ["tiny"], source_before=zeros("gamma2_list"), **{k: zeros("F") for k in ("forgot1", "forgot2")})
    df = _fill(df, ["tiny"], pred1=zeros("F"), pred2=zeros("F"))
    df = _fill(df, ["minilm"], ood_acc=zeros("theta_deg"), F_ce_vs_control=zeros("theta_deg"))
    df = _fill(df, ["ood"], L_largeN=lambda r: [0.375 * t / 90 for t in r["theta_deg"]])
    df = _fill(df, ["pretrain"], conservation_max=1e-15, offspan_max=2e-15)
    return _fill(df, ["minilm"], layer=5, n_train=150, source_acc=0.5, majority_acc=0.25)


@functools.cache
def _temperature_outputs() -> dict[str, dict]:
    """One real cell's output per part: ``temperature.cells.run_cell`` on a tiny config, every cell shrunk to
    d = 3, l = 6, 40 pretraining and 20 test prompts (about a second)."""
    cfg = TemperatureConfig(
        d=3, l_values=(6,), noise_sigmas=(0.5,), sigma_tests=(0.1,), mean_shifts=(0.0, 1.0), n_tau=5,
        surrogate_dims=(2,), surrogate_ls=(6,), surrogate_n_tau=5,
    )  # fmt: skip
    first = {}
    for cell in temperature_cells.cells(cfg):
        first.setdefault(cell["part"], {**cell, "d": 3, "l": 6, "m": 40, "n_test": 20})
    return {part: temperature_cells.run_cell(cfg, cell) for part, cell in first.items()}


def _temperature(df: pd.DataFrame) -> pd.DataFrame:
    """The verdict tests' made-up table with every column the real cells of each part produce
    (:func:`_temperature_outputs`) that its rows lack, at the tiny real cell's value: the notes read every column
    the real rows have, so no note line goes untested for want of a column."""
    for part, out in _temperature_outputs().items():
        rows = df["part"] == part
        lacking = [c for c in out if c not in df or df.loc[rows, c].isna().all()]
        df = _fill(df, [part], **{c: _as_fill(out[c]) for c in lacking})
    return df


def _as_fill(value):
    """A value for :func:`_fill`: a number as it is, a list or array as a function of the row."""
    return float(value) if np.ndim(value) == 0 else (lambda r: np.asarray(value).tolist())


#: made-up tables, from the verdict tests: (experiment, config, results); the multihead table without an effect
#: (with one, its η_eff equals the η* the notes derive from the config)
MADE_UP = {
    "categorical": lambda: (v_categorical.CFG, v_categorical.table(True)),
    "dispersion": lambda: (v_dispersion.PAPER, v_dispersion._table(v_dispersion.PAPER, effect=True)),
    "multihead": lambda: (get_experiment("multihead").config("paper"), v_multihead._table(False)),
    "ood": lambda: (v_ood.CFG, _ood(v_ood._table(True))),
    "temperature": lambda: (v_temperature.PAPER_CFG, _temperature(v_temperature._table(True))),
    "temperature-gpt2-regression": lambda: (
        v_gpt2.EXP.config("quick"),
        _fill(v_gpt2._table(True), ["error_vs_tau"], best_tau_first=1.0),
    ),
    "temperature-llm": lambda: (
        TemperatureLLMConfig(models=("m",), tasks=("continent-label",), noise_ratios=(0, 0.4, 0.8), demo_counts=()),
        v_llm._synthetic_rows(list(TemperatureLLMConfig().taus), (0, 0.4, 0.8), {0: 1.0, 0.4: 1.25, 0.8: 1.4}),
    ),
}
#: numbers a note shows that equal a row's measured value by construction of the made-up table, not a restatement
COINCIDENT = {
    "dispersion": {"98.6", "40.4", "7.15", "1.00"},  # adaptive = softmax at n = 16, adaptive at 2048 = a CLRS
    # accuracy, every seed's δ_sup is the same, so the note's per-seed value is the row's mean, and the made-up real
    # coefficients fall exactly as 1/n (the note's other-key slope −1.00, the made-up β rise +1.00)
    "multihead": {"0.8791"},  # the note's η* (from the config) is the made-up trained η_eff
}
_NUMBER = re.compile(r"[-+]?\d*\.\d+(?:e[-+]?\d+)?")


def _precise(text: str) -> set[str]:
    """The decimals of ``text`` with at least three significant digits (fewer coincide by chance)."""
    return {x.lstrip("+-") for x in _NUMBER.findall(text) if len(re.sub(r"e.*|\D", "", x).lstrip("0")) >= 3}


@pytest.mark.parametrize("name", sorted(MADE_UP))
def test_notes_do_not_restate_a_claim_rows_measured_value(name):
    exp = get_experiment(name)
    cfg, df = MADE_UP[name]()
    text = exp.notes(cfg, df)
    rows, _ = judge_run(
        paper=exp.paper,
        experiment=name,
        config=cfg,
        results=df,
        failed=pd.DataFrame(),
        claims=exp.claims,
        compare=exp.compare,
    )
    measured = {x: r.id for r in rows for x in _precise(r.measured)}
    assert measured and text.strip()
    restated = {x: c for x, c in measured.items() if re.search(rf"(?<![\d.]){re.escape(x)}(?!\d)", text)}
    restated = {x: c for x, c in restated.items() if x not in COINCIDENT.get(name, ())}
    assert not restated, restated


def test_the_temperature_sizes_note_is_computed_from_the_check_cells():
    """The per-prompt relative SD is the check cells' (SE·√n / G), not a typed constant."""
    df = v_temperature._table(True)
    chk = df["part"].str.startswith("simcheck")
    assert chk.any()
    for rel in (1.2, 2.5):
        d = df.copy()
        d.loc[chk, "G1_se"] = rel * d.loc[chk, "G1_mc"] / np.sqrt(d.loc[chk, "n_test"])
        d.loc[chk, "Gopt_se"] = rel * d.loc[chk, "Gopt_mc"] / np.sqrt(d.loc[chk, "n_test"])
        text = temperature_notes(v_temperature.PAPER_CFG, _temperature(d))
        assert f"relative SD of about {rel:.2g} " in text and f"±{1.96 * rel:.2g}/√n" in text, text[:400]
    assert "**Sizes.**" not in temperature_notes(v_temperature.PAPER_CFG, _temperature(df[~chk]))


def test_the_llm_table_names_the_claim_rows_instead_of_their_gains():
    cfg = get_experiment("temperature-llm").config("quick")
    top = max(cfg.noise_ratios)
    tab = pd.DataFrame(
        {
            "model": "m",
            "task": "t",
            "part": "noise",
            "noise_ratio": sorted(cfg.noise_ratios),
            "n_demos": 4,
            "n_questions": 40,
            "em_tau1": 0.5,
            "best_tau": 1.0,
            "best_tau_lo": 0.85,
            "best_tau_hi": 1.2,
            "best_em": 0.55,
            "moment_tau": 1.1,
            **{f"{k}_{s}": v for k in ("heldout", "moment") for s, v in (("gain", 0.123), ("lo", 0.0), ("hi", 0.2))},
        }
    )
    lines = _table_lines(cfg, tab)
    for r in cfg.noise_ratios:
        line = next(x for x in lines if x.startswith(f"| m | t | {r:g} |"))
        assert (f"`m/t/gain/{r:g}`" in line) == (r > 0), line
        assert ("`m/t/moment`" in line) == (r == top and cfg.moment_rule), line
        assert line.count("+0.123") == 2 - (r > 0) - (r == top and cfg.moment_rule), line


def test_note_shapes():
    assert section("T") == [] and section("T", "a") == ["### T", "", "a", ""]
    assert md_table("a | b", ["1 | x"]) == ["| a | b |", "|---|---|", "| 1 | x |", ""]
    assert labelled([1.23456, 2.0], ".3g") == "1.23, 2"
    assert labelled([0.5, -0.25], "+.2f", ["0°", "90°"]) == "0°: +0.50, 90°: -0.25"
    assert labelled([10, 20], "d", sep=" → ") == "10 → 20"
    with pytest.raises(ValueError):
        labelled([1.0], labels=["a", "b"])  # a label per value, never a silent truncation
    assert pm(1.234, 0.05, ".1f") == "1.2 ± 0.1"


def test_the_temperature_check_note_compares_the_independent_checks_mc_with_this_runs():
    """The independent check's Monte-Carlo G (claims.SIMCHECK, note §4.11) against this run's: 0 where they are
    equal, the relative difference where not."""
    df = _temperature(v_temperature._table(True))
    for _cid, part, stem, _setting, _theory, mc in SIMCHECK:
        df.loc[df["part"] == part, f"{stem}_mc"] = mc
    cid, part, stem, setting, _theory, mc = SIMCHECK[2]
    df.loc[df["part"] == part, f"{stem}_mc"] = mc / 1.1  # the check 10 % above this run
    text = temperature_notes(v_temperature.PAPER_CFG, df)
    assert f"{setting}: +10.0% (" in text, text
    assert all(f"{row[3]}: +0.0% (+0.0 SE)" in text for row in SIMCHECK if row[3] != setting), text
    chk = df["part"].str.startswith("simcheck")
    assert "independent check against this run" not in temperature_notes(v_temperature.PAPER_CFG, df[~chk])


def test_the_temperature_mean_shift_note_sets_the_query_not_a_key_beside_the_theorem():
    """G/c per ‖μx‖ (theorem, Monte Carlo, query not a key), with the claim row's id in place of the Monte Carlo at
    τ = 1 at the two ‖μx‖ that ``rem3.4-approx-insensitive`` compares (the config's smallest and largest)."""
    df = _temperature(v_temperature._table(True))
    lacking = df.drop(columns=["noquery1_mc", "noquery_opt_mc"])
    assert "the query not a key" not in temperature_notes(v_temperature.PAPER_CFG, lacking)  # no such column
    mean = df["part"] == "mean"
    df.loc[mean, "noquery1_mc"] = 0.25 * df.loc[mean, "c"]
    df.loc[mean, "noquery_opt_mc"] = 0.125 * df.loc[mean, "c"]
    by_mu = df[mean].set_index("mu_x")

    def point(mu: float, mc: str) -> str:
        r = by_mu.loc[mu]
        return (
            f"‖μx‖={mu:g}: {r.G1_theory / r.c:.3f}, {mc}, 0.250 / {r.Gopt_theory / r.c:.3f}, {r.Gopt_mc / r.c:.3f}, "
            "0.125"
        )

    row = "`rem3.4-approx-insensitive`"
    text = temperature_notes(v_temperature.PAPER_CFG, df)
    assert point(8.0, row) in text and point(0.0, row) in text
    assert point(2.0, f"{by_mu.loc[2.0].G1_mc / by_mu.loc[2.0].c:.3f}") in text, text
    to4 = dataclasses.replace(v_temperature.PAPER_CFG, mean_shifts=(0.0, 1.0, 2.0, 4.0))  # the claim reads ‖μx‖ = 4
    text = temperature_notes(to4, df)
    assert point(4.0, row) in text and point(8.0, f"{by_mu.loc[8.0].G1_mc / by_mu.loc[8.0].c:.3f}") in text


def test_the_gpt2_note_lists_each_trained_models_error_at_tau_1():
    df = _fill(v_gpt2._table(True, seeds=3), ["error_vs_tau"], best_tau_first=1.0)
    df.loc[df["shift"] == "mean_x=1", "err_tau1"] = [0.5, 0.25, 0.125]  # train seeds 0, 1, 2
    text = get_experiment("temperature-gpt2-regression").notes(v_gpt2.EXP.config("paper"), df)
    assert "mean_x=1: 0.5, 0.25, 0.125." in text, text
