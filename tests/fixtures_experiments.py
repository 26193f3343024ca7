"""Tiny, cheap experiments for testing the run machinery (executors, store, resume, reports).

Imported by the tests directly and, in worker processes, through ``ICLAB_EXPERIMENT_MODULES=fixtures_experiments``
(with this folder on ``PYTHONPATH`` / ``sys.path``).

Each cell draws ``n_samples`` standard normals from ``generator_for(cell seed)`` and estimates
``E[exp(x / tau)] = exp(1 / (2 tau^2))`` (the log-normal mean), so the report has a theory line and simulation
points with error bars; its three claims are records (:mod:`iclab.claims`) judged by the one judge. ``fail_cells``
raise and ``crash_cells`` hard-exit their worker (``os._exit``) until the file ``flag`` exists, so tests can fail
cells and then complete them with ``--retry-failed``. ``hang_cells`` sleep for ``HANG_SECONDS`` (with ``SIGALRM``
blocked when ``hang_blocks_alarm``, like a cell stuck in C code), so tests can stop them with ``--cell-timeout``. A
``gate_cells`` cell creates ``<flag>.waiting`` and waits (up to ``GATE_SECONDS``) until ``flag`` exists, so a test
can look at a run in progress, at a known point, then let it go on.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np

from iclab.claims import ClaimRecord, Estimate, Measure, Rule, Sample, judge_records, whole_rows, within_units
from iclab.config import Config, check_int, check_nonnegative
from iclab.experiments import Experiment, register

__all__ = ["FixtureConfig", "fixture_cell", "TESTS_DIR", "fixture_env", "iclab_cli", "METRICS"]

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
METRICS = ["i", "tau", "seed", "mean", "err", "theory", "offset_sum", "shared_pid", "curve", "n"]
HANG_SECONDS = 120.0
GATE_SECONDS = 900.0


def fixture_env(base: dict | None = None) -> dict:
    """Environment under which worker processes (spawned, Ray, a CLI subprocess) find these experiments."""
    env = dict(os.environ if base is None else base)
    env["ICLAB_EXPERIMENT_MODULES"] = "fixtures_experiments"
    paths = [TESTS_DIR] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != TESTS_DIR]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def iclab_cli(args: list[str], preexec=None, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m iclab ARGS`` in a subprocess that finds these experiments (``preexec`` runs in the child first,
    e.g. to lower its file-size limit)."""
    return subprocess.run(
        [sys.executable, "-m", "iclab", *args],
        env=fixture_env(),
        capture_output=True,
        text=True,
        preexec_fn=preexec,
        timeout=timeout,
    )


@dataclass(frozen=True)
class FixtureConfig(Config):
    n_cells: int = 6
    n_samples: int = 400
    seed: int = 0
    sleep: float = 0.0
    fail_cells: tuple[int, ...] = ()
    crash_cells: tuple[int, ...] = ()
    flag: str = ""
    hang_cells: tuple[int, ...] = ()
    hang_blocks_alarm: bool = False
    gate_cells: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        check_int("n_cells", self.n_cells)
        check_int("n_samples", self.n_samples, 2)
        check_nonnegative("sleep", self.sleep)


def _cells(config: FixtureConfig) -> list[dict]:
    return [{"i": i, "tau": 0.75 + 0.25 * (i % 5), "seed": config.seed * 1000 + i} for i in range(config.n_cells)]


def _shared(config: FixtureConfig) -> dict:
    """A 'heavy' input computed once in the driver: a fixed offset vector."""
    return {"offset": np.linspace(0.0, 1.0, 7), "driver_pid": os.getpid()}


def _hang(block_alarm: bool) -> None:
    """Sleep ``HANG_SECONDS``; with ``block_alarm`` no SIGALRM reaches this thread meanwhile."""
    import signal

    if block_alarm:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        time.sleep(HANG_SECONDS)
    finally:
        if block_alarm:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})


def _wait_for(path: str) -> None:
    """Create ``path.waiting``, then return once the file ``path`` exists; RuntimeError after ``GATE_SECONDS`` (a
    test that never opens the gate)."""
    open(f"{path}.waiting", "w").close()
    deadline = time.monotonic() + GATE_SECONDS
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise RuntimeError(f"fixture gate {path} stayed shut for {GATE_SECONDS:g} s")
        time.sleep(0.05)


def fixture_cell(config: FixtureConfig, cell: dict, shared) -> dict:
    import torch

    from iclab.data import generator_for

    armed = not (config.flag and os.path.exists(config.flag))
    if armed and cell["i"] in config.fail_cells:
        raise RuntimeError(f"fixture cell {cell['i']} fails until {config.flag} exists")
    if armed and cell["i"] in config.crash_cells:
        os._exit(13)
    if armed and cell["i"] in config.hang_cells:
        _hang(config.hang_blocks_alarm)
    if cell["i"] in config.gate_cells:
        _wait_for(config.flag)
    if config.sleep:
        time.sleep(config.sleep)
    g = generator_for(cell["seed"], "fixture")
    x = torch.randn(config.n_samples, generator=g, dtype=torch.float64)  # (n_samples,)
    y = torch.exp(x / cell["tau"])  # (n_samples,)
    return {
        "mean": float(y.mean()),
        "err": float(y.std() / math.sqrt(config.n_samples)),
        "theory": math.exp(1.0 / (2.0 * cell["tau"] ** 2)),
        "offset_sum": float(np.sum(shared["offset"])),
        "shared_pid": shared["driver_pid"],  # shared is computed in the driver, once
        "curve": [float(v) for v in y[:3]],
        "n": np.int64(config.n_samples),  # numpy scalar: the executor must make it JSON-able
    }


def _figures(config, df, fig_dir):
    from iclab.plotting import new_figure, save_figure, theory_vs_sim

    d = df.groupby("tau", as_index=False).agg(mean=("mean", "mean"), err=("err", "mean"), theory=("theory", "first"))
    fig, ax = new_figure()
    theory_vs_sim(ax, d["tau"], d["theory"], d["mean"], d["err"], label="E exp(x/τ)")
    ax.set_xlabel("τ")
    ax.set_ylabel("mean")
    ax.legend()
    return [save_figure(fig, fig_dir / "lognormal_mean", d)]


SOURCE = "the log-normal mean (exact)"


def _ratio(rows):
    """Per cell: the Monte Carlo mean over the closed form exp(1/(2τ²)), 1 in expectation."""
    return (rows["mean"] / rows["theory"]).to_numpy(float)


def _ratio_se(config, sample: Sample):
    """Per cell: the Monte Carlo SE of the ratio, ``err`` over the closed form."""
    return (sample.rows["err"] / sample.rows["theory"]).to_numpy(float)


def _drop(config, sample: Sample) -> Estimate:
    """The mean at the smallest τ minus the mean at the largest, its SE from the two τ's own Monte Carlo SEs
    (normal)."""
    by_tau = sample.rows.groupby("tau")
    mean, err = by_tau["mean"].mean(), by_tau["err"].mean()
    drop, se = float(mean.iloc[0] - mean.iloc[-1]), float(np.hypot(err.iloc[0], err.iloc[-1]))
    return Estimate(drop, se, n=len(sample.rows))


#: every cell of the run (the fixture's cells have no ``part``), one unit each, with its own Monte Carlo SE
EVERY_CELL = Measure({}, column=_ratio, unit=("i",), combine=within_units(_ratio_se, within_text="Monte Carlo SEs"))


def _claims(config):
    """The fixture's claims as records (:mod:`iclab.claims`), judged by the one judge: a cell of the run that
    failed makes each of them "not measured", as in a paper package."""
    return [
        ClaimRecord(
            id="lognormal-mean",
            claim="E exp(x/τ) = exp(1/(2τ²)) for x ~ N(0, 1)",
            source=SOURCE,
            kind="theory vs simulation",
            paper_value="exp(1/(2τ²))",
            headline=True,
            quantity="Monte Carlo mean over the closed form, per cell",
            measure=EVERY_CELL,
            rule=Rule("equivalence", target=1.0, rel_tol=0.2, units="cells"),
        ),
        ClaimRecord(
            id="grows-with-1/tau",
            claim="the mean falls as τ grows",
            source=SOURCE,
            kind="effect direction",
            quantity="the mean at the smallest τ minus at the largest",
            measure=Measure({}, column=whole_rows, unit=("i",), combine=_drop),
            rule=Rule("direction", sign=+1, smallest=0.1, units="cells"),
        ),
        ClaimRecord(
            id="needs-many-cells",
            claim="a paper setting this run lacks",
            source=SOURCE,
            kind="paper value",
            paper_value="1.0",
            paper_settings={"n_cells": 1000},
            quantity="Monte Carlo mean over the closed form, per cell",
            measure=EVERY_CELL,
            rule=Rule("value", paper=1.0, rel_tol=0.2, units="cells"),
        ),
    ]


def _compare(config, df):
    """The one judge on the records: what ``iclab.experiments.judged(package)`` is for a package's ``claims.py``
    (this fixture is a single module, not a package)."""
    return judge_records(_claims(config), config, df)


def _notes(config, df):
    return "The fixture has nothing to disagree with: theory is exact, *sampling* error only."


for _name, _paper, _order in (("fx_sweep", "temperature", 1), ("fx_other", "ood", 2)):
    register(
        Experiment(
            name=_name,
            paper=_paper,
            title=f"Fixture sweep ({_name})",
            claim="The log-normal mean $E[e^{x/\\tau}] = e^{1/(2\\tau^2)}$ for $x \\sim N(0, 1)$.",
            config_cls=FixtureConfig,
            presets={"quick": FixtureConfig(), "full": FixtureConfig(n_cells=20), "paper": FixtureConfig(n_cells=8)},
            cells=_cells,
            run_cell=fixture_cell,
            figures=_figures,
            compare=_compare,
            claims=_claims,
            shared=_shared,
            notes=_notes,
            order=1000 + _order,
        )
    )
