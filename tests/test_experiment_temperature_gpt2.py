"""End-to-end test of experiment ``temperature-gpt2-regression`` (arXiv:2511.01292, docs/papers/temperature.md §5.2)
on a tiny config (serial executor)."""

import math

import numpy as np
import pytest
import torch

from iclab.errors import ConfigError
from iclab.experiments.temperature.gpt2 import cells as E
from iclab.experiments.temperature.gpt2.config import TemperatureGPT2Config
from iclab.experiments.temperature.gpt2.shifts import shift_distribution, theory_tau, zero_predictor_error
from iclab.experiments.temperature.gpt2.training import build_model

TINY = {
    "d": 3,
    "n": 7,
    "n_layer": 2,
    "n_head": 2,
    "n_embd": 16,
    "steps": 40,
    "batch_size": 16,
    "lr": 3e-3,
    "shifts": ("none", "cov_x*2", "noise=1"),
    "taus": (0.5, 1.0, 2.0),
    "n_test": 97,
    "train_seeds": 1,
}


def test_config_errors():
    with pytest.raises(ConfigError, match="shifts"):
        TemperatureGPT2Config(shifts=("none", "rotate"))
    with pytest.raises(ConfigError, match="taus"):
        TemperatureGPT2Config(taus=(0.5, 2.0))
    with pytest.raises(ConfigError, match="n_embd"):
        TemperatureGPT2Config(n_embd=10, n_head=4)


def test_theory_tau_isotropic_values():
    cfg = TemperatureGPT2Config(d=5, n=20, sigma_train=0.1)
    l = 21
    assert theory_tau(cfg, "none") == pytest.approx((1 + 5 / l + 0.01 / l) / (1 + 0.01 / l))
    assert theory_tau(cfg, "cov_x*2") == pytest.approx((2 * (1 + 5 / l) + 0.01 / l) / (1 + 0.01 / l))
    assert theory_tau(cfg, "noise=2") == pytest.approx((1 + 5 / l + 4 / l) / (1 + 0.01 / l))
    assert theory_tau(cfg, "cov_w*3") == pytest.approx((1 + 5 / l + 0.01 / (3 * l)) / (1 + 0.01 / l))
    assert theory_tau(cfg, "mean_x=1") == theory_tau(cfg, "none")  # μx does not enter (docs/papers/temperature.md §4.5)


def test_shift_distributions_have_the_stated_moments():
    cfg = TemperatureGPT2Config(d=5, n=11)
    m = shift_distribution(cfg, "cov_x*2").moments()
    assert np.allclose(m["cov_x"], 2 * np.eye(5)) and m["sigma"] == pytest.approx(0.1)
    m = shift_distribution(cfg, "noise=2").moments()
    assert np.allclose(m["cov_x"], np.eye(5)) and m["sigma"] == 2.0
    m = shift_distribution(cfg, "mean_x=1").moments()
    assert np.allclose(m["mu_x"], 1.0)
    assert zero_predictor_error(shift_distribution(cfg, "cov_w*3")) == pytest.approx(3 * 5 + 0.01)


def test_temperature_is_applied_and_tau1_is_the_trained_model():
    cfg = TemperatureGPT2Config(**TINY)
    torch.manual_seed(0)
    model = build_model(cfg).eval()
    batch = shift_distribution(cfg, "none").sample(5, torch.Generator().manual_seed(1))
    with torch.no_grad():
        stock = model(batch)
        errs, _ = E.errors_vs_tau(model, batch, (1.0, 2.0), False, cfg.n_layer)
        first, _ = E.errors_vs_tau(model, batch, (1.0, 2.0), True, cfg.n_layer)
    assert errs[0] == pytest.approx(float(((stock - batch.target) ** 2).mean()), rel=1e-6)
    assert first[0] == pytest.approx(errs[0], rel=1e-6)
    assert errs[1] != errs[0] and first[1] != errs[1] and first[1] != errs[0]
    from iclab.hf import with_temperature

    with torch.no_grad():
        with with_temperature(model.backbone, tau=2.0):
            hot = model(batch)
        assert (hot - stock).abs().max() > 1e-7
        assert torch.equal(model(batch), stock)  # temperature removed on exit


def test_query_label_is_never_read():
    cfg = TemperatureGPT2Config(**TINY)
    model = build_model(cfg).eval()
    batch = shift_distribution(cfg, "none").sample(4, torch.Generator().manual_seed(2))
    other = type(batch)(batch.x.clone(), batch.y.clone(), batch.w.clone())
    other.y[:, -1] += 100.0
    with torch.no_grad():
        assert torch.equal(model(batch), model(other))


def test_end_to_end_tiny(tmp_path):
    from iclab.report import run_and_report

    res = run_and_report(
        "temperature-gpt2-regression", "quick", TINY, out=tmp_path / "run", executor="serial", progress=False
    )
    df = res.results
    assert sorted(df["shift"]) == sorted(TINY["shifts"])
    for _, r in df.iterrows():
        assert len(r["err_all"]) == 3 and len(r["err_first"]) == 3
        assert all(math.isfinite(e) and e > 0 for e in r["err_all"] + r["err_first"])
        assert r["err_tau1"] == r["err_all"][1] and r["err_first"][1] == pytest.approx(r["err_all"][1], rel=1e-6)
        assert r["best_tau_all"] in TINY["taus"] and r["best_err_all"] == min(r["err_all"])
        assert 0 < r["bayes_err"] < 1.5
    cov = df[df["shift"] == "cov_x*2"].iloc[0]
    assert cov["theory_tau"] > 2
    figs = sorted(p.name for p in (res.path / "figures").glob("*.png"))
    assert figs == ["gpt2_best_tau_vs_theory.png", "gpt2_error_vs_tau_all.png", "gpt2_error_vs_tau_first.png"]
    report = (res.path / "report.md").read_text()
    assert "Re-tuning the attention temperature (all layers) lowers" in report and "report error" not in report
    assert all(len(b) == 200 for b in df["best_tau_all_boot"]) and all(len(t) == 2 for t in df["cf_taus_all"])


@pytest.mark.slow
def test_parallel_training_equals_serial():
    """Two models trained in two spawned processes equal the same models trained one after another."""
    from iclab.experiments.temperature.gpt2 import training

    cfg = TemperatureGPT2Config(**{**TINY, "steps": 5, "train_seeds": 2})
    if training._parallel_workers(cfg) < 2:
        pytest.skip("one CPU core: nothing runs in parallel")
    par = training.train_models(cfg)
    for s in range(2):
        ser = training._train_one(cfg, s, progress=False)
        assert all(torch.equal(par[s]["state"][k], v) for k, v in ser["state"].items())
        assert par[s]["final_loss"] == ser["final_loss"]
