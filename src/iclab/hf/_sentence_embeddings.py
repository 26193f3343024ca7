r"""Sentence embeddings of a Hugging Face encoder by mean pooling over real tokens:
:math:`\mathbf e=\sum_t m_t\mathbf h_t/\sum_t m_t` with :math:`\mathbf h_t` the last hidden state of token t and
:math:`m_t` its attention-mask bit (the pooling of sentence-transformers' all-MiniLM-L6-v2, ``load_model("minilm")``).
The real-sentence features of iclab's offline stand-in for arXiv:2405.17248 §5.4 (docs/papers/categorical.md §5.4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from iclab.domain import integer
from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf._arguments import check_text_list, check_tokenizer

if TYPE_CHECKING:  # annotations only: importing iclab.hf does not import transformers
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["mean_pooled_embeddings"]


@torch.no_grad()
def mean_pooled_embeddings(
    model: PreTrainedModel, tok: PreTrainedTokenizerBase, sents: list[str], batch: int = 64, max_length: int = 64
) -> torch.Tensor:
    """``(len(sents), D)`` float32: mean-pooled last hidden states, ``batch`` sentences at a time, each truncated to
    ``max_length`` tokens.

    Arguments: ``model`` a torch module, an encoder (a Hugging Face one) whose output has ``last_hidden_state`` (else
    UnsupportedModelError); ``tok`` its tokenizer (callable; its own errors are its own); ``sents`` a list or tuple
    (not a string) of strings, each giving at least one token (none: a ``(0, D)`` tensor, D the ``hidden_size`` of the
    model's config); ``batch`` and ``max_length`` integers >= 1 (not bools)."""
    if not isinstance(model, torch.nn.Module):
        raise UnsupportedModelError(f"{type(model).__name__} is not a torch module (an encoder)")
    check_tokenizer("tok", tok)
    sents = check_text_list("sents", sents)
    batch = integer("batch", batch, why="sentences per forward pass")
    max_length = integer("max_length", max_length, why="tokens per sentence")
    if not sents:
        cfg = getattr(model, "config", None)
        cfg = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
        width = getattr(cfg, "hidden_size", None)
        if not isinstance(width, int):
            raise UnsupportedModelError(f"{type(model).__name__}: config has no hidden_size (the embedding width)")
        return torch.zeros(0, width)
    out = []
    for s in range(0, len(sents), batch):
        enc = tok(sents[s : s + batch], padding=True, truncation=True, max_length=max_length, return_tensors="pt")
        h = model(**enc).last_hidden_state  # (b, t, D)
        m = enc["attention_mask"][..., None].to(h.dtype)  # (b, t, 1)
        if bool((m.sum(1) == 0).any()):
            first = s + int((m.sum(1) == 0).reshape(-1).nonzero()[0]) + 1
            raise ConfigError("sents", sents[first - 1], f"sentences of at least one token (sentence {first} has none)")
        out.append((h * m).sum(1) / m.sum(1))  # (b, D) mean pooling
    return torch.cat(out).float()
