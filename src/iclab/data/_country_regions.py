"""Sentences about countries labelled with the country's world region, built offline from ``countryinfo``: the
real-data stand-in for the sentence tasks of arXiv:2609.36448 (docs/papers/ood.md §5.6, §5.9).

Every country with a capital and one of the five regions in :data:`WORLD_REGIONS` gives the sentence
"The capital of {country} is {capital}." (and, with ``both``, "{country} is a country."), labelled with the
index of its region. Countries, not sentences, are split into train/test, so test sentences name unseen countries.

:func:`region_domain_sentences` gives the same task in several *domains* (genres): one sentence template per
``countryinfo`` field (:data:`REGION_DOMAINS`: capital, currency, telephone code, population, …), with the same
country split in every domain, for the natural-shift measurement of docs/papers/ood.md §5.9.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

__all__ = ["WORLD_REGIONS", "REGION_DOMAINS", "region_sentences", "region_domain_sentences"]

WORLD_REGIONS = ("Africa", "Americas", "Asia", "Europe", "Oceania")


def _first(values) -> str | None:
    return str(values[0]) if isinstance(values, list) and values else None


def _number(value) -> str | None:
    return f"{int(value):,}" if isinstance(value, (int, float)) and value > 0 else None


def _borders(info: dict, names: dict) -> str | None:
    neighbours = [names[code] for code in info.get("borders") or [] if code in names]
    if not neighbours:
        return None
    return neighbours[0] if len(neighbours) == 1 else ", ".join(neighbours[:-1]) + " and " + neighbours[-1]


# domain -> (template with {name} and {value}, value of a countryinfo record (None: the country lacks it))
REGION_DOMAINS: dict[str, tuple[str, Callable[[dict, dict], str | None]]] = {
    "capital": ("The capital of {name} is {value}.", lambda i, n: i.get("capital") or None),
    "currency": ("In {name} people pay with the currency {value}.", lambda i, n: _first(i.get("currencies"))),
    "telephone": ("To phone someone in {name}, dial +{value}.", lambda i, n: _first(i.get("callingCodes"))),
    "population": ("{name} has {value} inhabitants.", lambda i, n: _number(i.get("population"))),
    "demonym": ("People from {name} are called {value}.", lambda i, n: i.get("demonym") or None),
    "province": ("{value} is a province of {name}.", lambda i, n: _first(i.get("provinces"))),
    "native": ("In its own language, {name} is called {value}.", lambda i, n: i.get("nativeName") or None),
    "web": ("Websites from {name} end in {value}.", lambda i, n: _first(i.get("tld"))),
    "area": ("{name} covers {value} square kilometres.", lambda i, n: _number(i.get("area"))),
    "timezone": ("The clocks in {name} show {value}.", lambda i, n: _first(i.get("timezones"))),
    "borders": ("{name} shares a border with {value}.", _borders),
    "language": ("The people of {name} speak the language with code {value}.", lambda i, n: _first(i.get("languages"))),
}


def _country_records() -> list[dict]:
    """countryinfo records with a name, a capital and one of :data:`WORLD_REGIONS`, sorted by name."""
    import countryinfo

    records = [c.info() for c in countryinfo.all_countries()]
    records = [i for i in records if i.get("name") and i.get("capital") and i.get("region") in WORLD_REGIONS]
    return sorted(records, key=lambda i: i["name"])


def _split(n: int, seed: int, train_frac: float) -> tuple[np.ndarray, np.ndarray]:
    perm = np.random.default_rng(seed).permutation(n)
    n_train = int(train_frac * n)
    return perm[:n_train], perm[n_train:]


def region_sentences(seed: int, train_frac: float = 0.6, both: bool = False) -> dict:
    """``{"train": (sentences, labels (n,)), "test": (...)}``: sentences and region labels from ``countryinfo``,
    countries shuffled by ``seed`` and split ``train_frac`` / rest (see the module docstring)."""
    facts = [(i["name"], i["capital"], WORLD_REGIONS.index(i["region"])) for i in _country_records()]
    split = {}
    for part, idx in zip(("train", "test"), _split(len(facts), seed, train_frac)):
        sents, labels = [], []
        for i in idx:
            name, cap, reg = facts[i]
            sents += [f"The capital of {name} is {cap}."] + ([f"{name} is a country."] if both else [])
            labels += [reg] * (2 if both else 1)
        split[part] = (sents, torch.tensor(labels))
    return split


def region_domain_sentences(seed: int, domains: tuple[str, ...], train_frac: float = 0.6) -> dict:
    """``{domain: {"train": (sentences, labels (n,)), "test": (...)}}``: one sentence per country and domain of
    :data:`REGION_DOMAINS`, labelled with the country's region. The country split is the one of
    :func:`region_sentences` (same seed, same countries in train in every domain); a country that lacks a
    domain's field has no sentence in that domain."""
    from iclab.errors import ConfigError

    unknown = [d for d in domains if d not in REGION_DOMAINS]
    if unknown:
        raise ConfigError("domains", tuple(unknown), "names among " + ", ".join(REGION_DOMAINS))
    records = _country_records()
    names = {i["ISO"]["alpha3"]: i["name"] for i in records if isinstance(i.get("ISO"), dict) and "alpha3" in i["ISO"]}
    out = {}
    for domain in domains:
        template, value_of = REGION_DOMAINS[domain]
        out[domain] = {}
        for part, idx in zip(("train", "test"), _split(len(records), seed, train_frac)):
            rows = [(records[i], value_of(records[i], names)) for i in idx]
            rows = [(r, v) for r, v in rows if v]
            out[domain][part] = (
                [template.format(name=r["name"], value=v) for r, v in rows],
                torch.tensor([WORLD_REGIONS.index(r["region"]) for r, _ in rows]),
            )
    return out
