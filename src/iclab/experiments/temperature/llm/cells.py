r"""Cells of ``temperature-llm``: exact match of a real causal LM under noisy in-context demonstrations as a
function of the attention temperature, the LLM experiment of arXiv:2511.01292 (Demir & Doğan, §5.2, Fig. 3;
docs/papers/temperature.md §5.3–5.4).

A cell is one (task, noise ratio or #demonstrations, repeat); its ``part`` is ``noise`` (the noise sweep at
``n_demos`` demonstrations, Fig. 3b) or ``demos`` (the #demonstrations sweep at ``demo_noise``, Fig. 3a). It builds
the prompts once (:func:`iclab.hf.build_prompts`; the same demonstrations for every τ) and measures greedy exact
match (EM)

- for every global τ of the grid (all layers and heads, ``iclab.hf.with_temperature``; τ = 1 is the stock model),
- for the held-out best τ (2-fold cross-fitting: τ picked on one half of the questions, EM read on the other),
- for the per-layer moment rule :math:`\tau_\ell=\rho_\ell^{\rm noisy}/\rho_\ell^{\rm clean}`
  (``iclab.hf.estimate_tau``) from the clean and noisy versions of the same prompts (scores at the answer position),
- for the entropy-adaptive temperature (``tau="adaptive"``).

The model is loaded once per worker process and kept in a module-level cache (not in ``shared``, which must stay
picklable); :func:`shared` returns None.
"""

from __future__ import annotations

import time

import numpy as np

from iclab.experiments.temperature.llm.config import TemperatureLLMConfig
from iclab.hf import best_tau_index

__all__ = ["cells", "run_cell", "shared", "evaluate_prompts", "load_cached"]

_MODELS: dict[tuple[str, str], tuple] = {}  # per worker process: (model, device) -> (model, tokenizer, source)


def cells(cfg: TemperatureLLMConfig) -> list[dict]:
    """Per task and repeat: the noise sweep, then the #demos sweep (without the point the noise sweep has)."""
    out = []
    for task in cfg.tasks:
        for rep in range(cfg.repeats):
            for r in cfg.noise_ratios:
                out.append({"part": "noise", "task": task, "noise_ratio": float(r), "n_demos": cfg.n_demos,
                            "repeat": rep, "seed": cfg.seed * 1000 + rep})
            for k in cfg.demo_counts:
                if k == cfg.n_demos and cfg.demo_noise in cfg.noise_ratios:
                    continue  # the noise sweep already has this point
                out.append({"part": "demos", "task": task, "noise_ratio": float(cfg.demo_noise), "n_demos": int(k),
                            "repeat": rep, "seed": cfg.seed * 1000 + rep})
    return out


def shared(cfg: TemperatureLLMConfig) -> None:
    """Nothing is shared: each worker loads the model once (:func:`load_cached`)."""
    return None


def load_cached(name: str, device: str = "cpu"):
    """``(model, tokenizer, source)`` loaded once per process (``iclab.hf.load_model``) and moved to ``device``."""
    if (name, device) not in _MODELS:
        from iclab.hf import load_model

        model, tok, source = load_model(name, causal=True)
        _MODELS[(name, device)] = (model.to(device), tok, source)
    return _MODELS[(name, device)]


def evaluate_prompts(model, tok, prompts, answers, tau, cfg: TemperatureLLMConfig) -> np.ndarray:
    """Per-question exact match ``(Q,)`` under temperature ``tau`` (a float, per-layer list or "adaptive")."""
    from iclab.hf import exact_match, greedy_answers, with_temperature

    with with_temperature(model, tau):
        pred = greedy_answers(model, tok, prompts, cfg.max_new_tokens, cfg.batch_size)
    return np.asarray(exact_match(pred, answers))


def _held_out(taus: list[float], em: np.ndarray, n_questions: int) -> tuple[list[float], float]:
    """2-fold cross-fitting: τ picked on one half of the questions (ties -> closest to 1), EM read on the other.

    ``em`` is ``(T, Q)``; returns the two picked τ and the held-out EM over all ``Q`` questions."""
    half = n_questions // 2
    folds = [(slice(0, half), slice(half, None)), (slice(half, None), slice(0, half))]
    picked, held = [], []
    for sel, ev in folds:
        j = best_tau_index(taus, em[:, sel].mean(1))
        picked.append(taus[j])
        held.append(float(em[j, ev].sum()))
    return picked, sum(held) / n_questions


def _moment_rule(model, tok, ps, cfg, cell, em_tau1: float) -> dict:
    """τ_ℓ = ρ_ℓ(noisy prompts) / ρ_ℓ(same prompts, gold demonstrations) at the answer position (note §5.4).

    Clean and noisy prompts are the same when no demonstration is corrupted: then τ_ℓ = 1 without probing."""
    from iclab.hf import estimate_tau

    if cell["noise_ratio"] == 0 or cell["n_demos"] == 0 or not bool(ps.noisy.any()):
        L = int(model.config.num_hidden_layers)  # clean == noisy prompts: τ_ℓ = 1 exactly, EM = EM(τ = 1)
        return {"layer_tau": [1.0] * L, "mean_layer_tau": 1.0, "moment_valid": 1.0, "em_moment": em_tau1}
    est = estimate_tau(model, tok, ps.clean_prompts, ps.prompts, positions="last", batch_size=cfg.batch_size)
    layer_tau = [float(t) for t in est.layer_tau]
    em = evaluate_prompts(model, tok, ps.prompts, ps.answers, layer_tau, cfg)
    return {"layer_tau": layer_tau, "mean_layer_tau": float(np.exp(np.mean(np.log(est.layer_tau)))),
            "moment_valid": float(np.mean(est.valid)), "em_moment": float(em.mean())}


def run_cell(cfg: TemperatureLLMConfig, cell: dict, shared) -> dict:
    """EM for every τ of the grid, the held-out τ, the moment-rule τ_ℓ and adaptive τ on one prompt set."""
    import torch

    from iclab.hf import build_prompts, get_task, split_items

    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    t0 = time.perf_counter()
    model, tok, source = load_cached(cfg.model, cfg.device)
    task = get_task(cell["task"])
    questions, pool = split_items(task, cfg.n_questions, cell["seed"])
    ps = build_prompts(task, questions, pool, cell["n_demos"], cell["noise_ratio"], cell["seed"])
    em = np.stack([evaluate_prompts(model, tok, ps.prompts, ps.answers, float(t), cfg) for t in cfg.taus])  # (T, Q)
    taus = list(cfg.taus)
    picked, em_heldout = _held_out(taus, em, cfg.n_questions)
    out = {
        "em_tau": em.mean(1).tolist(), "em_tau1": float(em[taus.index(1.0)].mean()),
        "best_tau": taus[best_tau_index(taus, em.mean(1))], "best_em": float(em.mean(1).max()),
        "em_heldout": em_heldout, "heldout_taus": picked,
        "noisy_demos": float(ps.noisy.float().mean()), "source": source,
    }
    if cfg.moment_rule:
        out.update(_moment_rule(model, tok, ps, cfg, cell, out["em_tau1"]))
    if cfg.adaptive:
        out["em_adaptive"] = float(evaluate_prompts(model, tok, ps.prompts, ps.answers, "adaptive", cfg).mean())
    out["seconds"] = time.perf_counter() - t0
    return out
