"""Figures, the paper comparison and the notes of the ``multihead`` experiment (spec §5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from iclab.experiments import Comparison
from iclab.theory import multihead as th

__all__ = ["figures", "compare", "notes"]

# spec §5.2 (authors' notebook, analytic estimators, η = 2·0.13·3.45) and §5.3 (trained models, minus the 0.1
# double-counted noise, see the spec's caveat)
PAPER_52 = {"dgd": {10: 0.6140, 20: 0.3692, 40: 0.2431, 100: 0.1635},
            "gd": {10: 0.6434, 20: 0.3709, 40: 0.2407, 100: 0.1622},
            "mh": {10: 0.6039, 20: 0.3675, 40: 0.2430, 100: 0.1638},
            "nw": {10: 0.8754, 20: 0.5859, 40: 0.4048, 100: 0.2844},
            "bayes": {10: 0.1938, 20: 0.1346, 40: 0.1146, 100: 0.1041}}
PAPER_53 = {1: {10: 0.9469, 20: 0.6744, 40: 0.5060, 100: 0.3809}, 2: {10: 0.6791, 20: 0.4656, 40: 0.3410, 100: 0.2685},
            4: {10: 0.6727, 20: 0.4637, 40: 0.3448, 100: 0.2697}, 8: {10: 0.6843, 20: 0.4739, 40: 0.3357, 100: 0.2684}}
PAPERNOTES = {"d=10, n=20": (10, 20, 0.052, 0.089, 0.061, 0.048), "d=20, n=40": (20, 40, 0.031, 0.058, 0.037, 0.028),
              "d=10, n=100": (10, 100, 0.011, 0.023, 0.014, 0.010)}


def _rows(df: pd.DataFrame, kind: str, attention: str | None = None) -> pd.DataFrame:
    if "kind" not in df:
        return df.iloc[0:0]
    out = df[df["kind"] == kind].copy()
    if "H" in out and len(out) and out["H"].notna().all():
        out["H"] = out["H"].astype(int)
    if attention is not None:
        out = out[out["attention"] == attention] if "attention" in out else out.iloc[0:0]
    return out


def _baseline(df: pd.DataFrame):
    b = _rows(df, "baseline")
    return None if b.empty else b.iloc[0]


def _curve(rows: pd.DataFrame, key: str = "err") -> tuple[np.ndarray, np.ndarray]:
    arr = np.array([list(v) for v in rows[key]], dtype=float)  # (seeds, lengths)
    return arr.mean(0), (arr.std(0, ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else np.zeros(arr.shape[1]))


def _at(lengths, values, n):
    lengths = list(lengths)
    return float(values[lengths.index(n)]) if n in lengths else float("nan")


def figures(cfg, df: pd.DataFrame, fig_dir: Path) -> list[Path]:
    from iclab.plotting import color, new_figure, save_figure, theory_vs_sim

    out: list[Path] = []
    base = _baseline(df)
    iso = _rows(df, "iso", "softmax")
    # 1. training dynamics of the first seed, every H
    if not iso.empty:
        fig, ax = new_figure(4, 1, width=3.6)
        data = {}
        seed0 = iso["seed"].min()
        for i, (_, r) in enumerate(iso[iso["seed"] == seed0].sort_values("H").iterrows()):
            st = np.asarray(r["curve_step"])
            ax[0].plot(st, r["curve_loss"], color=color(i), label=f"H={int(r['H'])}")
            om, mu = np.asarray(r["curve_omega"]), np.asarray(r["curve_mu"])  # (T, H)
            ax[1].plot(st, om, color=color(i), lw=1)
            ax[2].plot(st, mu, color=color(i), lw=1)
            ax[3].plot(st, r["curve_kq_diag_mass"], "-", color=color(i))
            ax[3].plot(st, r["curve_ov_zero_sum"], ":", color=color(i))
            data[f"step_H{int(r['H'])}"] = st
            data[f"loss_H{int(r['H'])}"] = r["curve_loss"]
            for h in range(om.shape[1]):
                data[f"omega_H{int(r['H'])}_{h}"], data[f"mu_H{int(r['H'])}_{h}"] = om[:, h], mu[:, h]
        ax[0].axhline(th.gd_risk(th.eta_star(cfg.d, cfg.n_train, cfg.sigma2), cfg.d, cfg.n_train, cfg.sigma2),
                      color="k", ls="--", lw=1, label="debiased GD (η*)")
        for a, t in zip(ax, ("held-out MSE", "ω^(h) (logit coef.)", "μ^(h) (OV last entry)",
                             "KQ diag. mass (—), OV zero-sum (⋯)")):
            a.set_xscale("log")
            a.set_xlabel("step")
            a.set_title(t)
        ax[1].axhline(0.13, color="k", ls=":", lw=1)
        ax[1].axhline(-0.13, color="k", ls=":", lw=1)
        ax[0].legend()
        out.append(save_figure(fig, fig_dir / "dynamics", pd.DataFrame({k: pd.Series(v) for k, v in data.items()})))
    # 2. ICL error vs prompt length, trained models against estimators
    if base is not None and not iso.empty:
        fig, ax = new_figure(1, 1, width=6.0, height=4.2)
        L = np.asarray(base["lengths"])
        data = {"L": L}
        theory_vs_sim(ax, L, base["th_dgd_star"], base["mc_dgd_star"], label="debiased GD η*", i=7)
        ax.plot(L, base["th_gd_star"], "--", color=color(6), label="one-step GD η* (theory)")
        theory_vs_sim(ax, L, base["th_bayes"], base["mc_bayes"], label="Bayes / ridge", i=5)
        ax.plot(L, base["mc_nw"], "x:", color=color(4), label="single-head NW (ω=1/√d)")
        data.update({k: base[k] for k in ("th_dgd_star", "mc_dgd_star", "th_gd_star", "th_bayes", "mc_bayes", "mc_nw")})
        for i, (H, rows) in enumerate(iso.groupby("H")):
            m, e = _curve(rows)
            theory_vs_sim(ax, rows.iloc[0]["lengths"], None, m, e, label=f"trained H={H}", i=i)
            data[f"H{H}"] = pd.Series(m)
            data["L_trained"] = pd.Series(rows.iloc[0]["lengths"])
        lin = _rows(df, "iso", "linear")
        if not lin.empty:
            m, e = _curve(lin)
            ax.plot(lin.iloc[0]["lengths"], m, "D--", color=color(3), mfc="white", label="trained linear attn.")
            data["linear"] = pd.Series(m)
        ax.axvline(cfg.n_train, color="grey", lw=0.8)
        ax.set_xlabel("prompt length L")
        ax.set_ylabel("E(ŷ − y_q)² (incl. σ²)")
        ax.set_yscale("log")
        ax.legend(ncol=2)
        out.append(save_figure(fig, fig_dir / "error_vs_length", pd.DataFrame({k: pd.Series(v) for k, v in data.items()})))
        # 3. head-count ablation at the training length
        fig, ax = new_figure(1, 1)
        Hs, ms, es = [], [], []
        for H, rows in iso.groupby("H"):
            m, e = _curve(rows)
            Hs.append(H); ms.append(_at(rows.iloc[0]["lengths"], m, cfg.n_train)); es.append(_at(rows.iloc[0]["lengths"], e, cfg.n_train))
        ax.errorbar(Hs, ms, es, fmt="o-", color=color(0), label="trained softmax")
        for key, lab, i in (("th_dgd_star", "debiased GD η*", 7), ("th_bayes", "Bayes", 5), ("mc_nw", "single-head NW", 4)):
            ax.axhline(_at(L, base[key], cfg.n_train), color=color(i), ls="--", lw=1, label=lab)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("heads H")
        ax.set_ylabel(f"error at L = {cfg.n_train}")
        ax.legend()
        out.append(save_figure(fig, fig_dir / "head_ablation", {"H": Hs, "err": ms, "se": es}))
    # 4. length generalisation softmax vs linear
    lg = _rows(df, "lengthgen")
    if base is not None and not lg.empty:
        fig, ax = new_figure(1, 1, width=5.0)
        L = np.asarray(base["lengths"])
        theory_vs_sim(ax, L, base["th_dgd_lg"], None, label=f"debiased GD, η*(L={cfg.lengthgen_train})", i=7)
        ax.plot(L, base["th_linear_lg"], "--", color=color(3), label="GD with 1/L frozen (linear-attn. theory)")
        data = {"L": L, "th_dgd_lg": base["th_dgd_lg"], "th_linear_lg": base["th_linear_lg"]}
        for i, (att, rows) in enumerate(lg.groupby("attention")):
            m, e = _curve(rows)
            theory_vs_sim(ax, rows.iloc[0]["lengths"], None, m, e, label=f"trained {att}", i=i)
            data[att] = pd.Series(m)
            data["L_trained"] = pd.Series(rows.iloc[0]["lengths"])
        ax.axvline(cfg.lengthgen_train, color="grey", lw=0.8)
        ax.set_yscale("log")
        ax.set_xlabel("test prompt length")
        ax.set_ylabel("E(ŷ − y_q)²")
        ax.legend()
        out.append(save_figure(fig, fig_dir / "length_generalisation", pd.DataFrame({k: pd.Series(v) for k, v in data.items()})))
    # 5. anisotropic: learned KQ block vs Σ⁻¹
    an = _rows(df, "aniso")
    if not an.empty:
        r = an.iloc[0]
        blk, prec = np.asarray(r["kq_block"]), np.asarray(r["sigma_inv"])
        fig, ax = new_figure(2, 1, width=3.4)
        for a, m, t in ((ax[0], blk / np.abs(blk).max(), f"learned sign-aligned s·KQ (corr {r['corr_sigma_inv']:.2f})"),
                        (ax[1], prec / np.abs(prec).max(), "Σ⁻¹")):
            im = a.imshow(m, cmap="RdBu_r", vmin=-1, vmax=1)
            a.set_title(t, fontsize=8)
            a.grid(False)
        fig.colorbar(im, ax=ax[1], fraction=0.046, pad=0.04)
        out.append(save_figure(fig, fig_dir / "anisotropic_kq", {"learned": blk.ravel(), "sigma_inv": prec.ravel()}))
    # 6. multi-task heads
    mt = _rows(df, "multitask")
    if not mt.empty:
        rows = mt[mt["seed"] == mt["seed"].min()].sort_values("H")
        fig, ax = new_figure(len(rows), 2, width=3.0, height=2.4)
        ax = np.atleast_1d(ax).reshape(2, -1)
        data = {}
        for j, (_, r) in enumerate(rows.iterrows()):
            om, mu = np.asarray(r["omega_vec"]), np.asarray(r["mu_mat"])
            s = max(np.abs(om).max(), 1e-12)
            ax[0, j].imshow(om / s, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
            ax[0, j].set_title(f"H={int(r['H'])}: ω^(h)_i (rows: heads)", fontsize=8)
            ax[1, j].imshow(mu / max(np.abs(mu).max(), 1e-12), cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
            ax[1, j].set_title("μ^(h)_n (cols: tasks)", fontsize=8)
            for a in ax[:, j]:
                a.grid(False)
            data[f"H{int(r['H'])}_omega"] = pd.Series(om.ravel())
            data[f"H{int(r['H'])}_mu"] = pd.Series(mu.ravel())
        out.append(save_figure(fig, fig_dir / "multitask_heads", pd.DataFrame(data)))
    return out


def _fmt(x) -> str:
    return "—" if x is None or (isinstance(x, float) and not np.isfinite(x)) else f"{x:.4g}"


def compare(cfg, df: pd.DataFrame) -> list[Comparison]:
    rows: list[Comparison] = []
    d, n, s2 = cfg.d, cfg.n_train, cfg.sigma2
    paper_setting = (d, n, s2) == (5, 40, 0.1)
    base = _baseline(df)
    eta = th.eta_star(d, n, s2)
    iso = _rows(df, "iso", "softmax")
    multi = iso[iso["H"] >= 2] if not iso.empty else iso
    note_q = "" if cfg.steps >= 100_000 else f" (only {cfg.steps} steps here vs 5e5 in the paper: stage II, the slow decay of |ω|, is not finished)"
    if not multi.empty:
        g = float(multi["diag_gamma"].mean())
        rows.append(Comparison("limiting |ω^(h)|, H ≥ 2 (§5.1)", "≈ 0.13 (logged /√7) ≈ 0.14 (/√6)", _fmt(g),
                               (abs(g - 0.14) < 0.03) if cfg.steps >= 100_000 else None, "mean over non-dummy heads, /√(d+1)" + note_q))
        mp = float(multi["diag_mu_plus"].mean())
        rows.append(Comparison("Σ_{h∈H+} μ^(h), H ≥ 2 (§5.1)", "≈ 3.5 (3.45)", _fmt(mp),
                               (abs(mp - 3.45) < 0.7) if cfg.steps >= 100_000 else None,
                               "μ_γ grows as γ shrinks (μ_γ ≈ η*/(2γ))" + note_q))
        ee = float(multi["diag_eta_eff"].mean())
        rows.append(Comparison("effective step η_eff = Σ_h μω, H ≥ 2 (§4.3)", f"≈ 0.90 (paper); η* = {eta:.3f} (Thm 1)",
                               _fmt(ee), abs(ee - eta) < 0.1, "tolerance ±0.1 around η*"))
        h2 = iso[iso["H"] == 2]
        if not h2.empty:
            for key, lab, ref in (("kq_diag_mass", "KQ diagonal mass, H = 2", "0.99926"),
                                  ("ov_last_mass", "OV last-entry mass, H = 2", "0.99994")):
                v = float(h2[f"diag_{key}"].mean())
                rows.append(Comparison(f"{lab} (§5.1)", ref, _fmt(v), v >= 0.98,
                                       "paper's exact definition unknown; here Σdiag²/Σall² (KQ top block), μ²/‖OV row‖²; ok if ≥ 0.98" + note_q))
            v = float(h2["diag_ov_zero_sum"].mean())
            rows.append(Comparison("OV zero-sum |Σμ|/Σ|μ|, H = 2 (§1)", "≈ 0", _fmt(v), v < 0.1, "ok if < 0.1"))
            v = float(h2["dgd_rel_fit"].mean())
            rows.append(Comparison("distance to debiased GD, H = 2 (Thm 1)", "≈ debiased GD", _fmt(v), v < 0.05,
                                   "E(ŷ−ŷ_gd)²/Eŷ_gd² on held-out prompts at the best-fit step; ok if < 0.05"))
    if base is not None and paper_setting:
        L = list(base["lengths"])
        for key, col, se_key, lab in (("dgd", "th_dgd_paper", "se_dgd_paper", "debiased GD η=0.897 (closed form)"),
                                      ("gd", "th_gd_paper", "se_gd_paper", "one-step GD η=0.897 (closed form)"),
                                      ("mh", "mc_mh_paper", "se_mh_paper", "2-head ω=±0.13, μ=±3.45 (MC)"),
                                      ("nw", "mc_nw", "se_nw", "single-head NW (MC)"),
                                      ("bayes", "mc_bayes", "se_bayes", "ridge/Bayes (MC)")):
            for Lp in (10, 40, 100):
                if Lp in L and col in base and isinstance(base[col], (list, tuple, np.ndarray)):
                    i = L.index(Lp)
                    v, ref = float(base[col][i]), PAPER_52[key][Lp]
                    # the paper's value is an MC mean over 5e4 prompts; ours too unless closed form
                    se_paper = float(base[se_key][i]) * np.sqrt(cfg.n_mc / 50_000)
                    se = np.hypot(se_paper, 0.0 if col.startswith("th_") else float(base[se_key][i]))
                    tol = max(3.0 * se, 0.003)
                    rows.append(Comparison(f"§5.2 {lab}, L = {Lp}", f"{ref:.4f}", f"{v:.4f}", abs(v - ref) <= tol,
                                           f"tolerance ±{tol:.3f} = 3 MC standard errors (paper 5e4 prompts, ours {cfg.n_mc})"))
    if not iso.empty and paper_setting:
        for H, grp in iso.groupby("H"):
            if H not in PAPER_53:
                continue
            m, _ = _curve(grp)
            for Lp in (10, 40, 100):
                v = _at(grp.iloc[0]["lengths"], m, Lp)
                if np.isfinite(v):
                    ref = PAPER_53[H][Lp] - 0.1
                    rows.append(Comparison(f"§5.3 trained H = {H}, L' = {Lp}", f"{ref:.4f} (table − 0.1)", f"{v:.4f}",
                                           abs(v - ref) < 0.04, "tolerance ±0.04; the table's +0.1 double-counts σ² (spec §5.3)" + note_q))
        errs = {H: _at(g.iloc[0]["lengths"], _curve(g)[0], n) for H, g in iso.groupby("H")}
        if 1 in errs and len(errs) > 1:
            spread = max(v for H, v in errs.items() if H >= 2) - min(v for H, v in errs.items() if H >= 2)
            rows.append(Comparison("H ≥ 2 indistinguishable, H = 1 clearly worse (§5.3)",
                                   "H≥2 within ~0.01; H=1 +0.16", f"H≥2 spread {spread:.3f}; H=1 − best H≥2 = "
                                   f"{errs[1] - min(v for H, v in errs.items() if H >= 2):.3f}",
                                   spread < 0.03 and errs[1] > max(v for H, v in errs.items() if H >= 2), "at L = n_train"))
    lg = _rows(df, "lengthgen")
    if not lg.empty:
        for att, grp in lg.groupby("attention"):
            m, _ = _curve(grp)
            Ls = list(grp.iloc[0]["lengths"])
            a, b = _at(Ls, m, cfg.lengthgen_train), m[-1]
            if att == "softmax":
                rows.append(Comparison(f"softmax keeps improving past the training length (§5.3), {cfg.lengthgen_train} → {Ls[-1]}",
                                       "yes", f"{_fmt(a)} → {_fmt(b)}", bool(b < a)))
            else:
                rows.append(Comparison(f"linear attention degrades past the training length (Fig. 4.1), {cfg.lengthgen_train} → {Ls[-1]}",
                                       "yes (no numbers)", f"{_fmt(a)} → {_fmt(b)}", bool(b > a),
                                       "theory: GD with 1/L frozen has step η·L/L_train"))
    an = _rows(df, "aniso")
    if not an.empty:
        c = float(an["corr_sigma_inv"].mean())
        rows.append(Comparison("anisotropic: corr(learned KQ block, Σ⁻¹) (§4.6)", "Ω ≈ Σ⁻¹ (qualitative)",
                               f"{c:.3f} (vs I: {float(an['corr_identity'].mean()):.3f})", c > 0.9,
                               f"Toeplitz ρ = {cfg.aniso_rho}; ok if > 0.9" + note_q))
    mt = _rows(df, "multitask")
    for _, r in mt.iterrows():
        H = int(r["H"])
        exp = "superposition (heads shared by tasks)" if 2 < H < 4 else ("one head pair per task" if H >= 4 else "shared weighted NW/DGD")
        rows.append(Comparison(f"multi-task N = 2, H = {H} (§4.7, §5.5)", exp,
                               f"heads serving both tasks: {int(r['heads_serving_both'])}; heads per task {r['heads_per_task']}; "
                               f"task MSE {np.round(r['err_per_task'], 3).tolist()} vs per-task DGD {np.round(r['err_dgd_per_task'], 3).tolist()}",
                               None, "qualitative; a head 'serves' task n if |μ_n|·‖ω_{S_n}‖ ≥ 10% of the max"))
    # §5.4: the seed summary (papernotes), checked against theory
    for key, (dd, LL, mh, sh, lin, bay) in PAPERNOTES.items():
        b_lim = th.bayes_risk(dd, LL, s2, n_mc=500)[0]
        dg = float(th.gd_risk(th.eta_star(dd, LL, s2), dd, LL, s2))
        rows.append(Comparison(f"§5.4 seed summary {key} (UNRELIABLE source)",
                               f"multi-head {mh}, single {sh}, linear {lin}, Bayes {bay}",
                               f"theory: debiased GD {dg:.3f}, Bayes risk {b_lim:.3f} (noisy target)", False,
                               "the summary's numbers are below the Bayes risk, impossible for any predictor"))
    e20 = th.eta_star(10, 20, s2)
    rows.append(Comparison("§5.4 seed summary, length gen. 20 → 100 (d = 10)", "softmax 0.013; linear 0.078",
                           f"theory: debiased GD {float(th.gd_risk(e20, 10, 100, s2)):.3f}; frozen-1/L GD "
                           f"{float(th.gd_risk(e20 * 5, 10, 100, s2, False)):.2f}", False,
                           "the summary's values are below the noise floor σ² = 0.1 of a noisy target"))
    return rows


def notes(cfg, df: pd.DataFrame) -> str:
    eta = th.eta_star(cfg.d, cfg.n_train, cfg.sigma2)
    lines = [
        "**Where paper and iclab differ, and why.**",
        f"- Exact risks: debiased GD has E(ŷ−y)² = 1+σ²−2η(L−1)/L + η²(L−1)(L+d+σ²d)/L² (derived; exact for finite L, "
        f"checked by MC in tests). At d=5, L=40, η* = {eta:.3f} this is "
        f"{float(th.gd_risk(eta, cfg.d, cfg.n_train, cfg.sigma2)):.4f}; the spec's §5.4 MC value 0.236 is ~3 s.e. low, its "
        "§4.4 value 0.221 is the L→∞ limit 1+σ²−η*. The authors' own §5.2 value 0.2431 (η = 0.897) matches the closed form.",
        "- The §5.3 table of trained models includes σ² twice (MSE on noisy targets + 0.1); we compare with table − 0.1.",
        "- The seed-summary table (spec §5.4, from an AI-written note) is not reproduced: its errors lie below the Bayes "
        "risk at those (d, n), and its H = 8 ≠ H = 4 contradicts the authors' finding that all H ≥ 2 coincide.",
    ]
    if cfg.steps < 100_000:
        lines.append(f"- This run trains {cfg.steps} steps at lr {cfg.lr} (the paper: 5e5 steps at 1e-3). Stage I "
                     "(diagonal KQ, last-entry zero-sum OV, sign matching) appears within these steps for most seeds, "
                     "but stage II (|ω| decaying toward ≈0.13 while Σμ₊ grows) is far from finished, so γ is larger "
                     "and Σμ₊ smaller than the paper's limits while η_eff = Σμω is already near η*. A seed can also "
                     "sit on the single-head plateau (one dummy head, zero-sum ≈ 1) for a while before escaping.")
    lines.append("- Multi-task: the blog's data version is used (shared β ~ N(0, I/d), σ² = 0.1, L = n_train); the "
                 "authors' code differs (spec §3.4).")
    return "\n".join(lines)
