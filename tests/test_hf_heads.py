"""Linear heads on frozen features, coordinate-plane rotations and mean-pooled sentence embeddings (``iclab.hf``):
small problems with known answers, odd sizes."""

import math

import torch
from torch import nn

from iclab.data import seeded_init
from iclab.hf import ce_per_example, fit_head, head_scores, mean_pooled_embeddings, plane_rotation


def test_plane_rotation():
    R = plane_rotation(6, [(0, 2), (1, 5)], math.pi / 3)
    assert torch.allclose(R @ R.T, torch.eye(6), atol=1e-6) and R[3, 3] == 1 and R[4, 4] == 1
    assert R[0, 0] == R[2, 2] == math.cos(math.pi / 3) and R[2, 0] == -R[0, 2] == math.sin(math.pi / 3)
    assert torch.allclose(
        plane_rotation(6, [(0, 2), (1, 5)], math.pi).diagonal(), torch.tensor([-1.0, -1, -1, 1, 1, -1]), atol=1e-6
    )


def test_fit_head_separates_and_scores_agree():
    g = torch.Generator().manual_seed(0)
    y = torch.arange(3).repeat(37)  # (111,)
    x = torch.randn(111, 5, generator=g) * 0.3 + torch.eye(3, 5)[y] * 3  # three separated clusters
    with seeded_init(0, "head"):
        head = nn.Linear(5, 3)
    before = ce_per_example(head, x, y)
    fit_head(head, x, y, steps=200, lr=0.05)
    acc, ce = head_scores(head, x, y)
    per = ce_per_example(head, x, y)
    assert per.shape == (111,) and abs(float(per.mean()) - ce) < 1e-6
    assert acc == 1.0 and ce < 0.2 * float(before.mean())


class _Encoder(nn.Module):
    """A stand-in encoder: the hidden state of a token is its id in every coordinate."""

    def forward(self, input_ids, attention_mask):
        return type("Out", (), {"last_hidden_state": input_ids[..., None].float().expand(-1, -1, 3)})()


def _tok(sents, padding, truncation, max_length, return_tensors):
    ids = [[len(w) for w in s.split()][:max_length] for s in sents]
    T = max(map(len, ids))
    return {
        "input_ids": torch.tensor([i + [0] * (T - len(i)) for i in ids]),
        "attention_mask": torch.tensor([[1] * len(i) + [0] * (T - len(i)) for i in ids]),
    }


def test_mean_pooled_embeddings_ignore_padding():
    sents = ["a bb ccc", "dddd", "ee f", "ggggggg h"]
    e = mean_pooled_embeddings(_Encoder(), _tok, sents, batch=3)
    assert e.shape == (4, 3) and e.dtype == torch.float32
    assert torch.allclose(e[:, 0], torch.tensor([2.0, 4.0, 1.5, 4.0]))
