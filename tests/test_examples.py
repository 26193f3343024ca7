"""Every script in ``examples/`` runs: its ``main`` as a user would call it (the real SmolLM2 model for the
Hugging Face ones, from the installed package, offline), and its command line (``--help``)."""

import math
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name: str) -> dict:
    return runpy.run_path(str(EXAMPLES / f"{name}.py"))


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.stem)
def test_every_example_has_a_docstring_and_a_command_line(path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [str(path), "--help"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(path), run_name="__main__")
    assert stop.value.code == 0 and "usage:" in capsys.readouterr().out
    assert (runpy.run_path(str(path)).get("__doc__") or "").strip()


def test_closed_form_vs_monte_carlo():
    out = _load("closed_form_vs_monte_carlo")["main"](d=20, l=40, prompts=4000)
    for theory, mc, se in ((out["G1"], out["mc1"], out["mc1_se"]), (out["Gopt"], out["mcopt"], out["mcopt_se"])):
        assert abs(mc - theory) <= 0.1 * theory + 3 * se  # Theorem 4.2 drops O(1/l) terms: a few % at l = 40
    assert out["mcopt"] < out["mc1"] and out["tau_opt"] > 1  # under Σx = 2·I the optimal τ is above 1 and helps


def test_load_run_into_pandas(tmp_path, capsys):
    results, config = _load("load_run_into_pandas")["main"](tmp_path / "run")
    assert config["d"] == 10 and config["l_values"] == [10, 20, 40]
    assert len(results) > 0 and set(results["l"]) == {10, 20, 40}
    assert np.isfinite(results["tau_opt_theory"]).all()
    assert f"{len(results)} cells from {tmp_path / 'run'}" in capsys.readouterr().out


@pytest.mark.slow
def test_tau_on_hf_model_changes_the_answer_with_tau():
    answers = _load("tau_on_hf_model")["main"]("smollm2", [1.0, 4.0])
    assert answers[1.0].startswith("Rome")  # the stock model (τ = 1) answers the few-shot prompt
    assert answers[4.0] != answers[1.0]  # a flat attention (τ = 4) changes what it says


@pytest.mark.slow
def test_probe_score_moments():
    per_layer = _load("probe_score_moments")["main"]("smollm2")
    assert len(per_layer) == 30  # SmolLM2-135M has 30 layers
    assert (per_layer["var"] > 0).all() and (per_layer["entropy"] > 0).all()
    assert np.allclose(per_layer["rho"], per_layer["var"] / per_layer["mean"])


@pytest.mark.slow
def test_estimate_tau():
    estimate = _load("estimate_tau")["main"]("smollm2", [1.0, 1.5])
    assert len(estimate.layer_tau) == 30 and all(0.25 <= t <= 8 for t in estimate.layer_tau)
    assert estimate.best_tau in (1.0, 1.5) and all(0 <= s <= 1 for s in estimate.grid_scores)
    assert math.isfinite(estimate.moment_score)
