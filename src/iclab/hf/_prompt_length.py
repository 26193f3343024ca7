"""Prompt lengths checked before any forward pass: the longest input a Hugging Face model takes (its position table
and its tokenizer's ``model_max_length``) and each prompt's token count against it, so a prompt that is blank, gives
no token or is too long is one ConfigError naming the prompt, never a silent truncation or an index error deep in the
model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from iclab.errors import ConfigError
from iclab.hf._arguments import check_tokenizer

if TYPE_CHECKING:  # annotations only: importing iclab.hf does not import transformers
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["check_prompts", "max_tokens"]


def max_tokens(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> int | None:
    """The longest input ``model`` takes, in tokens: the smallest of its position table (``max_position_embeddings``
    or ``n_positions``) and the tokenizer's ``model_max_length`` where that is set; None when neither says.

    Arguments: not checked: ``model`` any object (its ``config`` is read where it has one); ``tokenizer`` any object
    (its ``model_max_length`` is read); limits that are not integers in 1..10**9 − 1 are ignored."""
    cfg = getattr(model, "config", None)
    limits = [getattr(cfg, k, None) for k in ("max_position_embeddings", "n_positions")]
    limits.append(getattr(tokenizer, "model_max_length", None))
    limits = [int(x) for x in limits if isinstance(x, int) and not isinstance(x, bool) and 0 < x < 10**9]
    return min(limits) if limits else None


def check_prompts(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, prompts: Sequence[str], field: str = "prompts"
) -> list[int]:
    """Token counts of ``prompts``, checked before any forward pass: one ConfigError naming ``field`` for no prompts,
    a prompt that is not text or is blank, one that tokenises to nothing, or one longer than :func:`max_tokens`.

    Arguments: ``prompts`` a non-empty sequence (not a string) of strings that are not blank, each of at least one token
    and at most :func:`max_tokens` tokens; ``model`` and ``tokenizer`` as :func:`max_tokens` reads them (``tokenizer``
    callable on a string, returning ``input_ids``); ``field`` the name the ConfigError gives ``prompts`` (a string, not
    checked)."""
    if isinstance(prompts, str) or not isinstance(prompts, Sequence) or not prompts:
        raise ConfigError(field, prompts, "a non-empty list of prompts")
    check_tokenizer("tokenizer", tokenizer)
    limit, counts = max_tokens(model, tokenizer), []
    for i, p in enumerate(prompts, 1):
        if not isinstance(p, str) or not p.strip():
            what = "blank" if isinstance(p, str) else "not text"
            raise ConfigError(field, p, f"prompts with text (prompt {i} is {what})")
        n = _count_tokens(tokenizer, p, limit)
        if n == 0:
            raise ConfigError(
                field, p, f"prompts of at least one token (prompt {i} gives none: is the tokenizer the model's?)"
            )
        if limit is not None and (n == _OVER or n > limit):
            count = f"more than {limit}" if n == _OVER else str(n)
            raise ConfigError(
                field,
                message=f"invalid {field}: prompt {i} has {count} tokens ({len(p)} characters); expected prompts of "
                f"at most {limit} tokens, the model's maximum length",
            )
        counts.append(n)
    return counts


_OVER = -1  # token count of a prompt whose first 64 * limit characters already exceed the limit


def _count_tokens(tokenizer: PreTrainedTokenizerBase, prompt: str, limit: int | None) -> int:
    """Tokens of ``prompt``, or :data:`_OVER` when its first ``64 * limit`` characters alone give more than
    ``limit + 8`` (a cut inside a word adds at most a few): a 1 MB prompt is refused without tokenising it all."""
    head = prompt if limit is None else prompt[: 64 * limit]
    n = len(tokenizer(head, verbose=False)["input_ids"])  # verbose=False: no "longer than" warning of its own
    if len(head) == len(prompt):
        return n
    return _OVER if n > limit + 8 else len(tokenizer(prompt, verbose=False)["input_ids"])
