r"""Config of the one-layer ``temperature`` experiment: arXiv:2511.01292 (Demir & Doğan), §5.1, Figs. 1–2
(settings in docs/papers/temperature.md §5.1).

``PRESETS["paper"]`` is the paper's setting (d = 50, m = 5000 pretraining prompts, σ_tr = 0.1, l = 10…200) with
check cells large enough to resolve the finite-l gaps of Theorem 4.2 (well under an hour on 2 cores);
``PRESETS["quick"]`` the same grid at d = 20 with fewer prompts (about a minute; most claims are "not judged
(settings differ)" there); ``PRESETS["full"]`` the paper's setting with 10× the test prompts of ``paper`` on every
curve (docs/papers/temperature.md §5.1).

**Sizing the Monte Carlo** (docs/papers/temperature.md §5.1; measured when the presets were designed — every run's
report notes compute the current values). The relative standard deviation of one prompt's
squared error is about 1.5–1.6 in every cell measured, so n test prompts give G with a 95 % interval of
±1.96·1.6/√n of G: ±5 % at n = 4000, ±2.2 % at 20 000, ±1.0 % at 100 000. Theorem 4.2 drops O(1/l) terms; at the
check settings (d = 50, l = 100) they move G by +0.5 % (no shift, τ = 1) to −2.7 % and +3.1 % (Σx = 2I at τ = 1 and
τ_opt), measured on 400 000 prompts. Against the 5 % tolerance of the theory-vs-simulation claims, a margin of ~2 %
must be resolved with power: ``simcheck_n_test = 100000`` in ``paper`` (SE ≈ 0.5 %), 20 000 in ``quick`` (where
the cells closest to the bound stay "not judged" with the sample that would decide).
"""

from __future__ import annotations

from dataclasses import dataclass

from iclab.config import Config, check_ordered, choice_field, int_field, ints_field, scale_field, scales_field

__all__ = ["TemperatureConfig", "PRESETS"]


@dataclass(frozen=True)
class TemperatureConfig(Config):
    """Settings of the ``temperature`` experiment (docs/papers/temperature.md §5.1).

    Fields:
        d: input dimension (the paper: 50).
        m: pretraining prompts for the covariance Σ̂ of Eq. 11 (the paper: 5000).
        l_values: context lengths l (columns incl. the query) of the curves vs l.
        n_test: fresh test prompts per point (at least 2000, note §5.5).
        sigma_tr: pretraining noise σ_tr (the paper: 0.1).
        cov_scale: input-covariance shift Σx = cov_scale·I (Fig. 1b; 2 in v2).
        task_scale: task-covariance shift Σw = task_scale·I (Fig. 1c; 3 in v2).
        task_mean: norm of the task-mean shift μw along (1, …, 1)/√d (Fig. 1c; value not given, note §5.5).
        noise_sigmas: σ_test of the noise-shift curves vs l (Fig. 2a).
        sigma_tests: σ_test grid at l = d (Figs. 2b, 2c).
        mean_shifts: ‖μx‖ values of the input-mean shift (Remark 3.4), at l = mean_l.
        mean_l: context length of the input-mean shift (0: 2d).
        tau_min: smallest τ of the log grid for the grid search (note §5.5: 0.25).
        tau_max: largest τ of that grid (note §5.5: 8).
        n_tau: points of that grid.
        simcheck: add the four settings of the independent check at d = 50, m = 5000 (note §4.11).
        simcheck_n_test: test prompts of those cells (the check used 4000; see the module docstring for sizing).
        surrogate_dims: input dimensions d of the approximate-softmax-vs-softmax comparison (note §4.12).
        surrogate_ls: context lengths l of that comparison (every d × l pair is one cell).
        surrogate_n_test: test prompts per comparison cell (the same prompts for both layers and every τ).
        surrogate_tau_min: smallest τ of that comparison's log grid.
        surrogate_tau_max: largest τ of that grid (wide: softmax reaches its first-order regime at τ ≫ the
            score spread, ~d^{3/2} here).
        surrogate_n_tau: points of that grid.
        centring: how Σ̂ centres the pretraining inputs: ``global`` (E Σ̂ = Σx) or ``prompt`` (note §4.10).
        seed: base seed.
    """

    d: int = int_field(50, low=2)
    m: int = int_field(5000)
    l_values: tuple[int, ...] = ints_field(tuple(range(10, 201, 10)), low=2, why="context pairs + query")
    n_test: int = int_field(2000, low=10)
    sigma_tr: float = scale_field(0.1, zero_ok=True)
    cov_scale: float = scale_field(2.0)
    task_scale: float = scale_field(3.0)
    task_mean: float = scale_field(1.0, zero_ok=True)
    noise_sigmas: tuple[float, ...] = scales_field((0.5, 2.0, 5.0), zero_ok=True)
    sigma_tests: tuple[float, ...] = scales_field((0.1, 0.5, 1.0, 2.0, 5.0, 10.0), zero_ok=True)
    mean_shifts: tuple[float, ...] = scales_field((0.0, 1.0, 2.0, 4.0, 8.0), zero_ok=True)
    mean_l: int = int_field(0, low=2, zero_ok=True, why="0: l = 2d")
    tau_min: float = scale_field(0.25)
    tau_max: float = scale_field(8.0)
    n_tau: int = int_field(41, low=3)
    simcheck: bool = True
    simcheck_n_test: int = int_field(4000, low=10)
    surrogate_dims: tuple[int, ...] = ints_field((1, 2, 5, 10, 20, 50))
    surrogate_ls: tuple[int, ...] = ints_field((20, 50, 100, 200), low=2)
    surrogate_n_test: int = int_field(4000, low=10)
    surrogate_tau_min: float = scale_field(0.1)
    surrogate_tau_max: float = scale_field(1e5)
    surrogate_n_tau: int = int_field(73, low=3)
    centring: str = choice_field("global", ("global", "prompt"))
    seed: int = int_field(0, low=0)

    def __post_init__(self) -> None:
        check_ordered(self, "tau_min", "tau_max")
        check_ordered(self, "surrogate_tau_min", "surrogate_tau_max")


QUICK = TemperatureConfig(
    d=20,
    m=1000,
    l_values=(10, 20, 40, 80),
    n_test=1000,
    noise_sigmas=(1.0, 5.0),
    sigma_tests=(0.1, 1.0, 2.0, 5.0),
    mean_shifts=(0.0, 1.0, 2.0, 4.0),
    simcheck_n_test=20000,
    surrogate_dims=(1, 2, 5, 20, 50),
    surrogate_ls=(20, 100),
    surrogate_n_test=2000,
)
PAPER = TemperatureConfig(simcheck_n_test=100000)
FULL = TemperatureConfig(n_test=20000, simcheck_n_test=400000, surrogate_n_test=20000)
PRESETS = {"quick": QUICK, "paper": PAPER, "full": FULL}
