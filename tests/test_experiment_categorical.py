"""The ``categorical`` experiment (arXiv:2405.17248) end to end on a tiny config (serial executor): cells, figures,
comparison."""

import pytest

from iclab.errors import ConfigError
from iclab.experiments import get_experiment

TINY = {"n_context": 7, "n_classes": 7, "d": 3, "d_embed": 3, "train_sizes": (32, 64), "rbf_train_sizes": (32,),
        "layers": (1,), "blocks_sweep": (1, 2), "blocks_models": ("gd",), "blocks_L": 64, "steps": 6,
        "batch_size": 16, "eval_every": 3, "n_val": 16, "n_test": 32, "feature_datasets": ("digits",),
        "feature_blocks": (1,), "feature_steps": 4, "feature_train_contexts": 32, "probe_steps": 5,
        "feature_dim": 8, "lm_width": 8, "lm_heads": 2, "lm_seq_len": 8, "lm_steps": 3, "lm_batch": 4,
        "lm_eval_windows": 8, "stationarity_steps": 3, "stationarity_prompts": 64, "stationarity_blocks": 1}


@pytest.mark.slow
def test_categorical_tiny_end_to_end(tmp_path):
    from iclab.report import run_and_report

    res = run_and_report("categorical", "quick", overrides=TINY, out=tmp_path / "run", executor="serial",
                         progress=False)
    df = res.results
    assert set(df["part"]) == {"synthetic", "features", "language", "stationarity"}
    syn = df[df["part"] == "synthetic"]
    assert len(syn) == 2 * 2 + 2 * 1 + 1  # softmax L x model, rbf x model, blocks=2 GD
    assert syn["acc"].between(0, 1).all() and (syn["nll"] > 0).all()
    feat = df[df["part"] == "features"]
    assert set(feat["blocks"]) == {0, 1} and feat["acc"].between(0, 1).all()
    assert (df[df["part"] == "language"]["perplexity"] > 1).all()
    figs = sorted(p.name for p in (tmp_path / "run" / "figures").glob("*.png"))
    assert {"categorical_L_sweep.png", "categorical_blocks.png", "categorical_features.png",
            "categorical_language.png", "categorical_stationarity.png"} <= set(figs)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "GD ≥ trained TF at small L" in report and "stationarity (softmax)" in report
    assert "Where iclab and the paper differ" in report


def test_config_errors():
    exp = get_experiment("categorical")
    with pytest.raises(ConfigError, match="kernels"):
        exp.config("quick", {"kernels": ("cosine",)})
    with pytest.raises(ConfigError, match="parts"):
        exp.config("quick", {"parts": ("images",)})
    with pytest.raises(ConfigError, match="digits_test_classes"):
        exp.config("quick", {"digits_test_classes": 7})
    cells = exp.cells(exp.config("quick"))
    assert all("seed" in c and "part" in c for c in cells)
    assert len({str(sorted(c.items())) for c in cells}) == len(cells)


def test_gd_likeness_separates_construction_from_random():
    import torch

    from iclab.experiments.categorical.synthetic import gd_likeness
    from iclab.models import FunctionalGDModel, TrainedCategoricalTransformer

    rand = gd_likeness(TrainedCategoricalTransformer(5, 7, 3, 1, generator=torch.Generator().manual_seed(0)), 5, 3)
    gd = gd_likeness(TrainedCategoricalTransformer.from_gd(FunctionalGDModel(5, 7, 3, 1)), 5, 3)
    assert rand["qk_diag_ratio"] < 3 and rand["vp_wf_diag_ratio"] < 3
    assert gd["qk_diag_ratio"] > 1e6 and gd["vp_wf_diag_ratio"] > 1e6
