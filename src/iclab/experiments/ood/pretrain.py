r"""Pre-training of the merged-Q model with the per-feature stopping rule (arXiv:2609.36448; docs/papers/ood.md
§5.1–5.2), and the ``pretrain`` cell: α/β trajectories against exact population GD and the large-N theory.

Measurement protocol (note §5.1). The merged-Q model (float64, Q(0) = 0) is trained by plain SGD (batch
``batch_size``, lr ``lr``) on the w-averaged loss :math:`c\|\sum_i\mathrm{attn}_ix_i-x_q\|^2` (note §4.1) over
prompts of N = ``n_tokens`` i.i.d. feature tokens. The stopping rule :math:`\max_k\mathcal L_k\le` ``threshold``
is checked every ``log_every`` steps on the model's *exact* population per-feature loss at that N
(:func:`iclab.theory.ood.feature_losses` of :math:`S=V^\top QV`, exact for Q in span V, so the stopping time has no
Monte-Carlo noise). "Theory" is exact population GD on S at the same N and lr
(:func:`iclab.theory.ood.population_gd`) and the same in the large-N limit.
"""

from __future__ import annotations

import numpy as np

from iclab.data import FeaturePrompts, derive_seed, feature_basis, generator_for
from iclab.models import MergedQAttention, feature_prompt_loss
from iclab.theory import ood as T
from iclab.train import TrainConfig, train

__all__ = ["pretrain", "pretrain_cell", "logits_of", "sgd_config"]

_PROBED = ("alpha", "beta", "alpha_min", "alpha_max", "beta_min", "beta_max", "conservation", "offspan", "maxLk")


def sgd_config(cfg, steps: int, seed: int) -> TrainConfig:
    """Plain SGD (batch ``batch_size``, lr ``lr``, the stopping rule checked every ``log_every`` steps) for at most
    ``steps`` steps: pre-training and fine-tuning alike (note §5.1)."""
    return TrainConfig(
        steps=steps, batch_size=cfg.batch_size, lr=cfg.lr, optimizer="sgd", log_every=cfg.log_every, seed=seed
    )


def logits_of(model, V) -> np.ndarray:
    r""":math:`S=V^\top QV` (K, K) of a merged-Q model (note §3.4)."""
    return T.logit_matrix(model.Q.detach().numpy(), V)


def _probe(cfg, Vn: np.ndarray, K: int):
    """Logged every ``log_every`` steps: mean/min/max α and β, conservation residual, off-span norm, max_k L_k."""

    def probe(m) -> dict:
        S = logits_of(m, Vn)
        off = S[~np.eye(K, dtype=bool)]
        return {
            "alpha": float(np.diag(S).mean()),
            "beta": float(off.mean()),
            "alpha_min": float(np.diag(S).min()),
            "alpha_max": float(np.diag(S).max()),
            "beta_min": float(off.min()),
            "beta_max": float(off.max()),
            "conservation": float(np.abs(T.conservation_residual(S)).max()),
            "offspan": T.off_span_norm(m.Q.detach().numpy(), Vn),
            "maxLk": float(T.feature_losses(S, None, cfg.n_tokens, cfg.c).max()),
        }

    return probe


def pretrain(cfg, K: int, d: int, repeat: int = 0) -> dict:
    """SGD pre-training on V-prompts until max_k L_k <= threshold (exact, at N): bases ``V``, ``Vp``, the trained
    ``Q``, ``steps``, ``stopped``, ``seconds`` and the logged ``history`` (one list per probed quantity).
    The prompt batches are keyed by ``(seed, "pretrain", K, d, repeat)`` (``repeat`` 0: the shared run); the basis
    by ``(seed, "basis", K, d)`` only."""
    V, Vp = feature_basis(d, K, generator_for(cfg.seed, "basis", K, d))
    Vn = V.numpy()
    model = MergedQAttention(d)
    data = FeaturePrompts(V, n_tokens=cfg.n_tokens)
    stop = lambda step, groups: T.feature_losses(logits_of(model, Vn), None, cfg.n_tokens, cfg.c).max() <= cfg.threshold
    res = train(
        model,
        data,
        lambda m, b: feature_prompt_loss(m, b, cfg.c, K),
        sgd_config(cfg, cfg.max_steps, derive_seed(cfg.seed, "pretrain", K, d, repeat)),
        stop_rule=stop,
        probes={"S": _probe(cfg, Vn, K)},
    )
    hist = {k: [r[f"S/{k}"] for r in res.history] for k in _PROBED}
    hist["step"] = [r["step"] for r in res.history]
    return {
        "V": Vn,
        "Vp": Vp.numpy(),
        "Q": model.Q.detach().numpy(),
        "steps": res.steps,
        "stopped": res.stopped,
        "seconds": res.seconds,
        "history": hist,
    }


def _run_summary(cfg, run) -> dict:
    """α*, the largest relative deviation of a β from −α*/(K−1), the stopping step, the training loss (exact at N)
    and the conservation residual max over logged steps of max_k |α_k + Σ_m β_mk|, relative to α*, of one run."""
    S = T.logit_matrix(run["Q"], run["V"])
    K = S.shape[0]
    a = np.diag(S)  # (K,)
    sym = S / (-a[None, :] / (K - 1))  # (K, K): 1 where β_mk = −α_k/(K−1)
    h = run["history"]
    return {
        "alpha_star": float(a.mean()),
        "beta_dev": float(np.abs(sym[~np.eye(K, dtype=bool)] - 1).max()),
        "steps": int(run["steps"]),
        "train_loss": float(T.feature_losses(S, None, cfg.n_tokens, cfg.c).mean()),
        "conservation_rel": float(max(h["conservation"]) / abs(a.mean())),
    }


def repeat_summaries(cfg, run) -> dict:
    """The summary of :func:`_run_summary` for the run of ``shared`` and ``sgd_repeats`` more SGD pre-trainings of
    the same K, d (batches keyed by repeat ``r`` = 1, 2, ...): one list per quantity, the shared run first."""
    K, d = run["V"].shape[1], run["V"].shape[0]
    runs = [run] + [pretrain(cfg, K, d, repeat=r) for r in range(1, cfg.sgd_repeats + 1)]
    rows = [_run_summary(cfg, r) for r in runs]
    return {f"rep_{k}": [row[k] for row in rows] for k in rows[0]}


def pretrain_cell(cfg, shared) -> dict:
    """α/β trajectories of the K = ``K`` SGD run vs exact population GD (N = n_tokens) and the large-N theory, and
    the spread of α*, the stopping step and the training loss over ``sgd_repeats`` more SGD runs."""
    run = shared["K4"]
    S = T.logit_matrix(run["Q"], run["V"])
    K = S.shape[0]
    fin = T.population_gd(np.zeros((K, K)), None, cfg.n_tokens, cfg.c, cfg.lr, cfg.threshold)
    big = T.population_gd(np.zeros((K, K)), None, None, cfg.c, cfg.lr, cfg.threshold)
    off = ~np.eye(K, dtype=bool)
    h = run["history"]
    return {
        "steps": run["steps"],
        "seconds": run["seconds"],
        "alpha_star": float(np.diag(S).mean()),
        "beta_star": float(S[off].mean()),
        "beta_sym_dev": float(np.abs(S[off] + np.diag(S).mean() / (K - 1)).max()),
        "conservation_max": float(max(h["conservation"])),
        "offspan_max": float(max(h["offspan"])),
        "train_maxLk": float(T.feature_losses(S, None, cfg.n_tokens, cfg.c).max()),
        "train_loss": float(T.feature_losses(S, None, cfg.n_tokens, cfg.c).mean()),
        "theory_steps": fin["steps"],
        "theory_alpha_star": float(fin["S"][0, 0]),
        "theory_beta_star": float(fin["S"][1, 0]),
        "largeN_steps": big["steps"],
        "largeN_alpha_star": float(big["S"][0, 0]),
        "largeN_beta_star": float(big["S"][1, 0]),
        "closed_alpha": T.converged_alpha(K, cfg.threshold, cfg.c),
        "traj_step": h["step"],
        "traj_alpha": h["alpha"],
        "traj_beta": h["beta"],
        "traj_alpha_min": h["alpha_min"],
        "traj_alpha_max": h["alpha_max"],
        "traj_beta_min": h["beta_min"],
        "traj_beta_max": h["beta_max"],
        "traj_conservation": h["conservation"],
        "traj_offspan": h["offspan"],
        "theory_alpha": fin["trajectory"][:, 0, 0].tolist(),
        "theory_beta": fin["trajectory"][:, 1, 0].tolist(),
        "largeN_alpha": big["trajectory"][:, 0, 0].tolist(),
        "largeN_beta": big["trajectory"][:, 1, 0].tolist(),
        **repeat_summaries(cfg, run),
    }
