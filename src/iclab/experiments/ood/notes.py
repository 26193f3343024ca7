"""The ``ood`` experiment's notes: its conventions and the run's numbers the claim rows do not show (arXiv:2609.36448;
docs/papers/ood.md §6). Why a second-hand value is unreliable is the record's own reason (:mod:`.claims`); the
derivations behind each line are in the note's §4–§6."""

from __future__ import annotations

import numpy as np
import pandas as pd

from iclab.claims import part_rows
from iclab.experiments._notes import labelled, pm
from iclab.experiments.ood.reference import DERIVED_F, PAPER_F, PAPER_OOD
from iclab.experiments.ood.tables import first_row, forget_table, tiny_means, within_target_spearman

__all__ = ["notes"]


def _conventions(cfg) -> str:
    return (
        f"**Conventions.** c = {cfg.c:g}, balanced p, Q(0) = 0, plain SGD on Q (batch {cfg.batch_size}, lr "
        f"{cfg.lr:g}) on the w-averaged loss (docs/papers/ood.md §4.1), N = {cfg.n_tokens} i.i.d. tokens; stopping "
        f"rule max_k L_k ≤ {cfg.threshold:g} on the exact population loss at N, checked every {cfg.log_every} "
        "steps. Theory is exact population GD at the same N and the large-N limit (iclab's own derivation, §4)."
    )


def _pretrain(cfg, r) -> str:
    return (
        f"- **Training loss at the stop**: {np.mean(r['rep_train_loss']):.5f} (paper 0.0024; the stopping rule pins "
        f"it). Along the shared SGD run the conservation residual stays below {r['conservation_max']:.0e} and the "
        f"part of Q outside span V below {r['offspan_max']:.0e} (identities of the model, §4.3–4.4; tests)."
    )


def _multinomial_90(cfg, r) -> str:
    """The out-of-span rotation by 90° (U ⟂ V with multinomial counts): Monte-Carlo error against the exact level at
    N and at large N (docs/papers/ood.md §4.2, §6.2); empty when the run has no 90° point."""
    at = [i for i, t in enumerate(r["theta_deg"]) if np.isclose(t, 90.0)]
    if not at:
        return ""
    i = at[0]
    return (
        f" With multinomial counts (rotation by 90°): {pm(r['L_mc'][i], r['L_se'][i], '.4f')} (Monte Carlo), the "
        f"exact level at N = {cfg.n_tokens} is {r['L_theory'][i]:.4f}, at large N {r['L_largeN'][i]:.4f} (§4.2)."
    )


def _ood(cfg, r) -> list[str]:
    return [
        f"- **U ⊥ V**: max|A − 1/K| = {r['orthogonal_sgd_attn_maxdev']:.0e}; error "
        f"{pm(r['orthogonal_sgd_err'], r['orthogonal_sgd_err_se'], '.4f')}, exactly c(K−1)/K = "
        f"{r['orthogonal_err_theory']:.3f} with exact counts (the paper: {PAPER_OOD[90]}; an identity of the model, "
        "tests/test_claim_identities.py)." + _multinomial_90(cfg, r),
        "- **Query at v̄** (`query-vbar-uniform` measures the uniformity): exact uniformity needs zero *row* sums of "
        "S, the conservation law gives zero *column* sums. The collapse condition 'C M = 0 (… or all u_k have the "
        "same projection on span V)' is slightly off: a common projection a gives S^U = (aᵀSa)·11ᵀ (§4.7).",
    ]


def _f_at(ft: pd.DataFrame, g1: float, g2: float) -> list[float]:
    """This run's SGD F at (γ1, γ2): one value, or none when the run has no such point."""
    at = ft[np.isclose(ft["gamma1"], g1) & np.isclose(ft["gamma2"], g2)]
    return [float(at["F"].iloc[0])] if len(at) else []


def _derived_f(ft: pd.DataFrame) -> list[str]:
    """The derived large-N table of docs/papers/ood.md §5.8 against this run's SGD F at the same (γ1, γ2): how many
    signs agree, and the largest relative difference (N against large N)."""
    pairs = [(f, derived) for (g1, g2), derived in DERIVED_F.items() for f in _f_at(ft, g1, g2)]
    if not pairs:
        return []
    same = sum(int(np.sign(f) == np.sign(d)) for f, d in pairs)
    worst = max(abs(f / d - 1) for f, d in pairs)
    g1s = " and ".join(f"{g:g}" for g in sorted({g for g, _ in DERIVED_F}))
    return [
        f"- **Derived large-N F table** (§5.8, γ1 = {g1s}) against this run's SGD F: same sign at {same} of "
        f"{len(pairs)} points; sizes within {worst:.0%} (the run's N against large N)."
    ]


def _forgetting(ft: pd.DataFrame) -> list[str]:
    lines = [
        "- **Forgetting, γ2 = −0.9**: the summary says feature 1 is forgotten (−γ1γ2 = 0.9 > γ1² = 1 is false); it "
        f"is feature 2 ({len(ft)} (γ1, γ2) points in this run)."
    ]
    lines += _derived_f(ft)
    ratios = [abs(p / f) for (g1, g2), p in PAPER_F.items() if p for f in _f_at(ft, g1, g2) if f]
    if ratios:
        lines.append(
            f"- **Forgetting magnitudes** (γ1 = 1): the second-hand |F| is {min(ratios):.0f} to {max(ratios):.0f} "
            "times this run's (§6.5)."
        )
    for F in _f_at(ft, 1.0, 0.95):  # the paper's 'F ≈ 0' has no record: a paper value of 0 has no relative tolerance
        what = "backward transfer" if F < 0 else "forgetting" if F > 0 else "no change"
        lines.append(f"- **γ2 = 0.95 'F ≈ 0'** [paper, 2nd-hand]: here F = {F:+.2e}, {what}.")
    return lines


def _tiny(cfg, tiny: pd.DataFrame) -> str:
    parts, agree, total = [], 0, 0
    by_depth = tiny_means(tiny)
    for layers, r in by_depth.items():
        da, db = (labelled(r[k], "+.2f", sep=" / ") for k in ("dalpha1_src", "dbeta1_src"))
        parts.append(f"{layers}: source loss {np.mean(r['source_before']):.4f}, Δα = {da}, Δβ = {db}")
        agree, total = agree + sum(int(a == b) for a, b in r["sign_pairs"]), total + len(r["sign_pairs"])
    g2 = labelled(tiny.iloc[0]["gamma2_list"], "+g", sep=" / ")
    nets = max(r["networks"] for r in by_depth.values())
    mean = f", means over {nets} trained networks per depth" if nets > 1 else ""
    return (
        f"- **Tiny transformers** (Adam, sampled-w MSE, {cfg.tiny_steps} steps; γ2 = {g2}; layer-1 source α and β "
        f"by depth{mean}): " + "; ".join(parts) + f". The per-feature change follows the merged-Q K = 2 sign rule in "
        f"{agree} of {total} cases (§4 covers the attention logits only; fine-tuning this model also changes its "
        "MLPs, layer norms and read-in, §6.6)."
    )


def _minilm(r) -> str:
    deg = [f"{t:g}°" for t in r["theta_deg"]]
    return (
        f"- **Real encoder, rotation after layer {int(r['layer'])}** (MiniLM on country → region sentences, §5.6): "
        f"{int(r['n_train'])} training and {int(r['n_test'])} test sentences, frozen encoder, linear head. Source "
        f"accuracy {r['source_acc']:.2f} (majority {r['majority_acc']:.2f}); rotated accuracy "
        f"{labelled(r['ood_acc'], '.2f', deg)}. Forgetting ΔCE: {labelled(r['F_ce'], '+.2f', deg)} (minus the drift "
        f"of fine-tuning at θ = 0: {labelled(r['F_ce_vs_control'], '+.2f', deg)})."
    )


def _minilm_shift(r) -> list[str]:
    lines = []
    if isinstance(r.get("domain_sim"), list):
        rho = within_target_spearman(r["domain_sim"], r["domain_ce"])
        lines.append(
            "- **Natural shift** (one sentence template per countryinfo field as a genre, §5.9): Spearman ρ of CE "
            f"against similarity per target domain: {labelled(rho, '+.2f', r['domains'], join=' ')}."
        )
    lines.append(
        "- **Weight-gap scenarios** (`minilm-gap-*` measure the peaks): at θ = 180° both are −I on the same "
        "coordinates, so the curves meet (§5.9; the merged-Q counterpart is figure ood_scenarios, §5.3)."
    )
    return lines


def notes(cfg, df: pd.DataFrame) -> str:
    """Markdown: the conventions, then the run's numbers the claim rows do not show (docs/papers/ood.md §6)."""
    lines = [_conventions(cfg), ""]
    if (r := first_row(df, "pretrain")) is not None:
        lines.append(_pretrain(cfg, r))
    if (r := first_row(df, "ood")) is not None:
        lines += _ood(cfg, r)
    if len(ft := forget_table(df)):
        lines += _forgetting(ft)
    if not (tiny := part_rows(df, "tiny")).empty:
        lines.append(_tiny(cfg, tiny))
    if (r := first_row(df, "minilm")) is not None:
        lines.append(_minilm(r))
    if (r := first_row(df, "minilm_shift")) is not None:
        lines += _minilm_shift(r)
    return "\n".join(lines)
