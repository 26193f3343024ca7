"""The ``dispersion`` experiment (arXiv:2410.01104; docs/papers/dispersion.md §5) end to end on a tiny config (serial
executor), and its config validation."""

import json

import pytest

from iclab.errors import ConfigError
from iclab.experiments import get_experiment

TINY = {"seeds": "2", "variant_seeds": "1", "steps": "40", "d": "8", "depth": "1", "batch_size": "32",
        "test_sizes": "16,64,256", "eval_sets": "24", "fit_sizes": "16,64", "fit_sets": "48", "beta_step": "0.5",
        "entropy_bin": "0.5", "delta_models": "minilm", "delta_tokens": "24", "clrs_tasks": "minimum,running_max",
        "clrs_steps": "20", "clrs_test_sizes": "8,16", "clrs_eval": "16", "clrs_d_model": "8", "clrs_layers": "1"}


@pytest.mark.slow
def test_tiny_run_end_to_end(tmp_path):
    from iclab.report import run_and_report

    res = run_and_report("dispersion", "quick", TINY, out=tmp_path / "run", executor="serial", progress=False)
    assert res.failed.empty and len(res.results) == 2 + 2 + 1 + 4
    df = res.results
    soft = df[(df["part"] == "retrieval") & (df["normaliser"] == "softmax")]
    for _, r in soft.iterrows():
        assert len(r["acc"]) == 3 and len(r["acc_adaptive"]) == 3
        assert all(0.0 <= a <= 1.0 for a in r["acc"] + r["acc_adaptive"])
        assert r["max_coef"][0] >= r["max_coef"][-1]  # disperses with n
        assert len(r["fit_loss"]) == r["fit_n_bins"] * 9
    report = (tmp_path / "run" / "report.md").read_text()
    assert "paired t-test" in report and "minilm" in report
    figs = {p.name for p in (tmp_path / "run" / "figures").glob("*.png")}
    assert {"retrieval_accuracy.png", "retrieval_dispersion.png", "logit_spread.png",
            "clrs_size_generalisation.png"} <= figs
    json.loads((tmp_path / "run" / "summary.json").read_text())
    again = run_and_report("dispersion", "quick", TINY, out=tmp_path / "run", executor="serial", progress=False)
    assert again.computed == 0 and again.reused == len(res.results)


def test_cells_and_presets():
    exp = get_experiment("dispersion")
    quick, full = exp.config("quick"), exp.config("full")
    assert max(full.test_sizes) == 16384 and full.d == 128 and full.seeds >= 10
    cells = exp.cells(quick)
    parts = [c["part"] for c in cells]
    assert parts.count("retrieval") == quick.seeds + 2 * quick.variant_seeds
    assert all("seed" in c and "part" in c for c in cells) and len({json.dumps(c, sort_keys=True) for c in cells}) == len(cells)


@pytest.mark.parametrize("key,value", [("variants", "sigmoid"), ("variants", "softmax,relu"), ("d", "0"),
                                       ("test_sizes", "16,0"), ("clrs_tasks", "heapsort"), ("beta_max", "0.5"),
                                       ("delta_models", "gpt2"), ("clrs_heads", "3")])
def test_bad_config_raises_config_error(key, value):
    with pytest.raises(ConfigError):
        get_experiment("dispersion").config("quick", {key: value})
