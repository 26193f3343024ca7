"""iclab.hf τ estimation: the per-layer moment rule (open detail 7(b)) and the held-out grid search (7(a))."""

from __future__ import annotations

import numpy as np
import pytest

from iclab.errors import ConfigError
from iclab.hf import ScoreMoments, estimate_tau, get_temperature, grid_search_tau, moment_rule_tau


def moments(layer_mean, layer_var) -> ScoreMoments:
    z = np.zeros((len(layer_mean), 3))
    return ScoreMoments(
        rows=z + 1,
        n=z + 5,
        mean=z,
        var=z,
        row_var=z,
        spread=z,
        entropy=z,
        layer_mean=np.asarray(layer_mean, float),
        layer_var=np.asarray(layer_var, float),
    )


def test_moment_rule_ratio_clip_and_fallback():
    clean = moments([2.0, 1.0, 0.5, 1.0, 0.0, 1.0, 3.0], [1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 0.3])
    shifted = moments([1.0, 1.0, 0.5, -1.0, 1.0, 1.0, 3.0], [3.0, 20.0, 0.05, 1.0, 1.0, 2.0, 0.3])
    tau, ratio, valid = moment_rule_tau(clean, shifted, clip=(0.25, 8.0))
    # rho_clean = [.5, 1, 2, 1, inf, 2, .1], rho_shifted = [3, 20, .1, -1, 1, 2, .1]
    np.testing.assert_allclose(ratio[[0, 1, 2, 5, 6]], [6.0, 20.0, 0.05, 1.0, 1.0])
    assert valid.tolist() == [True, True, True, False, False, True, True]
    np.testing.assert_allclose(tau, [6.0, 8.0, 0.25, 1.0, 1.0, 1.0, 1.0])
    np.testing.assert_allclose(clean.rho()[[0, 1, 2]], [0.5, 1.0, 2.0])
    with pytest.raises(ConfigError, match="clip"):
        moment_rule_tau(clean, shifted, clip=(2.0, 3.0))


@pytest.fixture(scope="module")
def minilm():
    from iclab.hf import load_model

    return load_model("minilm")


def test_grid_search_picks_best_and_restores(minilm):
    model = minilm[0]
    seen = []

    def score(m):
        t = float(get_temperature(m)[0, 0])
        seen.append(t)
        return -abs(np.log(t / 1.5))

    best, scores = grid_search_tau(model, score, grid=(0.5, 1.0, 1.5, 2.0))
    assert best == 1.5 and seen == [0.5, 1.0, 1.5, 2.0] and scores[2] == 0.0
    assert get_temperature(model) is None and model.config._attn_implementation == "sdpa"
    best, _ = grid_search_tau(model, lambda m: 0.0, grid=(0.5, 2.0, 1.25, 3.0))
    assert best == 1.25  # ties go to the τ closest to 1
    for bad in ((), (1.0, -1.0), (float("nan"),)):
        with pytest.raises(ConfigError, match="grid"):
            grid_search_tau(model, score, grid=bad)


def test_estimate_tau_end_to_end(minilm):
    model, tok, _ = minilm
    clean = ["paris is the capital of france", "rome is the capital of italy", "madrid is the capital of spain"]
    est = estimate_tau(model, tok, clean, clean)
    assert est.valid.all() and np.allclose(est.layer_tau, 1.0) and np.allclose(est.ratio, 1.0)
    assert est.best_tau is None and est.grid == ()
    shifted = ["paris is the capital of italy", "rome is the capital of spain", "madrid is the capital of france"]
    calls = []
    est = estimate_tau(
        model,
        tok,
        clean,
        shifted,
        grid=(0.75, 1.0, 1.5),
        score=lambda m: calls.append(get_temperature(m)) or float(len(calls)),
    )
    assert est.layer_tau.shape == (6,) and np.isfinite(est.rho_clean).all()
    assert not np.allclose(est.ratio, 1.0)
    assert est.best_tau == 1.5 and est.grid_scores == (1.0, 2.0, 3.0) and est.moment_score == 4.0
    np.testing.assert_allclose(calls[-1][:, 0].numpy(), est.layer_tau)  # last call ran the per-layer moment τ
    s = est.summary()
    assert set(s) >= {"layer_tau", "ratio", "best_tau", "grid_scores", "moment_score", "mean_layer_tau"}
    assert get_temperature(model) is None
