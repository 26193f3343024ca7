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
# # Reproduce a claim and read its verdict
#
# Every experiment of iclab declares, before it runs, the claims of its paper that it will judge, each with the
# test that would make it fail. This tutorial runs a small version of the `temperature` experiment (the optimal
# attention temperature paper, arXiv:2511.01292; [note](../papers/temperature.md)), reads the run back with
# `iclab.load_run`, and follows one headline claim from its declaration to its verdict and the cells behind it:
#
# > An input-covariance shift $\Sigma_x = 2I$ raises the test error of the pretrained one-layer attention model
# > (approximate softmax) at $\tau = 1$ (Fig. 1b).
#
# It takes about half a minute on a laptop CPU.

# %% [markdown]
# ## Run a small sweep
#
# `run_and_report` is what `iclab run` does: run (or resume) the cells, then write the figures, `report.md` and
# `summary.json` into the run folder. The overrides shrink the quick preset (input dimension $d = 8$, a few
# context lengths, fewer prompts); `executor="serial"` (a field of `iclab.runs.RunOptions`, which `options=` takes
# whole) runs the cells in this process, which suits a notebook.
# The run folder records the config, its hash and every finished cell: running it again reads them back instead
# of computing them.

# %%
import tempfile
from pathlib import Path

from iclab.experiments import get_experiment
from iclab.report import run_and_report

small = dict(
    d=8,
    m=400,
    l_values=(4, 8, 16, 32),
    n_test=400,
    noise_sigmas=(2.0,),
    sigma_tests=(0.5,),
    mean_shifts=(0.0, 2.0),
    n_tau=9,
    simcheck=False,
    surrogate_dims=(2,),
    surrogate_ls=(20,),
    surrogate_n_test=200,
    surrogate_n_tau=9,
)
folder = Path(tempfile.mkdtemp()) / "temperature-small"
run_and_report("temperature", "quick", overrides=small, out=folder, executor="serial", progress=False)

# %% [markdown]
# ## Read the run back
#
# `iclab.load_run` is the one way to read a run folder in Python: the typed config, one row per finished cell
# (a pandas DataFrame) and the failed cells, if any.

# %%
import iclab

run = iclab.load_run(folder)
print(run.experiment, run.preset, "d =", run.config.d, "m =", run.config.m)
print(len(run.results), "cells;", len(run.failed), "failed")
run.results["part"].value_counts()

# %% [markdown]
# ## The claim, as declared before the run
#
# `claims(config)` lists every claim with its source in the paper, its kind (`paper value`,
# `theory vs simulation` or `effect direction`), the test fixed in advance and the paper's settings that judging
# it needs.

# %%
experiment = get_experiment(run.experiment)
claims = {c.id: c for c in experiment.claims(run.config)}
claim = claims["fig1b-cov-shift-harms"]
for field in ("claim", "source", "kind", "test", "paper_settings"):
    print(f"{field}: {getattr(claim, field)}")

# %% [markdown]
# ## The test's verdict and its evidence
#
# `compare(config, results)` runs every test on the results (the statistics live in `iclab.stats`). The verdict
# of this one is a one-sided interval: the effect (normalised error at $\tau = 1$ with the shift minus without, at
# the longest context) must be above 0 with its 95 % CI.

# %%
verdicts = experiment.compare(run.config, run.results)
test = verdicts[claim.id]
print(test.verdict, "| measured", test.measured, test.uncertainty)
print(test.statistic)

# %% [markdown]
# The evidence is in the cells: the `none` (no shift) and `cov` ($\Sigma_x = 2I$) parts, one row per context
# length, with the simulated error at $\tau = 1$ (`G1_mc`, its standard error `G1_se`) beside the closed form of
# Theorem 4.2 (`G1_theory`) and the error $c$ of predicting 0.

# %%
evidence = run.results[run.results["part"].isin(["none", "cov"])]
evidence = evidence.assign(G1_over_c=evidence["G1_mc"] / evidence["c"])
evidence[["part", "l", "G1_mc", "G1_se", "G1_theory", "c", "G1_over_c"]].sort_values(["l", "part"])

# %% [markdown]
# ## The verdict the report shows
#
# The report does not stop at the test: a claim whose `paper_settings` differ from the run's config is
# "not judged (settings differ)", naming the fields, and the measured value is still shown. This run used $d = 8$,
# not the paper's 50, so the direction holds here but the paper's claim is not judged by it (`iclab run
# temperature --preset paper` runs the paper's settings). Every row of the report is in `summary.json`.

# %%
import json

summary = json.loads((folder / "summary.json").read_text())
rows = {r["id"]: r for r in summary["comparisons"]}
row = rows[claim.id]
print(row["verdict"], "|", row["reason"])
print("measured", row["measured"], row["uncertainty"])
print(sum(r["verdict"] == "not judged" for r in rows.values()), "of", len(rows), "claims not judged at d = 8")

# %% [markdown]
# The same from the command line: `iclab run temperature --quick --set d=8 …` writes this folder, and `iclab report
# FOLDER` redraws the figures and `report.md` from the stored cells without recomputing them.

# %%
assert not summary["errors"] and set(rows) == set(claims)
assert test.verdict in ("agrees", "disagrees", "not judged") and test.measured == row["measured"]
assert row["verdict"] == "not judged" and row["reason"].startswith("settings differ") and "d = 8" in row["reason"]
assert set(evidence["part"]) == {"none", "cov"} and len(evidence) == 2 * len(run.config.l_values)
