"""Every public function refuses what it cannot compute (issue 42): the cases found on main at 14f4820, each a raw
exception, a NaN, a silently accepted input or an allocation bomb there, and here one ConfigError naming the argument,
its value and what is allowed; plus the shared validators of :mod:`iclab.domain` themselves."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from iclab.errors import ConfigError
from iclab.theory import categorical, dispersion, multihead, ood, temperature


@pytest.mark.parametrize(
    "call, field, words",
    [
        (lambda: temperature.tau_opt_isotropic(50, 0), "l", "an integer >= 1"),  # ZeroDivisionError on main
        (lambda: temperature.tau_opt_isotropic(0, 100), "d", "an integer >= 1"),  # 1.0 on main
        (lambda: temperature.tau_opt_isotropic(50, 100, sigma=float("nan")), "sigma", "finite"),  # NaN on main
        (lambda: temperature.tau_opt_isotropic(True, 100), "d", "an integer"),  # a boolean is no size
        (lambda: ood.count_table(0, 5), "K", "an integer in 1.."),  # ZeroDivisionError on main
        (lambda: dispersion.required_spread(10, 1.5), "eps", "(0, 1)"),  # NaN on main
        (lambda: dispersion.lemma21_bounds(1.0, 0), "n", ">= 1"),  # inf on main
        (lambda: multihead.mu_gamma(0.0, 5, 40, 0.1), "gamma", "> 0"),  # 0/0 = NaN on main
        (lambda: multihead.solution_manifold(0.5, 5, 40, 0.1, n_plus=0), "n_plus", "in 1.."),  # ZeroDivisionError
        (lambda: multihead.bayes_ratio_bound(1.0, 0.0), "sigma2", "> 0"),  # ZeroDivisionError on main
        (lambda: categorical.kernel_weights(np.ones((1, 2, 3)), np.ones((1, 4, 3)), "cosine", 1.0), "kernel", "one of"),
        (lambda: ood.feature_losses(np.zeros((3, 3)), p=[0.5, 0.5, float("nan")]), "p", "finite numbers"),  # NaN
    ],
)
def test_a_found_case_is_one_config_error_naming_the_argument(call, field, words):
    with pytest.raises(ConfigError) as info:
        call()
    assert info.value.field == field and words in str(info.value)


def _attention_and_hf_cases():
    """Found when the property suite reached iclab.attention and iclab.hf (issue 42, item 5): each was a raw
    exception or a NaN result on main at a0ddcf7."""
    import torch

    import iclab.attention as A
    import iclab.hf as H

    s = torch.randn(2, 3, 4)
    return [
        (lambda: A.visible_count(s, True), "mask", "a bool tensor"),  # TypeError from broadcast_to
        (lambda: A.polyval(True, torch.rand(3)), "coeffs", "finite numbers"),  # TypeError: not iterable
        (lambda: A.adaptive_beta(True), "H", "a torch.Tensor"),  # TypeError from zeros_like
        (lambda: A.row_sum_tolerance(True, 4), "dtype", "floating-point torch dtype"),  # TypeError from finfo
        (lambda: A.get_normaliser([]), "attention", "one of"),  # TypeError: unhashable
        (lambda: A.row_entropy(s, None, torch.ones(3)), "eps", "[0, 1)"),  # ambiguous truth value
        (lambda: A.max_coefficient(torch.tensor(1.5)), "weights", "(..., n_keys)"),  # IndexError
        (lambda: A.attention_entropy(torch.tensor([[-0.5, 1.5]])), "weights", ">= 0"),  # NaN
        (lambda: A.dispersion_bounds(1e308, 10.0), "delta", "fits in float64"),  # inf and NaN
        (lambda: A.dispersion_bounds(2.0, 0.0), "n", ">= 1"),  # inf
        (lambda: A.softmax(s, tau=np.ones((5, 7))), "tau", "broadcastable"),  # RuntimeError on sizes
        (lambda: A.register_normaliser("x", kind=True), "kind", "one of"),  # ValueError
        (lambda: H.givens_rotation(8, 0.3, None), "seed", "an integer"),  # RuntimeError from manual_seed
        (lambda: H.plane_rotation(8, [(0, 1), (1, 2)], 0.3), "pairs", "each coordinate in one pair"),  # accepted
        (lambda: H.plane_rotation(8, [(0, 1)], math.inf), "theta", "finite"),  # ValueError: math domain
        (lambda: H.best_tau_index(True, [1.0]), "grid", "numbers"),  # TypeError: no len()
        (lambda: H.fit_head(torch.nn.Linear(4, 3), torch.ones(5, 4), torch.zeros(5, dtype=torch.long), 3, 1e308),
         "lr", "stays finite"),  # NaN weights, silently
        (lambda: H.head_scores(torch.nn.Linear(4, 3), torch.ones(5, 4), torch.full((5,), 7)), "y", "labels in 0..2"),
        (lambda: dispersion.entropy_beta_derivative(np.ones((2, 3)), np.ones((2, 3))), "beta", "one inverse"),
    ]  # fmt: skip


@pytest.mark.parametrize("case", range(19))
def test_a_found_attention_or_hf_case_is_one_config_error(case):
    cases = _attention_and_hf_cases()
    assert len(cases) == 19
    call, field, words = cases[case]
    with pytest.raises(ConfigError) as info:
        call()
    assert info.value.field == field and words in str(info.value), str(info.value)


def test_a_non_model_is_named_not_an_attribute_error():
    from iclab.errors import UnsupportedModelError
    from iclab.hf import check_backend, native_scaling, reset_temperature

    for call in (
        lambda: reset_temperature(-math.inf),
        lambda: native_scaling(True),
        lambda: check_backend(1, "sdpa", "fixed"),
    ):
        with pytest.raises(UnsupportedModelError, match="is not a Hugging Face PreTrainedModel"):
            call()


def test_an_overflowing_activation_keeps_finite_weights_and_the_usual_path_bit_for_bit():
    """``affine_squared`` at C = 1e308 (NaN rows on main): the factor C² cancels, the weights are those of
    (s + 1/C)², finite; where nothing overflows the weights are what they were, bit for bit."""
    import torch

    from iclab.attention import affine_squared_attention_weights as sq

    s = torch.randn(3, 5, dtype=torch.float64)
    w = sq(s, C=1e308)
    assert torch.isfinite(w).all() and torch.allclose(w, (s**2) / (s**2).sum(-1, keepdim=True), rtol=1e-12)
    assert torch.equal(sq(s, C=0.7), ((1 + 0.7 * s) ** 2) / ((1 + 0.7 * s) ** 2).sum(-1, keepdim=True))


def test_sizes_that_cannot_fit_are_refused_before_allocating(monkeypatch):
    """bayes_risk at d = L = 1e5 tried to allocate 745 GiB on main; approx_dynamics(steps=1e12) ran on for
    minutes. Both are refused at once, naming the arguments, the estimate and the limit."""
    monkeypatch.setenv("ICLAB_MEMORY_LIMIT_GB", "8")
    start = time.perf_counter()
    with pytest.raises(
        ConfigError,
        match=r"invalid n_mc=4000, L=100000, d=100000: this call would need about .* of "
        r"memory, and this machine has 8 GB",
    ):
        multihead.bayes_risk(10**5, 10**5, 0.5)
    with pytest.raises(
        ConfigError, match=r"invalid steps=1000000000000, omega0='2 heads': this call would need about .* TB of memory"
    ):
        multihead.approx_dynamics([0.1, -0.1], [0.1, -0.1], 5, 40.0, 0.1, steps=10**12)
    with pytest.raises(ConfigError, match=r"invalid steps=1000000000000.* s of CPU, over the limit of 86400 s"):
        multihead.approx_dynamics([0.1], [0.1], 5, 40.0, 0.1, steps=10**12, every=10**12)  # a small record, long loop
    with pytest.raises(ConfigError, match=r"invalid max_steps=1000000000000"):
        ood.population_gd(np.zeros((3, 3)), max_steps=10**12)
    with pytest.raises(ConfigError, match=r"invalid n_draws=100000000"):
        multihead.risk_ratio_mc(2000, 2000, 0.5, n_draws=10**8)
    assert time.perf_counter() - start < 5.0  # refused, not attempted (each refusal takes milliseconds)


def test_the_settings_limit_moves_the_refusal(monkeypatch):
    """The same call is allowed or refused by ``ICLAB_CELL_SECONDS_LIMIT`` alone: the estimate, not a constant."""
    monkeypatch.setenv("ICLAB_CELL_SECONDS_LIMIT", "0.001")
    with pytest.raises(ConfigError, match="over the limit of 0.001 s"):
        multihead.approx_dynamics([0.1], [0.1], 5, 40.0, 0.1, steps=2000)
    monkeypatch.delenv("ICLAB_CELL_SECONDS_LIMIT")
    assert multihead.approx_dynamics([0.1], [0.1], 5, 40.0, 0.1, steps=20, every=10)["loss"].shape == (3,)


def test_a_diverging_descent_names_the_step_size():
    with pytest.raises(
        ConfigError,
        match=r"invalid lr=1000000.0: expected a step size at which GD stays finite \(it diverged at step \d+\)",
    ):
        multihead.approx_dynamics([0.5, -0.5], [0.5, -0.5], 5, 40.0, 0.1, lr=1e6, steps=50)


def test_an_overflowing_result_is_refused_not_returned_as_inf():
    with pytest.raises(ConfigError, match="overflows double precision"):
        dispersion.lemma21_bounds(800.0, 10, theta=1.0)
    with pytest.raises(ConfigError, match="overflows double precision"):
        multihead.approx_loss([3.0, 3.0], [1.0, 1.0], 100, 10.0, 0.1)
    low, high = dispersion.lemma21_bounds(700.0, 10, theta=1.0)  # just inside double precision: finite
    assert np.isfinite(low) and np.isfinite(high)


def test_in_domain_values_still_compute_what_they_did():
    assert temperature.tau_opt_isotropic(50, 100) == pytest.approx(1.5)
    assert temperature.tau_opt_isotropic(np.int64(50), np.int64(100), a=np.float64(2.0)) == pytest.approx(3.0)
    assert float(dispersion.required_spread(11, 0.5)) == pytest.approx(math.log(10))
    n, w = ood.count_table(2, 3)
    assert n.shape == (4, 2) and w.sum() == pytest.approx(1.0)
    assert multihead.bayes_ratio_bound(np.array([0.5, 1.0]), 0.25).shape == (2,)  # arrays broadcast, as before


def _validators():
    from iclab import domain  # imported here: on main (no iclab.domain) the cases above still run and fail

    return domain


@pytest.mark.parametrize(
    "check, value, allowed",
    [
        (lambda v: _validators().integer("k", v), True, "an integer >= 1"),
        (lambda v: _validators().integer("k", v), 2.0, "an integer >= 1"),
        (lambda v: _validators().number("x", v), float("inf"), "a finite number"),
        (lambda v: _validators().number("x", v), "1.5", "a finite number"),
        pytest.param(lambda v: _validators().number("x", v), 10**400, "a finite number", id="int-beyond-double"),
        (lambda v: _validators().probability("p", v), 1.0, "a finite number in (0, 1)"),
        (lambda v: _validators().real("x", v), None, "a real number"),
        (lambda v: _validators().array("a", v), [True, False], "numbers"),
        (lambda v: _validators().array("a", v, shape=(2, None)), np.ones((3, 2)), "shape (2, any)"),
        (lambda v: _validators().array("a", v, above=0), [1.0, -1.0], "finite numbers > 0"),
        (lambda v: _validators().array("a", v), [], "at least 1 entries"),
    ],
)
def test_each_validator_names_the_argument_and_what_is_allowed(check, value, allowed):
    with pytest.raises(ConfigError) as info:
        check(value)
    assert allowed in str(info.value) and str(info.value).startswith("invalid ")


def test_validators_return_the_value_in_the_form_the_formula_needs():
    d = _validators()
    integer, number, real, array, finite_result = d.integer, d.number, d.real, d.array, d.finite_result
    assert integer("k", np.int32(3)) == 3 and type(integer("k", np.int32(3))) is int
    assert number("x", np.float32(0.5)) == 0.5 and real("x", float("nan")) != real("x", float("nan"))
    assert array("a", [1, 2]).dtype == np.float64
    assert array("a", [1.0, float("nan")], finite=False, above=0).shape == (2,)  # NaN allowed, whatever the bounds
    value = (1.0, np.ones(2))
    assert finite_result(value, x=1) is value
    with pytest.raises(ConfigError, match="invalid x=1: the result overflows"):
        finite_result({"a": np.array([1.0, np.inf])}, x=1)
