# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Attention temperature on your own Hugging Face model
#
# `iclab.hf` divides every attention score of a Hugging Face transformer by a temperature,
# $\mathrm{softmax}(q^\top k\, s/\tau_{\ell h})$ with $s$ the model's own scaling, through
# `transformers.AttentionInterface` (no model code is copied or patched). $\tau = 1$ is the stock model, bit for
# bit. This tutorial takes SmolLM2-135M (installed as a package, converted once into iclab's cache), probes its
# score moments on few-shot prompts, estimates $\tau$ for a distribution shift (half of the demonstrations
# wrong) and evaluates it (arXiv:2511.01292 §5.2; [note](../papers/temperature.md) §3.9). Any causal LM in a
# local folder works the same way: `load_model("/path/to/model")`. It runs in about half a minute on a CPU.

# %%
import torch

from iclab.hf import estimate_tau, load_model, model_shape, probe_prompts, with_temperature

torch.manual_seed(0)
model, tok, source = load_model("smollm2")
L, H = model_shape(model)
print(source)
print(f"{L} layers, {H} query heads")

# %% [markdown]
# ## Prompts: clean and shifted
#
# Few-shot country → capital prompts. The *clean* prompts show correct demonstrations; the *shifted* ones the
# same prompts with every other answer wrong, the shift whose temperature we estimate.

# %%
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
]


def prompt(country, demos, wrong):
    lines = []
    for i, (c, capital) in enumerate(demos):
        shown = demos[(i + 1) % len(demos)][1] if wrong and i % 2 == 0 else capital
        lines.append(f"Country: {c}\nCapital: {shown}")
    return "\n".join(lines + [f"Country: {country}\nCapital:"])


def prompts(pairs, wrong):
    return [prompt(c, [p for p in CAPITALS if p[0] != c][:4], wrong) for c, _ in pairs]


probe_pairs, held_out = CAPITALS[:5], CAPITALS[5:]
clean, shifted = prompts(probe_pairs, wrong=False), prompts(probe_pairs, wrong=True)
print(shifted[0])

# %% [markdown]
# ## Probe the score moments
#
# `probe_prompts` records, at the answer-generating position, the moments of the pre-softmax scores of every layer
# and head: mean, variance, the within-row spread and the attention entropy. The spread per layer
# (`layer_row_sd`) is what the default rule of `estimate_tau` compares; `rho()` is
# $\rho_\ell = \mathrm{Var}/\mathrm{mean}$, the Var/mean reading of the paper's moment rule (`rule="var/mean"`).

# %%
moments_clean = probe_prompts(model, tok, clean)
moments_shifted = probe_prompts(model, tok, shifted)
print("score spread per layer (clean):  ", moments_clean.layer_row_sd().round(2))
print("score spread per layer (shifted):", moments_shifted.layer_row_sd().round(2))
print(
    "mean attention entropy (nats): clean",
    round(moments_clean.mean_entropy(), 3),
    "shifted",
    round(moments_shifted.mean_entropy(), 3),
)

# %% [markdown]
# ## Estimate τ
#
# `estimate_tau` gives one $\tau$ per layer from the clean and shifted moments (the default rule: the ratio of the
# score spreads, $\tau_\ell = \sigma_\ell^{\text{shifted}} / \sigma_\ell^{\text{clean}}$, clipped to
# $[0.25, 8]$), and, with a `score` function, searches a global $\tau$ grid on held-out prompts. The score here is
# greedy exact match on the held-out countries, under the shift.


# %%
def exact_match(model):
    tok.padding_side = "left"
    tok.pad_token = tok.pad_token or tok.eos_token
    batch = tok(prompts(held_out, wrong=True), return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model.generate(**batch, max_new_tokens=3, do_sample=False, pad_token_id=tok.pad_token_id)
    said = [tok.decode(row, skip_special_tokens=True).split() for row in out[:, batch["input_ids"].shape[1] :]]
    return sum(bool(s) and s[0].strip(".,") == capital for s, (_, capital) in zip(said, held_out)) / len(held_out)


estimate = estimate_tau(model, tok, clean, shifted, grid=(0.75, 1.0, 1.5), score=exact_match)
print("moment rule, tau per layer:", estimate.layer_tau.round(2))
print("grid search:", dict(zip(estimate.grid, estimate.grid_scores)), "best", estimate.best_tau)
print("exact match at the per-layer tau:", estimate.moment_score)

# %% [markdown]
# ## Evaluate under a temperature
#
# `with_temperature(model, tau)` sets $\tau$ (a float, one value per layer, an $(L, H)$ array or `"adaptive"`)
# for the block and restores the model on exit. At $\tau = 1$ the logits are the stock model's exactly.

# %%
batch = tok(prompts(held_out, wrong=True)[:1], return_tensors="pt")
with torch.no_grad():
    stock = model(**batch).logits
    with with_temperature(model, 1.0):
        at_one = model(**batch).logits
    with with_temperature(model, estimate.layer_tau):
        at_estimate = model(**batch).logits
    with with_temperature(model, "adaptive"):
        adaptive = model(**batch).logits
print("tau = 1 equals the stock model:", torch.equal(stock, at_one))
print("largest logit change at the per-layer tau:", float((at_estimate - stock).abs().max()))
print("largest logit change, adaptive:", float((adaptive - stock).abs().max()))

# %% [markdown]
# The same from the command line: `iclab hf probe --model smollm2 --prompts prompts.txt` and `iclab hf tau --model
# smollm2 --task capital`. To score a model under $\tau$ on any lm-evaluation-harness task, see the
# `iclab-hf` model in the [how-to](../howto/hf-temperature.md).

# %%
assert torch.equal(stock, at_one)
assert estimate.layer_tau.shape == (L,) and ((estimate.layer_tau >= 0.25) & (estimate.layer_tau <= 8)).all()
assert len(estimate.grid_scores) == 3 and all(0 <= s <= 1 for s in estimate.grid_scores)
assert float((at_estimate - stock).abs().max()) > 0 and float((adaptive - stock).abs().max()) > 0
