"""The ``multihead`` experiment against arXiv:2503.12734: one function per comparison (a row, or a table of
rows of one kind), and the notes on every disagreement (docs/papers/multihead.md §6)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from iclab.experiments import Comparison
from iclab.experiments.multihead.paper_values import FIG24_TRAINED, FIG25_ESTIMATORS, SEED_SUMMARY
from iclab.experiments.multihead.results import baseline_row, format_number, mean_curve, part_rows, value_at
from iclab.theory import multihead as th

__all__ = ["compare", "notes"]

_STAGE_II_STEPS = 100_000  # steps from which stage II counts as run (the paper trains 5e5)


def _short_run_note(cfg) -> str:
    if cfg.steps >= _STAGE_II_STEPS:
        return ""
    return f" (only {cfg.steps} steps here vs 5e5 in the paper: stage II, the slow decay of |ω|, is not finished)"


def _limiting_omega(cfg, multi: pd.DataFrame) -> list[Comparison]:
    g = float(multi["diag_gamma"].mean())
    return [Comparison("limiting |ω^(h)|, H ≥ 2 (Fig. 2.8)", "≈ 0.13 (logged /√7) ≈ 0.14 (/√6)",
                       format_number(g),
                       (abs(g - 0.14) < 0.03) if cfg.steps >= _STAGE_II_STEPS else None,
                       "mean over non-dummy heads, /√(d+1)" + _short_run_note(cfg))]


def _limiting_mu_plus(cfg, multi: pd.DataFrame) -> list[Comparison]:
    mp = float(multi["diag_mu_plus"].mean())
    return [Comparison("Σ_{h∈H+} μ^(h), H ≥ 2 (Fig. 2.8)", "≈ 3.5 (3.45)", format_number(mp),
                       (abs(mp - 3.45) < 0.7) if cfg.steps >= _STAGE_II_STEPS else None,
                       "μ_γ grows as γ shrinks (μ_γ ≈ η*/(2γ))" + _short_run_note(cfg))]


def _effective_step(cfg, multi: pd.DataFrame) -> list[Comparison]:
    eta = th.eta_star(cfg.d, cfg.n_train, cfg.sigma2)
    ee = float(multi["diag_eta_eff"].mean())
    return [Comparison("effective step η_eff = Σ_h μω, H ≥ 2 (Thm 1)", f"≈ 0.90 (paper); η* = {eta:.3f} (Thm 1)",
                       format_number(ee), abs(ee - eta) < 0.1, "tolerance ±0.1 around η*")]


def _two_head_purity(cfg, h2: pd.DataFrame) -> list[Comparison]:
    rows = []
    for key, lab, ref in (("kq_diag_mass", "KQ diagonal mass, H = 2", "0.99926"),
                          ("ov_last_mass", "OV last-entry mass, H = 2", "0.99994")):
        v = float(h2[f"diag_{key}"].mean())
        rows.append(Comparison(f"{lab} (Fig. 2.2)", ref, format_number(v), v >= 0.98,
                               "paper's exact definition unknown; here Σdiag²/Σall² (KQ top block), μ²/‖OV row‖²; "
                               "ok if ≥ 0.98" + _short_run_note(cfg)))
    return rows


def _two_head_zero_sum(h2: pd.DataFrame) -> list[Comparison]:
    v = float(h2["diag_ov_zero_sum"].mean())
    return [Comparison("OV zero-sum |Σμ|/Σ|μ|, H = 2 (Fig. 2.2)", "≈ 0", format_number(v), v < 0.1,
                       "ok if < 0.1")]


def _two_head_is_debiased_gd(h2: pd.DataFrame) -> list[Comparison]:
    v = float(h2["dgd_rel_fit"].mean())
    return [Comparison("distance to debiased GD, H = 2 (Thm 1)", "≈ debiased GD", format_number(v), v < 0.05,
                       "E(ŷ−ŷ_gd)²/Eŷ_gd² on held-out prompts at the best-fit step; ok if < 0.05")]


def _fig25_estimators(cfg, base: pd.Series) -> list[Comparison]:
    """The analytic estimators of Fig. 2.5 at L = 10, 40, 100, within 3 Monte Carlo standard errors."""
    rows, L = [], list(base["lengths"])
    for key, col, se_key, lab in (("dgd", "th_dgd_paper", "se_dgd_paper", "debiased GD η=0.897 (closed form)"),
                                  ("gd", "th_gd_paper", "se_gd_paper", "one-step GD η=0.897 (closed form)"),
                                  ("mh", "mc_mh_paper", "se_mh_paper", "2-head ω=±0.13, μ=±3.45 (MC)"),
                                  ("nw", "mc_nw", "se_nw", "single-head NW (MC)"),
                                  ("bayes", "mc_bayes", "se_bayes", "ridge/Bayes (MC)")):
        for Lp in (10, 40, 100):
            if Lp in L and col in base and isinstance(base[col], (list, tuple, np.ndarray)):
                i = L.index(Lp)
                v, ref = float(base[col][i]), FIG25_ESTIMATORS[key][Lp]
                # the paper's value is an MC mean over 5e4 prompts; ours too unless closed form
                se_paper = float(base[se_key][i]) * np.sqrt(cfg.n_mc / 50_000)
                se = np.hypot(se_paper, 0.0 if col.startswith("th_") else float(base[se_key][i]))
                tol = max(3.0 * se, 0.003)
                rows.append(Comparison(f"Fig. 2.5 {lab}, L = {Lp}", f"{ref:.4f}", f"{v:.4f}", abs(v - ref) <= tol,
                                       f"tolerance ±{tol:.3f} = 3 MC standard errors (paper 5e4 prompts, ours "
                                       f"{cfg.n_mc})"))
    return rows


def _fig24_trained(cfg, iso: pd.DataFrame) -> list[Comparison]:
    """Trained softmax models of Fig. 2.4 at L' = 10, 40, 100 (the figure's values − 0.1), within ±0.04."""
    rows = []
    for H, grp in iso.groupby("H"):
        if H not in FIG24_TRAINED:
            continue
        m, _ = mean_curve(grp)
        for Lp in (10, 40, 100):
            v = value_at(grp.iloc[0]["lengths"], m, Lp)
            if np.isfinite(v):
                ref = FIG24_TRAINED[H][Lp] - 0.1
                rows.append(Comparison(f"Fig. 2.4 trained H = {H}, L' = {Lp}", f"{ref:.4f} (table − 0.1)", f"{v:.4f}",
                                       abs(v - ref) < 0.04, "tolerance ±0.04; the table's +0.1 double-counts σ² "
                                       "(docs/papers/multihead.md §6.1)" + _short_run_note(cfg)))
    return rows


def _head_count(cfg, iso: pd.DataFrame) -> list[Comparison]:
    """H ≥ 2 within 0.03 of each other and H = 1 worse than all of them, at the training length."""
    errs = {H: value_at(g.iloc[0]["lengths"], mean_curve(g)[0], cfg.n_train) for H, g in iso.groupby("H")}
    if 1 not in errs or len(errs) <= 1:
        return []
    multi = [v for H, v in errs.items() if H >= 2]
    spread = max(multi) - min(multi)
    return [Comparison("H ≥ 2 indistinguishable, H = 1 clearly worse (Fig. 2.4)", "H≥2 within ~0.01; H=1 +0.16",
                       f"H≥2 spread {spread:.3f}; H=1 − best H≥2 = {errs[1] - min(multi):.3f}",
                       spread < 0.03 and errs[1] > max(multi), "at L = n_train")]


def _length_generalisation(cfg, lg: pd.DataFrame) -> list[Comparison]:
    """Softmax keeps improving past the training length (Fig. 2.4); linear attention degrades (Fig. 4.1)."""
    rows = []
    for att, grp in lg.groupby("attention"):
        m, _ = mean_curve(grp)
        Ls = list(grp.iloc[0]["lengths"])
        a, b = value_at(Ls, m, cfg.lengthgen_train), m[-1]
        span = f"{cfg.lengthgen_train} → {Ls[-1]}"
        if att == "softmax":
            rows.append(Comparison(f"softmax keeps improving past the training length (Fig. 2.4), {span}", "yes",
                                   f"{format_number(a)} → {format_number(b)}", bool(b < a)))
        else:
            rows.append(Comparison(f"linear attention degrades past the training length (Fig. 4.1), {span}",
                                   "yes (no numbers)", f"{format_number(a)} → {format_number(b)}", bool(b > a),
                                   "theory: GD with 1/L frozen has step η·L/L_train"))
    return rows


def _anisotropic(cfg, an: pd.DataFrame) -> list[Comparison]:
    c = float(an["corr_sigma_inv"].mean())
    return [Comparison("anisotropic: corr(learned KQ block, Σ⁻¹) (Fig. 3.1)", "Ω ≈ Σ⁻¹ (qualitative)",
                       f"{c:.3f} (vs I: {float(an['corr_identity'].mean()):.3f})", c > 0.9,
                       f"Toeplitz ρ = {cfg.aniso_rho}; ok if > 0.9" + _short_run_note(cfg))]


def _multitask(mt: pd.DataFrame) -> list[Comparison]:
    """Qualitative: which heads serve which task, for each multi-task model (N = 2)."""
    rows = []
    for _, r in mt.iterrows():
        H = int(r["H"])
        exp = ("superposition (heads shared by tasks)" if 2 < H < 4 else
               ("one head pair per task" if H >= 4 else "shared weighted NW/DGD"))
        rows.append(Comparison(f"multi-task N = 2, H = {H} (Figs. 3.2–3.5)", exp,
                               f"heads serving both tasks: {int(r['heads_serving_both'])}; heads per task "
                               f"{r['heads_per_task']}; task MSE {np.round(r['err_per_task'], 3).tolist()} vs "
                               f"per-task DGD {np.round(r['err_dgd_per_task'], 3).tolist()}",
                               None, "qualitative; a head 'serves' task n if |μ_n|·‖ω_{S_n}‖ ≥ 10% of the max"))
    return rows


def _seed_summary(cfg) -> list[Comparison]:
    """The second-hand summary's table against iclab's theory: below the Bayes risk, so impossible."""
    rows, s2 = [], cfg.sigma2
    for key, (dd, LL, mh, sh, lin, bay) in SEED_SUMMARY.items():
        b_lim = th.bayes_risk(dd, LL, s2, n_mc=500)[0]
        dg = float(th.gd_risk(th.eta_star(dd, LL, s2), dd, LL, s2))
        rows.append(Comparison(f"seed summary {key} (UNRELIABLE source)",
                               f"multi-head {mh}, single {sh}, linear {lin}, Bayes {bay}",
                               f"theory: debiased GD {dg:.3f}, Bayes risk {b_lim:.3f} (noisy target)", False,
                               "the summary's numbers are below the Bayes risk, impossible for any predictor "
                               "(docs/papers/multihead.md §6.4)"))
    return rows


def _seed_summary_lengthgen(cfg) -> list[Comparison]:
    s2 = cfg.sigma2
    e20 = th.eta_star(10, 20, s2)
    return [Comparison("seed summary, length gen. 20 → 100 (d = 10)", "softmax 0.013; linear 0.078",
                       f"theory: debiased GD {float(th.gd_risk(e20, 10, 100, s2)):.3f}; frozen-1/L GD "
                       f"{float(th.gd_risk(e20 * 5, 10, 100, s2, False)):.2f}", False,
                       "the summary's values are below the noise floor σ² = 0.1 of a noisy target")]


def compare(cfg, df: pd.DataFrame) -> list[Comparison]:
    """Every comparison whose parts are in ``df``; the paper's tables only at its setting d = 5, L = 40, σ² = 0.1."""
    rows: list[Comparison] = []
    paper_setting = (cfg.d, cfg.n_train, cfg.sigma2) == (5, 40, 0.1)
    base = baseline_row(df)
    iso = part_rows(df, "iso", "softmax")
    multi = iso[iso["H"] >= 2] if not iso.empty else iso
    if not multi.empty:
        rows += _limiting_omega(cfg, multi) + _limiting_mu_plus(cfg, multi) + _effective_step(cfg, multi)
        h2 = iso[iso["H"] == 2]
        if not h2.empty:
            rows += _two_head_purity(cfg, h2) + _two_head_zero_sum(h2) + _two_head_is_debiased_gd(h2)
    if base is not None and paper_setting:
        rows += _fig25_estimators(cfg, base)
    if not iso.empty and paper_setting:
        rows += _fig24_trained(cfg, iso) + _head_count(cfg, iso)
    lg, an = part_rows(df, "lengthgen"), part_rows(df, "aniso")
    if not lg.empty:
        rows += _length_generalisation(cfg, lg)
    if not an.empty:
        rows += _anisotropic(cfg, an)
    rows += _multitask(part_rows(df, "multitask"))
    return rows + _seed_summary(cfg) + _seed_summary_lengthgen(cfg)


def notes(cfg, df: pd.DataFrame) -> str:
    """Markdown: where the paper and iclab differ, and why (docs/papers/multihead.md §6)."""
    eta = th.eta_star(cfg.d, cfg.n_train, cfg.sigma2)
    lines = [
        "**Where paper and iclab differ, and why** (docs/papers/multihead.md §6).",
        f"- Exact risks: debiased GD has E(ŷ−y)² = 1+σ²−2η(L−1)/L + η²(L−1)(L+d+σ²d)/L² (derived; exact for finite L, "
        f"checked by MC in tests). At d=5, L=40, η* = {eta:.3f} this is "
        f"{float(th.gd_risk(eta, cfg.d, cfg.n_train, cfg.sigma2)):.4f}; an earlier independent MC estimate, 0.236, "
        "is ~3 s.e. low, and 0.221 is the L→∞ limit 1+σ²−η*. The authors' own Fig. 2.5 value 0.2431 (η = 0.897) "
        "matches the closed form.",
        "- The Fig. 2.4 values of trained models include σ² twice (MSE on noisy targets + 0.1); we compare with "
        "value − 0.1.",
        "- The seed-summary table (from an AI-written note, not the paper) is not reproduced: its errors lie below the "
        "Bayes risk at those (d, n), and its H = 8 ≠ H = 4 contradicts the authors' finding that all H ≥ 2 coincide.",
    ]
    if cfg.steps < _STAGE_II_STEPS:
        lines.append(f"- This run trains {cfg.steps} steps at lr {cfg.lr} (the paper: 5e5 steps at 1e-3). Stage I "
                     "(diagonal KQ, last-entry zero-sum OV, sign matching) appears within these steps for most seeds, "
                     "but stage II (|ω| decaying toward ≈0.13 while Σμ₊ grows) is far from finished, so γ is larger "
                     "and Σμ₊ smaller than the paper's limits while η_eff = Σμω is already near η*. A seed can also "
                     "sit on the single-head plateau (one dummy head, zero-sum ≈ 1) for a while before escaping.")
    lines.append("- Multi-task: the data of the authors' post is used (shared β ~ N(0, I/d), σ² = 0.1, L = n_train); "
                 "the authors' code differs (docs/papers/multihead.md §6.7).")
    return "\n".join(lines)
