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
# # Add a claim for a new paper
#
# An iclab experiment judges the claims of its paper: each claim is declared **before** the run, with the test
# that would make it fail, and after the run `compare` turns the results into one verdict per claim with the
# tests of `iclab.stats`. This tutorial builds a small experiment for a made-up paper, in this notebook, the way a
# paper package does it, with three claims, one of each kind; it runs in a few seconds.
#
# In the repository the same pieces live in `src/iclab/experiments/<paper>/` (`config.py`, `cells.py`,
# `figures.py`, `comparisons.py`; see [Contributing](../contributing.md), "Add a paper", and
# [Add an experiment](../howto/add-experiment.md)), with a note `docs/papers/<paper>.md` and a test
# `tests/test_verdicts_<paper>.py`. This is the API as it is today: a claim is a `Claim` record, its test is code
# in `compare`.
#
# **The paper.** Softmax attention over $n$ keys with i.i.d. scores $s_i \sim N(0, \sigma^2)$ at temperature
# $\tau$, weights $p_i = e^{s_i/\tau} / \sum_j e^{s_j/\tau}$. It claims (1) the mean unnormalised weight is
# $\mathbb{E}\, e^{s/\tau} = e^{\sigma^2/(2\tau^2)}$ (the log-normal mean), (2) a lower temperature concentrates
# attention (lower entropy $H = -\sum_i p_i \log p_i$), and (3) it reports $H \approx 6.41$ nats at
# $n = 1000$, $\sigma = \tau = 1$ (for large $n$, $H \approx \log n - \sigma^2/(2\tau^2)$).

# %% [markdown]
# ## The config
#
# A frozen dataclass deriving from `iclab.config.Config`, one line per field under `Fields:` (what `iclab show`
# prints), each field's constraint declared on the field (`int_field`, `scale_field`, `scales_field`, …) and checked
# where the values enter: a bad value is one `ConfigError` naming the field. Only a rule between fields would need
# a `__post_init__` of its own.

# %%
from dataclasses import dataclass

from iclab.config import Config, int_field, scale_field, scales_field


@dataclass(frozen=True)
class EntropyConfig(Config):
    """Settings of the toy attention-entropy experiment.

    Fields:
        n_keys: keys per attention row (the paper: 1000).
        sigma: standard deviation of the scores.
        taus: temperatures of the grid.
        n_rows: attention rows per cell.
        seeds: independent repeats per temperature.
        seed: base seed.
    """

    n_keys: int = int_field(1000, low=2)
    sigma: float = scale_field(1.0)
    taus: tuple[float, ...] = scales_field((0.5, 1.0, 2.0))
    n_rows: int = int_field(200)
    seeds: int = int_field(4, low=2)
    seed: int = int_field(0, low=0)


PRESETS = {"quick": EntropyConfig(), "full": EntropyConfig(n_rows=2000, seeds=10)}

# %% [markdown]
# ## The cells
#
# A cell is a small JSON-able dict with a `part` and a `seed` (the replicate index); `run_cell` is pure (same config
# and cell, same row, in any process), drawing its randomness from `iclab.data.generator_for(config.seed, *keys)`:
# every stream is keyed by names and indices, never by seed arithmetic (tests/test_seeding.py).

# %%
import math

import torch

from iclab.data import generator_for


def cells(config: EntropyConfig) -> list[dict]:
    return [{"part": "grid", "tau": tau, "seed": r} for tau in config.taus for r in range(config.seeds)]


def run_cell(config: EntropyConfig, cell: dict, shared=None) -> dict:
    g = generator_for(config.seed, "entropy", cell["tau"], cell["seed"])  # keyed by names, no seed arithmetic
    s = config.sigma * torch.randn(config.n_rows, config.n_keys, generator=g, dtype=torch.float64)  # (rows, n)
    logp = torch.log_softmax(s / cell["tau"], dim=-1)  # (rows, n)
    entropy = -(logp.exp() * logp).sum(-1)  # (rows,)
    weight = torch.exp(s / cell["tau"]).mean(-1)  # (rows,) mean unnormalised weight per row
    return {
        "entropy": float(entropy.mean()),
        "weight": float(weight.mean()),
        "weight_se": float(weight.std() / math.sqrt(config.n_rows)),
        "weight_theory": math.exp(config.sigma**2 / (2 * cell["tau"] ** 2)),
    }


# %% [markdown]
# ## The claims, declared before the run
#
# `Claim(id, claim, source, kind, test, paper_value, headline, paper_settings)`. The `kind` is one of
# `theory vs simulation`, `effect direction` or `paper value`; the `test` says what would make it fail, fixed
# before any result exists. A claim that needs the paper's settings names them in `paper_settings`: a run at other
# settings reports it as "not judged (settings differ)", whatever its test says.

# %%
from iclab.experiments import Claim

PAPER = "A made-up paper (arXiv:0000.00000)"


def claims(config: EntropyConfig) -> list[Claim]:
    return [
        Claim(
            "weight-lognormal",
            "The mean unnormalised weight is exp(σ²/(2τ²)) (the log-normal mean)",
            f"{PAPER}, Eq. 3",
            "theory vs simulation",
            "simulated / closed form, pooled over cells, within 5 % of 1 with 95 % confidence",
            "exp(σ²/(2τ²))",
            headline=True,
        ),
        Claim(
            "entropy-falls-with-tau",
            "A lower temperature concentrates attention: the entropy at the largest τ exceeds that at the smallest",
            f"{PAPER}, Fig. 2",
            "effect direction",
            "H(τ_max) − H(τ_min) over seeds, 95 % CI above 0; a CI around 0 below 0.05 nats disagrees",
        ),
        Claim(
            "entropy-at-tau1",
            "The attention entropy at τ = 1 is 6.41 nats",
            f"{PAPER}, Table 1",
            "paper value",
            "|measured − 6.41| ≤ 2 SE over seeds",
            "6.41",
            paper_settings={"n_keys": 1000, "sigma": 1.0},
        ),
    ]


# %% [markdown]
# ## The judge: `compare`
#
# `compare(config, results) -> {claim id: Verdict}`, with the tests of `iclab.stats`: `judge_equivalence` (theory
# vs simulation within a relative tolerance), `judge_direction` (the sign of an effect, with the smallest effect
# of interest), `judge_value` (a paper's number within $k$ standard errors), `not_judged(reason)`. A declared
# claim that `compare` does not return is reported "not judged (not measured)".

# %%
import pandas as pd

from iclab.stats import judge_direction, judge_equivalence, judge_value, mean_se


def compare(config: EntropyConfig, results: pd.DataFrame) -> dict:
    ratio = (results["weight"] / results["weight_theory"]).to_numpy()
    m, se, n = mean_se(ratio)
    by_tau = results.groupby("tau")["entropy"]
    hi, lo = by_tau.get_group(max(config.taus)).to_numpy(), by_tau.get_group(min(config.taus)).to_numpy()
    effect, effect_se, _ = mean_se(hi - lo)  # seeds are paired by index; independent draws, so SE of the mean
    verdicts = {
        "weight-lognormal": judge_equivalence(m, se, 1.0, rel_tol=0.05, n=n),
        "entropy-falls-with-tau": judge_direction(effect, effect_se, smallest=0.05, n=len(hi), unit=" nats"),
    }
    if 1.0 in config.taus:
        h1, h1_se, _ = mean_se(by_tau.get_group(1.0).to_numpy())
        verdicts["entropy-at-tau1"] = judge_value(h1, h1_se, 6.41)
    return verdicts


# %% [markdown]
# ## Register and run
#
# `Experiment` ties the pieces together (in a package, `Experiment.in_package(__name__, …)` finds them by file
# name) and `register` makes it known to `iclab list`, `iclab run` and the report. `figures` returns the PNGs it
# drew (none here; a paper package draws them through `iclab.plotting`).

# %%
import json
import tempfile
from pathlib import Path

from iclab.experiments import Experiment, register
from iclab.report import run_and_report

register(
    Experiment(
        name="toy-entropy",
        paper="toy",
        title="Toy: attention entropy and temperature",
        claim="Softmax attention concentrates as τ falls; the log-normal mean of its weights.",
        config_cls=EntropyConfig,
        presets=PRESETS,
        cells=cells,
        run_cell=run_cell,
        figures=lambda config, results, figure_dir: [],
        compare=compare,
        claims=claims,
    )
)
folder = Path(tempfile.mkdtemp()) / "toy-entropy"
run_and_report("toy-entropy", "quick", out=folder, executor="serial", progress=False)
summary = json.loads((folder / "summary.json").read_text())
for row in summary["comparisons"]:
    print(f"{row['id']:24} {row['verdict']:11} {row['measured']:>8} {row['uncertainty']}  {row['reason']}")

# %% [markdown]
# ## Test the judge on made-up tables
#
# `tests/test_verdicts_<paper>.py` feeds `compare` tables with and without each effect: a null effect must never
# agree with a direction claim, and a table far from the theory must disagree.

# %%
import numpy as np

results = pd.DataFrame([run_cell(PRESETS["quick"], c) for c in cells(PRESETS["quick"])]).assign(
    tau=[c["tau"] for c in cells(PRESETS["quick"])]
)
null = results.assign(entropy=6.0 + 0.01 * np.random.default_rng(0).standard_normal(len(results)))  # no τ effect
wrong = results.assign(weight=results["weight"] * 1.5)  # 50 % off the closed form
print("null effect:", compare(PRESETS["quick"], null)["entropy-falls-with-tau"].verdict)
print("wrong theory:", compare(PRESETS["quick"], wrong)["weight-lognormal"].verdict)

# %% [markdown]
# ## Other settings: the paper value is not judged
#
# The same run at $n = 100$ keys still measures the entropy, but the paper's 6.41 nats belongs to $n = 1000$:
# the report says so instead of a verdict.

# %%
other = Path(tempfile.mkdtemp()) / "toy-entropy-n100"
run_and_report("toy-entropy", "quick", overrides={"n_keys": 100}, out=other, executor="serial", progress=False)
small = {r["id"]: r for r in json.loads((other / "summary.json").read_text())["comparisons"]}
print(small["entropy-at-tau1"]["verdict"], "|", small["entropy-at-tau1"]["reason"])

# %%
rows = {r["id"]: r for r in summary["comparisons"]}
assert not summary["errors"] and set(rows) == {c.id for c in claims(PRESETS["quick"])}
assert rows["weight-lognormal"]["verdict"] == "agrees" and rows["entropy-falls-with-tau"]["verdict"] == "agrees"
assert rows["entropy-at-tau1"]["verdict"] in ("agrees", "disagrees")  # judged at the paper's settings
assert compare(PRESETS["quick"], null)["entropy-falls-with-tau"].verdict == "disagrees"
assert compare(PRESETS["quick"], wrong)["weight-lognormal"].verdict == "disagrees"
assert small["entropy-at-tau1"]["verdict"] == "not judged" and "n_keys = 100" in small["entropy-at-tau1"]["reason"]
