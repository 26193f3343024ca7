"""``iclab theory …``: closed forms of arXiv:2511.01292 (Demir & Doğan, Theorems 4.2–4.3) from the command line
(docs/papers/temperature.md §3.6–3.7).

``iclab theory tau-opt --d 50 --l 100 --cov-scale 2 --task-scale 1 --sigma 0.5 --train-sigma 0.1`` prints τ_opt of
Theorem 4.3 and G(1), G(τ_opt) of Theorem 4.2 for the Lemma 4.1 weights (train x, w ~ N(0, I), noise
``--train-sigma``; Σ̂ = I, or sampled from ``--m`` pretraining prompts) and the test distribution
x ~ N(μx, a·I), w ~ N(μw, b·I), noise σ, with ‖μx‖ = ``--mean-shift``, ‖μw‖ = ``--task-mean`` along (1, …, 1)/√d.

Inputs are checked before anything is computed: scales and norms in [1e-30, 1e30] (or 0 where allowed), so that
no power of them leaves double precision, and an estimate of the memory and time that ``--d`` (d×d matrices,
O(d³)) and ``--m`` (m·l·d draws) need, refused beyond this machine's memory or :data:`SECONDS_LIMIT` unless
``--no-budget-check``. A result that is still not finite is one error, never ``tau_opt = nan``.
"""

from __future__ import annotations

import math

import typer

from iclab.cli import app

SECONDS_LIMIT = 600.0  # one interactive command


def _needs(d: int, l: int, m: int) -> list:
    """Memory and time of the closed form (d×d matrices, O(d³)) and of the pretraining sample (m·l·d draws,
    in chunks of 500 prompts), calibrated on a busy 2-core CPU (d = 1000 took ~30 s, 1e8 draws ~20 s)."""
    from iclab.budget import Need

    needs = [Need({"--d": d}, memory=16 * 8.0 * d * d, seconds=d**3 / 3e7)]
    if m:
        needs.append(
            Need(
                {"--m": m, "--l": l, "--d": d},
                memory=2 * 8.0 * min(m, 500) * l * d + 8.0 * d * d,
                seconds=m * l * d / 5e6 + m * l * d * d / 5e9,
            )
        )
    return needs


def _finite(**values: float) -> None:
    """One IclabError naming the quantities that left double precision."""
    bad = [f"{k}={v}" for k, v in values.items() if not math.isfinite(v)]
    if bad:
        from iclab.errors import IclabError

        raise IclabError(
            "the closed form is not finite for these inputs (" + ", ".join(bad) + "): a product of "
            "the scales leaves double precision; use values nearer 1"
        )


def _num(x: float) -> str:
    """Fixed point for ordinary magnitudes, scientific notation beyond (never a 60-digit line)."""
    return f"{x:.4f}" if x == 0 or 1e-3 <= abs(x) < 1e6 else f"{x:.4e}"


theory_app = typer.Typer(add_completion=False, no_args_is_help=True, help="Closed-form theory (NumPy).")
app.add_typer(theory_app, name="theory")


@theory_app.command("tau-opt")
def tau_opt_cmd(
    d: int = typer.Option(50, "--d", help="input dimension"),
    l: int = typer.Option(100, "--l", help="prompt columns incl. the query (context length + 1)"),
    cov_scale: float = typer.Option(1.0, "--cov-scale", help="test Σx = a·I"),
    task_scale: float = typer.Option(1.0, "--task-scale", help="test Σw = b·I"),
    sigma: float = typer.Option(0.1, "--sigma", help="test noise σ"),
    train_sigma: float = typer.Option(0.1, "--train-sigma", help="pretraining noise σ_tr"),
    mean_shift: float = typer.Option(0.0, "--mean-shift", help="‖μx‖ of the test inputs"),
    task_mean: float = typer.Option(0.0, "--task-mean", help="‖μw‖ of the test tasks"),
    m: int = typer.Option(0, "--m", help="pretraining prompts for Σ̂ (0: Σ̂ = I exactly)"),
    seed: int = typer.Option(0, "--seed", help="seed of the pretraining sample (with --m)"),
    no_budget_check: bool = typer.Option(False, "--no-budget-check", help="skip the memory/time estimate"),
) -> None:
    """τ_opt (Thm 4.3, Eq. 15), G(1) and G(τ_opt) (Thm 4.2) for the Bayes-mimicking weights (Lemma 4.1)."""
    import numpy as np

    from iclab.budget import check_budget
    from iclab.config import check_int, check_scale
    from iclab.data import mean_along_ones
    from iclab.models import bayes_mimicking_weights
    from iclab.theory import temperature as T

    check_int("--d", d, 1)
    check_int("--l", l, 2)
    check_int("--m", m, 0)
    check_int("--seed", seed, 0)
    check_scale("--cov-scale", cov_scale)
    check_scale("--task-scale", task_scale)
    for name, v in (
        ("--sigma", sigma),
        ("--train-sigma", train_sigma),
        ("--mean-shift", mean_shift),
        ("--task-mean", task_mean),
    ):
        check_scale(name, v, zero_ok=True)
    if not no_budget_check:
        check_budget(_needs(d, l, m), SECONDS_LIMIT)
    if m:
        from iclab.data import GaussianRegression, generator_for
        from iclab.models import pretraining_covariance

        sig_hat = pretraining_covariance(
            GaussianRegression(d=d, n=l - 1, sigma=train_sigma), m, generator_for(seed, "pretrain", d, l)
        )
    else:
        sig_hat = np.eye(d)
    weights = bayes_mimicking_weights(sig_hat, l, train_sigma)
    coefs = T.coefficients(
        weights,
        l,
        mu_x=mean_along_ones(d, mean_shift),
        cov_x=cov_scale,
        mu_w=mean_along_ones(d, task_mean),
        cov_w=task_scale,
        sigma=sigma,
    )
    _finite(a2=coefs.a2, a1=coefs.a1, c=coefs.c)
    t = coefs.tau_opt
    typer.echo(f"tau_opt = {_num(t)}   (Theorem 4.3: 2 a2 / a1)")
    typer.echo(f"G(1)      = {_num(coefs.G(1.0))}   (normalised {_num(coefs.G(1.0) / coefs.c)})")
    if math.isfinite(t):
        typer.echo(f"G(tau_opt) = {_num(coefs.G_min)}   (normalised {_num(coefs.G_min / coefs.c)})")
    typer.echo(f"a2 = {_num(coefs.a2)}, a1 = {_num(coefs.a1)}, c = Tr(AB) + sigma^2 = {_num(coefs.c)}")
    if task_mean == 0:
        iso = T.tau_opt_isotropic(d, l, cov_scale, task_scale, sigma, train_sigma)
        typer.echo(f"isotropic formula tau_opt = {_num(iso)}   (docs/papers/temperature.md §4.5, Σ̂ ≈ I)")
    if task_mean == 0 and mean_shift == 0 and sigma > 0:
        typer.echo(
            f"Bayes error (Marchenko–Pastur, n = l - 1) = {_num(T.bayes_error_mp(d, l - 1, cov_scale, task_scale, sigma))}"
        )
