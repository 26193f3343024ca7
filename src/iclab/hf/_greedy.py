r"""Greedy exact match of a causal LM in one teacher-forced forward, with a shared prompt prefix computed once.

For a prompt ``prefix + query`` and a gold continuation ``answer`` (with its leading space, e.g. ``" Lima"``)
tokenised as :math:`a_1..a_m`, greedy decoding produces exactly the answer and then ends the line iff

.. math:: \arg\max_v p(v \mid x, a_{<j}) = a_j \;(j = 1..m) \quad\text{and}\quad
          \arg\max_v p(v \mid x, a_{\le m}) \in \text{stop},

with *stop* the tokens that start a new line and EOS. Teacher forcing the gold tokens therefore decides greedy
exact match with **one** forward over ``m + 1`` positions instead of ``m + 1`` sequential decoding steps. The
prefix (demonstrations, or a long key–value list) is run once; its key/value cache is copied to every batch of
queries (``Cache.batch_repeat_interleave``), so ``G`` queries that share it cost one prefix plus ``G`` short
suffixes. Each prompt keeps its natural tokens ``tokenizer(prefix + query)``; the cached part is the longest token
prefix that all prompts share (a boundary token that merges with the query stays in the suffix). Everything runs under whatever temperature the model has
(``with_temperature``), because τ changes the prefix's keys and values too.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Sequence

import numpy as np
import torch

from iclab.domain import integer
from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf._arguments import check_model, check_text_list, check_tokenizer

if TYPE_CHECKING:  # annotations only: importing iclab.hf does not import transformers
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["greedy_match", "answer_argmax", "stop_token_mask", "greedy_answers"]


_STOP: dict[tuple[int, int], torch.Tensor] = {}  # (id(tokenizer), vocab) -> stop mask


def stop_token_mask(tokenizer: PreTrainedTokenizerBase, vocab: int) -> torch.Tensor:
    """``(vocab,)`` bool: tokens whose text starts with a newline, and EOS (the end of a one-line answer); cached
    per tokenizer object and ``vocab``.

    Arguments: ``tokenizer`` a Hugging Face tokenizer (callable, with ``len`` and ``batch_decode``; ``eos_token_id``
    read where it has one); ``vocab`` an integer >= 0 (not a bool), the width of the model's output layer."""
    check_tokenizer("tokenizer", tokenizer, "batch_decode", "__len__")
    vocab = integer("vocab", vocab, low=0, why="the width of the model's output layer")
    key = (id(tokenizer), vocab)
    if key not in _STOP:
        n = min(vocab, len(tokenizer))
        texts = tokenizer.batch_decode([[i] for i in range(n)])
        stop = torch.zeros(vocab, dtype=torch.bool)
        stop[:n] = torch.tensor([t.startswith("\n") for t in texts], dtype=torch.bool)
        eos = tokenizer.eos_token_id
        for e in eos if isinstance(eos, (list, tuple)) else [eos]:
            if e is not None and 0 <= e < vocab:
                stop[e] = True
        _STOP[key] = stop
    return _STOP[key]


def _split(tokenizer, prompt: str, answer: str) -> tuple[list[int], list[int]]:
    """Token ids of ``prompt`` (with special tokens) and of ``answer`` as it follows it in ``prompt + answer``."""
    joint = tokenizer(prompt + answer)["input_ids"]
    p = tokenizer(prompt)["input_ids"]
    if joint[: len(p)] != p or len(joint) == len(p):  # a token straddles the boundary: tokenise apart
        return p, tokenizer(answer, add_special_tokens=False)["input_ids"]
    return p, joint[len(p) :]


def _common_prefix(rows: list[list[int]]) -> int:
    """Length of the longest token prefix shared by every row, leaving each row at least one token."""
    n = min(len(r) for r in rows) - 1
    first = rows[0]
    for i in range(max(n, 0)):
        if any(r[i] != first[i] for r in rows[1:]):
            return i
    return max(n, 0)


def _prefix_cache(model, prefix_ids: list[int], device):
    """The key/value cache of the shared prefix tokens (None when they share none)."""
    if not prefix_ids:
        return None
    ids = torch.tensor([prefix_ids], device=device)  # (1, P)
    return model.base_model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=True).cache


def _check_greedy(model, tokenizer, prefix, queries, answers, batch_size) -> None:
    """The entry check of :func:`answer_argmax` and :func:`greedy_match` (their rule)."""
    if not isinstance(prefix, str):
        raise ConfigError("prefix", prefix, "a string (the shared prompt prefix; '' for none)")
    check_text_list("queries", queries)
    check_text_list("answers", answers)
    if len(queries) != len(answers) or not queries:
        raise ConfigError("queries/answers", (len(queries), len(answers)), "equal, non-zero numbers of each")
    integer("batch_size", batch_size, why="queries per forward pass")
    check_model(model)
    if getattr(model, "get_output_embeddings", lambda: None)() is None or not hasattr(model, "base_model"):
        raise UnsupportedModelError(f"{type(model).__name__} has no output embeddings: not a causal language model")
    check_tokenizer("tokenizer", tokenizer)


@torch.no_grad()
def answer_argmax(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    prefix: str,
    queries: Sequence[str],
    answers: Sequence[str],
    *,
    batch_size: int = 32,
) -> list[tuple[list[int], list[int]]]:
    """Per query ``(gold answer ids a_1..a_m, argmax ids at the m + 1 positions that predict a_1..a_m and the next
    token)``, teacher forced after the shared ``prefix`` (one prefix forward, then batches of suffixes).

    Arguments: ``prefix`` a string; ``queries`` and ``answers`` sequences (lists or tuples, not strings) of strings of
    one non-zero length, every ``prefix + query`` and every answer tokenising to at least one token (else one
    ConfigError naming ``queries/answers``); ``batch_size`` an integer >= 1 (not a bool); ``model`` a Hugging Face
    causal LM (a ``PreTrainedModel`` with ``base_model`` and output embeddings, whose cache has
    ``batch_repeat_interleave``; else UnsupportedModelError); ``tokenizer`` its tokenizer (callable; its own errors are
    its own)."""
    _check_greedy(model, tokenizer, prefix, queries, answers, batch_size)
    device = next(model.parameters()).device
    split = [_split(tokenizer, prefix + q, a) for q, a in zip(queries, answers)]  # natural tokens of each prompt
    empty = [q for q, (pi, ai) in zip(queries, split) if not pi or not ai]
    if empty:
        raise ConfigError("queries/answers", empty[0], "a prompt and an answer that each tokenise to >= 1 token")
    P = _common_prefix([pi for pi, _ in split])  # the shared tokens, run once
    cache = _prefix_cache(model, split[0][0][:P], device)
    split = [(pi[P:], ai) for pi, ai in split]
    order = sorted(range(len(split)), key=lambda i: len(split[i][0]) + len(split[i][1]))  # batch by length
    out: list = [None] * len(split)
    base, head = model.base_model, model.get_output_embeddings()
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        rows = [split[i][0] + split[i][1] for i in idx]
        S = max(len(r) for r in rows)
        ids = torch.zeros(len(idx), S, dtype=torch.long, device=device)  # right padded: real positions unchanged
        mask = torch.zeros(len(idx), P + S, dtype=torch.long, device=device)
        mask[:, :P] = 1
        for b, r in enumerate(rows):
            ids[b, : len(r)] = torch.tensor(r, device=device)
            mask[b, P : P + len(r)] = 1
        past = None
        if cache is not None:
            past = copy.deepcopy(cache)
            past.batch_repeat_interleave(len(idx))
        hidden = base(
            input_ids=ids, attention_mask=mask, cache=past, use_cache=past is not None
        ).last_hidden_state  # (b, S, D)
        spans = [(len(split[i][0]) - 1, len(split[i][0]) + len(split[i][1])) for i in idx]  # predicting a_1..a_m, next
        h = torch.cat([hidden[b, lo:hi] for b, (lo, hi) in enumerate(spans)])  # (sum (m + 1), D)
        ids_all = head(h).argmax(-1).tolist()  # one (sum (m + 1), V) product for the whole batch
        at = 0
        for i, (lo, hi) in zip(idx, spans):
            out[i] = (split[i][1], ids_all[at : at + hi - lo])
            at += hi - lo
    return out


def greedy_match(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    prefix: str,
    queries: Sequence[str],
    answers: Sequence[str],
    *,
    batch_size: int = 32,
) -> np.ndarray:
    """``(Q,)`` float: 1 where greedy decoding after ``prefix + query`` yields exactly ``answer`` (its canonical
    tokens) and then ends the line (newline token or EOS) — see the module docstring.

    Arguments: ``model``, ``tokenizer``, ``prefix``, ``queries``, ``answers`` and ``batch_size`` as
    :func:`answer_argmax` takes them (``tokenizer`` also with ``batch_decode``, as :func:`stop_token_mask`), all
    checked before the first forward pass."""
    _check_greedy(model, tokenizer, prefix, queries, answers, batch_size)
    vocab = model.get_output_embeddings().weight.shape[0]
    stop = stop_token_mask(tokenizer, vocab)
    res = answer_argmax(model, tokenizer, prefix, queries, answers, batch_size=batch_size)
    return np.array([float(pred[:-1] == gold and bool(stop[pred[-1]])) for gold, pred in res])


@torch.no_grad()
def greedy_answers(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    prompts: Sequence[str],
    max_new_tokens: int = 6,
    batch_size: int = 16,
) -> list[str]:
    """Greedy continuations of ``prompts`` (left padded batches of ``model.generate``), cut at the first newline:
    the answers that :func:`iclab.data.exact_match` scores.

    Arguments: ``prompts`` a sequence (a list or tuple, not a string) of strings (none: ``[]``); ``max_new_tokens`` and
    ``batch_size`` integers >= 1 (not bools); ``model`` a Hugging Face ``PreTrainedModel`` that can ``generate`` (else
    UnsupportedModelError); ``tokenizer`` its tokenizer (callable, with ``batch_decode``; for the call its
    ``padding_side`` is left and a missing pad token is EOS, both restored afterwards). ``model.generate`` and the
    tokenizer raise their own errors."""
    prompts = check_text_list("prompts", prompts)
    integer("max_new_tokens", max_new_tokens, why="tokens to generate")
    integer("batch_size", batch_size, why="prompts per generate call")
    check_model(model)
    if not callable(getattr(model, "generate", None)):
        raise UnsupportedModelError(f"{type(model).__name__} cannot generate: not a causal language model")
    check_tokenizer("tokenizer", tokenizer, "batch_decode")
    if not prompts:
        return []
    side, pad = tokenizer.padding_side, tokenizer.pad_token
    tokenizer.padding_side = "left"
    if pad is None:
        tokenizer.pad_token = tokenizer.eos_token
    try:
        return _generate(model, tokenizer, prompts, max_new_tokens, batch_size)
    finally:
        tokenizer.padding_side = side
        if pad is None:
            tokenizer.pad_token = pad


def _generate(model, tokenizer, prompts: list[str], max_new_tokens: int, batch_size: int) -> list[str]:
    """:func:`greedy_answers` on checked arguments, with the tokenizer padding on the left."""
    device = next(model.parameters()).device
    lengths = [len(ids) for ids in tokenizer(prompts)["input_ids"]]
    order = sorted(range(len(prompts)), key=lambda i: lengths[i])  # similar lengths together: less padding
    out: list[str] = [""] * len(prompts)
    for start in range(0, len(prompts), batch_size):
        idx = order[start : start + batch_size]
        enc = tokenizer([prompts[i] for i in idx], return_tensors="pt", padding=True)
        enc = {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        gen = model.generate(
            **enc, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id
        )  # (b, T + new)
        new = gen[:, enc["input_ids"].shape[1] :]  # (b, new)
        for i, text in zip(idx, tokenizer.batch_decode(new, skip_special_tokens=True)):
            out[i] = text.split("\n", 1)[0]
    return out
