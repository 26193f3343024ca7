"""Fact sentences about countries labelled with the country's UN sub-region, built offline from ``countryinfo``:
the sentence classes of iclab's offline stand-in for the real-feature study of Wang et al., arXiv:2405.17248 §5.4
(docs/papers/categorical.md §5.4).

Each country gives up to 14 sentences from its facts — capital, up to eight provinces, demonym, up to four
neighbours, currency, population and another name — and none names its region or sub-region, so a classifier must
infer the sub-region from what the sentence says. :func:`country_sentences` keeps at most ``max_per_class``
sentences per sub-region, spread over its countries, in a fixed order (no random draw).
"""

from __future__ import annotations

import ast

__all__ = ["country_sentences"]


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
    """``(sentences, labels, class names)``: sentences from ``countryinfo`` facts, labelled by the index of the
    country's sub-region in the sorted class names (deterministic order)."""
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
