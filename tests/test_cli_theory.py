"""``iclab theory tau-opt`` (arXiv:2511.01292 Theorems 4.2–4.3; docs/papers/temperature.md §3.6–3.7)."""

import re

from iclab.cli import main


def _run(capsys, *args):
    rc = main(["theory", "tau-opt", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_tau_opt_prints_theorem_values(capsys):
    rc, out, _ = _run(
        capsys,
        "--d",
        "50",
        "--l",
        "100",
        "--cov-scale",
        "2",
        "--task-scale",
        "1",
        "--sigma",
        "0.5",
        "--train-sigma",
        "0.1",
    )
    assert rc == 0
    tau = float(re.search(r"tau_opt = ([0-9.]+)", out).group(1))
    iso = float(re.search(r"isotropic formula tau_opt = ([0-9.]+)", out).group(1))
    # docs/papers/temperature.md §4.5: tau_opt = (a(1 + d/l) + sigma^2/(b l)) / (1 + sigma_tr^2 / l)
    assert abs(tau - (2 * 1.5 + 0.25 / 100) / (1 + 0.01 / 100)) < 1e-3 and abs(iso - tau) < 1e-3
    g1 = float(re.search(r"G\(1\)\s+= ([0-9.]+)", out).group(1))
    gopt = float(re.search(r"G\(tau_opt\) = ([0-9.]+)", out).group(1))
    assert gopt < g1


def test_tau_opt_with_sampled_pretraining_and_shifts(capsys):
    rc, out, _ = _run(capsys, "--d", "7", "--l", "15", "--m", "50", "--mean-shift", "1", "--task-mean", "0.5")
    assert rc == 0 and "tau_opt" in out and "isotropic" not in out


def test_bad_values_give_one_line_errors(capsys):
    for args, field in ((["--l", "1"], "--l"), (["--cov-scale", "-2"], "--cov-scale"), (["--sigma", "-1"], "--sigma")):
        rc, out, err = _run(capsys, *args)
        assert rc == 2 and err.count("\n") == 1 and field in err and "Traceback" not in err
