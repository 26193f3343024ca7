"""Max-retrieval sets and CLRS-style tasks of arXiv:2410.01104 (docs/papers/dispersion.md §3.7–3.8): targets, masks,
determinism, bad input."""

import pytest
import torch

from iclab.data import ALGORITHMIC_TASKS, AlgorithmicTask, MaxRetrieval, generator_for
from iclab.errors import ConfigError


def test_max_retrieval_targets_and_padding():
    b = MaxRetrieval(5, 11, 7).sample(301, generator_for(0, "t"))
    assert b.items.shape == (301, 11, 8) and b.query.shape == (301, 1)
    sizes = b.mask.sum(1)
    assert sizes.min() >= 5 and sizes.max() <= 11 and len(set(sizes.tolist())) == 7
    assert (b.items[~b.mask] == 0).all()
    top = torch.where(b.mask, b.items[..., 0], torch.full_like(b.items[..., 0], -1)).argmax(1)
    assert torch.equal(b.target, b.items[torch.arange(301), top, 1:].argmax(-1))
    assert torch.equal(b.items[..., 1:].argmax(-1)[b.mask], b.classes[b.mask])
    # targets are uniform over the classes (chance = 1/C): Monte Carlo within 5 sigma
    big = MaxRetrieval.at_size(3).sample(20000, generator_for(1, "u"))
    freq = torch.bincount(big.target, minlength=10).double() / 20000
    assert (freq - 0.1).abs().max() < 5 * (0.1 * 0.9 / 20000) ** 0.5


def test_determinism_to_and_index():
    d = MaxRetrieval()
    a, b = d.sample(13, generator_for(3, "x")), d.sample(13, generator_for(3, "x"))
    assert torch.equal(a.items, b.items) and torch.equal(a.target, b.target)
    sub = a.to("cpu").index(torch.tensor([2, 5]))
    assert len(sub) == 2 and torch.equal(sub.items[1], a.items[5])


def _brute(task, vals, mask):
    out = []
    for i in range(len(vals)):
        if not mask[i]:
            out.append(-100)
            continue
        vis = [v for v, m in zip(vals, mask) if m]
        if task == "minimum":
            out.append(min(vis))
        elif task == "running_max":
            out.append(max(vals[: i + 1]))
        else:
            bigger = [v for v in vis if v > vals[i]]
            out.append(min(bigger) if bigger else vals[i])
    return out


@pytest.mark.parametrize("task", ALGORITHMIC_TASKS)
def test_algorithmic_targets_match_brute_force(task):
    t = AlgorithmicTask(task, 3, 11, 7)
    b = t.sample(37, generator_for(0, task))
    assert b.x.shape == (37, 11, 8) and t.causal == (task == "running_max")
    for r in range(37):
        vals, mask = b.values[r].tolist(), b.mask[r].tolist()
        assert b.target[r].tolist() == _brute(task, vals, mask)
    assert t.at_size(5).sample(2, generator_for(0)).mask.all()


@pytest.mark.parametrize("kw", [{"n_min": 0}, {"n_min": 9, "n_max": 5}, {"n_classes": 1}])
def test_bad_retrieval_config(kw):
    with pytest.raises(ConfigError):
        MaxRetrieval(**kw)


def test_bad_task_config():
    with pytest.raises(ConfigError):
        AlgorithmicTask("bubble")
    with pytest.raises(ConfigError):
        AlgorithmicTask(vocab=1)
