r"""The ``ood`` cell: OOD error of the pre-trained merged-Q model (arXiv:2609.36448; docs/papers/ood.md §5.3).

Four measurements on the K = ``K`` model of ``shared["K4"]``: the out-of-span rotation sweep
:math:`U=V\cos\theta+V^\perp\sin\theta` (measured α_u/β_u and OOD loss vs the closed form of note §4.6 and the exact
loss of note §4.7); rotations of the (v1, v2) plane inside span V (per feature); a random alignment M (measured
attention mass per feature vs the softmax of :math:`M^\top SM` at the sampled counts); and the three collapse
cases of note §4.7 (U ⟂ V, every u_k sharing one projection on :math:`\bar v`, query at :math:`\bar v`) with exact
counts, for the SGD-trained Q and the symmetric closed form Q*.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch.nn import functional as F

from iclab.data import (
    FeaturePrompts,
    aligned_features,
    generator_for,
    in_span_rotation,
    mean_feature,
    rotated_features,
    shared_projection_features,
)
from iclab.models import MergedQAttention, feature_prompt_loss
from iclab.theory import ood as T

__all__ = ["ood_cell"]

_SWEEP = (
    "alpha_u",
    "beta_u",
    "alpha_u_closed",
    "beta_u_closed",
    "L_mc",
    "L_se",
    "L_wavg",
    "L_theory",
    "L_theory_closed",
    "L_largeN",
)
_SHARED_PROJECTION = 0.6  # the common projection a of the shared-projection collapse case


def _measure(model, data, n_prompts: int, seed, key, K, c: float) -> dict:
    """Per-feature MC error c(ŷ - wᵀx_q)² with sampled w, its standard error, and the w-averaged loss."""
    b = data.sample(n_prompts, generator_for(seed, "ood-eval", key))
    with torch.no_grad():
        yhat = model(b.x, b.y, b.xq)
        per = c * (yhat - b.yq) ** 2  # (B,)
        _, wavg = feature_prompt_loss(model, b, c, K)
    mc = [float(per[b.qfeat == k].mean()) for k in range(K)]
    se = [float(per[b.qfeat == k].std() / math.sqrt(max(1, int((b.qfeat == k).sum())))) for k in range(K)]
    return {"mc": mc, "se": se, "wavg": [wavg[str(k)] for k in range(K)]}


def _rotation_sweep(cfg, run, model, data, a_meas: float, S_big) -> dict:
    """Per θ of ``thetas_deg``: measured α_u/β_u (UᵀQU) and their closed form, OOD loss (MC, w-averaged, exact
    at N for the measured and the closed-form logits, large-N theory)."""
    V, Vp = data.features, torch.as_tensor(run["Vp"])
    K, N, c = V.shape[1], cfg.n_tokens, cfg.c
    cols = {k: [] for k in _SWEEP}
    for th in cfg.thetas_deg:
        U = rotated_features(V, Vp, math.radians(th))
        M = (V.T @ U).numpy()
        Su = T.logit_matrix(run["Q"], U.numpy())
        Sc = T.ood_logits_closed(a_meas, M)
        m = _measure(model, data.with_features(U), cfg.ood_prompts, cfg.seed, th, K, c)
        cols["alpha_u"].append(float(np.diag(Su).mean()))
        cols["beta_u"].append(float(Su[~np.eye(K, dtype=bool)].mean()))
        cols["alpha_u_closed"].append(float(Sc[0, 0]))
        cols["beta_u_closed"].append(float(Sc[1, 0]))
        cols["L_mc"].append(float(np.mean(m["mc"])))
        cols["L_se"].append(float(np.sqrt(np.sum(np.square(m["se"]))) / K))
        cols["L_wavg"].append(float(np.mean(m["wavg"])))
        cols["L_theory"].append(float(T.feature_losses(Su, None, N, c).mean()))
        cols["L_theory_closed"].append(float(T.feature_losses(Sc, None, N, c).mean()))
        cols["L_largeN"].append(float(T.ood_feature_losses(S_big, M, None, None, c).mean()))
    return cols


def _in_span(cfg, model, data, S, S_big) -> dict:
    """Rotations of the (v1, v2) plane by 30° and 60° inside span V: per-feature OOD loss, MC vs exact at N and
    large N (the derived reference table, note §5.8)."""
    V, K = data.features, data.K
    out = {}
    for th in (30, 60):
        U = in_span_rotation(V, 0, 1, math.radians(th))
        m = _measure(model, data.with_features(U), cfg.ood_prompts, cfg.seed, f"inspan{th}", K, cfg.c)
        M = (V.T @ U).numpy()
        out[f"inspan{th}_mc"] = m["mc"]
        out[f"inspan{th}_se"] = m["se"]
        out[f"inspan{th}_theory"] = T.ood_feature_losses(S, M, None, cfg.n_tokens, cfg.c).tolist()
        out[f"inspan{th}_largeN"] = T.ood_feature_losses(S_big, M, None, None, cfg.c).tolist()
    return out


def _random_alignment(cfg, run, model, data, S, a_meas: float) -> dict:
    """A random alignment M (‖M‖₂ = 0.9): max deviation of the measured attention mass per feature from the softmax
    of MᵀSM at the sampled counts, and of the symmetric closed form from MᵀSM."""
    V, Vp, K = data.features, torch.as_tensor(run["Vp"]), data.K
    Mr = torch.randn(K, K, generator=generator_for(cfg.seed, "M"), dtype=torch.float64)
    Mr = 0.9 * Mr / torch.linalg.matrix_norm(Mr, 2)
    Ur = aligned_features(V, Vp, Mr)
    b = data.with_features(Ur).sample(2000, generator_for(cfg.seed, "Mr"))
    A = model.feature_mass(b, K).numpy()
    counts = F.one_hot(b.feat, K).sum(1).double().numpy()
    At = T.feature_attention(T.ood_logits(S, Mr.numpy()), counts)[np.arange(len(A)), :, b.qfeat.numpy()]
    Sr_closed = T.ood_logits_closed(a_meas, Mr.numpy())
    Sr = T.ood_logits(S, Mr.numpy())  # = UᵀQU of the trained Q (Q in span V)
    return {
        "randomM_attn_maxdev": float(np.abs(A - At).max()),
        "randomM_closed_vs_exact": float(np.abs(Sr_closed - Sr).max()),
        "randomM_alpha_u": np.diag(Sr).tolist(),
        "randomM_alpha_u_closed": np.diag(Sr_closed).tolist(),
    }


def _collapse_cases(cfg, run, a_meas: float) -> dict:
    """The collapse cases with exact counts N p_k: attention mass per feature vs 1/K and the error (sampled w, with
    its standard error), for the SGD-trained Q and the closed form Q*; the uniform-attention error where it applies
    (with exact counts n = Np, i.e. the count-free formula of note §4.2 at n/N = p)."""
    V, Vp = torch.as_tensor(run["V"]), torch.as_tensor(run["Vp"])
    K, c, a = V.shape[1], cfg.c, _SHARED_PROJECTION
    n_exact = cfg.n_tokens - cfg.n_tokens % K
    Qstar = T.trained_q(run["V"], a_meas)
    cases = {
        "orthogonal": (FeaturePrompts(Vp[:, :K], n_tokens=n_exact, counts="exact"), None),
        "shared_projection": (
            FeaturePrompts(shared_projection_features(V, Vp, a), n_tokens=n_exact, counts="exact", orthonormal=False),
            (a**2 * np.ones((K, K)) + (1 - a**2) * np.eye(K)),
        ),
        "query_vbar": (FeaturePrompts(V, n_tokens=n_exact, counts="exact", query_vector=mean_feature(V)), None),
    }
    out = {}
    for name, (data, G) in cases.items():
        b = data.sample(2000, generator_for(cfg.seed, "collapse", name))
        for which, Qm in (("sgd", run["Q"]), ("closed", Qstar)):
            mod = MergedQAttention.from_q(Qm)
            A = mod.feature_mass(b, K)
            out[f"{name}_{which}_attn_mean"] = float(A.mean())
            out[f"{name}_{which}_attn_maxdev"] = float((A - 1 / K).abs().max())
            out[f"{name}_{which}_attn_max_mean"] = float(A.max(dim=1).values.mean())
            with torch.no_grad():
                err = c * (mod(b.x, b.y, b.xq) - b.yq) ** 2  # (B,)
            out[f"{name}_{which}_err"] = float(err.mean())
            out[f"{name}_{which}_err_se"] = float(err.std() / math.sqrt(len(err)))
        if name != "query_vbar":
            out[f"{name}_err_theory"] = float(T.random_guess_loss(K, None, None, c, G).mean())
    return out


def _rotation_scenarios(cfg, S) -> dict:
    """The two rotation scenarios in the merged-Q model over one full turn (exact per-feature loss at N, note
    §4.7): the (v1, v2) plane rotated inside span V (two trained features of equal weight: the "small weight gap"
    scenario) and every v_k rotated towards an unused direction v_k^⊥ (weight α* against 0: "large gap")."""
    K = S.shape[0]
    degs = list(range(0, 361, 15))
    inspan, outspan = [], []
    for deg in degs:
        th = math.radians(deg)
        R = np.eye(K)
        R[0, 0] = R[1, 1] = math.cos(th)
        R[0, 1], R[1, 0] = -math.sin(th), math.sin(th)
        inspan.append(T.ood_feature_losses(S, R, None, cfg.n_tokens, cfg.c).tolist())
        outspan.append(float(T.ood_feature_losses(S, math.cos(th) * np.eye(K), None, cfg.n_tokens, cfg.c).mean()))
    return {"scen_theta_deg": degs, "scen_inspan_L": inspan, "scen_outspan_L": outspan}


def ood_cell(cfg, shared) -> dict:
    """OOD error vs rotation angle, in-span rotations, a random alignment M and the three collapse cases; the
    random-guessing level at N (multinomial counts, the paper's sampling) and at large N."""
    run = shared["K4"]
    V = torch.as_tensor(run["V"])
    K = V.shape[1]
    model = MergedQAttention.from_q(run["Q"])
    S = T.logit_matrix(run["Q"], run["V"])
    a_meas = float(np.diag(S).mean())
    S_big = T.population_gd(np.zeros((K, K)), None, None, cfg.c, cfg.lr, cfg.threshold)["S"]
    data = FeaturePrompts(V, n_tokens=cfg.n_tokens)
    out: dict = {"theta_deg": list(cfg.thetas_deg), "alpha_star": a_meas}
    out.update(_rotation_sweep(cfg, run, model, data, a_meas, S_big))
    out.update(_in_span(cfg, model, data, S, S_big))
    out.update(_random_alignment(cfg, run, model, data, S, a_meas))
    out.update(_collapse_cases(cfg, run, a_meas))
    out.update(_rotation_scenarios(cfg, S))
    out["random_guess_N"] = float(T.random_guess_loss(K, None, cfg.n_tokens, cfg.c).mean())
    out["random_guess_largeN"] = float(T.random_guess_loss(K, None, None, cfg.c).mean())
    return out
