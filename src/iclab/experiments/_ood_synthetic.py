"""Synthetic cells of the ``ood`` experiment: pre-training with the per-feature stopping rule (spec §4.2, §5.3
step 2), OOD evaluation under rotation and the collapse cases (§4.5–4.6, §5.3 step 3), and fine-tuning /
forgetting for K = 2 (§4.7–4.8, §5.3 step 4).

Measurement protocol. The merged-Q model (float64, Q(0) = 0) is trained by plain SGD (batch ``batch_size``,
lr ``lr``) on the w-averaged loss of §4.1 over prompts of N = ``n_tokens`` i.i.d. feature tokens. The
stopping rule max_k L_k <= ``threshold`` is checked every ``log_every`` steps on the model's *exact* population
per-feature loss at that N (:func:`iclab.theory.ood.feature_losses` of S = VᵀQV, which is exact for Q in
span V; no Monte-Carlo noise in the stopping time). "Theory" is exact population GD on S at the same N and lr
(:func:`iclab.theory.ood.population_gd`), plus the spec's large-N numbers.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch.nn import functional as F

from iclab.attention import get_normaliser
from iclab.data import (FeaturePrompts, aligned_features, feature_basis, generator_for, in_span_rotation,
                        mean_feature, overlap_features, rotated_features, shared_projection_features)
from iclab.models import MergedQAttention, feature_prompt_loss, prompt_mse_loss
from iclab.theory import ood as T
from iclab.train import TrainConfig, train

__all__ = ["pretrain", "pretrain_cell", "ood_cell", "forgetting_cell"]


def _S(model, V) -> np.ndarray:
    return T.logit_matrix(model.Q.detach().numpy(), V)


def pretrain(cfg, K: int, d: int) -> dict:
    """SGD pre-training of the merged-Q model on V-prompts until max_k L_k <= threshold (exact, at N)."""
    V, Vp = feature_basis(d, K, generator_for(cfg.seed, "basis", K, d))
    Vn = V.numpy()
    model = MergedQAttention(d)
    data = FeaturePrompts(V, n_tokens=cfg.n_tokens)

    def probe(m):
        S = _S(m, Vn)
        off = S[~np.eye(K, dtype=bool)]
        return {"alpha": float(np.diag(S).mean()), "beta": float(off.mean()),
                "alpha_min": float(np.diag(S).min()), "alpha_max": float(np.diag(S).max()),
                "beta_min": float(off.min()), "beta_max": float(off.max()),
                "conservation": float(np.abs(T.conservation_residual(S)).max()),
                "offspan": T.off_span_norm(m.Q.detach().numpy(), Vn),
                "maxLk": float(T.feature_losses(S, None, cfg.n_tokens, cfg.c).max())}

    stop = lambda step, groups: T.feature_losses(_S(model, Vn), None, cfg.n_tokens, cfg.c).max() <= cfg.threshold
    res = train(model, data, lambda m, b: feature_prompt_loss(m, b, cfg.c, K),
                TrainConfig(steps=cfg.max_steps, batch_size=cfg.batch_size, lr=cfg.lr, optimizer="sgd",
                            log_every=cfg.log_every, seed=cfg.seed), stop_rule=stop, probes={"S": probe})
    hist = {k: [r[f"S/{k}"] for r in res.history] for k in ("alpha", "beta", "alpha_min", "alpha_max", "beta_min",
                                                            "beta_max", "conservation", "offspan", "maxLk")}
    hist["step"] = [r["step"] for r in res.history]
    return {"V": Vn, "Vp": Vp.numpy(), "Q": model.Q.detach().numpy(), "steps": res.steps, "stopped": res.stopped,
            "seconds": res.seconds, "history": hist}


def _model(Q) -> MergedQAttention:
    m = MergedQAttention(Q.shape[0])
    with torch.no_grad():
        m.Q.copy_(torch.as_tensor(Q))
    return m


def pretrain_cell(cfg, shared) -> dict:
    """α/β trajectories of the SGD run vs exact population GD (N = n_tokens) and the large-N theory."""
    run = shared["K4"]
    S = T.logit_matrix(run["Q"], run["V"])
    K = S.shape[0]
    fin = T.population_gd(np.zeros((K, K)), None, cfg.n_tokens, cfg.c, cfg.lr, cfg.threshold)
    big = T.population_gd(np.zeros((K, K)), None, None, cfg.c, cfg.lr, cfg.threshold)
    off = ~np.eye(K, dtype=bool)
    h = run["history"]
    return {"steps": run["steps"], "seconds": run["seconds"], "alpha_star": float(np.diag(S).mean()),
            "beta_star": float(S[off].mean()), "beta_sym_dev": float(np.abs(S[off] + np.diag(S).mean() / (K - 1)).max()),
            "conservation_max": float(max(h["conservation"])), "offspan_max": float(max(h["offspan"])),
            "train_maxLk": float(T.feature_losses(S, None, cfg.n_tokens, cfg.c).max()),
            "train_loss": float(T.feature_losses(S, None, cfg.n_tokens, cfg.c).mean()),
            "theory_steps": fin["steps"], "theory_alpha_star": float(fin["S"][0, 0]),
            "theory_beta_star": float(fin["S"][1, 0]), "largeN_steps": big["steps"],
            "largeN_alpha_star": float(big["S"][0, 0]), "largeN_beta_star": float(big["S"][1, 0]),
            "closed_alpha": T.converged_alpha(K, cfg.threshold, cfg.c),
            "traj_step": h["step"], "traj_alpha": h["alpha"], "traj_beta": h["beta"],
            "traj_alpha_min": h["alpha_min"], "traj_alpha_max": h["alpha_max"], "traj_beta_min": h["beta_min"],
            "traj_beta_max": h["beta_max"], "traj_conservation": h["conservation"], "traj_offspan": h["offspan"],
            "theory_alpha": fin["trajectory"][:, 0, 0].tolist(), "theory_beta": fin["trajectory"][:, 1, 0].tolist(),
            "largeN_alpha": big["trajectory"][:, 0, 0].tolist(), "largeN_beta": big["trajectory"][:, 1, 0].tolist()}


def _measure(model, data, n_prompts: int, seed, key, K) -> dict:
    """Per-feature MC error c(ŷ - wᵀx_q)² with sampled w, its standard error, and the w-averaged loss."""
    b = data.sample(n_prompts, generator_for(seed, "ood-eval", key))
    with torch.no_grad():
        yhat = model(b.x, b.y, b.xq)
        per = 0.5 * (yhat - b.yq) ** 2  # (B,)
        _, wavg = feature_prompt_loss(model, b, 0.5, K)
    mc = [float(per[b.qfeat == k].mean()) for k in range(K)]
    se = [float(per[b.qfeat == k].std() / math.sqrt(max(1, int((b.qfeat == k).sum())))) for k in range(K)]
    return {"mc": mc, "se": se, "wavg": [wavg[str(k)] for k in range(K)]}


def _feature_mass(model, batch, K) -> torch.Tensor:
    with torch.no_grad():
        a = model.attn(batch.x, batch.xq)  # (B, N)
    return torch.zeros(a.shape[0], K, dtype=a.dtype).scatter_add_(1, batch.feat, a)  # (B, K)


def ood_cell(cfg, shared) -> dict:
    """OOD error vs rotation angle, in-span rotations, a random alignment M and the three collapse cases."""
    run = shared["K4"]
    V, Vp = torch.as_tensor(run["V"]), torch.as_tensor(run["Vp"])
    K, N, c = V.shape[1], cfg.n_tokens, cfg.c
    model = _model(run["Q"])
    S = T.logit_matrix(run["Q"], run["V"])
    a_meas = float(np.diag(S).mean())
    S_big = T.population_gd(np.zeros((K, K)), None, None, c, cfg.lr, cfg.threshold)["S"]
    out: dict = {"theta_deg": list(cfg.thetas_deg), "alpha_star": a_meas}
    cols = {k: [] for k in ("alpha_u", "beta_u", "alpha_u_closed", "beta_u_closed", "L_mc", "L_se", "L_wavg",
                            "L_theory", "L_theory_closed", "L_largeN")}
    data = FeaturePrompts(V, n_tokens=N)
    for th in cfg.thetas_deg:
        U = rotated_features(V, Vp, math.radians(th))
        M = (V.T @ U).numpy()
        Su = T.logit_matrix(run["Q"], U.numpy())
        Sc = T.ood_logits_closed(a_meas, M)
        m = _measure(model, data.with_features(U), cfg.ood_prompts, cfg.seed, th, K)
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
    out.update(cols)
    # in-span rotations of the (v1, v2) plane (spec §5.2 table): per feature
    for th in (30, 60):
        U = in_span_rotation(V, 0, 1, math.radians(th))
        m = _measure(model, data.with_features(U), cfg.ood_prompts, cfg.seed, f"inspan{th}", K)
        M = (V.T @ U).numpy()
        out[f"inspan{th}_mc"] = m["mc"]
        out[f"inspan{th}_theory"] = T.ood_feature_losses(S, M, None, N, c).tolist()
        out[f"inspan{th}_largeN"] = T.ood_feature_losses(S_big, M, None, None, c).tolist()
    # a random alignment M: measured attention mass per feature vs softmax of MᵀSM at the sampled counts
    Mr = torch.randn(K, K, generator=generator_for(cfg.seed, "M"), dtype=torch.float64)
    Mr = 0.9 * Mr / torch.linalg.matrix_norm(Mr, 2)
    Ur = aligned_features(V, Vp, Mr)
    b = data.with_features(Ur).sample(2000, generator_for(cfg.seed, "Mr"))
    A = _feature_mass(model, b, K).numpy()
    counts = F.one_hot(b.feat, K).sum(1).double().numpy()
    At = T.feature_attention(T.ood_logits(S, Mr.numpy()), counts)[np.arange(len(A)), :, b.qfeat.numpy()]
    out["randomM_attn_maxdev"] = float(np.abs(A - At).max())
    Sr_closed = T.ood_logits_closed(a_meas, Mr.numpy())
    out["randomM_closed_vs_exact"] = float(np.abs(Sr_closed - T.ood_logits(S, Mr.numpy())).max())
    # collapse cases, exact counts N p_k: attention mass per feature vs 1/K
    n_exact = N - N % K
    Qstar = T.trained_q(run["V"], a_meas)
    cases = {"orthogonal": (FeaturePrompts(Vp[:, :K], n_tokens=n_exact, counts="exact"), None),
             "shared_projection": (FeaturePrompts(shared_projection_features(V, Vp, 0.6), n_tokens=n_exact,
                                                  counts="exact", orthonormal=False),
                                   (0.6**2 * np.ones((K, K)) + (1 - 0.6**2) * np.eye(K))),
             "query_vbar": (FeaturePrompts(V, n_tokens=n_exact, counts="exact", query_vector=mean_feature(V)), None)}
    for name, (d_, G) in cases.items():
        for which, Qm in (("sgd", run["Q"]), ("closed", Qstar)):
            mod = _model(Qm)
            b = d_.sample(2000, generator_for(cfg.seed, "collapse", name))
            A = _feature_mass(mod, b, K)
            out[f"{name}_{which}_attn_mean"] = float(A.mean())
            out[f"{name}_{which}_attn_maxdev"] = float((A - 1 / K).abs().max())
            with torch.no_grad():
                err = 0.5 * (mod(b.x, b.y, b.xq) - b.yq) ** 2
            out[f"{name}_{which}_err"] = float(err.mean())
        if name != "query_vbar":
            out[f"{name}_err_theory"] = float(T.random_guess_loss(K, None, n_exact, c, G).mean())
        # multinomial counts (the paper's sampling): random-guessing level at N
    out["random_guess_N"] = float(T.random_guess_loss(K, None, N, c).mean())
    out["random_guess_largeN"] = float(T.random_guess_loss(K, None, None, c).mean())
    return out


class _StackedQ(torch.nn.Module):
    """G independent merged-Q models (one per OOD set U_g) trained in one SGD loop; ``active`` freezes runs
    that met the stopping rule (their loss is multiplied by 0, so plain SGD leaves them unchanged)."""

    def __init__(self, Q0: np.ndarray, U: torch.Tensor, attention: str = "softmax"):
        super().__init__()
        G = U.shape[0]
        self.Q = torch.nn.Parameter(torch.as_tensor(Q0, dtype=torch.float64).expand(G, -1, -1).clone())  # (G, d, d)
        self.register_buffer("U", U)  # (G, d, K)
        self.register_buffer("active", torch.ones(G, dtype=torch.float64))
        self.normaliser = get_normaliser(attention)

    def loss(self, batch, c: float) -> torch.Tensor:
        K = self.U.shape[2]
        oh = F.one_hot(batch.feat, K).double()  # (B, N, K)
        x = torch.einsum("bnk,gdk->gbnd", oh, self.U)  # (G, B, N, d)
        xq = torch.einsum("bk,gdk->gbd", F.one_hot(batch.qfeat, K).double(), self.U)  # (G, B, d)
        s = torch.einsum("gbnd,gde,gbe->gbn", x, self.Q, xq)[:, :, None, :]  # (G, B, 1, N)
        a = self.normaliser(s)[:, :, 0, :]  # (G, B, N)
        r = torch.einsum("gbn,gbnd->gbd", a, x) - xq  # (G, B, d)
        per_run = c * (r**2).sum(-1).mean(-1)  # (G,)
        return (per_run * self.active).sum()


def finetune_stack(cfg, Q0, V, Vp, gammas: list[tuple[float, float]]) -> dict:
    """SGD fine-tuning on U_g (overlaps γ_g) from Q0, each run to its own stopping time (spec §4.7)."""
    U = torch.stack([overlap_features(V, Vp, g) for g in gammas])  # (G, d, K)
    model = _StackedQ(Q0, U)
    Un = U.numpy()
    stop_step = np.full(len(gammas), -1)

    def stop(step, groups):
        with torch.no_grad():
            for g in np.flatnonzero(model.active.numpy() > 0):
                S = T.logit_matrix(model.Q[g].numpy(), Un[g])
                if T.feature_losses(S, None, cfg.n_tokens, cfg.c).max() <= cfg.threshold:
                    model.active[g] = 0.0
                    stop_step[g] = step
        return bool(model.active.sum() == 0)

    data = FeaturePrompts(torch.as_tensor(V), n_tokens=cfg.n_tokens)
    train(model, data, lambda m, b: m.loss(b, cfg.c), TrainConfig(
        steps=cfg.ft_max_steps, batch_size=cfg.batch_size, lr=cfg.lr, optimizer="sgd", log_every=cfg.log_every,
        seed=cfg.seed + 1), stop_rule=stop)
    return {"Q": model.Q.detach().numpy(), "U": Un, "stop_step": stop_step}


def _change(after: float, before: float, rel: float = 1e-9) -> int:
    """+1 forgotten (source loss rose), -1 improved, 0 unchanged (within ``rel`` of the loss)."""
    return 0 if abs(after - before) <= rel * abs(before) else (1 if after > before else -1)


def _predicted_change(g1: float, g2: float) -> tuple[int, int]:
    """K = 2 (spec §4.8): the source gap of feature k moves by Δα_U γ_k(γ_k + γ_m) with Δα_U > 0, so its loss
    changes by sign(−γ_k(γ_k + γ_m)): +1 iff −γ_kγ_m > γ_k² (forgetting), 0 on the boundary."""
    out = []
    for gk, gm in ((g1, g2), (g2, g1)):
        v = -gk * (gk + gm)
        out.append(0 if abs(v) < 1e-9 else int(np.sign(v)))
    return tuple(out)


def forgetting_cell(cfg, cell, shared) -> dict:
    """K = 2 forgetting for one γ1 over a list of γ2: measured (SGD) vs population-GD theory (spec §4.8)."""
    run = shared["K2"]
    V, Vp = torch.as_tensor(run["V"]), torch.as_tensor(run["Vp"])
    g1, g2s = float(cell["gamma1"]), [float(g) for g in cell["gamma2"]]
    N, c = cfg.n_tokens, cfg.c
    S0 = T.logit_matrix(run["Q"], run["V"])
    S_big = T.population_gd(np.zeros((2, 2)), None, None, c, cfg.lr, cfg.threshold)["S"]
    ft = finetune_stack(cfg, run["Q"], V, Vp, [(g1, g2) for g2 in g2s])
    before = T.feature_losses(S0, None, N, c)
    rows = {k: [] for k in ("F", "F_theory", "F_largeN", "src1_after", "src2_after", "src1_theory", "src2_theory",
                            "ood1_before", "ood2_before", "forgot1", "forgot2", "pred1", "pred2", "steps",
                            "theory_steps", "dAlphaU1", "dAlphaU2", "backproj_dev", "conservation_ft")}
    for g, g2 in enumerate(g2s):
        M = np.diag([g1, g2])
        S_new = T.logit_matrix(ft["Q"][g], run["V"])
        Su0, Su1 = T.ood_logits(S0, M), T.logit_matrix(ft["Q"][g], ft["U"][g])
        after = T.feature_losses(S_new, None, N, c)
        th = T.finetune(S0, M, None, N, c, cfg.lr, cfg.threshold, cfg.ft_max_steps)
        big = T.finetune(S_big, M, None, None, c, cfg.lr, cfg.threshold, cfg.ft_max_steps)
        pred = _predicted_change(g1, g2)
        rows["F"].append(float(0.5 * (after - before).sum()))
        rows["F_theory"].append(th["F"])
        rows["F_largeN"].append(big["F"])
        rows["src1_after"].append(float(after[0]))
        rows["src2_after"].append(float(after[1]))
        rows["src1_theory"].append(float(th["source_after"][0]))
        rows["src2_theory"].append(float(th["source_after"][1]))
        rows["ood1_before"].append(float(T.feature_losses(Su0, None, N, c)[0]))
        rows["ood2_before"].append(float(T.feature_losses(Su0, None, N, c)[1]))
        rows["forgot1"].append(_change(after[0], before[0]))
        rows["forgot2"].append(_change(after[1], before[1]))
        rows["pred1"].append(int(pred[0]))
        rows["pred2"].append(int(pred[1]))
        rows["steps"].append(int(ft["stop_step"][g]))
        rows["theory_steps"].append(int(th["steps"]))
        rows["dAlphaU1"].append(float(Su1[0, 0] - Su0[0, 0]))
        rows["dAlphaU2"].append(float(Su1[1, 1] - Su0[1, 1]))
        # §4.7 back-projection S_V_new = S_V + M ΔS^U Mᵀ with the measured ΔS^U
        rows["backproj_dev"].append(float(np.abs(S_new - T.finetune_source_logits(S0, M, Su1 - Su0)).max()))
        rows["conservation_ft"].append(float(np.abs(T.conservation_residual(Su1, Su0)).max()))
    return {"gamma2_list": g2s, "source_before": before.tolist(), **rows}
