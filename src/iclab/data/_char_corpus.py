"""A character-level corpus that ships with Python, the offline stand-in for the TinyStories/Children-Stories text
of the language experiment of Wang et al., arXiv:2405.17248 (docs/papers/categorical.md §5.5).

The text is ``pydoc_data.topics`` (the Python language reference and library topics behind ``help()``; PSF
licence), topics in sorted order: the first 90 % is the training split, the last 10 % is held out. A
:class:`CharCorpus` draws random windows of ``seq_len + 1`` characters of one split.
"""

from __future__ import annotations

import functools
import sysconfig
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import torch

__all__ = ["pydoc_text", "stdlib_source_text", "CharCorpus", "TokenBatch"]


def pydoc_text() -> str:
    """The ``pydoc_data.topics`` text, topics in sorted order (about 465k characters)."""
    from pydoc_data.topics import topics

    return "\n".join(topics[k] for k in sorted(topics))


@functools.lru_cache(maxsize=1)
def stdlib_source_text() -> str:
    """The source of the running interpreter's standard library, its top-level modules (``<stdlib>/*.py``) in
    sorted file-name order joined by blank lines: about 4.7 M characters (1.2–1.3 M tokens for SmolLM2, Gemma 3 and
    MiniLM) on CPython 3.11, ten times the pydoc text. Python source, like the Gemma ``modules.py`` the paper's δ
    protocol read (arXiv:2410.01104, footnote 3); it changes with the Python version, which every run records.
    Raises ``FileNotFoundError`` when the interpreter has no standard-library source (a frozen or stripped build).

    Arguments: none."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(root.glob("*.py"))
    if not files:
        raise FileNotFoundError(f"no standard-library source (*.py) under {root}: this Python ships none")
    return "\n\n".join(f.read_text(encoding="utf-8", errors="replace") for f in files)


@dataclass
class TokenBatch:
    """A batch of token windows; ``tokens (B, T+1)`` character ids (inputs ``[:, :-1]``, targets ``[:, 1:]``)."""

    tokens: torch.Tensor  # (B, T+1) character ids

    def to(self, device) -> "TokenBatch":
        return TokenBatch(self.tokens.to(device))

    def index(self, idx) -> "TokenBatch":
        return TokenBatch(self.tokens[idx])


class CharCorpus:
    """Random windows of ``seq_len + 1`` characters of one split (``"train"``: the first 90 % of ``text``, any
    other value: the last 10 %); characters outside the training vocabulary (fewer than ``min_count``
    occurrences in the training split) map to id 0. Pass the training corpus's ``vocab`` to the test split."""

    def __init__(self, text: str, seq_len: int, split: str, vocab: list[str] | None = None, min_count: int = 5):
        cut = int(0.9 * len(text))
        part = text[:cut] if split == "train" else text[cut:]
        if vocab is None:
            cnt = Counter(text[:cut])
            vocab = ["\0"] + sorted(c for c, n in cnt.items() if n >= min_count)
        self.vocab, self.seq_len = vocab, seq_len
        lut = {c: i for i, c in enumerate(vocab)}
        self.ids = torch.tensor([lut.get(c, 0) for c in part], dtype=torch.long)

    def sample(self, batch: int, generator: torch.Generator | None = None) -> TokenBatch:
        start = torch.randint(len(self.ids) - self.seq_len - 1, (batch,), generator=generator)  # (B,)
        return TokenBatch(self.ids[start[:, None] + torch.arange(self.seq_len + 1)])  # (B, T+1)
