r"""The grid of the one-layer ``temperature`` experiment: arXiv:2511.01292 (Demir & Doğan), §5.1, Figs. 1–2 and
Remark 3.4 (docs/papers/temperature.md §5.1).

One cell is one context length ``l`` under one test distribution. Its ``part`` names the measurement:

========================  ==========================================================================
``none``                  no shift, vs l (Fig. 1a)
``cov``                   input covariance Σx = a·I, vs l (Fig. 1b)
``task``                  task Σw = b·I and ‖μw‖, vs l (Fig. 1c)
``noise``                 test noise σ, vs l (Fig. 2a)
``noise_ld``              test noise σ at l = d (Figs. 2b, 2c)
``mean``                  input mean ‖μx‖ at l = mean_l, approximate softmax vs linear attention (Remark 3.4)
``simcheck_*``            the four settings of the independent check at d = 50 (note §4.11), sized to judge
                          Theorem 4.2 against simulation (no Bayes estimators)
``surrogate``             approximate softmax against softmax with the same weights at one (d, l) (v2 Fig. 1;
                          note §4.12)
========================  ==========================================================================

The first seven are evaluated by :func:`iclab.experiments.temperature.montecarlo.evaluate_cell`, ``surrogate`` by
:func:`iclab.experiments.temperature.surrogate.evaluate_surrogate`.
"""

from __future__ import annotations

from iclab.budget import Need
from iclab.experiments.temperature.config import TemperatureConfig

__all__ = ["cells", "run_cell", "shared", "budget"]


def _cell(config: TemperatureConfig, part: str, l: int, **kw) -> dict:
    cell = {
        "part": part,
        "d": config.d,
        "l": int(l),
        "m": config.m,
        "cov_x": 1.0,
        "cov_w": 1.0,
        "mu_x": 0.0,
        "mu_w": 0.0,
        "sigma_test": float(config.sigma_tr),
        "sigma_tr": float(config.sigma_tr),
        "mu_w_tr": 0.0,
        "n_test": config.n_test,
        "centring": config.centring,
        "seed": config.seed,
    }
    cell.update({k: (float(v) if isinstance(v, float) else v) for k, v in kw.items()})
    return cell


def _simcheck_cells(config: TemperatureConfig) -> list[dict]:
    """The independent check's four settings (d = 50, m = 5000, train N(0, I), σ_tr = 0.1 unless stated)."""
    base = {"d": 50, "m": 5000, "n_test": config.simcheck_n_test, "sigma_tr": 0.1, "sigma_test": 0.1}
    return [
        _cell(config, "simcheck_none", 100, **base),
        _cell(config, "simcheck_cov", 100, **{**base, "cov_x": 2.0}),
        _cell(config, "simcheck_noise", 50, **{**base, "sigma_test": 3.0}),
        _cell(
            config,
            "simcheck_mean",
            100,
            **{**base, "mu_x": 1.0, "mu_w": 1.0, "mu_w_tr": 1.0, "sigma_tr": 1.0, "sigma_test": 1.0},
        ),
    ]


def _surrogate_cells(config: TemperatureConfig) -> list[dict]:
    """One cell per (d, l) of the approximate-softmax-vs-softmax comparison, no shift (note §4.12)."""
    return [
        _cell(config, "surrogate", l, d=d, n_test=config.surrogate_n_test)
        for d in config.surrogate_dims
        for l in config.surrogate_ls
    ]


def cells(config: TemperatureConfig) -> list[dict]:
    """The grid: every shift of §5.1 over ``l`` (or σ_test / ‖μx‖), the independent check's settings, then the
    surrogate-vs-softmax comparison."""
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
        out += _simcheck_cells(config)
    return out + _surrogate_cells(config)


def run_cell(config: TemperatureConfig, cell: dict, shared=None) -> dict:
    """Metrics of one cell (module docstring)."""
    from iclab.experiments.temperature.montecarlo import evaluate_cell, tau_grid

    if cell["part"] == "surrogate":
        from iclab.experiments.temperature.surrogate import evaluate_surrogate

        return evaluate_surrogate(
            cell, tau_grid(config.surrogate_tau_min, config.surrogate_tau_max, config.surrogate_n_tau)
        )
    taus = tau_grid(config.tau_min, config.tau_max, config.n_tau)
    part = cell["part"]
    return evaluate_cell(cell, taus, extras=part in ("mean", "simcheck_mean"), bayes=not part.startswith("simcheck"))


def shared(config: TemperatureConfig) -> None:
    """Nothing is shared: every cell estimates its own pretraining covariance."""
    return None


def budget(config: TemperatureConfig) -> list[Need]:
    r"""What the largest cell needs (fp64): Σ̂ from ``m`` prompts in chunks of 500 (``l·d`` each), d×d weights and
    per-prompt Bayes solves, ``n_test`` per-prompt arrays and the (n_tau, n_test) error grid; time from the draws
    (~1e7/s), the solves (~1e9 flop/s) and the grid."""
    d = max(config.d, 50 if config.simcheck else 0)
    l = max([*config.l_values, config.mean_l or 2 * config.d, config.d] + ([100] if config.simcheck else []))
    n = max(config.n_test, config.simcheck_n_test if config.simcheck else 0)
    chunk = max(1, min(n, 4_000_000 // (l * d)))
    return [
        Need(
            {"m": config.m, "l_values": l, "d": config.d},
            memory=16.0 * min(config.m, 500) * l * d,
            seconds=config.m * l * d / 1e7,
        ),
        Need(
            {"n_test": n, "l_values": l, "d": config.d},
            memory=8.0 * 3 * 4e6 + 8.0 * chunk * l * d,
            seconds=n * l * d / 1e7,
        ),
        Need({"d": config.d, "n_test": n}, memory=8.0 * (16 * d * d + 3 * chunk * d * d), seconds=3 * n * d**3 / 1e9),
        Need({"n_test": n}, memory=8.0 * 12 * n),
        Need({"n_tau": config.n_tau, "n_test": n}, memory=8.0 * 3 * config.n_tau * n, seconds=config.n_tau * n / 1e8),
    ]
