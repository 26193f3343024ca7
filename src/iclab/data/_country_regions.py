"""Sentences about countries labelled with the country's world region, built offline from ``countryinfo``: the
real-data stand-in for the sentence tasks of arXiv:2609.36448 (docs/papers/ood.md §5.6).

Every country with a capital and one of the five regions in :data:`WORLD_REGIONS` gives the sentence
"The capital of {country} is {capital}." (and, with ``both``, "{country} is a country."), labelled with the
index of its region. Countries, not sentences, are split into train/test, so test sentences name unseen countries.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["WORLD_REGIONS", "region_sentences"]

WORLD_REGIONS = ("Africa", "Americas", "Asia", "Europe", "Oceania")


def region_sentences(seed: int, train_frac: float = 0.6, both: bool = False) -> dict:
    """``{"train": (sentences, labels (n,)), "test": (...)}``: sentences and region labels from ``countryinfo``,
    countries shuffled by ``seed`` and split ``train_frac`` / rest (see the module docstring)."""
    import countryinfo

    facts = []
    for c in countryinfo.all_countries():
        info = c.info()
        name, cap, reg = info.get("name"), info.get("capital"), info.get("region")
        if name and cap and reg in WORLD_REGIONS:
            facts.append((name, cap, WORLD_REGIONS.index(reg)))
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
