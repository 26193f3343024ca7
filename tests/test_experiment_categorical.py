"""The ``categorical`` experiment (arXiv:2405.17248) end to end on a tiny config (serial executor): cells, figures,
comparison."""

import json

import pytest

from iclab.errors import ConfigError
from iclab.experiments import get_experiment
from iclab.claims._records import RAISED

TINY = {
    "n_context": 7,
    "n_classes": 7,
    "d": 3,
    "d_embed": 3,
    "train_sizes": (32, 64),
    "rbf_train_sizes": (32,),
    "layers": (1,),
    "blocks_sweep": (1, 3),
    "blocks_models": ("gd",),
    "blocks_L": 64,
    "steps": 6,
    "embedding_seeds": (42, 43),
    "kernels": ("softmax", "rbf"),
    "batch_size": 16,
    "eval_every": 3,
    "n_val": 16,
    "n_test": 32,
    "feature_datasets": ("digits",),
    "feature_blocks": (1,),
    "feature_steps": 4,
    "feature_train_contexts": 32,
    "probe_steps": 5,
    "feature_dim": 8,
    "lm_width": 8,
    "lm_heads": 2,
    "lm_seq_len": 8,
    "lm_steps": 3,
    "lm_batch": 4,
    "lm_eval_windows": 8,
    "stationarity_steps": 3,
    "stationarity_prompts": 64,
    "stationarity_blocks": 1,
}


@pytest.mark.slow
def test_categorical_tiny_end_to_end(tmp_path):
    from iclab.report import run_and_report

    res = run_and_report(
        "categorical", "quick", overrides=TINY, out=tmp_path / "run", executor="serial", progress=False
    )
    df = res.results
    assert set(df["part"]) == {"synthetic", "features", "language", "stationarity"}
    syn = df[df["part"] == "synthetic"]
    # per W_e draw: softmax L x model, rbf x model, blocks=3 GD with both erase heads
    assert len(syn) == 2 * (2 * 2 + 2 * 1 + 2)
    assert set(syn["embedding_seed"]) == {42, 43} and set(syn["erase"]) == {"distance", "dot"}
    assert syn["acc"].between(0, 1).all() and (syn["nll"] > 0).all()
    gd = syn[syn["model"] == "gd"]
    assert (gd[gd["erase"] == "distance"]["fgd_tv"] < 1e-9).all()  # one block = one functional-GD step
    feat = df[df["part"] == "features"]
    assert set(feat["blocks"]) == {0, 1} and feat["acc"].between(0, 1).all()
    assert (df[df["part"] == "language"]["perplexity"] > 1).all()
    figs = sorted(p.name for p in (tmp_path / "run" / "figures").glob("*.png"))
    assert {
        "categorical_L_sweep.png",
        "categorical_blocks.png",
        "categorical_functional_gd.png",
        "categorical_features.png",
        "categorical_language.png",
        "categorical_stationarity.png",
    } <= set(figs)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "performs K steps of functional GD" in report and "x coordinate is zero" in report
    assert "Where iclab and the paper differ" in report and "report error" not in report
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    ids = {c["id"] for c in summary["comparisons"]}
    assert {"fgd-steps/dot", "stationarity/x-coupling/softmax", "features/digits"} <= ids
    assert "fgd-steps/distance" not in ids  # an identity: tests/test_claim_identities.py
    assert all(c["kind"] and c["test"] and c["verdict"] for c in summary["comparisons"])
    assert not [c["id"] for c in summary["comparisons"] if RAISED in c["reason"]]  # no claim's judging raised


def test_config_errors():
    exp = get_experiment("categorical")
    with pytest.raises(ConfigError, match="kernels"):
        exp.config("quick", {"kernels": ("cosine",)})
    with pytest.raises(ConfigError, match="parts"):
        exp.config("quick", {"parts": ("images",)})
    with pytest.raises(ConfigError, match="digits_test_classes"):
        exp.config("quick", {"digits_test_classes": 7})
    with pytest.raises(ConfigError, match="embedding_seeds"):
        exp.config("quick", {"embedding_seeds": (42, 42)})
    with pytest.raises(ConfigError, match="blocks_erase"):
        exp.config("quick", {"blocks_erase": ("cosine",)})
    for preset in ("quick", "paper", "full"):
        cells = exp.cells(exp.config(preset))
        assert all("seed" in c and "part" in c for c in cells)
        assert len({str(sorted(c.items())) for c in cells}) == len(cells)
    paper = exp.config("paper")
    assert (paper.n_context, paper.n_classes, paper.d, paper.d_embed) == (125, 25, 10, 5)
    # the authors' erase head runs only from 3 blocks (below it is the same function as iclab's)
    assert not [c for c in exp.cells(paper) if c.get("erase") == "dot" and c["blocks"] < 3]


def test_gd_likeness_separates_construction_from_random():
    import torch

    from iclab.experiments.categorical.synthetic import gd_likeness
    from iclab.models import FunctionalGDModel, TrainedCategoricalTransformer

    rand = gd_likeness(TrainedCategoricalTransformer(5, 7, 3, 1, generator=torch.Generator().manual_seed(0)), 5, 3)
    gd = gd_likeness(TrainedCategoricalTransformer.from_gd(FunctionalGDModel(5, 7, 3, 1)), 5, 3)
    assert rand["qk_diag_ratio"] < 3 and rand["vp_wf_diag_ratio"] < 3
    assert gd["qk_diag_ratio"] > 1e6 and gd["vp_wf_diag_ratio"] > 1e6


def test_training_stops_once_the_validation_nll_has_plateaued():
    import torch

    from iclab.data import CategoricalICL, generator_for
    from iclab.experiments.categorical.training import PLATEAU_MIN_EVALS, fit_classifier, val_plateau
    from iclab.models import FunctionalGDModel

    assert val_plateau([5.0, 4.0, 3.0, 2.0, 1.0, 1.0, 1.0, 1.0]) == 0.0
    assert val_plateau([8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]) == pytest.approx((3.5 - 1.5) / 1.5)
    data = CategoricalICL(n_classes=7, d=3, d_embed=3, n_context=7, n_clusters=3)
    val = data.sample(16, generator_for(0, "val"))
    runs = {}
    for tol in (0.0, 10.0):
        model = FunctionalGDModel(3, 7, 3, 1, generator=torch.Generator().manual_seed(0))
        runs[tol] = fit_classifier(
            model,
            data,
            val,
            steps=40,
            batch_size=8,
            lr=0.05,
            optimizer="adam",
            seed=0,
            pool_size=None,
            eval_every=2,
            stop_plateau=tol,
        )[1]
    assert runs[0.0]["steps"] == 40
    assert runs[10.0]["steps"] == 2 * (PLATEAU_MIN_EVALS - 1)  # evaluations at steps 1, 2, 4, ..., 14


def test_notes_gd_cells_table_comes_from_the_results():
    """The notes' table "GD cells" (docs/papers/categorical.md §4.8, §6.3) is computed from the results: per cell the
    steps and TV range over replicates, and the authors' erase head's accuracy minus iclab's on the same replicate."""
    import test_verdicts_categorical as v

    from iclab.experiments.categorical.notes import notes

    df = v.synthetic_table(True)
    dot = (df["erase"] == "dot").to_numpy()
    own = df[(df["erase"] == "distance") & (df["blocks"] == 3)].set_index("embedding_seed")["acc"]
    df.loc[dot, "acc"] = df.loc[dot, "embedding_seed"].map(own).to_numpy() + 0.0123  # (3,) paired by W_e draw
    df.loc[dot, "fgd_tv"] = [0.011, 0.022, 0.033]
    df["steps_done"] = [40.0 if e == "distance" else 50.0 for e in df["erase"]]
    lines = {ln.split(" | ")[3]: ln for ln in notes(v.CFG, df).splitlines() if ln.startswith("| softmax | 2048 | 3 |")}
    assert set(lines) == {"distance", "dot"}, lines
    assert "| 50 | 0.011 to 0.033 |" in lines["dot"] and lines["dot"].endswith("| +0.012 |"), lines["dot"]
    assert "| 40 |" in lines["distance"] and lines["distance"].endswith("| — |"), lines["distance"]
    assert "GD cells" not in notes(v.CFG, df[df["model"] == "tf"])  # no GD cell, no table
