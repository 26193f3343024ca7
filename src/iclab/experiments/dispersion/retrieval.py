r"""Max-retrieval cells of the ``dispersion`` experiment (arXiv:2410.01104: Fig. 2, the max-retrieval table, App. A;
docs/papers/dispersion.md §5.2–5.3).

Train the single-head set model (App. A, Eqs. 9–14) at 5–16 items with one normaliser (``softmax``, ``sigmoid`` or
``ssmax``), then on fresh sets of each test size measure accuracy, and for a softmax-trained model also accuracy
with the adaptive temperature (Fig. 4) swapped in **at inference only** (same sets, paired), the dispersion
diagnostics of its head (entropy, max coefficient, δ) and δ_sup, the logit spread over the whole compact input set
that Lemma 2.1's bound needs (docs/papers/dispersion.md §4.8), and the spread its weights allow by Prop. 3.1,
:math:`2\sigma_{\max}(W_Q)\sigma_{\max}(W_K)\max\|h_q\|\max\|h_i\|/\sqrt d` (docs/papers/dispersion.md §3.4,
§4.2). It also collects the data for the β(H) refit (docs/papers/dispersion.md §4.7): per entropy bin of the
original head, the summed cross-entropy of the readout with the head re-tempered, :math:`\mathrm{softmax}(\beta e)`,
for each grid β.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from iclab.attention import adaptive_softmax, logit_spread, normalise, row_entropy, softmax
from iclab.data import MaxRetrieval, derive_seed, generator_for, seeded_init
from iclab.experiments.dispersion.config import DIAGNOSTICS, beta_grid
from iclab.models import MaxRetrievalNet
from iclab.train import TrainConfig, train

__all__ = ["run_retrieval_cell"]

_ITEMS_PER_CHUNK = 1 << 17  # sets are evaluated in chunks of about this many items (memory, not speed)


def _attention_params(config, name: str) -> dict:
    return {"bias": config.sigmoid_bias} if name == "sigmoid" else {}


def _train(config, variant: str, seed: int) -> MaxRetrievalNet:
    data = MaxRetrieval(config.train_min, config.train_max, 10)
    with seeded_init(config.seed, "init", variant, seed):
        model = MaxRetrievalNet(data.d_item, 10, config.d, config.depth, variant, _attention_params(config, variant))

    def loss_fn(m, b):
        return torch.nn.functional.cross_entropy(m(b.items, b.query, b.mask), b.target)

    tc = TrainConfig(
        steps=config.steps,
        batch_size=config.batch_size,
        lr=config.lr,
        optimizer="adamw",
        weight_decay=config.weight_decay,
        grad_clip=1.0,
        schedule="cosine",
        warmup_steps=min(100, config.steps // 10),
        seed=derive_seed(config.seed, "train", variant, seed),
        log_every=max(1, config.steps // 4),
    )
    return train(model, data, loss_fn, tc).model.eval()


def _chunks(n_sets: int, n: int):
    step = max(1, _ITEMS_PER_CHUNK // n)
    for i in range(0, n_sets, step):
        yield i, min(n_sets, i + step)


@torch.no_grad()
def _evaluate(model, config, variant: str, seed: int) -> dict:
    """Per test size: accuracy (trained normaliser, and adaptive at inference for softmax models) and diagnostics."""
    out: dict[str, list] = {k: [] for k in ("acc", "acc_adaptive", *DIAGNOSTICS)}
    params = _attention_params(config, variant)
    for n in config.test_sizes:
        b = MaxRetrieval.at_size(n).sample(config.eval_sets, generator_for(config.seed, "test", seed, n))
        sums: dict[str, float] = {k: 0.0 for k in out}
        for i, j in _chunks(config.eval_sets, n):
            e, val = model.scores(b.items[i:j], b.query[i:j])  # (b, 1, n), (b, n, d)
            top = b.priority[i:j].argmax(1)  # (b,) index of the max item
            w = normalise(variant, e, None, **params)  # (b, 1, n)
            sums["acc"] += (model.readout(w, val).argmax(-1) == b.target[i:j]).sum().item()
            if variant != "softmax":
                continue
            wa = adaptive_softmax(e)
            sums["acc_adaptive"] += (model.readout(wa, val).argmax(-1) == b.target[i:j]).sum().item()
            for tag, ww in (("", w), ("_adaptive", wa)):
                sums["max_coef" + tag] += ww.amax(-1).sum().item()
                sums["entropy" + tag] += (-torch.special.xlogy(ww, ww).sum(-1)).sum().item()
                sums["mass_on_max" + tag] += ww[:, 0].gather(1, top[:, None]).sum().item()
            d = logit_spread(e)  # (b, 1)
            sums["delta_mean"] += d.sum().item()
            sums["delta_max"] = max(sums["delta_max"], d.max().item())
            sums["min_coef_n"] += (w.amin(-1) * n).sum().item()
        for k in out:
            v = sums[k] if k == "delta_max" else sums[k] / config.eval_sets
            out[k].append(float(v) if variant == "softmax" or k == "acc" else float("nan"))
    return out


def _input_grid(grid: int = 101) -> tuple[torch.Tensor, torch.Tensor]:
    """A grid of the compact input sets: items ``(1, 10*grid, 11)`` (priority × class) and queries ``(51, 1)``."""
    p = torch.linspace(0, 1, grid)
    items = torch.cat([p.repeat_interleave(10)[:, None], torch.eye(10).repeat(grid, 1)], 1)[None]
    return items, torch.linspace(0, 1, 51)[:, None]


@torch.no_grad()
def _delta_sup(model) -> float:
    """δ_sup = max over queries of (max - min logit) over a fine grid of the compact item set (Lemma 2.1's δ;
    docs/papers/dispersion.md §4.8)."""
    items, q = _input_grid()
    e, _ = model.scores(items.expand(len(q), -1, -1), q)  # (51, 1, 10*grid)
    return float(logit_spread(e).max())


@torch.no_grad()
def _weight_spread(model) -> dict[str, float]:
    """Prop. 3.1's bound on the logit spread from the weights: σ_max(W_Q), σ_max(W_K), the largest query and item
    features over the input grid, and ``2 σ_Q σ_K max‖h_q‖ max‖h_i‖ / sqrt(d)`` (the 1/sqrt(d) of Eq. 11)."""
    items, q = _input_grid()
    sq = float(torch.linalg.matrix_norm(model.W_q.weight, ord=2))
    sk = float(torch.linalg.matrix_norm(model.W_k.weight, ord=2))
    hq = float(model.psi_q(q).norm(dim=-1).max())
    hx = float(model.psi_x(items[0]).norm(dim=-1).max())
    return {
        "sigma_q": sq,
        "sigma_k": sk,
        "hq_max": hq,
        "hx_max": hx,
        "allowed_spread": 2.0 * sq * sk * hq * hx / math.sqrt(model.d),
    }


@torch.no_grad()
def _fit_data(model, config, seed: int) -> dict:
    """Summed cross-entropy per (entropy bin of the original head, grid β) on sets of the fit sizes
    (docs/papers/dispersion.md §4.7)."""
    betas = torch.tensor(beta_grid(config), dtype=torch.float32)
    n_bins = int(math.ceil(math.log(max(config.fit_sizes)) / config.entropy_bin)) + 1
    loss = np.zeros((n_bins, len(betas)))
    counts = np.zeros(n_bins)
    for n in config.fit_sizes:
        b = MaxRetrieval.at_size(n).sample(config.fit_sets, generator_for(config.seed, "fit", seed, n))
        for i, j in _chunks(config.fit_sets, n):
            e, val = model.scores(b.items[i:j], b.query[i:j])  # (b, 1, n)
            H = row_entropy(e)[:, 0, 0]  # (b,) nats, reference entropy
            bins = torch.clamp((H / config.entropy_bin).long(), max=n_bins - 1).numpy()
            ce = torch.stack(
                [
                    torch.nn.functional.cross_entropy(
                        model.readout(softmax(e * beta), val), b.target[i:j], reduction="none"
                    )
                    for beta in betas
                ],
                1,
            ).numpy()  # (b, n_betas)
            np.add.at(loss, bins, ce)
            np.add.at(counts, bins, 1.0)
    return {"fit_loss": loss.ravel().tolist(), "fit_counts": counts.tolist(), "fit_n_bins": n_bins}


def run_retrieval_cell(config, cell: dict) -> dict:
    variant, seed = cell["normaliser"], int(cell["seed"])
    model = _train(config, variant, seed)
    res: dict = {"test_sizes": [float(n) for n in config.test_sizes], **_evaluate(model, config, variant, seed)}
    if variant == "softmax":
        res["delta_sup"] = _delta_sup(model)
        res.update(_weight_spread(model))
        res.update(_fit_data(model, config, seed))
    return res
