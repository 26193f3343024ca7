r"""Sentence embeddings of a Hugging Face encoder by mean pooling over real tokens:
:math:`\mathbf e=\sum_t m_t\mathbf h_t/\sum_t m_t` with :math:`\mathbf h_t` the last hidden state of token t and
:math:`m_t` its attention-mask bit (the pooling of sentence-transformers' all-MiniLM-L6-v2, ``load_model("minilm")``).
The real-sentence features of iclab's offline stand-in for arXiv:2405.17248 §5.4 (docs/papers/categorical.md §5.4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # annotations only: importing iclab.hf does not import transformers
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["mean_pooled_embeddings"]


@torch.no_grad()
def mean_pooled_embeddings(
    model: PreTrainedModel, tok: PreTrainedTokenizerBase, sents: list[str], batch: int = 64, max_length: int = 64
) -> torch.Tensor:
    """``(len(sents), D)`` float32: mean-pooled last hidden states, ``batch`` sentences at a time, each truncated to
    ``max_length`` tokens."""
    out = []
    for s in range(0, len(sents), batch):
        enc = tok(sents[s : s + batch], padding=True, truncation=True, max_length=max_length, return_tensors="pt")
        h = model(**enc).last_hidden_state  # (b, t, D)
        m = enc["attention_mask"][..., None].to(h.dtype)  # (b, t, 1)
        out.append((h * m).sum(1) / m.sum(1))  # (b, D) mean pooling
    return torch.cat(out).float()
