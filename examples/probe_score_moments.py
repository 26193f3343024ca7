"""Probe the pre-softmax attention scores of a Hugging Face model: per layer, the mean and variance of the scores
at the answer position, their ratio ρ = Var/mean (the statistic of the moment rule for τ), the spread
δ = max − min and the attention entropy (``iclab.hf.probe_prompts``).

    python examples/probe_score_moments.py [--model smollm2|minilm|PATH]
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from iclab.errors import IclabError
from iclab.hf import load_model, probe_prompts

PROMPTS = [
    "Country: France\nCapital: Paris\nCountry: Italy\nCapital:",
    "Country: Japan\nCapital: Tokyo\nCountry: Peru\nCapital:",
    "Country: Kenya\nCapital: Nairobi\nCountry: Norway\nCapital:",
    "Country: Chile\nCapital: Santiago\nCountry: Egypt\nCapital:",
]


def main(model_name: str) -> pd.DataFrame:
    model, tok, source = load_model(model_name)
    moments = probe_prompts(model, tok, PROMPTS)  # statistics at the last position of each prompt
    per_head = moments.to_frame()  # one row per (layer, head)
    per_layer = pd.DataFrame({"mean": moments.layer_mean, "var": moments.layer_var, "rho": moments.rho()})
    per_layer[["spread", "entropy"]] = per_head.groupby("layer")[["spread", "entropy"]].mean()
    per_layer.index.name = "layer"
    print(f"model: {source}; {len(PROMPTS)} prompts")
    print(per_layer.round(3).to_string())
    print(f"mean attention entropy {moments.mean_entropy():.3f} nats")
    return per_layer


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="smollm2, minilm, a local folder or a cached hub id")
    try:
        main(parser.parse_args().model)
    except IclabError as exc:  # e.g. the model's package is not installed: one line with the install step
        sys.exit(f"error: {exc}")
