"""In-context classification of unseen classes on real features, the ``categorical`` experiment's offline stand-in
for the ImageNet/VGG16 study of Wang et al., arXiv:2405.17248 (docs/papers/categorical.md §5.4).

* ``digits``: scikit-learn's bundled ``load_digits`` (1,797 8x8 images, 10 classes), raw 64-d pixels
  (:func:`iclab.data.digits_features`).
* ``sentences``: sentences generated from ``countryinfo`` facts, one class per UN sub-region of the country
  (:func:`iclab.data.country_sentences`; none names the region or sub-region), embedded by the installed MiniLM
  (all-MiniLM-L6-v2, mean pooling, offline: :func:`iclab.hf.mean_pooled_embeddings`).

Features are centred by the mean over *training* classes and scaled to unit mean norm. Classes are split once
(seed) into training classes and unseen test classes; contexts are ``n_way``-way, ``shots``-shot with random
relabelling (:class:`iclab.data.FeatureClassPrompts`). The baseline is a per-context linear softmax probe trained
on the context's N examples, vectorised over contexts (:func:`iclab.estimators.softmax_probe`).
"""

from __future__ import annotations

import torch

from iclab.data import FeatureClassPrompts, country_sentences, derive_seed, digits_features, generator_for
from iclab.estimators import softmax_probe
from iclab.experiments.categorical.training import evaluate, fit_classifier
from iclab.models import FunctionalGDModel

__all__ = ["sentence_features", "feature_banks", "features_cell"]


@torch.no_grad()
def sentence_features(max_per_class: int = 60) -> tuple[torch.Tensor, torch.Tensor, list[str]]:
    """MiniLM mean-pooled embeddings (384-d) of :func:`iclab.data.country_sentences`, offline."""
    from iclab.hf import load_model, mean_pooled_embeddings

    model, tok, _ = load_model("minilm")
    sents, labels, names = country_sentences(max_per_class)
    return mean_pooled_embeddings(model, tok, sents), torch.tensor(labels), names


def feature_banks(datasets: tuple[str, ...], max_per_class: int) -> dict[str, tuple]:
    """``{name: (features, labels, class_names)}`` computed once in the driver (the experiment's ``shared``)."""
    out = {}
    for name in datasets:
        f, y, names = digits_features() if name == "digits" else sentence_features(max_per_class)
        out[name] = (f, y, names)
    return out


def _split_and_normalise(
    f: torch.Tensor, y: torch.Tensor, n_test_classes: int, seed: int, min_count: int, dim: int = 0
):
    """Split the classes with at least ``min_count`` examples into training and unseen test classes (seeded),
    centre on the training-class mean, optionally project on the top ``dim`` training principal directions, and
    scale to unit mean norm over training examples. Returns ``(features, train classes, test classes)``."""
    counts = torch.bincount(y)
    usable = torch.nonzero(counts >= min_count).flatten()
    perm = usable[torch.randperm(usable.numel(), generator=generator_for(seed, "class_split"))]
    test_cls, train_cls = perm[:n_test_classes].tolist(), perm[n_test_classes:].tolist()
    is_train = torch.isin(y, torch.tensor(train_cls))
    mu = f[is_train].mean(0)
    f = f - mu
    if dim and dim < f.shape[1]:  # PCA fitted on training classes only
        _, _, vh = torch.linalg.svd(f[is_train].double(), full_matrices=False)
        f = (f.double() @ vh[:dim].t()).float()
    f = f / f[is_train].norm(dim=1).mean()
    return f, tuple(sorted(train_cls)), tuple(sorted(test_cls))


def features_cell(cfg, cell: dict, shared) -> dict:
    """GD model (``blocks`` > 0) or the linear probe (``blocks`` = 0) on unseen-class contexts of a dataset."""
    seed = derive_seed(cfg.seed, "replicate", cell["seed"])
    f, y, _ = shared[cell["dataset"]]
    need = cfg.shots + 1
    n_test = cfg.digits_test_classes if cell["dataset"] == "digits" else cfg.sentence_test_classes
    f, train_cls, test_cls = _split_and_normalise(f, y, n_test, seed, need, cfg.feature_dim)
    train_data = FeatureClassPrompts(f, y, train_cls, n_way=cfg.n_way, shots=cfg.shots)
    test_data = FeatureClassPrompts(f, y, test_cls, n_way=cfg.n_way, shots=cfg.shots)
    test = test_data.sample(cfg.n_test, generator_for(seed, "test"))
    out = {"n_train_classes": len(train_cls), "n_test_classes": len(test_cls), "d_feature": int(f.shape[1])}
    if cell["blocks"] == 0:
        return out | softmax_probe(test, steps=cfg.probe_steps)
    val = train_data.sample(cfg.n_val, generator_for(seed, "val"))
    model = FunctionalGDModel(
        f.shape[1], cfg.n_way, cfg.n_way, cell["blocks"], cell["kernel"], generator=generator_for(seed, "init")
    )
    model, info = fit_classifier(
        model,
        train_data,
        val,
        steps=cfg.feature_steps,
        batch_size=cfg.batch_size,
        lr=cfg.lr_gd,
        optimizer="adam",
        seed=seed,
        pool_size=cfg.feature_train_contexts,
        eval_every=cfg.eval_every,
        device=cfg.device,
    )
    return out | evaluate(model, test.to(cfg.device)) | {"train_seconds": info["seconds"]}
