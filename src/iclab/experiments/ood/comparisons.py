"""Comparisons with the paper and the notes on every disagreement, for the ``ood`` experiment (arXiv:2609.36448;
docs/papers/ood.md §6). Reference numbers and their labels come from ``reference``: "[paper, 2nd-hand]" for the
paper's numbers as quoted by a second-hand summary, "[derived, large N]" for iclab's large-N theory (note §5.8)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from iclab.experiments import Comparison
from iclab.experiments.ood.reference import (DERIVED, DERIVED_F, DERIVED_INSPAN, DERIVED_OOD, PAPER, PAPER_ENCODER_F,
                                             PAPER_F, PAPER_OOD, PAPER_TINY)
from iclab.experiments.ood.tables import first_row, forget_table, part_rows

__all__ = ["compare", "notes"]


def _close(a, b, rel):
    return bool(abs(a - b) <= rel * abs(b))


def _compare_pretrain(cfg, r) -> list[Comparison]:
    """α*, β*, stopping time, training loss, conservation law and span (note §6.1)."""
    return [
        Comparison("α* (K=4) at the stopping rule", f"2.872 {DERIVED}",
                   f"{r['alpha_star']:.4f} (SGD, N={cfg.n_tokens}); population GD at N: {r['theory_alpha_star']:.4f}",
                   _close(r["alpha_star"], r["theory_alpha_star"], 0.01),
                   f"large-N GD here gives {r['largeN_alpha_star']:.4f}; finite N needs a larger α for the same loss; "
                   "tolerance 1 % of population GD at the same N"),
        Comparison("β* = −α*/(K−1)", "−0.957 [derived]", f"{r['beta_star']:.4f} (max dev. from −α*/3: "
                   f"{r['beta_sym_dev']:.1e})", _close(r["beta_star"], -r["alpha_star"] / 3, 0.01), "SGD symmetry"),
        Comparison("steps to max_k L_k ≤ 0.0025", "397 [derived, GD η=1, large N]",
                   f"{int(r['steps'])} (checked every {cfg.log_every}); population GD at N: {int(r['theory_steps'])}",
                   abs(r["steps"] - r["theory_steps"]) <= cfg.log_every + 5, ""),
        Comparison("training loss at T1", f"0.0024 {PAPER}", f"{r['train_loss']:.5f} (max_k {r['train_maxLk']:.5f})",
                   r["train_maxLk"] <= cfg.threshold, "exact population loss at N"),
        Comparison("conservation α_k + Σβ_mk = 0", "to 1e-6 [derived]", f"max {r['conservation_max']:.1e} over all "
                   "logged steps", r["conservation_max"] < 1e-10, "float64"),
        Comparison("Q stays in span{v_m v_kᵀ}", "off-span = 0 [derived]", f"max {r['offspan_max']:.1e}",
                   r["offspan_max"] < 1e-10, ""),
    ]


def _compare_rotation(r) -> list[Comparison]:
    """OOD loss at θ = 30°, 60°, 90° and the closed form of the OOD α/β (note §6.2)."""
    out = []
    th = list(r["theta_deg"])
    for deg in (30, 60, 90):
        if deg in th:
            i = th.index(deg)
            out.append(Comparison(f"OOD loss, rotation θ={deg}°", f"{PAPER_OOD[deg]} {PAPER}; {DERIVED_OOD[deg]} {DERIVED}",
                                  f"{r['L_mc'][i]:.4f} ± {r['L_se'][i]:.4f} (MC); theory at N: {r['L_theory'][i]:.4f}",
                                  abs(r["L_mc"][i] - r["L_theory"][i]) <= 3 * r["L_se"][i] + 1e-4,
                                  "ok = measured within 3 s.e. of theory at N; the paper's value is not reproduced"
                                  if deg != 90 else "random-guessing level c(K−1)/K (N=40: slightly above)"))
    out.append(Comparison("OOD α/β closed form (note §4.6)", f"formula {PAPER}",
                          f"max |closed − UᵀQU| = {max(abs(a - b) for a, b in zip(r['alpha_u'], r['alpha_u_closed'])):.1e}"
                          f"; random M: {r['randomM_closed_vs_exact']:.1e}; attention vs theory {r['randomM_attn_maxdev']:.1e}",
                          r["randomM_attn_maxdev"] < 1e-10,
                          "the closed form assumes the symmetric S* (β all equal); SGD's small asymmetry shows for a random M"))
    return out


def _compare_collapse(r) -> list[Comparison]:
    """Uniform attention and its error for U ⟂ V and a query at v̄ (note §6.3), and the in-span rotations."""
    out = []
    for c, label in (("orthogonal", "U ⊥ V"), ("query_vbar", "query = v̄")):
        out.append(Comparison(f"collapse {label}: attention, error", f"Attn 0.250, error 0.375 {PAPER}",
                              f"Attn {r[f'{c}_sgd_attn_mean']:.3f} (max|A−1/K| {r[f'{c}_sgd_attn_maxdev']:.1e}), "
                              f"error {r[f'{c}_sgd_err']:.4f}",
                              abs(r[f"{c}_sgd_err"] - 0.375) < 0.02,
                              "query = v̄: uniform attention returns the label mean, which IS the target wᵀv̄ — "
                              "error ≈ 0, not 0.375" if c == "query_vbar" else "N=40 exact counts: c(K−1)/K·(1+…)"))
    for deg in (30, 60) if len(r["inspan30_mc"]) == 4 else ():
        out.append(Comparison(f"in-span (v1,v2) rotation {deg}°, per feature",
                              ", ".join(f"{v:g}" for v in DERIVED_INSPAN[deg]) + f" {DERIVED}",
                              ", ".join(f"{v:.4f}" for v in r[f"inspan{deg}_mc"]) + " (MC, N=40)",
                              None, "large-N derived values vs N=40 measurement; theory at N: "
                              + ", ".join(f"{v:.4f}" for v in r[f"inspan{deg}_theory"])))
    return out


def _compare_forgetting(ft: pd.DataFrame) -> list[Comparison]:
    """F against the derived large-N table and the paper's γ1 = 1 table; the per-feature sign rule (note §6.5)."""
    out = []
    for (g1, g2), ref in DERIVED_F.items():
        m = ft[np.isclose(ft["gamma1"], g1) & np.isclose(ft["gamma2"], g2)]
        if len(m):
            m = m.iloc[0]
            out.append(Comparison(f"F (K=2) γ1={g1}, γ2={g2}", f"{ref:+.5f} {DERIVED}",
                                  f"{m['F']:+.5f} (theory at N {m['F_theory']:+.5f})",
                                  bool(np.sign(m["F"]) == np.sign(ref)), "ok = same sign"))
    for (g1, g2), ref in PAPER_F.items():
        m = ft[np.isclose(ft["gamma1"], g1) & np.isclose(ft["gamma2"], g2)]
        if len(m):
            m = m.iloc[0]
            out.append(Comparison(f"F (K=2) γ1={g1:g}, γ2={g2}", f"{ref:+.3f} {PAPER}", f"{m['F']:+.5f}",
                                  _close(m["F"], ref, 0.5) if ref else abs(m["F"]) < 1e-3,
                                  "the paper's magnitudes are ~100–1000× what this model can produce from a 0.0025 start"))
    agree = ((ft["forgot1"] == ft["pred1"]) & (ft["forgot2"] == ft["pred2"])).mean()
    out.append(Comparison("per-feature forgetting sign vs −γ_kγ_m > γ_k²", "exact for K=2 [paper; note §4.9]",
                          f"{100 * agree:.1f} % of {len(ft)} (γ1, γ2) points", bool(agree == 1.0),
                          "signs with tolerance 1e-9 relative; boundary points count as 'unchanged'"))
    return out


def _compare_tiny(cfg, df: pd.DataFrame) -> list[Comparison]:
    """Tiny transformers' F at γ2 = −0.75 / 0 / +0.75 against the paper's numbers (note §6.6)."""
    out = []
    for _, r in part_rows(df, "tiny").sort_values("layers").iterrows() if "part" in df else []:
        n = int(r["layers"])
        if n in PAPER_TINY:
            g2 = list(r["gamma2_list"])
            meas = [r["F"][g2.index(g)] if g in g2 else float("nan") for g in (-0.75, 0.0, 0.75)]
            out.append(Comparison(f"tiny transformer {n} layer(s): F at γ2 = −0.75/0/+0.75",
                                  " / ".join(f"{v:+.2f}" for v in PAPER_TINY[n]) + f" {PAPER}",
                                  " / ".join(f"{v:+.4f}" for v in meas),
                                  None, f"γ1 = {cfg.tiny_gamma1}; source loss before "
                                        f"{np.mean(r['source_before']):.4f}; the paper's γ convention is unknown"))
    return out


def _compare_minilm(r) -> list[Comparison]:
    """The real encoder: forgetting at θ = π, π/2 and the OOD drop at π/2 against BERT-base on MRPC (note §6.7)."""
    th = list(r["theta_deg"])
    meas = " / ".join(f"{r['F_ce'][th.index(t)]:+.3f}" if t in th else "—" for t in (180, 90))
    return [
        Comparison("real encoder: F at θ = π / π/2",
                   f"{PAPER_ENCODER_F[180]:+.2f} / {PAPER_ENCODER_F[90]:+.2f} [paper, 2nd-hand, BERT-base MRPC]",
                   f"{meas} (MiniLM, country→region, layer {int(r['layer'])})", None,
                   "different model and task; sign pattern is the comparable part"),
        Comparison("real encoder: OOD drop at θ = π/2", "CE 0.35 → 1.28 [paper, 2nd-hand, MRPC]",
                   f"acc {r['source_acc']:.3f} → {r['ood_acc'][th.index(90)] if 90 in th else float('nan'):.3f}; "
                   f"CE {r['source_ce']:.2f} → {r['ood_ce'][th.index(90)] if 90 in th else float('nan'):.2f}",
                   None, "the paper's angle is not stated"),
    ]


def compare(cfg, df: pd.DataFrame) -> list[Comparison]:
    """Every comparison row whose part is in ``df``, in report order."""
    out: list[Comparison] = []
    if (r := first_row(df, "pretrain")) is not None:
        out += _compare_pretrain(cfg, r)
    if (r := first_row(df, "ood")) is not None:
        out += _compare_rotation(r) + _compare_collapse(r)
    ft = forget_table(df)
    if len(ft):
        out += _compare_forgetting(ft)
    out += _compare_tiny(cfg, df)
    if (r := first_row(df, "minilm")) is not None:
        out += _compare_minilm(r)
    return out


def _note_conventions(cfg) -> str:
    return ("**Conventions.** c = 1/2, balanced p, Q(0) = 0, plain SGD on Q (batch "
            f"{cfg.batch_size}, lr {cfg.lr}) on the w-averaged loss (docs/papers/ood.md §4.1), N = {cfg.n_tokens} "
            f"i.i.d. tokens; stopping rule max_k L_k ≤ {cfg.threshold} on the model's exact population loss at N, "
            f"checked every {cfg.log_every} steps. Theory lines are exact population GD at the same N (enumerating "
            "all count vectors) and the large-N limit. The formulas beyond the paper's abstract are iclab's own "
            "derivation (note §4), since the paper's text was not available.")


def _note_pretrain(cfg, r) -> list[str]:
    return [f"- **α\\* differs from the derived 2.872** because that is the large-N limit; at N = {cfg.n_tokens} "
            f"population GD stops at α = {r['theory_alpha_star']:.3f} and SGD at {r['alpha_star']:.3f}."]


def _notes_ood(r) -> list[str]:
    lines = []
    th = list(r["theta_deg"])
    if 30 in th and 60 in th:
        p30, p60 = PAPER_OOD[30], PAPER_OOD[60]
        lines.append(f"- **OOD error at π/6 and π/3**: the paper reports {p30} and {p60:.4f} (2nd-hand); the model gives "
                     f"{r['L_mc'][th.index(30)]:.4f} and {r['L_mc'][th.index(60)]:.4f} (derived large-N "
                     f"{DERIVED_OOD[30]:.4f}, {DERIVED_OOD[60]:.3f}). The ratios paper/measured "
                     f"({p30 / r['L_mc'][th.index(30)]:.2f}, {p60 / r['L_mc'][th.index(60)]:.2f}) are not one common "
                     "factor, so no loss prefactor c explains them; the paper's numbers are not reproduced by the "
                     "model as specified.")
    lines.append(f"- **Query at v̄**: attention is uniform (max|A−1/K| = {r['query_vbar_sgd_attn_maxdev']:.1e} for the "
                 f"SGD-trained Q, {r['query_vbar_closed_attn_maxdev']:.0e} for the symmetric Q\\*), as the paper says, "
                 f"but the error is {r['query_vbar_sgd_err']:.1e}, not 0.375: a uniform average of the labels is "
                 "exactly the target wᵀv̄. Uniform attention is 'random guessing' only when the query is a feature "
                 "(U ⊥ V, or u_k sharing one projection on span V, where the measured error is the label-average "
                 "error). Exact uniformity for a v̄ query needs Qv̄ = 0, i.e. zero *row* sums of S; the conservation "
                 "law gives zero *column* sums, so it holds exactly only for the symmetric (balanced) Q\\*.")
    lines.append("- The collapse condition 'C M = 0 (… or all u_k have the same projection on span V)' is slightly off: "
                 "a common projection a gives S^U = (aᵀSa)·11ᵀ, constant rather than 0 — attention is still uniform "
                 "(docs/papers/ood.md §4.7).")
    return lines


def _notes_forgetting() -> list[str]:
    return ["- **Forgetting magnitudes**: the paper reports (2nd-hand) F = +0.421 / −0.112 / −0.084 / −0.053 / 0.000 "
            "(γ1 = 1, γ2 = −0.9 / −0.2 / 0 / 0.5 / 0.95). Starting from a source loss of 0.0025 per feature and "
            "fine-tuning to the same rule, this model's F is of order 1e-4–1e-3 (the derived large-N table, note §5.8, "
            "agrees). The same summary labels γ2 = −0.9 as forgetting feature 1 (−γ1γ2 = 0.9 > γ1² = 1 is false); it "
            "is feature 2 (0.9 > 0.81) that is forgotten.",
            "- **γ2 = 0.95 'F ≈ 0'** [paper, 2nd-hand]: here F < 0 (backward transfer), because fine-tuning to the "
            "stopping rule still raises α_u and the source α with it."]


def _note_tiny(cfg, tiny: pd.DataFrame) -> str:
    parts, agree, total = [], 0, 0
    for _, r in tiny.sort_values("layers").iterrows():
        parts.append(f"{int(r['layers'])} layer(s): source loss {np.mean(r['source_before']):.4f}, F = "
                     + " / ".join(f"{f:+.3f}" for f in r["F"])
                     + (", layer-1 source Δα = " + " / ".join(f"{v:+.2f}" for v in r["dalpha1_src"])
                        + ", Δβ = " + " / ".join(f"{v:+.2f}" for v in r["dbeta1_src"]) if "dalpha1_src" in r
                        and isinstance(r["dalpha1_src"], list) else ""))
        agree += sum(int(a == b) for a, b in zip(list(r["forgot1"]) + list(r["forgot2"]),
                                                list(r["pred1"]) + list(r["pred2"])))
        total += 2 * len(r["F"])
    g2 = " / ".join(f"{g:+g}" for g in tiny.iloc[0]["gamma2_list"])
    return (f"- **Tiny transformers** (Adam, sampled-w MSE, fixed budget; γ1 = {cfg.tiny_gamma1}, γ2 = {g2}): "
            + "; ".join(parts) + f". The per-feature change follows the merged-Q K = 2 sign rule in {agree} of "
            f"{total} cases. The paper reports (2nd-hand) F = +0.28 / −0.06 / +0.15 (1 layer) growing with depth; here "
            "fine-tuning a transformer with MLPs and LayerNorm on U changes the shared read-in/attention and "
            "the source loss rises even where the merged-Q rule predicts backward transfer (γ2 = 0), and F "
            "does not grow monotonically with depth. The merged-Q derivation does not cover this model.")


def _note_minilm(r) -> str:
    th = list(r["theta_deg"])
    fmt = lambda key: ", ".join(f"{t:g}°: {v:+.2f}" for t, v in zip(th, r[key]))
    return (f"- **Real encoder**: MiniLM instead of BERT-base, a country→region task from countryinfo instead "
            f"of MRPC/MNLI/SNLI (no GLUE offline); {int(r['n_train'])} training and {int(r['n_test'])} test "
            f"sentences, Givens rotation of the hidden states after layer {int(r['layer'])}, frozen encoder, "
            f"linear head. Source accuracy {r['source_acc']:.2f} (majority {r['majority_acc']:.2f}); rotated "
            f"accuracy " + ", ".join(f"{t:g}°: {v:.2f}" for t, v in zip(th, r["ood_acc"])) + ". Forgetting "
            f"ΔCE after fine-tuning the head on rotated inputs: {fmt('F_ce')} (minus the drift of the same "
            f"fine-tuning at θ = 0: {fmt('F_ce_vs_control')}). The paper's θ = π forgetting (+0.25, 2nd-hand) has "
            "the same sign here (θ = π is −I, so a head fit to −h fails on h); its 'orthogonal protection' at π/2 "
            "(−0.03) is not reproduced.")


def notes(cfg, df: pd.DataFrame) -> str:
    """Markdown: the conventions, then every disagreement with the paper and why (docs/papers/ood.md §6)."""
    lines = [_note_conventions(cfg), ""]
    if (r := first_row(df, "pretrain")) is not None:
        lines += _note_pretrain(cfg, r)
    if (r := first_row(df, "ood")) is not None:
        lines += _notes_ood(r)
    if len(forget_table(df)):
        lines += _notes_forgetting()
    tiny = part_rows(df, "tiny")
    if not tiny.empty:
        lines.append(_note_tiny(cfg, tiny))
    if (r := first_row(df, "minilm")) is not None:
        lines.append(_note_minilm(r))
    return "\n".join(lines)
