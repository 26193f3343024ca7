r"""Long-context retrieval prompts built from random keys, offline: key–value lists and pass-key haystacks, the
real-model tasks of iclab's size-generalisation check of arXiv:2410.01104 §4 (docs/papers/dispersion.md §5.5).

Each generator returns groups ``(prefix, questions, answers)``: one long prefix shared by its questions (so a model
can cache it), the questions, and the gold answers with their leading space. A key is five random lowercase
letters, a value a random three-digit number; keys within a group are distinct. Every group draws from its own
stream, ``generator_for(seed, task, size, group)``, so a group is the same whatever else is drawn.

* :func:`lookup_lists` — ``n`` lines ``abcde: 123`` followed by ``Look up abcde in the list above.\nabcde:``;
  every line is a candidate, and the list grows with ``n``.
* :func:`passkey_haystacks` — a few lines ``Pass key of abcde: 123`` at random places among ``n`` filler lines,
  then ``What is the pass key of abcde?\nPass key of abcde:``; the distractors grow, the relevant lines stay few.
* :func:`variable_chains` — multi-hop variable tracking (RULER's "variable tracking", arXiv:2404.06654):
  ``VAR abcde = 123`` then ``VAR fghij = VAR abcde`` … ``hops`` times, the lines in order at random places among
  ``n`` filler lines, then ``What is the value of VAR <last>?\nVAR <last> =``: every hop must be followed.
* :func:`common_words` — aggregation (RULER's "common words extraction"): ``n`` words, one of which occurs
  ``top_count`` times and every other at most ``top_count // 2`` times, in random order, then ``What is the most
  common word in the list above?\nThe most common word is``: the answer needs the whole list.
"""

from __future__ import annotations

import torch

from iclab.data._rng import generator_for
from iclab.errors import ConfigError

__all__ = ["lookup_lists", "passkey_haystacks", "variable_chains", "common_words"]

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_FILLER = ("The grass is green.", "The sky is blue.", "The sun is yellow.", "Here we go.", "There and back again.")
# Short, common English words (one or two tokens in most vocabularies) for the common-words lists.
_WORDS = (
    "apple",
    "river",
    "stone",
    "cloud",
    "horse",
    "table",
    "music",
    "bread",
    "light",
    "water",
    "chair",
    "green",
    "house",
    "smile",
    "paper",
    "tiger",
    "plant",
    "glass",
    "train",
    "dream",
    "ocean",
    "field",
    "metal",
    "sugar",
    "honey",
    "storm",
    "pearl",
    "candle",
    "forest",
    "garden",
)


def _random_keys(n: int, g: torch.Generator) -> dict[str, str]:
    """``n`` distinct five-letter keys, each with a three-digit value, in the order drawn (a repeated key is drawn
    again, its value discarded)."""
    keys: dict[str, str] = {}
    while len(keys) < n:
        k = "".join(_LETTERS[i] for i in torch.randint(0, 26, (5,), generator=g).tolist())
        keys.setdefault(k, str(int(torch.randint(100, 1000, (1,), generator=g))))
    return keys


def lookup_lists(n_pairs: int, lists: int, queries: int, seed: int) -> list[tuple[str, list[str], list[str]]]:
    """``lists`` × (prefix with ``n_pairs`` lines, ``queries`` questions about random lines, their answers)."""
    out = []
    for li in range(lists):
        g = generator_for(seed, "lookup", n_pairs, li)
        items = list(_random_keys(n_pairs, g).items())
        prefix = "".join(f"{k}: {v}\n" for k, v in items) + "\n"
        asked = torch.randperm(n_pairs, generator=g)[: min(queries, n_pairs)].tolist()
        out.append(
            (
                prefix,
                [f"Look up {items[i][0]} in the list above.\n{items[i][0]}:" for i in asked],
                [f" {items[i][1]}" for i in asked],
            )
        )
    return out


def passkey_haystacks(
    n_lines: int, haystacks: int, seed: int, needles: int = 1
) -> list[tuple[str, list[str], list[str]]]:
    """``haystacks`` × (``n_lines`` filler lines with ``needles`` lines ``Pass key of abcde: 123`` (distinct keys) at
    random positions, a question about each, their answers)."""
    out = []
    for hi in range(haystacks):
        g = generator_for(seed, "passkey", n_lines, hi)
        keys = _random_keys(needles, g)
        start = int(torch.randint(0, len(_FILLER), (1,), generator=g))
        lines = [_FILLER[(start + i) % len(_FILLER)] for i in range(n_lines)]
        for key, value in keys.items():
            lines.insert(int(torch.randint(0, len(lines) + 1, (1,), generator=g)), f"Pass key of {key}: {value}")
        out.append(
            (
                "\n".join(lines) + "\n\n",
                [f"What is the pass key of {k}?\nPass key of {k}:" for k in keys],
                [f" {v}" for v in keys.values()],
            )
        )
    return out


def _filler_with(lines: list[str], n_lines: int, g: torch.Generator) -> list[str]:
    """``n_lines`` filler lines with ``lines`` inserted, in their order, at random places."""
    start = int(torch.randint(0, len(_FILLER), (1,), generator=g))
    spots = torch.sort(torch.randint(0, n_lines + 1, (len(lines),), generator=g)).values.tolist()
    out = [_FILLER[(start + i) % len(_FILLER)] for i in range(n_lines)]
    for offset, (spot, line) in enumerate(zip(spots, lines)):
        out.insert(spot + offset, line)
    return out


def variable_chains(n_lines: int, chains: int, seed: int, hops: int = 2) -> list[tuple[str, list[str], list[str]]]:
    """``chains`` × (``n_lines`` filler lines with one chain ``VAR k0 = 123``, ``VAR k1 = VAR k0``, …, ``VAR k_hops =
    VAR k_{hops−1}`` in order at random places, the question about ``k_hops``, its answer `` 123``)."""
    if hops < 1:
        raise ConfigError("hops", hops, "an integer >= 1 (the assignments to follow)")
    out = []
    for ci in range(chains):
        g = generator_for(seed, "variables", n_lines, hops, ci)
        keys = list(_random_keys(hops + 1, g).items())
        value = keys[0][1]
        chain = [f"VAR {keys[0][0]} = {value}"] + [
            f"VAR {keys[i][0]} = VAR {keys[i - 1][0]}" for i in range(1, hops + 1)
        ]
        last = keys[-1][0]
        prefix = "\n".join(_filler_with(chain, n_lines, g)) + "\n\n"
        out.append((prefix, [f"What is the value of VAR {last}?\nVAR {last} ="], [f" {value}"]))
    return out


def common_words(n_words: int, lists: int, seed: int, top_count: int = 6) -> list[tuple[str, list[str], list[str]]]:
    """``lists`` × (a numbered list of ``n_words`` words in which one word occurs ``top_count`` times and every
    other at most ``top_count // 2`` times, the question, the answer ``" word"``)."""
    if not 2 <= top_count <= n_words:
        raise ConfigError("top_count", top_count, f"an integer in 2..n_words={n_words}")
    cap = top_count // 2
    if cap * (len(_WORDS) - 1) < n_words - top_count:
        raise ConfigError("n_words", n_words, f"at most {top_count + cap * (len(_WORDS) - 1)} at top_count={top_count}")
    out = []
    for li in range(lists):
        g = generator_for(seed, "common-words", n_words, top_count, li)
        order = torch.randperm(len(_WORDS), generator=g).tolist()
        top, others = _WORDS[order[0]], [_WORDS[i] for i in order[1:]]
        rest = [others[i % len(others)] for i in range(n_words - top_count)]  # each other word at most ceil(.)
        words = [top] * top_count + rest
        words = [words[i] for i in torch.randperm(n_words, generator=g).tolist()]
        prefix = "".join(f"{i + 1}. {w}\n" for i, w in enumerate(words)) + "\n"
        out.append((prefix, ["What is the most common word in the list above?\nThe most common word is"], [f" {top}"]))
    return out
