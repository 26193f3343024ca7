"""The stationarity check of Theorems 1-2 of arXiv:2405.17248 (docs/papers/categorical.md §3.7, §4.3): the GD
sparsity pattern, and off-pattern gradients that vanish by reflection symmetry at the GD configuration."""

import pytest
import torch

from iclab.data import CategoricalICL
from iclab.models import FunctionalGDModel, TrainedCategoricalTransformer, gd_pattern, stationarity_check


def test_pattern_groups_partition():
    pat = gd_pattern(3, 2)
    assert pat["q1"]["free"].sum() == 3 and pat["v1"]["free"].sum() == 4
    assert not (pat["q1"]["free"] & pat["q1"]["x_coupling"]).any()
    assert pat["q1"]["x_coupling"].sum() == 9 * 9 - 3 * 3 - 6 * 6 + 3 * 3 - 3  # x-row xor x-col, + x off-diag
    assert pat["kc"]["x_coupling"].sum() == 0 and pat["qc"]["x_coupling"].sum() == 3 * 2


@pytest.mark.slow
@pytest.mark.parametrize("kernel,covariate", [("softmax", "gaussian"), ("rbf", "uniform")])
def test_off_pattern_gradients_vanish_at_gd_configuration(kernel, covariate):
    """x-coupling entries have zero expected gradient (z ~ 1); free / other entries do not (z >> 1)."""
    data = CategoricalICL(n_classes=5, d=3, d_embed=3, n_context=7, n_clusters=2, covariate=covariate, scale=3.0)
    gd = FunctionalGDModel(
        3, 5, 3, n_blocks=2, kernel=kernel, dtype=torch.float64, generator=torch.Generator().manual_seed(1)
    )
    r = stationarity_check(data, gd, n_prompts=4096, n_chunks=16, seed=0)
    assert r["x_coupling"]["z"] < 3, r
    assert r["x_coupling"]["rms_mean"] < 0.1 * r["free"]["rms_mean"], r
    assert r["other"]["z"] > 3 and r["free"]["z"] > 3, r
    # control: head 1's value also writes x into f (breaks the reflection symmetry): x-coupling gradients appear
    tf = TrainedCategoricalTransformer.from_gd(gd)
    with torch.no_grad():
        tf.blocks[0]["v1"][:3, 9:12] += 0.5 * torch.eye(3, dtype=torch.float64)
    r_broken = stationarity_check(data, tf, n_prompts=4096, n_chunks=16, seed=0)
    assert r_broken["x_coupling"]["z"] > 2 * r["x_coupling"]["z"] and r_broken["x_coupling"]["z"] > 3, r_broken
