r"""Synthetic long-context tasks beyond single look-up, offline, in the format of :mod:`iclab.data._lookup` (groups
``(prefix, questions, answers)``, answers with their leading space, one stream per group
``generator_for(seed, task, size, group)``), for comparing attention-scaling rules at growing context length
(docs/howto/hf-temperature.md; the task kinds follow RULER, arXiv:2404.06654 §3):

* :func:`variable_tracking` — multi-hop: ``VAR abcde = 12345`` then ``hops`` assignments ``VAR fghij = VAR abcde``
  scattered in order among ``n`` filler lines, beside a distractor chain with another value; the question asks the
  value of the chain's last variable, so the model must follow every hop back to the number.
* :func:`common_words` — aggregation: a list of ``n`` five-letter words in which one word occurs ``top`` times, a few
  runners-up ``top // 2`` times and the rest once, in random order; the question asks for the most frequent word.

Together with :func:`iclab.data.passkey_haystacks` (one needle among fillers) and :func:`iclab.data.lookup_lists`
(multi-key key–value lookup) they make the four retrieval kinds of :data:`LONG_CONTEXT_TASKS`.
"""

from __future__ import annotations

import torch

from iclab.config import check_choice, check_int
from iclab.data._lookup import FILLER, random_keys, lookup_lists, passkey_haystacks
from iclab.data._rng import generator_for

__all__ = ["LONG_CONTEXT_TASKS", "variable_tracking", "common_words", "long_context_groups"]

LONG_CONTEXT_TASKS = ("passkey", "kv", "vartrack", "cwe")
_RUNNERS_UP = 3  # words of common_words that occur top // 2 times


def _chain(names: list[str], value: str) -> list[str]:
    """``VAR a = value``, ``VAR b = VAR a``, …: the assignment lines of one chain, in order."""
    return [f"VAR {names[0]} = {value}"] + [f"VAR {b} = VAR {a}" for a, b in zip(names, names[1:])]


def variable_tracking(n_lines: int, groups: int, seed: int, hops: int = 3) -> list[tuple[str, list[str], list[str]]]:
    """``groups`` × (``n_lines`` filler lines with a chain of ``hops`` + 1 assignments and a distractor chain of the
    same length, each in order at random places; one question about the last variable of each chain)."""
    check_int("n_lines", n_lines, 0)
    check_int("hops", hops, 1)
    out = []
    for gi in range(groups):
        g = generator_for(seed, "vartrack", n_lines, hops, gi)
        names = list(random_keys(2 * (hops + 1), g))
        values = [str(int(v)) for v in torch.randint(10000, 100000, (2,), generator=g)]
        while values[1] == values[0]:
            values[1] = str(int(torch.randint(10000, 100000, (1,), generator=g)))
        chains = [_chain(names[: hops + 1], values[0]), _chain(names[hops + 1 :], values[1])]
        begin = int(torch.randint(0, len(FILLER), (1,), generator=g))
        lines = [FILLER[(begin + i) % len(FILLER)] for i in range(n_lines + 2 * (hops + 1))]
        slots = torch.randperm(len(lines), generator=g)[: 2 * (hops + 1)].view(2, hops + 1)  # (chain, line)
        for chain, at in zip(chains, slots.sort(dim=1).values.tolist()):  # sorted slots keep each chain in order
            for slot, line in zip(at, chain):
                lines[slot] = line
        lasts = [names[hops], names[-1]]
        out.append(
            (
                "\n".join(lines) + "\n\n",
                [f"What is the value of VAR {v}? Follow the assignments above.\nVAR {v} =" for v in lasts],
                [f" {v}" for v in values],
            )
        )
    return out


def common_words(n_words: int, groups: int, seed: int, top: int = 0) -> list[tuple[str, list[str], list[str]]]:
    """``groups`` × (a numbered list of ``n_words`` words: one occurs ``top`` times (default ``max(4, n // 10)``),
    :data:`_RUNNERS_UP` others ``top // 2`` times, the rest once; the question asks for the most frequent word)."""
    top = top or max(4, n_words // 10)
    check_int("top", top, 2)
    check_int("n_words", n_words, top + _RUNNERS_UP * (top // 2))
    out = []
    for gi in range(groups):
        g = generator_for(seed, "cwe", n_words, top, gi)
        rest = n_words - top - _RUNNERS_UP * (top // 2)
        words = list(random_keys(1 + _RUNNERS_UP + rest, g))
        bag = [words[0]] * top + [w for w in words[1 : 1 + _RUNNERS_UP] for _ in range(top // 2)]
        bag += words[1 + _RUNNERS_UP :]
        order = torch.randperm(len(bag), generator=g).tolist()
        prefix = "".join(f"{i + 1}. {bag[j]}\n" for i, j in enumerate(order)) + "\n"
        out.append((prefix, ["What is the most frequent word in the list above?\nAnswer:"], [f" {words[0]}"]))
    return out


def long_context_groups(task: str, size: int, groups: int, seed: int) -> list[tuple[str, list[str], list[str]]]:
    """The groups of one of :data:`LONG_CONTEXT_TASKS` at ``size`` (filler lines for ``passkey`` and
    ``vartrack``, pairs for ``kv``, words for ``cwe``; about 5–7 tokens each), one or four questions per group."""
    check_choice("task", task, LONG_CONTEXT_TASKS)
    if task == "passkey":
        return passkey_haystacks(size, groups, seed)
    if task == "kv":
        return lookup_lists(size, groups, 4, seed)
    if task == "vartrack":
        return variable_tracking(size, groups, seed)
    return common_words(size, groups, seed)
