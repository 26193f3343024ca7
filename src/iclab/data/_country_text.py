"""English text built offline from the ``countryinfo`` package's facts: the text on which iclab measures the logit
spread δ of pretrained transformers (arXiv:2410.01104 measured it on Gemma's own source file, which is not
available offline; docs/papers/dispersion.md §5.4).
"""

from __future__ import annotations

import random

__all__ = ["country_text"]


def _country_sentences(info: dict) -> str | None:
    """A few sentences on one country (its sub-region, capital, population, area, number of neighbours)."""
    name, cap = info.get("name"), info.get("capital")
    if not name:
        return None
    s = f"{name} is a country in {info.get('subregion') or info.get('region') or 'the world'}."
    if cap:
        s += f" Its capital is {cap}."
    if info.get("population"):
        s += f" About {int(info['population']):,} people live there."
    if info.get("area"):
        s += f" It covers {int(info['area']):,} square kilometres."
    if info.get("borders"):
        s += f" It borders {len(info['borders'])} other countries."
    return s


def country_text(seed: int = 0) -> str:
    """Sentences on every country of ``countryinfo``, in a shuffled order fixed by ``seed``, joined by spaces."""
    import countryinfo

    sents = []
    for c in countryinfo.all_countries():
        try:
            info = c.info()
        except Exception:  # pragma: no cover - a malformed entry in the package
            continue
        s = _country_sentences(info)
        if s is not None:
            sents.append(s)
    random.Random(seed).shuffle(sents)
    return " ".join(sents)
