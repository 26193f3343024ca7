r"""The ``forget`` cell: K = 2 fine-tuning on OOD sets with overlaps (γ1, γ2) and the source forgetting F
(arXiv:2609.36448; docs/papers/ood.md §5.4).

From the SGD-pre-trained K = 2 model (``shared["K2"]``), one SGD fine-tuning run per γ2 on
:math:`u_k=\gamma_kv_k+\sqrt{1-\gamma_k^2}\,v_k^\perp` (all runs of a cell in one :class:`iclab.models.MergedQStack`),
each to its own stopping time. Measured: source losses after fine-tuning, F, the per-feature sign of the change
(vs :func:`iclab.theory.ood.forgetting_sign_k2`), ΔS^U and the back-projection of note §4.8. Theory: population
fine-tuning at N and in the large-N limit (:func:`iclab.theory.ood.finetune`).
"""

from __future__ import annotations

import numpy as np
import torch

from iclab.data import FeaturePrompts, derive_seed, overlap_features
from iclab.models import MergedQStack
from iclab.theory import ood as T
from iclab.experiments.ood.pretrain import sgd_config
from iclab.train import train

__all__ = ["finetune_stack", "forgetting_cell"]

_ROWS = (
    "F",
    "F_theory",
    "F_largeN",
    "src1_after",
    "src2_after",
    "src1_theory",
    "src2_theory",
    "ood1_before",
    "ood2_before",
    "forgot1",
    "forgot2",
    "pred1",
    "pred2",
    "steps",
    "theory_steps",
    "dAlphaU1",
    "dAlphaU2",
    "dAlphaV1",
    "dAlphaV2",
    "backproj_dev",
    "conservation_ft",
)


def finetune_stack(cfg, Q0, V, Vp, gammas: list[tuple[float, float]], repeat: int = 0) -> dict:
    """SGD fine-tuning on U_g (overlaps γ_g) from Q0, each run to its own stopping time (note §4.8): the final
    ``Q`` (G, d, d), the sets ``U`` (G, d, K) and each run's ``stop_step`` (-1: budget exhausted). The prompt
    batches are keyed by ``(seed, "finetune", repeat)`` (``repeat`` 0: the cell's own run)."""
    U = torch.stack([overlap_features(V, Vp, g) for g in gammas])  # (G, d, K)
    model = MergedQStack(Q0, U)
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
    train(
        model,
        data,
        lambda m, b: m.loss(b, cfg.c),
        sgd_config(cfg, cfg.ft_max_steps, derive_seed(cfg.seed, "finetune", repeat)),
        stop_rule=stop,
    )
    return {"Q": model.Q.detach().numpy(), "U": Un, "stop_step": stop_step}


def _row(cfg, run, ft, g: int, g1: float, g2: float, S0, S_big, before) -> dict:
    """Measured and theoretical forgetting of run ``g`` (overlaps γ1, γ2), one value per name of ``_ROWS``."""
    N, c = cfg.n_tokens, cfg.c
    M = np.diag([g1, g2])
    S_new = T.logit_matrix(ft["Q"][g], run["V"])
    Su0, Su1 = T.ood_logits(S0, M), T.logit_matrix(ft["Q"][g], ft["U"][g])
    after = T.feature_losses(S_new, None, N, c)
    th = T.finetune(S0, M, None, N, c, cfg.lr, cfg.threshold, cfg.ft_max_steps)
    big = T.finetune(S_big, M, None, None, c, cfg.lr, cfg.threshold, cfg.ft_max_steps)
    pred = T.forgetting_sign_k2(g1, g2)
    return {
        "F": float((after - before).mean()),
        "F_theory": th["F"],
        "F_largeN": big["F"],  # balanced p_k = 1/2
        "src1_after": float(after[0]),
        "src2_after": float(after[1]),
        "src1_theory": float(th["source_after"][0]),
        "src2_theory": float(th["source_after"][1]),
        "ood1_before": float(T.feature_losses(Su0, None, N, c)[0]),
        "ood2_before": float(T.feature_losses(Su0, None, N, c)[1]),
        "forgot1": T.loss_change_sign(after[0], before[0]),
        "forgot2": T.loss_change_sign(after[1], before[1]),
        "pred1": int(pred[0]),
        "pred2": int(pred[1]),
        "steps": int(ft["stop_step"][g]),
        "theory_steps": int(th["steps"]),
        "dAlphaU1": float(Su1[0, 0] - Su0[0, 0]),
        "dAlphaU2": float(Su1[1, 1] - Su0[1, 1]),
        "dAlphaV1": float(S_new[0, 0] - S0[0, 0]),
        "dAlphaV2": float(S_new[1, 1] - S0[1, 1]),
        # note §4.8 back-projection S_V_new = S_V + M ΔS^U Mᵀ with the measured ΔS^U
        "backproj_dev": float(np.abs(S_new - T.finetune_source_logits(S0, M, Su1 - Su0)).max()),
        "conservation_ft": float(np.abs(T.conservation_residual(Su1, Su0)).max()),
    }


def forgetting_cell(cfg, cell, shared) -> dict:
    """K = 2 forgetting for one γ1 over a list of γ2: measured (SGD) vs population-GD theory (note §4.9)."""
    run = shared["K2"]
    V, Vp = torch.as_tensor(run["V"]), torch.as_tensor(run["Vp"])
    g1, g2s = float(cell["gamma1"]), [float(g) for g in cell["gamma2"]]
    S0 = T.logit_matrix(run["Q"], run["V"])
    S_big = T.population_gd(np.zeros((2, 2)), None, None, cfg.c, cfg.lr, cfg.threshold)["S"]
    ft = finetune_stack(cfg, run["Q"], V, Vp, [(g1, g2) for g2 in g2s])
    before = T.feature_losses(S0, None, cfg.n_tokens, cfg.c)
    rows = {k: [] for k in _ROWS}
    for g, g2 in enumerate(g2s):
        for k, v in _row(cfg, run, ft, g, g1, g2, S0, S_big, before).items():
            rows[k].append(v)
    return {
        "gamma2_list": g2s,
        "source_before": before.tolist(),
        **rows,
        **_repeats(cfg, run, g1, g2s, rows["F"], before),
    }


def _repeats(cfg, run, g1: float, g2s: list[float], F: list[float], before) -> dict:
    """For a table γ1, F at every table γ2 from the cell's fine-tuning and ``ft_repeats`` more (batches keyed
    by repeat ``r`` = 1, 2, ...): ``rep_gamma2`` and ``rep_F`` (one list of F values per table γ2)."""
    if not any(np.isclose(g1, g) for g in cfg.gamma1_table):
        return {"rep_gamma2": [], "rep_F": []}
    table = [float(g) for g in cfg.gamma2_table]
    reps = [[F[int(np.argmin(np.abs(np.asarray(g2s) - g2)))]] for g2 in table]
    for r in range(1, cfg.ft_repeats + 1):
        ft = finetune_stack(
            cfg,
            run["Q"],
            torch.as_tensor(run["V"]),
            torch.as_tensor(run["Vp"]),
            [(g1, g2) for g2 in table],
            repeat=r,
        )
        for g in range(len(table)):
            after = T.feature_losses(T.logit_matrix(ft["Q"][g], run["V"]), None, cfg.n_tokens, cfg.c)
            reps[g].append(float((after - before).mean()))
    return {"rep_gamma2": table, "rep_F": reps}
