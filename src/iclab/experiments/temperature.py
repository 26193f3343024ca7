"""Experiment ``temperature``: optimal attention temperature under distribution shift (Demir & Doğan; spec
``optimal-temperature.md`` §4.1 and open details 2–5).

One approximate-softmax attention layer with the Bayes-mimicking weights of Lemma 4.1 (pretraining prompts
x, w ~ N(0, I), noise σ_tr, τ = 1; Σ̂ re-estimated from ``m`` prompts at every context length ``l``) is tested on
fresh prompts under each shift of the paper: none (Fig. 1a), input covariance (1b), task (1c), noise vs ``l``
(2a) and vs σ_test at ``l = d`` (2b), τ_opt vs σ_test (2c), and input mean with approximate softmax vs linear
attention (Remark 3.4). Each cell gives Theorem 4.2's G(1) and G(τ_opt), the Monte-Carlo errors at the same τ,
τ_opt by Eq. (15) and by a grid search, and the test-/train-prior Bayes errors. ``simcheck`` cells repeat the
spec's independent [sim-check] table (§3.5) at d = 50.
"""

from __future__ import annotations

from dataclasses import dataclass

from iclab.config import Config, check_choice, check_int, check_nonnegative, check_positive
from iclab.errors import ConfigError
from iclab.experiments import Experiment, lazy, register

__all__ = ["TemperatureConfig", "cells", "run_cell"]


@dataclass(frozen=True)
class TemperatureConfig(Config):
    """Settings of the ``temperature`` experiment.

    Fields:
        d: input dimension; m: pretraining prompts for Σ̂ (spec §4.1: 50 and 5000).
        l_values: context lengths l (columns incl. the query) for the curves vs l.
        n_test: fresh test prompts per point (spec open detail 4: >= 2000).
        sigma_tr: pretraining noise (0.1).
        cov_scale: input-covariance shift Σx = cov_scale·I (Fig. 1b; [PN]: 2).
        task_scale, task_mean: task shift Σw = task_scale·I, ‖μw‖ = task_mean along 1/√d (Fig. 1c; 3 and 1).
        noise_sigmas: σ_test of the noise-shift curves vs l (Fig. 2a).
        sigma_tests: σ_test grid at l = d (Figs. 2b, 2c).
        mean_shifts: ‖μx‖ values of the input-mean shift (Remark 3.4), at l = mean_l (0: 2d).
        tau_min, tau_max, n_tau: log grid of τ for the grid search (open detail 4: [0.25, 8]).
        simcheck: add the four settings of the spec's [sim-check] table (d = 50, m = 5000).
        simcheck_n_test: test prompts of those cells (the spec used 4000).
        centring: how Σ̂ centres the pretraining inputs: ``global`` (mean of all ml tokens; E Σ̂ = Σx, as the
            spec's [sim-check]) or ``prompt`` (each prompt's own mean, as C_xx; E Σ̂ = (1 − 1/l)Σx).
        seed: base seed.
    """

    d: int = 50
    m: int = 5000
    l_values: tuple[int, ...] = tuple(range(10, 201, 10))
    n_test: int = 2000
    sigma_tr: float = 0.1
    cov_scale: float = 2.0
    task_scale: float = 3.0
    task_mean: float = 1.0
    noise_sigmas: tuple[float, ...] = (0.5, 2.0, 5.0)
    sigma_tests: tuple[float, ...] = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0)
    mean_shifts: tuple[float, ...] = (0.0, 1.0, 2.0, 4.0, 8.0)
    mean_l: int = 0
    tau_min: float = 0.25
    tau_max: float = 8.0
    n_tau: int = 41
    simcheck: bool = True
    simcheck_n_test: int = 4000
    centring: str = "global"
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("d", self.d, 2)
        check_int("m", self.m, 1)
        check_int("n_test", self.n_test, 10)
        check_int("simcheck_n_test", self.simcheck_n_test, 10)
        check_int("n_tau", self.n_tau, 3)
        check_int("mean_l", self.mean_l, 0)
        if self.mean_l == 1:
            raise ConfigError("mean_l", 1, "0 (meaning l = 2d) or a context length >= 2")
        if not self.l_values:
            raise ConfigError("l_values", self.l_values, "at least one context length")
        for l in self.l_values:
            if not isinstance(l, int) or l < 2:
                raise ConfigError("l_values", self.l_values, "integers >= 2 (context pairs + query)")
        for name in ("cov_scale", "task_scale", "tau_min", "tau_max"):
            check_positive(name, getattr(self, name))
        for name in ("sigma_tr", "task_mean"):
            check_nonnegative(name, getattr(self, name))
        for name in ("noise_sigmas", "sigma_tests", "mean_shifts"):
            for v in getattr(self, name):
                check_nonnegative(name, v)
        if self.tau_min >= self.tau_max:
            raise ConfigError("tau_max", self.tau_max, f"a value > tau_min={self.tau_min}")
        check_choice("centring", self.centring, ("global", "prompt"))
        check_int("seed", self.seed, 0)


def _cell(config: TemperatureConfig, scenario: str, l: int, **kw) -> dict:
    cell = {"scenario": scenario, "d": config.d, "l": int(l), "m": config.m, "cov_x": 1.0, "cov_w": 1.0, "mu_x": 0.0,
            "mu_w": 0.0, "sigma_test": float(config.sigma_tr), "sigma_tr": float(config.sigma_tr), "mu_w_tr": 0.0,
            "n_test": config.n_test, "centring": config.centring, "seed": config.seed}
    cell.update({k: (float(v) if isinstance(v, float) else v) for k, v in kw.items()})
    return cell


def cells(config: TemperatureConfig) -> list[dict]:
    """The grid: every shift of spec §4.1 over ``l`` (or σ_test / ‖μx‖), plus the [sim-check] settings."""
    out = []
    for l in config.l_values:
        out.append(_cell(config, "none", l))
        out.append(_cell(config, "cov", l, cov_x=float(config.cov_scale)))
        out.append(_cell(config, "task", l, cov_w=float(config.task_scale), mu_w=float(config.task_mean)))
        out += [_cell(config, "noise", l, sigma_test=float(s)) for s in config.noise_sigmas]
    out += [_cell(config, "noise_ld", config.d, sigma_test=float(s)) for s in config.sigma_tests]
    mean_l = config.mean_l or 2 * config.d
    out += [_cell(config, "mean", mean_l, mu_x=float(mu)) for mu in config.mean_shifts]
    if config.simcheck:
        base = {"d": 50, "m": 5000, "n_test": config.simcheck_n_test, "sigma_tr": 0.1, "sigma_test": 0.1}
        out += [_cell(config, "simcheck_none", 100, **base),
                _cell(config, "simcheck_cov", 100, **{**base, "cov_x": 2.0}),
                _cell(config, "simcheck_noise", 50, **{**base, "sigma_test": 3.0}),
                _cell(config, "simcheck_mean", 100, **{**base, "mu_x": 1.0, "mu_w": 1.0, "mu_w_tr": 1.0,
                                                      "sigma_tr": 1.0, "sigma_test": 1.0})]
    return out


def run_cell(config: TemperatureConfig, cell: dict, shared=None) -> dict:
    """Metrics of one cell (see :func:`iclab.experiments._temperature_cells.evaluate_cell`)."""
    from iclab.experiments._temperature_cells import evaluate_cell, tau_grid

    taus = tau_grid(config.tau_min, config.tau_max, config.n_tau)
    return evaluate_cell(cell, taus, extras=cell["scenario"] in ("mean", "simcheck_mean"))





QUICK = TemperatureConfig(d=20, m=1000, l_values=(10, 20, 40, 80), n_test=1000, noise_sigmas=(1.0, 5.0),
                          sigma_tests=(0.1, 1.0, 2.0, 5.0), mean_shifts=(0.0, 1.0, 2.0, 4.0),
                          simcheck_n_test=4000)
FULL = TemperatureConfig(simcheck_n_test=20000)

CLAIM = """\
Demir & Doğan: one approximate-softmax attention layer whose weights emulate the train-prior Bayes ridge
(Lemma 4.1) has the closed-form test error G(τ) = a₂/τ² − a₁/τ + c for any test distribution (Theorem 4.2), so the
inference temperature τ_opt = 2a₂/a₁ (Theorem 4.3) is optimal. An input-covariance shift breaks ICL and τ_opt
repairs it; an input-mean shift is harmless for the (centring) approximate softmax but not for linear attention
(Remark 3.4); task and noise shifts matter mainly at short context. Without shift the model "emulates Bayes"
(Corollary 4.4). Figures: theory lines over Monte-Carlo points (error bars = 1 s.e.), errors raw and normalised by
Tr(AB) + σ² (the error of predicting 0)."""

register(Experiment(
    name="temperature", paper="temperature",
    title="Optimal attention temperature under distribution shift (Demir & Doğan)",
    claim=CLAIM, config_cls=TemperatureConfig, presets={"quick": QUICK, "full": FULL},
    cells=cells, run_cell=run_cell,
    figures=lazy("iclab.experiments._temperature_report:figures"),
    compare=lazy("iclab.experiments._temperature_report:compare"),
    notes=lazy("iclab.experiments._temperature_report:notes"),
    order=10))
