"""Estimate the attention temperature for a distribution shift: few-shot country → capital prompts whose
demonstrations are clean, against the same prompts with half of the demonstrations' answers wrong. The moment rule
gives one τ per layer: ``estimate_tau``'s default spread rule τ_ℓ = σ_ℓ(shifted) / σ_ℓ(clean), σ_ℓ the within-row
standard deviation of layer ℓ's pre-softmax scores at the answer position (docs/papers/temperature.md §5.4; the
Var/mean reading is ``rule="var/mean"``); a grid search picks the global τ with the best exact match on held-out
questions (``iclab.hf.estimate_tau``).

    python examples/estimate_tau.py [--model smollm2|PATH] [--grid 0.75 1 1.5]
"""

from __future__ import annotations

import argparse
import sys

import torch

from iclab.errors import IclabError
from iclab.hf import estimate_tau, load_model

CAPITALS = [
    ("France", "Paris"),
    ("Japan", "Tokyo"),
    ("Italy", "Rome"),
    ("Peru", "Lima"),
    ("Kenya", "Nairobi"),
    ("Norway", "Oslo"),
    ("Egypt", "Cairo"),
    ("Chile", "Santiago"),
    ("Spain", "Madrid"),
    ("Cuba", "Havana"),
    ("Greece", "Athens"),
    ("Poland", "Warsaw"),
]
DEMOS = 4


def prompt(question: str, demos: list[tuple[str, str]], wrong: bool) -> str:
    """``DEMOS`` demonstrations then the question; with ``wrong``, every other answer is another country's."""
    lines = []
    for i, (country, capital) in enumerate(demos):
        shown = demos[(i + 1) % len(demos)][1] if wrong and i % 2 == 0 else capital
        lines.append(f"Country: {country}\nCapital: {shown}")
    return "\n".join(lines + [f"Country: {question}\nCapital:"])


def prompts(pairs: list[tuple[str, str]], wrong: bool) -> list[str]:
    """One prompt per pair: the other pairs' first ``DEMOS`` as demonstrations."""
    return [prompt(c, [p for p in pairs if p[0] != c][:DEMOS], wrong) for c, _ in pairs]


def exact_match(model, tok, texts: list[str], answers: list[str]) -> float:
    """Share of greedy answers (one left-padded batch) whose first word is the right capital."""
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    batch = tok(texts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model.generate(**batch, max_new_tokens=3, do_sample=False, pad_token_id=tok.pad_token_id)
    said = [tok.decode(row, skip_special_tokens=True).split() for row in out[:, batch["input_ids"].shape[1] :]]
    return sum(bool(s) and s[0].strip(".,") == right for s, right in zip(said, answers)) / len(texts)


def main(model_name: str, grid: list[float]):
    model, tok, source = load_model(model_name)
    probe, held_out = CAPITALS[:6], CAPITALS[6:]
    held_prompts = prompts(held_out, wrong=True)
    estimate = estimate_tau(
        model,
        tok,
        prompts(probe, wrong=False),
        prompts(probe, wrong=True),
        grid=grid,
        score=lambda m: exact_match(m, tok, held_prompts, [c for _, c in held_out]),
    )
    print(f"model: {source}")
    print("moment rule, tau per layer: " + " ".join(f"{t:.2f}" for t in estimate.layer_tau))
    print("grid search: " + "  ".join(f"tau={t:g}: {s:.2f}" for t, s in zip(estimate.grid, estimate.grid_scores)))
    print(f"best global tau {estimate.best_tau:g}; the moment-rule taus score {estimate.moment_score:.2f}")
    return estimate


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="smollm2, a local folder or a cached hub id")
    parser.add_argument("--grid", type=float, nargs="+", default=[0.75, 1.0, 1.5], help="global τ grid")
    args = parser.parse_args()
    try:
        main(args.model, args.grid)
    except IclabError as exc:  # e.g. the model's package is not installed: one line with the install step
        sys.exit(f"error: {exc}")
