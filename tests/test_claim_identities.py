"""Identities that were claims (issue 21, "checks are tests"): each held for any run of the model as specified, so as
a row of the ledger it agreed whatever the run measured. Here each is asserted on the real model code, beside a
control that breaks its premise and shows the check can fail.

- ``ood`` ``conservation`` (arXiv:2609.36448; docs/papers/ood.md §4.4): every token has the same projection 1/K on
  v̄, and softmax is blind to a common shift of the logits, so v̄ᵀ∇_Q = 0 under *any* objective; the column sums
  α_k + Σ_m β_mk of S = VᵀQV never move.
- ``ood`` ``random-guess-orthogonal`` and ``-paper`` (docs/papers/ood.md §4.7): Q stays in span V, so for span U ⟂
  span V every logit is 0, attention is uniform and the w-averaged error with exact counts is c(K−1)/K = 0.375.
- ``ood`` ``train-loss-paper`` (main table, 0.0024 at T1): the stopping rule max_k L_k ≤ ε/K = 0.0025 pins the
  training loss at the stop just below ε/K.
- ``categorical`` ``fgd-steps/distance`` (arXiv:2405.17248; docs/papers/categorical.md §4.8): iclab's erase head makes
  K blocks equal K steps of functional GD, measured by the experiment's own ``functional_gd_gap``.
"""

import numpy as np
import pytest
import torch

from iclab.data import CategoricalICL, FeaturePrompts, aligned_features, feature_basis, generator_for, mean_feature
from iclab.experiments import get_experiment
from iclab.experiments.categorical.synthetic import functional_gd_gap
from iclab.experiments.ood.pretrain import pretrain
from iclab.models import FunctionalGDModel, MergedQAttention, feature_prompt_loss
from iclab.theory import ood as T


def _arbitrary_objective_grad(features: torch.Tensor, orthonormal: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """∇_Q of an objective unrelated to the paper's loss (cubed attention and the sine of the prediction, with random
    weights) at a random Q, on feature prompts over ``features`` (d, K); and v̄."""
    d, K = features.shape
    model = MergedQAttention(d, init="normal", init_std=0.7, generator=generator_for(0, "q"))
    b = FeaturePrompts(features, n_tokens=9, orthonormal=orthonormal).sample(64, generator_for(0, "b"))
    w1 = torch.randn(64, 9, generator=generator_for(0, "w1"), dtype=torch.float64)
    w2 = torch.randn(64, generator=generator_for(0, "w2"), dtype=torch.float64)
    f = (w1 * model.attn(b.x, b.xq) ** 3).sum() + (w2 * torch.sin(3 * model(b.x, b.y, b.xq))).sum()
    f.backward()
    return model.Q.grad, mean_feature(features).to(torch.float64)


def test_conservation_holds_under_any_objective():
    V, _ = feature_basis(8, 4, generator_for(0, "basis"))
    G, vbar = _arbitrary_objective_grad(V)
    assert G.abs().max() > 1e-2  # the objective does move Q
    assert (vbar @ G).abs().max() < 1e-13  # so α_k + Σ_m β_mk = K v̄ᵀQv_k never moves
    # control: unit-norm features with different projections on v̄ (v_1 tilted towards v_2) break it
    W = V.clone()
    W[:, 0] = (V[:, 0] + V[:, 1]) / 2**0.5
    G, vbar = _arbitrary_objective_grad(W, orthonormal=False)
    assert (vbar @ G).abs().max() > 1e-3


@pytest.fixture(scope="module")
def ood_run():
    """The ``ood`` experiment's own pre-training (quick preset, K = 4, d = 8) and its config."""
    cfg = get_experiment("ood").config("quick")
    return cfg, pretrain(cfg, cfg.K, cfg.d)


def test_sgd_pretraining_keeps_conservation_and_stops_at_the_threshold(ood_run):
    cfg, run = ood_run
    h = run["history"]
    assert max(h["conservation"]) < 1e-12 and max(h["offspan"]) < 1e-12
    # the stopping rule: the first check with max_k L_k ≤ ε/K stops, so the loss at T1 lies just below ε/K
    assert run["stopped"] == "stop_rule"
    assert h["maxLk"][-1] <= cfg.threshold < h["maxLk"][-2]
    S = T.logit_matrix(run["Q"], run["V"])
    losses = T.feature_losses(S, None, cfg.n_tokens, cfg.c)
    assert losses.mean() <= losses.max() <= cfg.threshold
    assert losses.mean() > cfg.threshold - (h["maxLk"][-2] - h["maxLk"][-1]) - 1e-4  # within one check of ε/K


def test_orthogonal_features_give_uniform_attention_and_random_guessing(ood_run):
    cfg, run = ood_run
    K, c = cfg.K, cfg.c
    V, Vp = torch.as_tensor(run["V"]), torch.as_tensor(run["Vp"])
    model = MergedQAttention.from_q(run["Q"])
    n = cfg.n_tokens - cfg.n_tokens % K
    b = FeaturePrompts(Vp[:, :K], n_tokens=n, counts="exact").sample(200, generator_for(0, "orth"))
    with torch.no_grad():
        a = model.attn(b.x, b.xq)
        loss = feature_prompt_loss(model, b, c)
    assert (a - 1 / n).abs().max() < 1e-13
    assert abs(float(loss) - c * (K - 1) / K) < 1e-12 and c * (K - 1) / K == 0.375
    # control: features half inside span V do not collapse
    U = aligned_features(V, Vp, 0.5 * torch.eye(K, dtype=torch.float64))
    b = FeaturePrompts(U, n_tokens=n, counts="exact").sample(200, generator_for(0, "half"))
    with torch.no_grad():
        assert (model.attn(b.x, b.xq) - 1 / n).abs().max() > 1e-3


@pytest.mark.parametrize("kernel", ["softmax", "rbf", "linear"])
def test_iclab_erase_head_is_functional_gd_in_the_experiments_measurement(kernel):
    data = CategoricalICL(n_classes=7, d=5, d_embed=3, n_context=11, n_clusters=3, n_queries=3)
    test = data.sample(40, generator_for(0, "fgd"), dtype=torch.float64)
    for K in (1, 2, 3):
        for erase in ("distance", "dot"):
            m = FunctionalGDModel(5, 7, 3, n_blocks=K, kernel=kernel, erase=erase, generator=generator_for(K, "m"))
            tv = functional_gd_gap(m, test)["fgd_tv"]
            if erase == "distance":
                assert tv < 1e-12, (kernel, K, tv)
            elif K == 3:  # control: the authors' head is not functional GD at K = 3
                assert tv > 1e-6, (kernel, K, tv)
    assert np.isfinite(tv)
