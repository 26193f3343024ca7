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
# An iclab experiment judges the claims of its paper. Each claim is a **record**, declared before the run: what
# the paper says, which rows measure it, and the test that would make it fail. After the run one judge, the same
# for every paper, reads the records and the results and gives one verdict per claim. No experiment writes its own
# judging code. This tutorial builds a small experiment for a made-up paper in this notebook, states its claims
# as records (one of them deliberately false), judges them, and runs the experiment. It takes a few seconds on a
# CPU.
#
# In the repository the same pieces are files of a package `src/iclab/experiments/<paper>/`: `__init__.py` (the
# `Experiment`), `config.py`, `cells.py`, `figures.py`, `claims.py` (the records), `statistics.py` (only when
# the records need statistics of their own) and `notes.py`. A plugin outside the repository has the same files
# (see [Add an experiment](../howto/add-experiment.md) and [Contributing](../contributing.md), "Add a paper").
# The records and the judge come from [`iclab.claims`](../api/claims.md).
#
# **The paper.** Softmax attention over $n$ keys with i.i.d. scores $s_i \sim N(0, \sigma^2)$ at temperature
# $\tau$, weights $p_i = e^{s_i/\tau} / \sum_j e^{s_j/\tau}$. It claims (1) the mean unnormalised weight is
# $\mathbb{E}\, e^{s/\tau} = e^{\sigma^2/(2\tau^2)}$ (the log-normal mean), (2) a lower temperature concentrates
# attention (lower entropy $H = -\sum_i p_i \log p_i$), and (3) it reports $H \approx 6.41$ nats at
# $n = 1000$, $\sigma = \tau = 1$ (for large $n$, $H \approx \log n - \sigma^2/(2\tau^2)$). A fourth claim is a
# typo we put in on purpose: the mean weight is $e^{\sigma^2/\tau^2}$, without the 2. It must come out
# "disagrees".

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
    seeds: int = int_field(5, low=2)
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
        "weight_theory": math.exp(config.sigma**2 / (2 * cell["tau"] ** 2)),
    }


# %% [markdown]
# ## The claims, as records
#
# `claims(config) -> [ClaimRecord]` (in a package: `claims.py`). A `ClaimRecord` has what the paper says (`id`,
# `claim`, `source`, `kind`, `paper_value`, `headline`, the `paper_settings` it needs) and three things the judge
# reads:
#
# - `quantity`: in words, what one unit of replication gives;
# - a `Measure`: which rows (`where`: the cell's columns and values), which column (or a small named function of
#   the rows), the unit of replication (`unit`: the columns that tell one replicate from another) and, for a
#   paired effect, the baseline cells (`base`): per unit, the selection's value minus the baseline's;
# - a `Rule`: which test of `iclab.stats` decides, with its thresholds fixed now, before any result exists.
#
# The `kind` is `theory vs simulation`, `equivalence`, `effect direction` or `paper value`. An effect claim is
# judged by a direction test with its smallest effect of interest; a closeness claim by a test with a tolerance.
# The record's test text is generated from the measure and the rule; nobody writes it by hand.

# %%
from iclab.claims import ClaimRecord, Measure, Rule

PAPER = "A made-up paper (arXiv:0000.00000)"


def weight_over_theory(rows):
    """Per cell: the simulated mean weight over the closed form exp(σ²/(2τ²))."""
    return (rows["weight"] / rows["weight_theory"]).to_numpy(float)


def weight_over_typo(rows):
    """Per cell: the simulated mean weight over the typo exp(σ²/τ²), the square of the closed form."""
    return (rows["weight"] / rows["weight_theory"] ** 2).to_numpy(float)


def claims(config: EntropyConfig) -> list[ClaimRecord]:
    grid, hot, cold = {"part": "grid"}, max(config.taus), min(config.taus)
    records = [
        ClaimRecord(
            id="weight-lognormal",
            claim="The mean unnormalised weight is exp(σ²/(2τ²)) (the log-normal mean)",
            source=f"{PAPER}, Eq. 3",
            kind="theory vs simulation",
            paper_value="exp(σ²/(2τ²))",
            headline=True,
            quantity="simulated mean weight over exp(σ²/(2τ²)), per (τ, seed) cell",
            measure=Measure(grid, column=weight_over_theory, unit=("tau", "seed")),
            rule=Rule("equivalence", target=1.0, rel_tol=0.05, units="cells"),
        ),
        ClaimRecord(
            id="weight-typo",
            claim="The mean unnormalised weight is exp(σ²/τ²) (deliberately false: the 2 is missing)",
            source=f"{PAPER}, Eq. 3 with a typo",
            kind="theory vs simulation",
            paper_value="exp(σ²/τ²)",
            quantity="simulated mean weight over exp(σ²/τ²), per (τ, seed) cell",
            measure=Measure(grid, column=weight_over_typo, unit=("tau", "seed")),
            rule=Rule("equivalence", target=1.0, rel_tol=0.05, units="cells"),
        ),
        ClaimRecord(
            id="entropy-falls-with-tau",
            claim="A lower temperature concentrates attention: the entropy at the largest τ exceeds that at the "
            "smallest",
            source=f"{PAPER}, Fig. 2",
            kind="effect direction",
            quantity=f"attention entropy at τ = {hot:g} minus at τ = {cold:g}, per seed",
            measure=Measure({**grid, "tau": hot}, column="entropy", unit=("seed",), base={**grid, "tau": cold}),
            rule=Rule("direction", sign=+1, smallest=0.05, unit=" nats"),
        ),
    ]
    if 1.0 in config.taus:  # the paper's number is at τ = 1: a config without it does not declare the claim
        records.append(
            ClaimRecord(
                id="entropy-at-tau1",
                claim="The attention entropy at τ = 1 is 6.41 nats",
                source=f"{PAPER}, Table 1",
                kind="paper value",
                paper_value="6.41",
                paper_settings={"n_keys": 1000, "sigma": 1.0},
                quantity="attention entropy at τ = 1 in nats, per seed",
                measure=Measure({**grid, "tau": 1.0}, column="entropy", unit=("seed",)),
                rule=Rule("value", paper=6.41, tol=0.02, units="seeds"),
            )
        )
    return records


# %% [markdown]
# The generated test text of a record (what the report prints in its "test" column):

# %%
for record in claims(PRESETS["quick"]):
    print(f"{record.id}:\n  {record.test}\n")

# %% [markdown]
# ## The one judge
#
# `judge_records(records, config, results)` judges each record on a results table (one row per cell, the cell's
# keys beside its metrics): it selects the rows, keeps one per unit, pairs them with the baseline where there is
# one, combines the units (mean ± SE, Student t with n − 1 dof) and calls the rule's test. A cell a record names
# without a row makes it "not measured"; fewer than 3 units, "not judged".

# %%
import pandas as pd

from iclab.claims import judge_records

config = PRESETS["quick"]
results = pd.DataFrame([{**c, **run_cell(config, c)} for c in cells(config)])
verdicts = judge_records(claims(config), config, results)
for cid, v in verdicts.items():
    print(f"{cid:24} {v.verdict:11} {v.measured:>8} {v.uncertainty}  {v.statistic}")

# %% [markdown]
# The typo disagrees: its 95 % CI lies wholly outside 1 ± 5 %.
#
# ## The same claims at no effect
#
# A direction claim must never agree where there is no effect. Judge the records on a made-up table whose entropy
# does not depend on τ (only noise), and on one whose weights are 50 % off the closed form. At no effect the
# direction claim does not agree: here its interval is narrow enough to exclude every effect of at least 0.05
# nats, so it disagrees (a wider one would leave it "not judged: too little power").

# %%
import numpy as np

noise = np.random.default_rng(0).standard_normal(len(results))
null = results.assign(entropy=6.0 + 0.01 * noise)  # no τ effect
wrong = results.assign(weight=results["weight"] * 1.5)  # 50 % off the closed form
at_null = judge_records(claims(config), config, null)["entropy-falls-with-tau"]
off = judge_records(claims(config), config, wrong)["weight-lognormal"]
print("no effect:   ", at_null.verdict, "|", at_null.reason)
print("wrong theory:", off.verdict, "|", off.statistic)

# %% [markdown]
# ## Rules, and a record that cannot fail
#
# `rule_table()` lists every test kind of `Rule`: what it tests, the fields it reads, when it agrees and disagrees,
# and the least favourable truth at which the judge checks that it can fail (the [API page](../api/claims.md)
# quotes it). A record whose test cannot fail is refused when it is built: an effect claim without a smallest
# effect of interest agrees with any effect, however small.

# %%
from iclab.claims import rule_table
from iclab.errors import ConfigError

for row in rule_table():
    print(f"{row['kind']:12} agrees when {row['agrees when']}")

try:
    ClaimRecord(
        id="any-effect",
        claim="The entropy rises with τ, by any amount",
        source=PAPER,
        kind="effect direction",
        quantity="entropy difference per seed",
        measure=Measure({"part": "grid", "tau": 2.0}, column="entropy", unit=("seed",), base={"tau": 0.5}),
        rule=Rule("direction", sign=+1),  # no smallest effect of interest
    )
except ConfigError as exc:
    refused = str(exc)
print(refused)

# %% [markdown]
# ## Register and run
#
# `Experiment` ties the pieces together and `register` makes it known to `iclab list`, `iclab run` and the report.
# Its `compare` is the one judge on the records. In a package, `Experiment.in_package(__name__, …)` finds the
# pieces by file name and sets `compare` to `iclab.experiments.judged(package)`, which is exactly
# `judge_records(claims(config), config, results)` on the package's `claims.py`; here, outside a package, we pass
# that call. The run then adds what only a run knows: a claim whose cells failed is "not measured", and one whose
# `paper_settings` the config lacks is "not judged (settings differ)". `figures` returns the PNGs it drew (none
# here; a paper package draws them through `iclab.plotting`).

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
        compare=lambda config, results: judge_records(claims(config), config, results),  # the records judge
        claims=claims,
    )
)
folder = Path(tempfile.mkdtemp()) / "toy-entropy"
run_and_report("toy-entropy", "quick", out=folder, executor="serial", progress=False)
summary = json.loads((folder / "summary.json").read_text())
for row in summary["comparisons"]:
    print(f"{row['id']:24} {row['verdict']:11} {row['measured']:>8} {row['uncertainty']}  {row['reason']}")

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
assert not summary["errors"] and set(rows) == {c.id for c in claims(config)}
assert {cid: r["verdict"] for cid, r in rows.items()} == {
    "weight-lognormal": "agrees",
    "weight-typo": "disagrees",  # the deliberately false claim
    "entropy-falls-with-tau": "agrees",
    "entropy-at-tau1": "agrees",
}
assert {cid: v.verdict for cid, v in verdicts.items()} == {cid: r["verdict"] for cid, r in rows.items()}
assert at_null.verdict != "agrees" and off.verdict == "disagrees"
assert "exp(σ²/τ²)" in rows["weight-typo"]["claim"] and "equivalence" in rows["weight-typo"]["test"]
assert [r["kind"] for r in rule_table()] == ["direction", "equivalence", "absence", "value", "every cell"]
assert "smallest effect of interest" in refused
assert small["entropy-at-tau1"]["verdict"] == "not judged" and "n_keys = 100" in small["entropy-at-tau1"]["reason"]
