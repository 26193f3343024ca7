"""The ``ood`` experiment (arXiv:2609.36448, docs/papers/ood.md §5) end to end on a tiny config (serial executor),
and the pieces its real-encoder and tiny-transformer cells use."""

import json
import math

import pytest
import torch

from iclab.errors import ConfigError
from iclab.experiments import get_experiment
from iclab.report import run_and_report

TINY = {
    "d": "4",
    "K": "2",
    "n_tokens": "8",
    "threshold": "0.02",
    "thetas_deg": "0,30,60,90",
    "ood_prompts": "400",
    "gamma1_table": "0.5",
    "gamma2_table": "-0.9,0.5",
    "dense_gamma2": "3",
    "phase_grid": "3",
    "tiny_layers": "1",
    "tiny_steps": "20",
    "tiny_ft_steps": "5",
    "tiny_eval": "200",
    "tiny_gamma2": "-0.75,0.75",
    "tiny_thetas_deg": "0,90",
    "minilm": "false",
    "sgd_repeats": "1",
    "ft_repeats": "1",
}


def test_quick_preset_and_config_validation():
    exp = get_experiment("ood")
    cfg = exp.config("quick")
    assert cfg.K == 4 and cfg.d == 8 and math.isclose(cfg.threshold, 0.0025)
    parts = [c["part"] for c in exp.cells(cfg)]
    assert parts.count("pretrain") == 1 and parts.count("minilm") == 1 and parts.count("tiny") == 3
    assert parts.count("minilm_shift") == 1
    for bad in (
        {"d": "6"},
        {"gamma2_table": "0.5,1.5"},
        {"tiny_gamma1": "-2"},
        {"minilm_layer": "6"},
        {"minilm_domains": "capital"},
        {"minilm_domains": "capital,weather"},
        {"sgd_repeats": "-1"},
        {"minilm_gap_planes": "193"},
    ):
        with pytest.raises(ConfigError):
            exp.config("quick", bad)


def test_tiny_run_end_to_end(tmp_path):
    res = run_and_report("ood", "quick", TINY, out=tmp_path / "ood", executor="serial", progress=False)
    assert res.failed.empty, res.failed.to_dict()
    df = res.results
    # internal consistency (not claims): the stopping rule holds at the stop, Q stays in span V, the model's
    # attention equals the NumPy softmax of MᵀSM on the same Q, and for M ∝ I the closed form is UᵀQU
    pre = df[df["part"] == "pretrain"].iloc[0]
    assert pre["conservation_max"] < 1e-12 and pre["offspan_max"] < 1e-12 and pre["train_maxLk"] <= 0.02
    assert len(pre["rep_alpha_star"]) == 2 and max(pre["rep_conservation_rel"]) < 1e-12
    assert all(s % 5 == 0 for s in pre["rep_steps"])  # stops only at a check
    ood = df[df["part"] == "ood"].iloc[0]
    assert ood["orthogonal_sgd_attn_maxdev"] < 1e-12 and ood["randomM_attn_maxdev"] < 1e-12
    assert max(abs(a - b) for a, b in zip(ood["alpha_u"], ood["alpha_u_closed"])) < 1e-2
    assert math.isclose(ood["orthogonal_err_theory"], 0.5 * (2 - 1) / 2)  # exact counts: c(K−1)/K
    ft = df[df["part"] == "forget"]
    assert len(ft) >= 3
    for _, r in ft.iterrows():  # measured per-feature sign follows the K = 2 rule on both sides of the boundary
        assert list(r["forgot1"]) == list(r["pred1"]) and list(r["forgot2"]) == list(r["pred2"])
        assert max(r["backproj_dev"]) < 1e-10
        assert all(len(runs) == 2 for runs in r["rep_F"])  # the cell's fine-tuning and one repeat per table γ2
    figs = sorted(p.name for p in (res.path / "figures").glob("*.png"))
    for name in (
        "ood_trajectories",
        "ood_rotation",
        "ood_collapse",
        "ood_forgetting",
        "ood_phase",
        "ood_tiny",
        "ood_scenarios",
    ):
        assert f"{name}.png" in figs and (res.path / "figures" / f"{name}.csv").exists()
    report = (res.path / "report.md").read_text()
    assert "conservation" in report and "Query at v̄" in report and "unreliable source" in report


def test_tiny_replicates_are_their_own_networks_and_replicate_0_is_the_runs_seed(tmp_path):
    """``tiny_seeds`` trained networks per depth: replicate 0 is the network a run of ``seed`` trained before
    replicates existed (same seed), the others differ; the effect claims are judged across them (3 here)."""
    from iclab.experiments.ood.tiny import replicate_seed, tiny_cell

    exp = get_experiment("ood")
    cfg = exp.config("quick", {**TINY, "tiny_seeds": "3"})
    tiny = [c for c in exp.cells(cfg) if c["part"] == "tiny"]
    assert [(c["layers"], c["replicate"]) for c in tiny] == [(1, 0), (1, 1), (1, 2)]
    assert replicate_seed(cfg.seed, 0) == cfg.seed and len({replicate_seed(cfg.seed, i) for i in range(3)}) == 3
    zero, one = tiny_cell(cfg, tiny[0]), tiny_cell(cfg, tiny[1])
    assert zero["F"] == tiny_cell(cfg, {"part": "tiny", "layers": 1, "seed": cfg.seed})["F"]  # no key: replicate 0
    assert zero["F"] != one["F"] and zero["source_before"] != one["source_before"]
    res = run_and_report("ood", "quick", {**TINY, "tiny_seeds": "3"}, out=tmp_path / "ood", executor="serial",
                         progress=False)  # fmt: skip
    rows = {c["id"]: c for c in json.loads((res.path / "summary.json").read_text())["comparisons"]}
    assert "SE across 3 trained networks" in rows["tiny-forgets-anti"]["statistic"]
    assert "(3 trained networks)" in rows["tiny-forgets-anti"]["measured"]


def test_minilm_task_helpers():
    from iclab.data import WORLD_REGIONS, region_sentences
    from iclab.hf import givens_rotation

    data = region_sentences(0)
    (tr, ytr), (te, yte) = data["train"], data["test"]
    assert (
        len(tr) == len(ytr) > 140 and len(te) == len(yte) > 90 and set(ytr.tolist()) <= set(range(len(WORLD_REGIONS)))
    )
    assert len(region_sentences(0, both=True)["train"][0]) == 2 * len(tr)
    names = lambda sents: {s[len("The capital of ") :].rsplit(" is ", 1)[0] for s in sents}
    assert not names(tr) & names(te)  # split by country
    R = givens_rotation(7, math.pi / 3, 0)
    assert torch.allclose(R @ R.T, torch.eye(7), atol=1e-5)
    assert torch.allclose(givens_rotation(8, math.pi, 0), -torch.eye(8), atol=1e-5)
    x = torch.randn(8)
    assert abs(float(x @ givens_rotation(8, math.pi / 2, 1) @ x)) < 1e-4  # every direction moves by 90 degrees


def test_domain_sentences_share_the_country_split():
    from iclab.data import REGION_DOMAINS, region_domain_sentences, region_sentences
    from iclab.experiments.ood.config import DOMAIN_NAMES

    assert tuple(REGION_DOMAINS) == DOMAIN_NAMES
    doms = region_domain_sentences(0, ("capital", "telephone", "borders"))
    base = region_sentences(0)
    assert doms["capital"]["train"][0] == base["train"][0] and doms["capital"]["test"][0] == base["test"][0]
    test_countries = {s[len("The capital of ") :].rsplit(" is ", 1)[0] for s in base["test"][0]}
    for part in ("train", "test"):
        sents, y = doms["telephone"][part]
        assert len(sents) == len(y) > 50 and all(s.startswith("To phone someone in ") for s in sents)
        names = {s[len("To phone someone in ") :].rsplit(", dial", 1)[0] for s in sents}
        assert (names <= test_countries) == (part == "test")
    assert "shares a border with" in doms["borders"]["train"][0][0]
    with pytest.raises(ConfigError):
        region_domain_sentences(0, ("capital", "weather"))


def test_weight_gap_pairs():
    from iclab.experiments.ood.minilm_shift import gap_pairs

    W = torch.tensor([[3.0, -3.0, 2.9, 0.1, 0.0, 1.0], [0.0, 0.0, 0.1, 0.0, 0.0, 1.0]])  # (C=2, D=6)
    assert gap_pairs(W, 2, large=True) == [(0, 1), (2, 5)]  # the four most-weighted coordinates: 0, 1, 2, 5
    assert gap_pairs(W, 2, large=False) == [(0, 2), (1, 5)]


def test_tiny_layer1_probe_shapes_and_orientation():
    from iclab.data import feature_basis, generator_for
    from iclab.models import FeatureTransformer

    V, _ = feature_basis(5, 3, generator_for(0, "b"))
    torch.manual_seed(0)
    net = FeatureTransformer(5, d_model=16, n_layers=2, n_heads=2)
    S = net.layer1_logits(V)
    assert S.shape == (3, 3)
    h = net.net.ln1[0](net.net.read_in(torch.cat([V.T, torch.zeros(3, 1, dtype=V.dtype)], 1).float()))
    q, k, _ = net.net.attn[0].qkv(h).split(16, dim=-1)
    assert torch.allclose(S[0, 2].float(), (k[0, :8] @ q[2, :8]) / 8**0.5, atol=1e-5)  # row = key, column = query


def test_package_layout_and_cells_keep_part_and_seed():
    from iclab.experiments.ood import cells, config

    exp = get_experiment("ood")
    assert exp.config_cls is config.OodConfig and set(config.PRESETS) == {"quick", "full", "paper"}
    for preset in ("quick", "full", "paper"):
        cfg = exp.config(preset)
        grid = cells.cells(cfg)
        assert all("part" in c and c["seed"] == cfg.seed for c in grid)
        assert [c["part"] for c in grid][:2] == ["pretrain", "ood"]
