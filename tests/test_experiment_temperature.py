"""The ``temperature`` experiment (arXiv:2511.01292, docs/papers/temperature.md §5.1) end to end on a tiny config
(serial executor)."""

import pytest

from iclab.errors import ConfigError
from iclab.experiments import get_experiment
from iclab.report import run_and_report

TINY = {
    "d": 6,
    "m": 40,
    "l_values": "8,12",
    "n_test": 40,
    "noise_sigmas": "1.0",
    "sigma_tests": "0.5,2",
    "mean_shifts": "0,1",
    "simcheck": "false",
    "n_tau": 9,
    "surrogate_dims": "2,6",
    "surrogate_ls": "8",
    "surrogate_n_test": 40,
    "surrogate_n_tau": 13,
}


def test_runs_end_to_end_and_resumes(tmp_path):
    out = tmp_path / "run"
    first = run_and_report("temperature", "quick", TINY, seed=1, out=out, executor="serial", progress=False)
    n_cells = len(get_experiment("temperature").cells(get_experiment("temperature").config("quick", TINY, 1)))
    assert first.computed == n_cells == len(first.results) and len(first.failed) == 0
    figures = sorted(p.name for p in (out / "figures").glob("*.png"))
    for name in (
        "fig1a_no_shift.png",
        "fig1b_input_cov_shift.png",
        "fig1c_task_shift.png",
        "fig2a_noise_vs_l.png",
        "fig2b_noise_vs_sigma.png",
        "fig2c_tau_opt_vs_sigma.png",
        "fig_tau_formula_vs_grid.png",
        "fig_mean_shift_linear_vs_approx.png",
        "fig_surrogate_vs_softmax.png",
    ):
        assert name in figures and (out / "figures" / name).with_suffix(".csv").exists()
    report = (out / "report.md").read_text()
    assert "Claims: paper reports / iclab measures / verdict" in report and "21 claims:" in report
    assert "τ_opt of Eq. 15 is the τ that minimises the simulated error" in report
    assert "failed:" not in report  # figures/compare/notes ran without error
    row = first.results.iloc[0]
    assert row["G1_theory"] > 0 and row["tau_opt_theory"] > 1 and len(row["G_curve_mc"]) == 9
    sur = first.results[first.results["part"] == "surrogate"]
    assert len(sur) == 2 and all(len(r) == 13 for r in sur["G_soft_curve"])
    again = run_and_report("temperature", "quick", TINY, seed=1, out=out, executor="serial", progress=False)
    assert again.computed == 0 and again.reused == n_cells


def test_cells_are_deterministic():
    from iclab.experiments.temperature.cells import run_cell

    exp = get_experiment("temperature")
    cfg = exp.config("quick", TINY, 0)
    cell = exp.cells(cfg)[0]
    assert run_cell(cfg, cell) == run_cell(cfg, cell)


def test_bad_overrides():
    exp = get_experiment("temperature")
    with pytest.raises(ConfigError) as exc:
        exp.config("quick", {"nope": "1"})
    assert "nope" in str(exc.value) and "allowed keys" in str(exc.value)
    with pytest.raises(ConfigError) as exc:
        exp.config("quick", {"cov_scale": "-1"})
    assert exc.value.field == "cov_scale"
    with pytest.raises(ConfigError) as exc:
        exp.config("quick", {"l_values": "1,5"})
    assert exc.value.field == "l_values"
    with pytest.raises(ConfigError) as exc:
        exp.config("quick", {"tau_min": "4", "tau_max": "2"})
    assert exc.value.field == "tau_max"


def test_surrogate_tracks_softmax_only_far_above_the_score_spread():
    """Note §4.12: same weights, same prompts — the two layers' outputs agree once τ ≫ the score spread (the
    discrepancy falls like spread/τ), not at Eq. 15's τ_opt; at d = 1 the spread is below τ_opt."""
    import numpy as np

    from iclab.experiments.temperature.cells import _cell
    from iclab.experiments.temperature.montecarlo import tau_grid
    from iclab.experiments.temperature.surrogate import evaluate_surrogate

    cfg = get_experiment("temperature").config("quick", {"m": 200})
    taus = tau_grid(0.1, 1e5, 25)
    big = evaluate_surrogate(_cell(cfg, "surrogate", 40, d=20, m=200, n_test=300), taus)
    diff = np.array(big["out_diff_curve"])
    assert big["score_spread"] > 20 and big["out_diff_opt"] > 0.9  # no first-order regime at τ_opt
    assert diff[-1] < 1e-6 and np.all(np.diff(diff[taus > 10 * big["score_spread"]]) < 0)
    assert big["tau_best_soft"] > 10 * big["tau_opt_theory"] and big["tau_track"] > big["score_spread"]
    assert big["G_soft_scaled_best"] <= big["G_soft_best"] and big["G_soft_scaled_best"] > big["Ga_opt_mc"]
    small = evaluate_surrogate(_cell(cfg, "surrogate", 40, d=1, m=200, n_test=300), taus)
    assert small["score_spread"] < small["tau_opt_theory"] < 1.5
