r"""Closed forms for "Theory on attention dynamics for out-of-distribution in-context learning"
(arXiv:2609.36448) on the one-layer merged-Q model of arXiv:2310.05249; derived by iclab where the paper's text
was not available (docs/papers/ood.md §4).

Logit matrix :math:`S^V=V^\top QV`, :math:`\alpha_{v_k}=S_{kk}`, :math:`\beta_{v_m,v_k}=S_{mk}` (note §3.4).
Per-feature loss :math:`\mathcal L_k=c\,\mathbb E_n[(A-e_k)^\top G(A-e_k)]`,
:math:`A_m=n_me^{S_{mk}}/\sum_jn_je^{S_{jk}}` with counts :math:`n\sim\mathrm{Mult}(N,p)` (exact enumeration) or
:math:`n=p` (large-N limit) (note §4.2, §4.7).
Gradient :math:`\partial\mathcal L/\partial S_{jk}=p_k\mathbb E[A_j(g_j-\sum_mg_mA_m)]`,
:math:`g=2cG(A-e_k)` (§4.3); conservation :math:`\sum_m S_{mk}(t)=\sum_m S_{mk}(0)` (§4.4); trained
:math:`Q^*=\frac{K\alpha^*}{K-1}VCV^\top` (§4.5); OOD logits :math:`S^U=M^\top S^VM` (§4.6); fine-tuning
:math:`S^V_{new}=S^V+M\Delta S^UM^\top` and forgetting (§4.8–4.9). NumPy, float64; pure functions of arrays.

Argument rules, shared by every function (each docstring names the ones it takes): ``S``, ``S0``, ``S_V``, ``S_old``,
``S_new``, ``dS_U`` finite square (K, K) logit matrices, K >= 1; ``M`` a finite (K, K) overlap matrix with the same
K; ``V`` a finite (d, K) matrix and ``Q`` a finite (d, d) one; ``p`` None or K probabilities summing to 1; ``N``
None (the large-N limit) or an integer >= 1; ``c`` a finite number > 0; ``G`` None or a finite (K, K) matrix;
``K`` an integer >= 2 where the formula divides by K − 1; ``alpha_value`` a finite number. Results that leave
double precision are refused (a ConfigError), never returned as inf or NaN; :func:`beta` alone returns NaN, on
its diagonal, by definition.
"""

from __future__ import annotations

from iclab.theory._ood_dynamics import (
    alpha,
    balanced_loss,
    beta,
    conservation_residual,
    converged_alpha,
    count_table,
    feature_attention,
    feature_losses,
    logit_matrix,
    loss_gradient,
    off_span_norm,
    ood_feature_losses,
    ood_logits,
    ood_logits_closed,
    population_gd,
    random_guess_loss,
    trained_logits,
    trained_q,
    vbar_overlaps,
)
from iclab.theory._ood_forgetting import (
    check_gammas,
    finetune,
    finetune_source_logits,
    forgets_k2,
    forgetting,
    forgetting_pairs,
    forgetting_sign_k2,
    loss_change_sign,
)

__all__ = [
    "logit_matrix",
    "alpha",
    "beta",
    "conservation_residual",
    "off_span_norm",
    "count_table",
    "feature_attention",
    "feature_losses",
    "loss_gradient",
    "population_gd",
    "balanced_loss",
    "converged_alpha",
    "trained_q",
    "trained_logits",
    "ood_logits",
    "ood_logits_closed",
    "vbar_overlaps",
    "ood_feature_losses",
    "random_guess_loss",
    "finetune_source_logits",
    "finetune",
    "forgetting",
    "forgets_k2",
    "forgetting_pairs",
    "check_gammas",
    "forgetting_sign_k2",
    "loss_change_sign",
]
