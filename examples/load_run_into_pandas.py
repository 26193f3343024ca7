"""Run a small sweep of the ``temperature`` experiment and load its results into pandas: one row per cell (the
cell's grid coordinates and its metrics as columns) plus the config the run folder was made with.

    python examples/load_run_into_pandas.py [--out runs/example-temperature]

Any run folder works the same way, e.g. ``runs/temperature-quick`` after ``iclab run temperature --quick``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from iclab.experiments import run_experiment
from iclab.runs import load_results

SMALL = {
    "d": "10",
    "m": "200",
    "l_values": "10,20,40",
    "n_test": "200",
    "noise_sigmas": "1",
    "sigma_tests": "1",
    "mean_shifts": "0",
    "simcheck": "false",
    "n_tau": "9",
    "surrogate_dims": "2",  # one small surrogate-vs-softmax cell per l below
    "surrogate_ls": "10,20",
}


def main(out: Path) -> tuple[pd.DataFrame, dict]:
    run_experiment("temperature", "quick", overrides=SMALL, out=out, executor="serial", progress=False)
    results = load_results(out)  # a DataFrame, one row per finished cell
    config = json.loads((out / "config.json").read_text())["config"]
    print(f"{len(results)} cells from {out}; config d={config['d']}, l_values={config['l_values']}")
    table = (
        results.pivot_table(index="l", columns="scenario", values="tau_opt_theory")
        if "scenario" in results
        else results
    )
    print(table.round(3).to_string())
    return results, config


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/example-temperature"), help="run folder")
    main(parser.parse_args().out)
