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
"""

from __future__ import annotations

import torch

from iclab.data._rng import generator_for

__all__ = ["lookup_lists", "passkey_haystacks"]

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
FILLER = ("The grass is green.", "The sky is blue.", "The sun is yellow.", "Here we go.", "There and back again.")


def random_keys(n: int, g: torch.Generator) -> dict[str, str]:
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
        items = list(random_keys(n_pairs, g).items())
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
        keys = random_keys(needles, g)
        start = int(torch.randint(0, len(FILLER), (1,), generator=g))
        lines = [FILLER[(start + i) % len(FILLER)] for i in range(n_lines)]
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
