r"""Dispersion of the heads of real transformers as the context grows: Theorem 2.2 of arXiv:2410.01104 (every global
head's coefficients are :math:`\Theta(1/n)` once its logit spread δ is bounded; Lemma 2.1) measured on the models
:func:`iclab.hf.load_model` loads (docs/papers/dispersion.md §3.3, §5.7).

One cell per (``model``, text segment ``seed``); the run's ``seed`` picks a fresh block of segments
(:func:`text_segment`), so a run with a new seed measures new text. The text is ``real_text``: consecutive segments
of the Python documentation (:func:`iclab.data.pydoc_text`) or of the standard library's source
(:func:`iclab.data.stdlib_source_text`, ten times longer), or :func:`iclab.data.country_text`, one shuffle per segment;
tokenised without special tokens; a context of n tokens is the model's own special tokens around the first
n − (their count) text tokens of the segment. For each n of ``real_sizes`` (up to the model's maximum length):

* a causal model runs once on the longest context; a row at position p sees exactly p + 1 keys, as the prefix of
  length p + 1 would, so the rows whose key count lies in [0.9 n, n] stand for n;
* a bidirectional model (MiniLM) runs on each prefix of length n; every row sees n keys.

For every layer, head and n it returns the mean over those rows of the largest coefficient, the coefficient on the
first key (attention sinks), the largest coefficient on another key, and the mean and maximum logit spread δ
(:func:`iclab.hf.attention_extremes`), plus which layers are global (Gemma 3 alternates sliding-window layers,
which Theorem 2.2 does not cover, with global ones).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from iclab.data import country_text, pydoc_text, stdlib_source_text
from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf import attention_extremes, load_tokenizer, shared_model

__all__ = ["run_real_cell", "REAL_STATS", "context_rows", "text_segment", "check_text_fits"]

REAL_STATS = ("max_coef", "first_coef", "rest_max_coef", "delta", "delta_max")
_BAND = 0.9  # a causal row stands for n when its key count lies in [ceil(0.9 n), n]
# the texts read in consecutive segments (segment s starts at token s · max(real_sizes)); 'country' is not one of them.
# Looked up when called, so that a test can stand in a short text for either.
_CONSECUTIVE = {"pydoc": lambda: pydoc_text(), "stdlib": lambda: stdlib_source_text()}
_IDS: dict[tuple[str, str], np.ndarray] = {}  # (model, real_text) -> its token ids, kept per worker process


def _special_tokens(tok) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer puts before and after a text (e.g. BERT's [CLS] … [SEP], Gemma's <bos>)."""
    bare = tok("hello world", add_special_tokens=False)["input_ids"]
    full = tok("hello world")["input_ids"]
    for i in range(len(full) - len(bare) + 1):
        if full[i : i + len(bare)] == bare:
            return full[:i], full[i + len(bare) :]
    return [], []


def _segment_fit_error(config, tokens: int, segment: int, length: int, model: str = "") -> ConfigError | None:
    """The error when segment ``segment`` of ``length`` tokens does not fit the ``real_text`` of ``tokens`` tokens (None
    when it does): a context longer than the text names ``real_sizes``; a segment past its end names
    ``real_segments``, what the text holds and the ways out."""
    size, who, text = max(config.real_sizes), f" for {model}" if model else "", config.real_text
    if length > tokens:
        return ConfigError(
            "real_sizes",
            config.real_sizes,
            message=f"invalid real_sizes={config.real_sizes}: a context of {length:,} tokens is longer than the "
            f"{tokens:,} tokens of real_text {text!r}{who}; use smaller real_sizes",
        )
    if segment * size + length <= tokens:
        return None
    return ConfigError(
        "real_segments",
        config.real_segments,
        message=f"invalid real_segments={config.real_segments} at seed={config.seed}: real_text {text!r} has "
        f"{tokens:,} tokens{who}, which hold segments 0 … {(tokens - length) // size} of {size:,} tokens, and this "
        f"run reads segment {segment} (seed s reads segments s × real_segments … s × real_segments + real_segments "
        "− 1); use fewer real_segments, smaller real_sizes, a smaller seed"
        + (", real_text 'stdlib' (about ten times longer)" if text == "pydoc" else "")
        + " or real_text 'country'",
    )


@functools.lru_cache(maxsize=None)
def _text_tokens(model: str, text: str) -> tuple[int, int]:
    """``(tokens of the consecutive text ``text`` under the model's tokenizer, the model's maximum positions)``; its
    weights are not loaded."""
    tok, positions = load_tokenizer(model)
    return len(_text_ids(tok, text, model)), positions


def _text_ids(tok, text: str, model: str | None = None) -> np.ndarray:
    """The token ids of the consecutive text ``text`` under ``tok`` (no special tokens); kept per (``model``,
    ``text``) in this process when ``model`` is named (the stdlib text takes about 5 s to tokenise)."""
    if model is not None and (model, text) in _IDS:
        return _IDS[(model, text)]
    ids = np.asarray(tok(_CONSECUTIVE[text](), add_special_tokens=False, verbose=False)["input_ids"], dtype=np.int64)
    if model is not None:
        _IDS[(model, text)] = ids
    return ids


def _model_sizes(config, positions: int) -> list[int]:
    """The context lengths of ``real_sizes`` a model of ``positions`` maximum positions accepts (all of them when it
    states none); a cell reads max(them) tokens of its segment."""
    return [n for n in config.real_sizes if not positions or n <= positions]


def check_text_fits(config) -> None:
    """Before a run: a :class:`~iclab.errors.ConfigError` naming ``real_segments`` when the run's last segment of a
    consecutive ``real_text`` (``pydoc``, ``stdlib``) does not fit the text for one of ``real_models`` (the cells make
    the same check, one at a time, on the tokens they read). Loads each model's tokenizer, not its weights; a model this machine lacks is left to its cells,
    which report it unavailable; nothing for ``real_text`` 'country', whose segments are shuffles of one text, checked
    by the cells."""
    if config.real_text not in _CONSECUTIVE or not config.real_models or not config.real_segments:
        return
    last = text_segment(config, {"seed": config.real_segments - 1})
    for model in config.real_models:
        try:
            tokens, positions = _text_tokens(model, config.real_text)
        except UnsupportedModelError:  # not on this machine: its cells say so ("available = 0"), the run goes on
            continue
        length = max(_model_sizes(config, positions) or config.real_sizes)
        error = _segment_fit_error(config, tokens, last, length, model)
        if error is not None:
            raise error


def _segment_ids(config, tok, segment: int, length: int, model: str | None = None) -> list[int]:
    """``length`` text tokens of segment ``segment`` (the cell's ``seed``); a :class:`~iclab.errors.ConfigError` when
    the text is too short. ``model`` names the tokenizer, so that a process tokenises a consecutive text once."""
    if config.real_text == "country":
        ids = tok(country_text(segment), add_special_tokens=False, verbose=False)["input_ids"]  # sliced below
        if length > len(ids):
            raise ConfigError(
                "real_sizes",
                config.real_sizes,
                message=f"invalid real_sizes={config.real_sizes}: real_text 'country' has {len(ids)} tokens, "
                f"fewer than the {length} of a segment; use smaller real_sizes, real_text 'pydoc' or 'stdlib'",
            )
        return ids[:length]
    ids = _text_ids(tok, config.real_text, model)
    error = _segment_fit_error(config, len(ids), segment, length)
    if error is not None:
        raise error
    start = segment * max(config.real_sizes)
    return ids[start : start + length].tolist()


def context_rows(n: int) -> np.ndarray:
    """Positions of the causal rows that stand for a context of n tokens: key counts in [ceil(0.9 n), n]."""
    return np.arange(math.ceil(_BAND * n), n + 1) - 1


def _reduce(ex: dict, cols: slice | np.ndarray) -> dict[str, np.ndarray]:
    """Mean (and max of δ) over the selected rows: each ``(L, H)``."""
    out = {k: ex[k][..., cols].mean(-1) for k in ("max_coef", "first_coef", "rest_max_coef", "delta")}
    out["delta_max"] = ex["delta"][..., cols].max(-1)
    return out


def _measure(model, causal: bool, head: list[int], tail: list[int], text: list[int], sizes: list[int]) -> dict:
    """Per n of ``sizes``: the row statistics ``(L, H)`` of a context of n tokens."""
    per_n = []
    if causal:
        ids = torch.tensor([head + text[: max(sizes) - len(head) - len(tail)] + tail])  # (1, T)
        rows = np.unique(np.concatenate([context_rows(n) for n in sizes]))
        ex = attention_extremes(model, ids, True, rows=torch.as_tensor(rows))  # each (L, H, P)
        for n in sizes:
            per_n.append(_reduce(ex, np.isin(rows, context_rows(n))))
    else:
        for n in sizes:
            ids = torch.tensor([head + text[: n - len(head) - len(tail)] + tail])  # (1, n)
            per_n.append(_reduce(attention_extremes(model, ids, False), slice(None)))
    return {k: np.stack([p[k] for p in per_n], -1) for k in REAL_STATS}  # each (L, H, S)


def text_segment(config, cell: dict) -> int:
    """The text segment of a ``real`` cell: ``seed · real_segments + cell seed``, so runs with different seeds
    measure disjoint segments (seed 0 keeps segments 0 … real_segments − 1)."""
    return int(config.seed) * int(config.real_segments) + int(cell["seed"])


def run_real_cell(config, cell: dict) -> dict:
    """Row statistics of one pretrained ``model`` on text segment ``seed`` at every context length of
    ``real_sizes`` that the model accepts; ``available = 0`` (and the reason) when the model cannot be loaded here."""
    name = cell["model"]
    try:
        model, tok, src = shared_model(name)  # loaded once per worker process
    except UnsupportedModelError as exc:
        return {"available": 0, "reason": str(exc).splitlines()[0][:300]}
    causal = type(model).__name__.endswith("ForCausalLM")
    sizes = _model_sizes(config, int(getattr(model.config, "max_position_embeddings", 0) or 0))
    head, tail = _special_tokens(tok)
    text = _segment_ids(config, tok, text_segment(config, cell), max(sizes), name)
    stats = _measure(model, causal, head, tail, text, sizes)
    L, H = stats["max_coef"].shape[:2]
    types = getattr(model.config, "layer_types", None) or ["full_attention"] * L
    return {
        "available": 1,
        "source": src,
        "causal": int(causal),
        "real_n": [float(n) for n in sizes],
        "real_layers": L,
        "real_heads": H,
        "real_global": [float(t == "full_attention") for t in types],
        "real_window": float(getattr(model.config, "sliding_window", None) or 0),
        **{"real_" + k: v.ravel().astype(float).tolist() for k, v in stats.items()},
    }
