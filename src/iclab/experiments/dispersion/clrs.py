"""CLRS-style size-generalisation cells of the ``dispersion`` experiment: arXiv:2410.01104's CLRS-Text experiment with
Gemma 2B, in miniature (docs/papers/dispersion.md §3.8, §5.5, §6.5).

A :class:`iclab.models.TinyTransformer` (no positional encodings; ``running_max`` is causal) is trained on one
:class:`iclab.data.AlgorithmicTask` at lengths ``4..clrs_train_max`` with one normaliser in **every** head, used in
training and at inference, as the paper does for Gemma on CLRS-Text: ``softmax`` vs ``adaptive_softmax``. It is
scored by exact match (every position of a sequence right) and per-token accuracy at each test length. A
softmax-trained model is also scored with the adaptive temperature swapped into every head **at inference only**, on
the same sequences: the arm the paper reports fails on CLRS-Text (v1, docs/papers/dispersion.md §3.8).
"""

from __future__ import annotations

import torch

from iclab.data import AlgorithmicTask, derive_seed, generator_for, seeded_init
from iclab.models import TinyTransformer
from iclab.train import TrainConfig, train

__all__ = ["run_clrs_cell"]


def _loss(model, b):
    y = model(b.x, b.mask)  # (B, n, V)
    return torch.nn.functional.cross_entropy(y.flatten(0, 1), b.target.flatten(), ignore_index=-100)


def run_clrs_cell(config, cell: dict) -> dict:
    """Train one tiny transformer on ``task`` with ``attention`` in every head; exact match and token accuracy per
    test length."""
    task = AlgorithmicTask(cell["task"], 4, config.clrs_train_max, config.clrs_vocab)
    with seeded_init(config.seed, "clrs-init", cell["task"], cell["attention"], cell["seed"]):
        model = TinyTransformer(
            task.d_in,
            task.vocab,
            config.clrs_d_model,
            config.clrs_layers,
            config.clrs_heads,
            attention=cell["attention"],
            causal=task.causal,
        )
    tc = TrainConfig(
        steps=config.clrs_steps,
        batch_size=config.clrs_batch,
        lr=config.clrs_lr,
        optimizer="adamw",
        weight_decay=1e-3,
        grad_clip=1.0,
        schedule="cosine",
        warmup_steps=min(100, config.clrs_steps // 10),
        seed=derive_seed(config.seed, "clrs-train", cell["task"], cell["attention"], cell["seed"]),
        log_every=max(1, config.clrs_steps // 4),
    )
    res = train(model, task, _loss, tc)
    model.eval()
    out = {
        "clrs_sizes": [float(n) for n in config.clrs_test_sizes],
        **_score(model, task, config, cell["seed"]),
        "final_loss": float(res.final_loss),
    }
    if cell["attention"] == "softmax":
        model.set_attention("adaptive_softmax")  # the weights stay as trained
        out.update({k + "_inference_adaptive": v for k, v in _score(model, task, config, cell["seed"]).items()})
    return out


@torch.no_grad()
def _score(model, task: AlgorithmicTask, config, seed: int) -> dict[str, list[float]]:
    """Exact match and token accuracy at each test length, on the sequences of ``("clrs-test", seed, n)``."""
    exact, token = [], []
    for n in config.clrs_test_sizes:
        b = task.at_size(n).sample(config.clrs_eval, generator_for(config.seed, "clrs-test", seed, n))
        ok = (model(b.x, b.mask).argmax(-1) == b.target) | ~b.mask  # (B, n)
        exact.append(float(ok.all(1).float().mean()))
        token.append(float(((ok & b.mask).sum() / b.mask.sum())))
    return {"exact": exact, "token_acc": token}
