"""Property-based tests over the public API (issue 42): every public function of ``iclab.theory``, ``iclab.stats``,
``iclab.budget``, ``iclab.attention`` and ``iclab.hf`` (the helpers that read a model, a tokenizer or an encoder on a
tiny random Llama and BERT with a byte-level tokenizer, built offline) is called from a valid call with one or two of
its arguments replaced by values drawn from the edges of their domains and beyond (hypothesis); each call must end in
one :class:`iclab.IclabError` or a finite result, never a raw exception, a NaN or inf, a hang or a crash.

The calls run in a child process under a memory limit (``RLIMIT_AS``, :data:`MEMORY_LIMIT`) and a per-call alarm
(:data:`BOUND` seconds), so an allocation bomb or a hang fails this test, not the machine. Examples are drawn
derandomized and without a database (the same calls every run). The normalisers' numerics are fuzzed further by
``tests/test_fuzz_api.py``; the ``iclab.hf`` functions that need a model package or run as a context are listed in
:data:`NEEDS_A_TOKENIZER` with what they need. The closing line of the test says how many
functions, argument families and calls.
"""

from __future__ import annotations

import json
import math
import os
import resource
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np

MEMORY_LIMIT = 6 << 30  # bytes of address space for the child (numpy, scipy and torch load in well under this)
BOUND = 20.0  # seconds one call may take before it counts as a hang
EXAMPLES = 60  # hypothesis examples per function (each one call)

FAMILIES = {
    "zero": 0,
    "minus_one": -1,
    "nan": math.nan,
    "inf": math.inf,
    "minus_inf": -math.inf,
    "huge_int": 10**18,
    "huge_float": 1e308,
    "subnormal": 5e-324,
    "empty": [],
    "bool": True,
    "string": "1",
    "none": None,
    "negative": -2.5,
    "odd_shape": np.ones((2, 3, 5)),
    "square": np.eye(4),
    "long_vector": np.linspace(-1.0, 1.0, 7),
    "vector": np.array([1.0, -1.0, 0.5]),
    "nan_array": np.array([math.nan, 1.0]),
}
# Tensors, for iclab.attention and iclab.hf (built in the child, where torch is imported).
TORCH_FAMILIES = {
    "t_nan": lambda torch: torch.tensor([[math.nan, 1.0, 2.0]]),
    "t_inf": lambda torch: torch.tensor([[math.inf, 1.0, 2.0]]),
    "t_empty": lambda torch: torch.zeros(0),
    "t_scalar": lambda torch: torch.tensor(1.5),
    "t_int": lambda torch: torch.ones(2, 3, dtype=torch.int64),
    "t_bool": lambda torch: torch.ones(2, 3, dtype=torch.bool),
    "t_odd": lambda torch: torch.ones(2, 3, 5, 7),
    "t_half": lambda torch: torch.randn(2, 4, generator=torch.Generator().manual_seed(0)).half(),
    "t_huge": lambda torch: torch.full((2, 4), 1e30),
}
# Tensor functions whose documented contract carries a NaN or inf entry of an input tensor through to its row of the
# output ("a row with a NaN score stays NaN"): a non-finite result is accepted when a drawn tensor held one.
PROPAGATES_NONFINITE = {
    "attention.normalise", "attention.softmax", "attention.approx_softmax", "attention.linear_attention_weights",
    "attention.adaptive_softmax", "attention.sigmoid_attention_weights", "attention.ssmax",
    "attention.affine_attention_weights", "attention.affine_squared_attention_weights",
    "attention.one_plus_tanh_attention_weights", "attention.adaptive_beta", "attention.row_entropy",
    "attention.polyval", "attention.logit_spread", "attention.dispersion_summary", "attention.adaptive_attention",
}  # fmt: skip
# iclab.hf functions left out here, with what they need that this suite does not build: a model package or a context
# (they are exercised with real or tiny models by the hf test files, but not with drawn bad arguments).
NEEDS_A_TOKENIZER = {
    "hf.load_model": "a model package (bad names and folders: test_fuzz_cli.py, test_hf_loading.py)",
    "hf.shared_model": "a model package",
    "hf.load_tokenizer": "a model package (a name that is no alias, a missing package: test_hf_loading.py)",
    "hf.clear_shared_models": "no arguments: a cache of loaded models",
    "hf.probe_attention": "a forward pass inside its context",
    "hf.with_temperature": "a context (a context manager around set_temperature, fuzzed here)",
    "hf.with_scaling_rule": "a context (a context manager around set_scaling_rule, fuzzed here)",
}

# Functions whose documented contract returns NaN or inf for some in-domain inputs (each says so in its docstring):
# only raw exceptions, hangs and crashes count against them.
NAN_BY_CONTRACT = {
    "ood.beta": "NaN on the diagonal, by definition",
    "dispersion.best_beta_per_bin": "NaN for a bin without samples",
    "temperature.tau_opt": "inf when a1 <= 0 (G falls as tau grows)",
    "stats.paired_differences": "non-finite differences where an input is (lost units, which mean_se drops)",
    "stats.mean_se": "NaN mean/SE for no or one finite value (the refusal the judges read)",
    "stats.unit_mean": "NaN for no unit or no SEs (the refusal the judges read)",
    "stats.binary_unit_band": "NaN bounds for fewer than two finite units (no band; the combine rule refuses them)",
    "stats.bootstrap_ci": "NaN for no values (nothing measured)",
    "stats.calibration_table": "NaN false-agree rate for a claim without a test record",
    "stats.fmt": "a string; nan and inf are printed as words",
    "stats.refusal": "a verdict",
    "attention.max_coefficient": "NaN for a row of no key (the maximum of nothing)",
}


def _specs() -> dict[str, tuple]:
    """``name -> (function, base kwargs)``: a valid call of every public function."""
    from iclab import budget, stats
    from iclab.theory import categorical, dispersion, multihead, ood, temperature

    rng = np.random.default_rng(0)
    S, M, V = rng.normal(size=(3, 3)) * 0.3, np.eye(3) * 0.9, np.linalg.qr(rng.normal(size=(5, 3)))[0]
    coefs = temperature.GCoefficients(1.0, 1.0, 2.0)
    h = {"d": 5, "L": 40.0, "sigma2": 0.1}
    heads = {"omega": [0.1, -0.1], "mu": [0.2, -0.2], **h}
    record = stats.judge_direction(1.0, 0.1).test_record
    row = {"experiment": "e", "id": "c", "headline": True, "verdict": "agrees", "test_record": record}
    X = rng.normal(size=(3, 7, 5))
    x, xq = rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 3, 4))
    return {
        "temperature.coefficients": (temperature.coefficients, {"weights": {"M11": np.eye(3) * 0.5, "v21": np.zeros(3), "v22": 1.0}, "l": 20, "sigma": 0.1}),
        "temperature.G": (temperature.G, {"tau": 1.0, "coefs": coefs}),
        "temperature.G_normalised": (temperature.G_normalised, {"tau": 1.0, "coefs": coefs}),
        "temperature.tau_opt": (temperature.tau_opt, {"coefs": coefs}),
        "temperature.G_min": (temperature.G_min, {"coefs": coefs}),
        "temperature.tau_opt_isotropic": (temperature.tau_opt_isotropic, {"d": 50, "l": 100, "a": 1.0, "b": 1.0, "sigma": 0.0, "sigma_tr": 0.0}),
        "temperature.mp_stieltjes": (temperature.mp_stieltjes, {"z": -0.5, "gamma": 0.5}),
        "temperature.bayes_error_mp": (temperature.bayes_error_mp, {"d": 10, "n": 20, "a": 1.0, "b": 1.0, "sigma": 0.1}),
        "multihead.approx_loss": (multihead.approx_loss, heads),
        "multihead.approx_loss_grad": (multihead.approx_loss_grad, heads),
        "multihead.mu_star": (multihead.mu_star, {"omega": [0.1, -0.1], **h}),
        "multihead.mu_gamma": (multihead.mu_gamma, {"gamma": 0.5, **h}),
        "multihead.solution_manifold": (multihead.solution_manifold, {"gamma": 0.5, **h, "n_plus": 1, "n_minus": 1, "n_dummy": 0}),
        "multihead.approx_loss_at_manifold": (multihead.approx_loss_at_manifold, {"gamma": 0.5, **h}),
        "multihead.eta_star": (multihead.eta_star, h),
        "multihead.gd_risk": (multihead.gd_risk, {"eta": 0.5, "d": 5, "L": 40, "sigma2": 0.1, "debiased": True}),
        "multihead.debiased_gd_risk_limit": (multihead.debiased_gd_risk_limit, {"xi": 0.5, "sigma2": 0.1}),
        "multihead.bayes_risk_limit": (multihead.bayes_risk_limit, {"xi": 0.5, "sigma2": 0.1}),
        "multihead.bayes_risk": (multihead.bayes_risk, {"d": 3, "L": 7, "sigma2": 0.1, "n_mc": 20, "seed": 0}),
        "multihead.bayes_ratio_bound": (multihead.bayes_ratio_bound, {"xi": 0.5, "sigma2": 0.1}),
        "multihead.bayes_ratio_limit": (multihead.bayes_ratio_limit, {"xi": 0.5, "sigma2": 0.1}),
        "multihead.dgd_conditional_risk": (multihead.dgd_conditional_risk, {"X": X, "eta": 0.5, "sigma2": 0.1}),
        "multihead.bayes_conditional_risk": (multihead.bayes_conditional_risk, {"X": X, "sigma2": 0.1}),
        "multihead.risk_ratio_mc": (multihead.risk_ratio_mc, {"d": 3, "L": 7, "sigma2": 0.1, "n_draws": 20, "seed": 0, "eta": None, "chunk": 10}),
        "multihead.single_head_nw": (multihead.single_head_nw, h),
        "multihead.approx_dynamics": (multihead.approx_dynamics, {"omega0": [0.1, -0.1], "mu0": [0.2, -0.2], **h, "lr": 0.01, "steps": 20, "every": 5}),
        "ood.logit_matrix": (ood.logit_matrix, {"Q": np.eye(5), "V": V}),
        "ood.alpha": (ood.alpha, {"S": S}),
        "ood.beta": (ood.beta, {"S": S}),
        "ood.conservation_residual": (ood.conservation_residual, {"S": S, "S0": S * 0.5}),
        "ood.off_span_norm": (ood.off_span_norm, {"Q": np.eye(5), "V": V}),
        "ood.count_table": (ood.count_table, {"K": 3, "N": 4, "p": None}),
        "ood.feature_attention": (ood.feature_attention, {"S": S, "counts": np.array([[1.0, 2, 1], [0, 1, 3]])}),
        "ood.feature_losses": (ood.feature_losses, {"S": S, "p": None, "N": 4, "c": 0.5, "G": None}),
        "ood.loss_gradient": (ood.loss_gradient, {"S": S, "p": None, "N": 4, "c": 0.5, "G": None}),
        "ood.population_gd": (ood.population_gd, {"S0": S, "p": None, "N": None, "c": 0.5, "lr": 1.0, "threshold": 0.0025, "max_steps": 20, "G": None}),
        "ood.balanced_loss": (ood.balanced_loss, {"alpha_value": 1.0, "K": 3, "c": 0.5}),
        "ood.converged_alpha": (ood.converged_alpha, {"K": 3, "threshold": 0.01, "c": 0.5}),
        "ood.trained_logits": (ood.trained_logits, {"alpha_value": 1.0, "K": 3}),
        "ood.trained_q": (ood.trained_q, {"V": V, "alpha_value": 1.0}),
        "ood.ood_logits": (ood.ood_logits, {"S": S, "M": M}),
        "ood.ood_logits_closed": (ood.ood_logits_closed, {"alpha_value": 1.0, "M": M}),
        "ood.vbar_overlaps": (ood.vbar_overlaps, {"M": M}),
        "ood.ood_feature_losses": (ood.ood_feature_losses, {"S": S, "M": M, "p": None, "N": 4, "c": 0.5, "G": None}),
        "ood.random_guess_loss": (ood.random_guess_loss, {"K": 3, "p": None, "N": 4, "c": 0.5, "G": None}),
        "ood.finetune_source_logits": (ood.finetune_source_logits, {"S_V": S, "M": M, "dS_U": S * 0.1}),
        "ood.finetune": (ood.finetune, {"S_V": S, "M": M, "p": None, "N": None, "c": 0.5, "lr": 1.0, "threshold": 0.0025, "max_steps": 20}),
        "ood.forgetting": (ood.forgetting, {"S_old": S, "S_new": S * 0.5, "p": None, "N": None, "c": 0.5}),
        "ood.forgets_k2": (ood.forgets_k2, {"gammas": [0.3, -0.5]}),
        "ood.forgetting_pairs": (ood.forgetting_pairs, {"gammas": [0.3, -0.5, 0.2]}),
        "ood.check_gammas": (ood.check_gammas, {"gammas": [0.3, -0.5]}),
        "ood.forgetting_sign_k2": (ood.forgetting_sign_k2, {"gamma1": 0.3, "gamma2": -0.5, "tol": 1e-9}),
        "ood.loss_change_sign": (ood.loss_change_sign, {"after": 1.0, "before": 0.5, "rel": 1e-9}),
        "dispersion.lemma21_bounds": (dispersion.lemma21_bounds, {"delta": 2.0, "n": 10, "theta": 1.0}),
        "dispersion.top_coefficient_bound": (dispersion.top_coefficient_bound, {"delta": 2.0, "n": 10, "theta": 1.0}),
        "dispersion.required_spread": (dispersion.required_spread, {"n": 10, "eps": 0.1, "theta": 1.0}),
        "dispersion.required_qk_product": (dispersion.required_qk_product, {"n": 10, "eps": 0.1, "theta": 1.0, "y_norm": 1.0, "x_max": 1.0}),
        "dispersion.softmax_entropy": (dispersion.softmax_entropy, {"logits": rng.normal(size=(3, 5)), "beta": 1.0, "axis": -1}),
        "dispersion.entropy_beta_derivative": (dispersion.entropy_beta_derivative, {"logits": rng.normal(size=(3, 5)), "beta": 1.0, "axis": -1}),
        "dispersion.beta_of_entropy": (dispersion.beta_of_entropy, {"H": [0.5, 1.0, 2.0], "coeffs": dispersion.PAPER_COEFFS, "threshold": 0.5}),
        "dispersion.beta_active_range": (dispersion.beta_active_range, {"coeffs": dispersion.PAPER_COEFFS, "threshold": 0.5, "h_max": 20.0}),
        "dispersion.best_beta_per_bin": (dispersion.best_beta_per_bin, {"loss_sums": rng.random((4, 3)), "counts": [1, 0, 2, 3], "beta_grid": [1.0, 2.0, 3.0]}),
        "dispersion.fit_beta_polynomial": (dispersion.fit_beta_polynomial, {"H": np.linspace(0, 3, 8), "beta": np.linspace(1, 2, 8) ** 2, "weights": None, "degree": 2}),
        "categorical.expected_embedding": (categorical.expected_embedding, {"f": rng.normal(size=(2, 3, 4)), "W_e": rng.normal(size=(4, 5))}),
        "categorical.kernel_weights": (categorical.kernel_weights, {"x_query": xq, "x_keys": x, "kernel": "rbf", "scale": 1.0, "d_token": None}),
        "categorical.functional_gd": (categorical.functional_gd, {"x": x, "y": rng.integers(0, 3, (2, 5)), "x_query": xq, "W_e": rng.normal(size=(6, 3)), "alphas": np.full((2, 6), 0.1), "kernel": "softmax", "scale": 1.0}),
        "stats.mean_se": (stats.mean_se, {"values": [1.0, 2.0, 3.0], "drop_nonfinite": True}),
        "stats.paired_differences": (stats.paired_differences, {"a": [1.0, 2.0], "b": [0.5, 1.0]}),
        "stats.bootstrap_ci": (stats.bootstrap_ci, {"values": np.arange(10.0), "stat": np.mean, "confidence": 0.95, "n_boot": 50, "seed": 0}),
        "stats.bootstrap_argmin": (stats.bootstrap_argmin, {"curves": rng.random((3, 7)), "grid": [1.0, 2.0, 3.0], "n_boot": 20, "seed": 0, "max_elements": 1 << 22}),
        "stats.binary_floor_ci": (stats.binary_floor_ci, {"estimate": 0.5, "lo": 0.4, "hi": 0.6, "n": 100}),
        "stats.binary_unit_band": (stats.binary_unit_band, {"values": [0.2, 0.0, 0.4, 0.1], "outcomes": 20}),
        "stats.grid_floor_ci": (stats.grid_floor_ci, {"estimate": 0.5, "lo": 0.4, "hi": 0.6, "grid": [1.0, 2.0, 4.0]}),
        "stats.unit_mean": (stats.unit_mean, {"values": [1.0, 2.0, 3.0, 4.0, 5.0], "ses": [0.1] * 5, "min_units": 5, "drop_nan": False}),
        "stats.clopper_pearson": (stats.clopper_pearson, {"hits": 3, "n": 10}),
        "stats.clopper_pearson_trials": (stats.clopper_pearson_trials, {"hits": 9, "n": 10, "above": 0.5, "most": 1000}),
        "stats.quantile": (stats.quantile, {"confidence": 0.95, "dof": None}),
        "stats.fmt": (stats.fmt, {"x": 1.2345, "digits": 4}),
        "stats.judge_value": (stats.judge_value, {"measured": 1.0, "se": 0.1, "paper": 1.05, "k": None, "paper_se": 0.0, "tol": None, "rel_tol": None, "n": None, "dof": None, "exact": False, "unit": "units"}),
        "stats.judge_equivalence": (stats.judge_equivalence, {"estimate": 1.0, "se": 0.01, "target": 1.0, "rel_tol": 0.1, "confidence": 0.95, "n": None, "dof": None}),
        "stats.judge_direction": (stats.judge_direction, {"estimate": 1.0, "se": 0.1, "ci": None, "sign": 1, "smallest": 0.0, "confidence": 0.95, "n": None, "dof": None}),
        "stats.judge_absence": (stats.judge_absence, {"estimate": 0.0, "ci": (-0.1, 0.1), "smallest": 0.5, "n": None, "unit": ""}),
        "stats.judge_every_cell": (stats.judge_every_cell, {"cells": [("a", 1.0, 0.01, 1.0)], "rel_tol": 0.1, "confidence": 0.95, "n": None}),
        "stats.refusal": (stats.refusal, {"se": 0.1, "ci": None, "dof": None, "measured": "—"}),
        "stats.not_judged": (stats.not_judged, {"reason": "r", "measured": "—", "uncertainty": "—"}),
        "stats.units_to_agree": (stats.units_to_agree, {"k": None, "most": 10_000}),
        "stats.calibrate": (stats.calibrate, {"record": record, "draws": 50, "rng": None}),
        "stats.rejudge": (stats.rejudge, {"record": record}),
        "stats.claim_rng": (stats.claim_rng, {"seed": 0, "experiment": "e", "claim_id": "c"}),
        "stats.calibration_table": (stats.calibration_table, {"summary_or_rows": {"comparisons": [row]}, "draws": 20, "seed": 0}),
        "budget.fmt_bytes": (budget.fmt_bytes, {"n": 1e9}),
        "budget.parse_duration": (budget.parse_duration, {"flag": "--budget", "text": "1h30m"}),
        "budget.check_call": (budget.check_call, {"fields": {"n": 1}, "memory": 1.0, "seconds": 1.0}),
        "budget.check_budget": (budget.check_budget, {"needs": [budget.Need({"n": 1}, 1.0, 1.0)], "seconds_limit": 100.0, "override": "--x"}),
        "budget.memory_limit": (budget.memory_limit, {}),
        "budget.seconds_limit": (budget.seconds_limit, {}),
    }  # fmt: skip


def _torch_specs() -> dict[str, tuple]:
    """``name -> (function, base kwargs)``: a valid call of every fuzzed function of ``iclab.attention`` and
    ``iclab.hf`` (a tiny random Llama for the helpers that read a model)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    import iclab.attention as A
    import iclab.hf as H

    g = torch.Generator().manual_seed(0)
    s = torch.randn(2, 3, 4, 5, generator=g)
    mask = torch.ones(2, 3, 4, 5, dtype=torch.bool)
    q, k, v = (torch.randn(1, 2, 4, 8, generator=g) for _ in range(3))
    w = torch.softmax(s, -1)
    torch.manual_seed(0)
    cfg = LlamaConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                      intermediate_size=24, vocab_size=50, max_position_embeddings=64, pad_token_id=0,
                      attn_implementation="eager")  # fmt: skip
    model = LlamaForCausalLM(cfg).eval()
    ids = torch.randint(1, 50, (2, 6), generator=g)
    x, y = torch.randn(10, 4, generator=g), torch.randint(0, 3, (10,), generator=g)
    head = torch.nn.Linear(4, 3)
    return {
        "attention.get_normaliser": (A.get_normaliser, {"name": "softmax"}),
        "attention.normalise": (A.normalise, {"name": "softmax", "scores": s, "mask": mask, "tau": 1.0}),
        "attention.normaliser_kind": (A.normaliser_kind, {"name": "softmax"}),
        "attention.normaliser_names": (A.normaliser_names, {}),
        "attention.check_params": (A.check_params, {"name": "softmax", "fn": A.softmax, "params": {"tau": 1.0}}),
        "attention.register_normaliser": (A.register_normaliser, {"name": "fuzzed_name", "kind": "simplex"}),
        "attention.row_sum_tolerance": (A.row_sum_tolerance, {"dtype": torch.float32, "n": 5}),
        "attention.softmax": (A.softmax, {"scores": s, "mask": mask, "tau": 1.0}),
        "attention.approx_softmax": (A.approx_softmax, {"scores": s, "mask": mask, "tau": 1.0}),
        "attention.linear_attention_weights": (A.linear_attention_weights, {"scores": s, "mask": mask, "tau": 1.0}),
        "attention.check_tau": (A.check_tau, {"tau": 1.0}),
        "attention.visible_count": (A.visible_count, {"scores": s, "mask": mask}),
        "attention.adaptive_softmax": (A.adaptive_softmax, {"scores": s, "mask": mask, "coeffs": A.PAPER_COEFFS, "threshold": 0.5, "tau": 1.0}),
        "attention.adaptive_beta": (A.adaptive_beta, {"H": torch.rand(3, 4, generator=g), "coeffs": A.PAPER_COEFFS, "threshold": 0.5}),
        "attention.row_entropy": (A.row_entropy, {"logits": s, "mask": mask, "eps": 1e-9}),
        "attention.check_coeffs": (A.check_coeffs, {"coeffs": A.PAPER_COEFFS, "threshold": 0.5}),
        "attention.polyval": (A.polyval, {"coeffs": (1.0, 2.0), "x": torch.rand(3, generator=g)}),
        "attention.sigmoid_attention_weights": (A.sigmoid_attention_weights, {"scores": s, "mask": mask, "tau": 1.0, "bias": 0.0}),
        "attention.ssmax": (A.ssmax, {"scores": s, "mask": mask, "scale": 1.0, "tau": 1.0}),
        "attention.affine_attention_weights": (A.affine_attention_weights, {"scores": s, "mask": mask, "C": 1.0}),
        "attention.affine_squared_attention_weights": (A.affine_squared_attention_weights, {"scores": s, "mask": mask, "C": 1.0}),
        "attention.one_plus_tanh_attention_weights": (A.one_plus_tanh_attention_weights, {"scores": s, "mask": mask}),
        "attention.activation_slope": (A.activation_slope, {"name": "affine", "C": 1.0}),
        "attention.adaptive_attention": (A.adaptive_attention, {"q": q, "k": k, "v": v, "mask": None, "chunk": None}),
        "attention.auto_chunk": (A.auto_chunk, {"q": q}),
        "attention.attention_entropy": (A.attention_entropy, {"weights": w}),
        "attention.max_coefficient": (A.max_coefficient, {"weights": w}),
        "attention.logit_spread": (A.logit_spread, {"scores": s, "mask": mask}),
        "attention.dispersion_bounds": (A.dispersion_bounds, {"delta": 2.0, "n": 10.0, "tau": 1.0}),
        "attention.dispersion_summary": (A.dispersion_summary, {"scores": s, "mask": mask, "tau": 1.0}),
        "hf.parse_dtype": (H.parse_dtype, {"value": "float32", "device": "cpu"}),
        "hf.parse_scaling_rule": (H.parse_scaling_rule, {"text": "logn:L=256"}),
        "hf.best_tau_index": (H.best_tau_index, {"grid": [0.5, 1.0, 2.0], "scores": [0.1, 0.3, 0.2]}),
        "hf.givens_rotation": (H.givens_rotation, {"dim": 8, "theta": 0.3, "seed": 0}),
        "hf.plane_rotation": (H.plane_rotation, {"dim": 8, "pairs": [(0, 1), (2, 3)], "theta": 0.3}),
        "hf.set_temperature": (H.set_temperature, {"model": model, "tau": 1.0}),
        "hf.reset_temperature": (H.reset_temperature, {"model": model}),
        "hf.get_temperature": (H.get_temperature, {"model": model}),
        "hf.model_shape": (H.model_shape, {"model": model}),
        "hf.native_scaling": (H.native_scaling, {"model": model}),
        "hf.set_scaling_rule": (H.set_scaling_rule, {"model": model, "rule": "logn:L=4"}),
        "hf.get_scaling_rule": (H.get_scaling_rule, {"model": model}),
        "hf.check_backend": (H.check_backend, {"model": model, "base": "eager", "mode": "fixed"}),
        "hf.logit_spreads": (H.logit_spreads, {"model": model, "input_ids": ids, "causal": True}),
        "hf.attention_extremes": (H.attention_extremes, {"model": model, "input_ids": ids, "causal": True, "rows": None}),
        "hf.fit_head": (H.fit_head, {"head": torch.nn.Linear(4, 3), "x": x, "y": y, "steps": 3, "lr": 0.01}),
        "hf.head_scores": (H.head_scores, {"head": head, "x": x, "y": y}),
        "hf.ce_per_example": (H.ce_per_example, {"head": head, "x": x, "y": y}),
        **_tokenizer_specs(),
    }  # fmt: skip


def _tokenizer_specs() -> dict[str, tuple]:
    """``name -> (function, base kwargs)`` of the ``iclab.hf`` helpers that take a tokenizer, an encoder or probe
    statistics: the tiny byte-level tokenizer, Llama and BERT of ``test_api_domain`` (built offline)."""
    import torch

    import iclab.hf as H
    from test_api_domain import _moments, _Tiny

    t = _Tiny()
    llama, bert = t.llama(), t.bert()
    buckets = H.encode_to_layer(bert, t.tok, ["a b", "c"], 1)
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 2, 4, 8, generator=g), torch.randn(1, 1, 4, 8, generator=g)
    qa = {"model": llama, "tokenizer": t.tok, "prefix": "x ", "queries": ["a"], "answers": [" b"], "batch_size": 2}
    probe = {"positions": "last", "batch_size": 2, "key_start": 0, "progress": False}
    return {
        "hf.cache_dir": (H.cache_dir, {"cache_dir": "/nonexistent/iclab-cache"}),
        "hf.converted_cache": (H.converted_cache, {"alias": "smollm2", "cache": "/nonexistent/iclab-cache"}),
        "hf.tokenize_batch": (H.tokenize_batch, {"tokenizer": t.tok, "prompts": ["ab", "c"], "device": "cpu", "add_special_tokens": True}),
        "hf.max_tokens": (H.max_tokens, {"model": llama, "tokenizer": t.tok}),
        "hf.check_prompts": (H.check_prompts, {"model": llama, "tokenizer": t.tok, "prompts": ["abc"], "field": "prompts"}),
        "hf.probe_prompts": (H.probe_prompts, {"model": llama, "tokenizer": t.tok, "prompts": ["abc", "de"], "tau": None, **probe}),
        "hf.stop_token_mask": (H.stop_token_mask, {"tokenizer": t.tok, "vocab": 258}),
        "hf.answer_argmax": (H.answer_argmax, qa),
        "hf.greedy_match": (H.greedy_match, qa),
        "hf.greedy_answers": (H.greedy_answers, {"model": llama, "tokenizer": t.tok, "prompts": ["ab"], "max_new_tokens": 2, "batch_size": 2}),
        "hf.mean_pooled_embeddings": (H.mean_pooled_embeddings, {"model": bert, "tok": t.tok, "sents": ["a b"], "batch": 2, "max_length": 8}),
        "hf.encode_to_layer": (H.encode_to_layer, {"bert": bert, "tok": t.tok, "sents": ["a b"], "L": 1, "bucket": 4}),
        "hf.run_encoder_layers": (H.run_encoder_layers, {"layers": bert.encoder.layer[1:], "h": buckets[0][1], "mask": buckets[0][2]}),
        "hf.rotated_pooled_features": (H.rotated_pooled_features, {"bert": bert, "buckets": buckets, "L": 1, "R": torch.eye(16), "n": 2}),
        "hf.attention_scores": (H.attention_scores, {"module": llama.model.layers[0].self_attn, "query": q, "key": k, "attention_mask": None, "scaling": 0.3, "rows": None, "is_causal": None}),
        "hf.grid_search_tau": (H.grid_search_tau, {"model": llama, "score": lambda m: 1.0, "grid": [0.5, 1.0], "progress": False}),
        "hf.moment_rule_tau": (H.moment_rule_tau, {"clean": _moments(2), "shifted": _moments(2), "clip": (0.25, 8.0)}),
        "hf.spread_rule_tau": (H.spread_rule_tau, {"clean": _moments(2), "shifted": _moments(2), "clip": (0.25, 8.0)}),
        "hf.estimate_tau": (H.estimate_tau, {"model": llama, "tokenizer": t.tok, "clean_prompts": ["abc", "de"], "shifted_prompts": ["abc", "dd"], "score": None, "grid": [1.0], "clip": (0.25, 8.0), "rule": "spread", **probe}),
    }  # fmt: skip


# Public names that are not functions of arguments to fuzz: classes and constants (their constructors are dataclass
# fields, checked where they are used: GCoefficients by every function that takes one, Need by check_budget).
NOT_FUNCTIONS = {
    "temperature.GCoefficients",
    "budget.Need",
    "dispersion.PAPER_COEFFS",
    "stats.Verdict",
    "stats.Calibration",
    "hf.ModelPackage",
    "hf.AdaptiveTemperature",
    "hf.ScalingRule",
    "hf.ScoreMoments",
    "hf.ScoreProbe",
    "hf.TauEstimate",
    "hf.TauSetting",
    "hf.RuleSetting",
}


def _public_functions() -> set[str]:
    """Every public callable of the fuzzed modules, as ``module.name`` (the coverage the suite must reach)."""
    import iclab.attention
    import iclab.budget
    import iclab.hf
    import iclab.stats
    from iclab.theory import categorical, dispersion, multihead, ood, temperature

    mods = {"temperature": temperature, "multihead": multihead, "ood": ood, "dispersion": dispersion}
    mods |= {"categorical": categorical, "stats": iclab.stats, "budget": iclab.budget}
    mods |= {"attention": iclab.attention, "hf": iclab.hf}
    return {f"{m}.{n}" for m, mod in mods.items() for n in mod.__all__ if callable(getattr(mod, n))} - NOT_FUNCTIONS


def _finite(value) -> bool:
    """Whether every number in ``value`` (nested tuples, lists, dicts, arrays, dataclasses, frames) is finite."""
    import dataclasses

    import pandas as pd

    if isinstance(value, (str, bytes, bool, type(None), np.random.Generator, os.PathLike)):
        return True
    if callable(value) and not hasattr(value, "shape"):  # a function (a normaliser), a model
        return True
    if isinstance(value, (int, float, np.number)):
        return bool(np.isfinite(value))
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.isfinite(value).all())
    if "torch" in sys.modules:  # a tensor (finite where floating), a dtype, a model or module, a rule
        import torch

        if isinstance(value, torch.Tensor):
            return not (value.is_floating_point() or value.is_complex()) or bool(torch.isfinite(value).all())
        if isinstance(value, (torch.dtype, torch.nn.Module)):
            return True
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_finite(v) for v in value)
    if isinstance(value, pd.DataFrame):
        return all(_finite(value[c].to_numpy()) for c in value.columns if value[c].dtype.kind in "fc")
    if dataclasses.is_dataclass(value):  # a Verdict's test_record keeps its inputs as given (dof = inf: normal)
        return all(_finite(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name != "test_record")
    return False


class _Hang(BaseException):
    pass


def _outcome(name: str, function, kwargs: dict) -> str:
    """``clear`` (an IclabError), ``finite``, or what went wrong: ``raw <type>``, ``not finite``, ``hang``."""
    from iclab.errors import IclabError

    def ring(signum, frame):
        raise _Hang

    signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, BOUND)
    try:
        result = function(**kwargs)
    except IclabError:
        return "clear"
    except _Hang:
        return "hang"
    except Exception as exc:  # noqa: BLE001 - counted: a raw exception is what this suite hunts
        return f"raw {type(exc).__name__}: {str(exc)[:120]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if name in NAN_BY_CONTRACT or _finite(result):
        return "finite"
    if name in PROPAGATES_NONFINITE and not all(_finite(v) for v in kwargs.values()):
        return "finite"  # NaN in, NaN out: the documented contract of a tensor function
    return "not finite"


def _families() -> dict:
    """:data:`FAMILIES`, and :data:`TORCH_FAMILIES` built (the child imports torch)."""
    import torch

    return FAMILIES | {k: make(torch) for k, make in TORCH_FAMILIES.items()}


def _probe(name: str, function, base: dict, counts: Counter, failures: list):
    """The hypothesis test of one function: its valid call with one or two arguments drawn from :data:`FAMILIES`."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    families = _families()
    edits = st.dictionaries(st.sampled_from(sorted(base)), st.sampled_from(sorted(families)), min_size=1, max_size=2)

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(edit=edits)
    def probe(edit):
        got = _outcome(name, function, {**base, **{k: families[f] for k, f in edit.items()}})
        counts[got.split(":")[0]] += 1
        if got not in ("clear", "finite"):
            failures.append(f"{name}({', '.join(f'{k}={f}' for k, f in edit.items())}): {got}")

    return probe


def _run_child() -> dict:
    """Every function, EXAMPLES hypothesis draws each plus its valid call; the counts and failures (in the child)."""
    import warnings

    warnings.simplefilter("ignore")  # a RuntimeWarning on the way to a refusal is not a failure
    specs, counts, failures = _specs() | _torch_specs(), Counter(), []
    for name, (function, base) in specs.items():
        if base:
            _probe(name, function, base, counts, failures)()
        got = _outcome(name, function, base)  # the valid call itself
        counts[got.split(":")[0]] += 1
        if got not in ("clear", "finite"):
            failures.append(f"{name}(valid call): {got}")
    return {"functions": sorted(specs), "counts": dict(counts), "failures": failures}


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def test_every_public_function_refuses_or_returns_a_finite_result():
    import iclab

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(Path(iclab.__file__).parents[1]), str(Path(__file__).parent)])
    env.pop("ICLAB_MEMORY_LIMIT_GB", None)
    env.pop("ICLAB_CELL_SECONDS_LIMIT", None)
    done = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=900,
                          preexec_fn=_limit_memory)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]  # a crash (MemoryError at import, a signal) ends up here
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(report["functions"]) | set(NEEDS_A_TOKENIZER) == _public_functions()  # every public function
    assert not set(report["functions"]) & set(NEEDS_A_TOKENIZER)
    assert report["failures"] == [], "\n".join(report["failures"][:40])
    calls = sum(report["counts"].values())
    assert report["counts"].get("clear", 0) > calls / 3 and report["counts"].get("finite", 0) > len(report["functions"])
    print(f"\napi properties: {len(report['functions'])} functions, {len(FAMILIES) + len(TORCH_FAMILIES)} argument "
          f"families, {calls} calls: "
          f"{report['counts']}")  # fmt: skip


if __name__ == "__main__":  # the child process
    print(json.dumps(_run_child()))
