"""Figures, paper comparison and notes of the ``ood`` experiment (theory = lines, measurement = markers).

Reference values: [spec] = the spec's derived large-N numbers (§5.2, c = 1/2, GD with η = 1); [seed] = the
second-hand summary's reported numbers (seeds/001_…txt), which the spec flags as unreliable.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from iclab.experiments import Comparison
from iclab.plotting import new_figure, save_figure, theory_vs_sim
from iclab.plotting import PALETTE

__all__ = ["figures", "compare", "notes"]

SPEC_F = {(0.5, -0.9): 0.00034, (0.5, -0.2): -0.00017, (0.5, 0.0): -0.00058, (0.5, 0.5): -0.00163,
          (0.5, 0.95): -0.00183, (0.8, -0.9): 0.00006, (0.8, -0.2): -0.00028, (0.8, 0.0): -0.00089,
          (0.8, 0.5): -0.00185, (0.8, 0.95): -0.00164}
SEED_F = {(1.0, -0.9): 0.421, (1.0, -0.2): -0.112, (1.0, 0.0): -0.084, (1.0, 0.5): -0.053, (1.0, 0.95): 0.0}
SEED_TINY = {1: (0.28, -0.06, 0.15), 2: (0.35, -0.05, 0.18), 3: (0.41, -0.04, 0.22)}  # γ2 = -0.75 / 0 / +0.75
SPEC_INSPAN = {30: (0.0119, 0.0015, 0.0035, 0.0035), 60: (0.038, 0.0065, 0.0084, 0.0084)}


def _part(df: pd.DataFrame, part: str) -> pd.DataFrame:
    return df[df["part"] == part] if "part" in df else df.iloc[0:0]


def _row(df, part):
    sub = _part(df, part)
    return None if sub.empty else sub.iloc[0]


def _forget_table(df) -> pd.DataFrame:
    rows = []
    for _, r in _part(df, "forget").iterrows():
        for i, g2 in enumerate(r["gamma2_list"]):
            rows.append({"gamma1": float(r["gamma1"]), "gamma2": float(g2), **{k: r[k][i] for k in (
                "F", "F_theory", "F_largeN", "forgot1", "forgot2", "pred1", "pred2", "src1_after", "src2_after",
                "ood1_before", "ood2_before", "steps", "theory_steps", "backproj_dev", "conservation_ft")}})
    return pd.DataFrame(rows)


def _fig_trajectories(r, fig_dir: Path) -> Path:
    fig, (a, b) = new_figure(2)
    st = np.asarray(r["traj_step"])
    for i, (name, sym) in enumerate((("alpha", "α"), ("beta", "β"))):
        th = np.asarray(r[f"theory_{name}"])
        theory_vs_sim(a, st, None, np.asarray(r[f"traj_{name}"]), label=f"{sym} (SGD, N=40)", i=i)
        a.fill_between(st, r[f"traj_{name}_min"], r[f"traj_{name}_max"], color=PALETTE[i], alpha=0.2)
        a.plot(np.arange(len(th)), th, "-", color=PALETTE[i], label=f"{sym} population GD, N=40")
        lg = np.asarray(r[f"largeN_{name}"])
        a.plot(np.arange(len(lg)), lg, ":", color=PALETTE[i], label=f"{sym} large-N theory")
    a.set_xlabel("step")
    a.set_ylabel("logit")
    a.set_title("α/β during pre-training (K=4, d=8)")
    a.legend(fontsize=7)
    b.semilogy(st, np.maximum(r["traj_conservation"], 1e-18), "o", ms=3, label="max_k |α_k + Σ_m β_mk|")
    b.semilogy(st, np.maximum(r["traj_offspan"], 1e-18), "s", ms=3, mfc="white", label="‖Q − P_V Q P_V‖_F")
    b.axhline(1e-6, color="k", ls="--", lw=1, label="spec check level 1e-6")
    b.set_xlabel("step")
    b.set_title("conservation law, span (every log step)")
    b.legend(fontsize=7)
    data = {"step": st, "alpha": r["traj_alpha"], "beta": r["traj_beta"], "conservation": r["traj_conservation"],
            "offspan": r["traj_offspan"]}
    return save_figure(fig, fig_dir / "ood_trajectories", data)


def _fig_rotation(r, fig_dir: Path) -> Path:
    fig, (a, b) = new_figure(2)
    th = np.asarray(r["theta_deg"])
    theory_vs_sim(a, th, r["L_theory"], r["L_mc"], r["L_se"], label="OOD error, N=40", i=0)
    a.plot(th, r["L_largeN"], ":", color=PALETTE[0], label="large-N theory (spec §4.6)")
    a.axhline(r["random_guess_N"], color="k", ls="--", lw=1, label="random guessing (uniform attention)")
    a.plot([30, 60], [0.0182, 0.1450], "x", color="k", ms=8, label="seed-reported")
    a.set_yscale("log")
    a.set_xlabel("rotation angle θ (degrees)")
    a.set_ylabel("mean per-feature OOD loss")
    a.set_title("OOD error under rotation (K=4, d=8)")
    a.legend(fontsize=7)
    theory_vs_sim(b, th, r["alpha_u_closed"], r["alpha_u"], label="α_u", i=1)
    theory_vs_sim(b, th, r["beta_u_closed"], r["beta_u"], label="β_u", i=2)
    b.set_xlabel("rotation angle θ (degrees)")
    b.set_title("OOD α/β: closed form (§4.5) vs UᵀQU")
    b.legend(fontsize=7)
    data = {k: r[k] for k in ("theta_deg", "L_mc", "L_se", "L_theory", "L_largeN", "alpha_u", "alpha_u_closed",
                              "beta_u", "beta_u_closed")}
    return save_figure(fig, fig_dir / "ood_rotation", data)


def _fig_collapse(r, fig_dir: Path) -> Path:
    fig, (a, b) = new_figure(2)
    cases = ("orthogonal", "shared_projection", "query_vbar")
    x = np.arange(len(cases))
    meas = [r[f"{c}_sgd_err"] for c in cases]
    theo = [r.get(f"{c}_err_theory", 0.0) for c in cases]
    a.bar(x - 0.2, theo, 0.4, color=PALETTE[0], label="theory (uniform attention)")
    a.bar(x + 0.2, meas, 0.4, color=PALETTE[1], label="measured (SGD-trained Q)")
    a.plot(x, [0.375] * 3, "x", color="k", ms=8, label="seed-reported 0.375")
    for i, c in enumerate(cases):
        a.text(i, max(meas[i], theo[i]) + 0.02, f"max|A−1/K|\n{r[f'{c}_sgd_attn_maxdev']:.0e}", ha="center", fontsize=7)
    a.set_xticks(x, ["U ⊥ V", "shared proj.\non v̄", "query = v̄"])
    a.set_ylabel("loss")
    a.set_ylim(0, 0.5)
    a.set_title("collapse cases (K=4, exact counts)")
    a.legend(fontsize=7)
    k = np.arange(len(r["inspan30_mc"]))
    for i, th in enumerate((30, 60)):
        theory_vs_sim(b, k + 1, r[f"inspan{th}_theory"], r[f"inspan{th}_mc"], label=f"in-span {th}°", i=i)
        if len(k) == len(SPEC_INSPAN[th]):
            b.plot(k + 1, SPEC_INSPAN[th], "x", color=PALETTE[i], ms=8)
    b.set_xlabel("feature k (x: spec large-N values)")
    b.set_ylabel("OOD loss of u_k")
    b.set_yscale("log")
    b.set_title("rotation of the (v1, v2) plane")
    b.legend(fontsize=7)
    data = {"case": list(cases), "measured": meas, "theory": theo,
            "attn_maxdev": [r[f"{c}_sgd_attn_maxdev"] for c in cases]}
    return save_figure(fig, fig_dir / "ood_collapse", data)


def _fig_forgetting(ft: pd.DataFrame, cfg, fig_dir: Path) -> Path:
    fig, a = new_figure(1, width=5.5)
    for i, g1 in enumerate(sorted({round(float(g), 6) for g in cfg.gamma1_table})):
        sub = ft[np.isclose(ft["gamma1"], g1)].sort_values("gamma2")
        theory_vs_sim(a, sub["gamma2"], sub["F_theory"], sub["F"], label=f"γ1={g1:g}", i=i)
        spec = [(g2, f) for (s1, g2), f in SPEC_F.items() if np.isclose(s1, g1)]
        if spec:
            a.plot(*zip(*spec), "x", color=PALETTE[i], ms=8)
    a.axhline(0, color="k", lw=0.8)
    a.set_xlabel("γ2 = ⟨v2, u2⟩  (x: spec §5.2 values)")
    a.set_ylabel("forgetting F = ΔL_source")
    a.set_title("K=2 fine-tuning (F > 0: forgetting)")
    a.legend(fontsize=7)
    return save_figure(fig, fig_dir / "ood_forgetting", ft)


def _theory_grid(cfg, n: int = 21):
    from iclab.theory import ood as T

    S = T.population_gd(np.zeros((2, 2)), None, None, cfg.c, cfg.lr, cfg.threshold)["S"]
    g = np.linspace(-1, 1, n)
    Fg = np.array([[T.finetune(S, np.diag([g1, g2]), None, None, cfg.c, cfg.lr, cfg.threshold, 2000)["F"]
                    for g1 in g] for g2 in g])  # (γ2, γ1)
    return g, Fg


def _fig_phase(ft: pd.DataFrame, cfg, fig_dir: Path) -> Path:
    from matplotlib.colors import TwoSlopeNorm

    fig, a = new_figure(1, width=5.6, height=4.6)
    g, Fg = _theory_grid(cfg)
    lim = max(1e-6, float(np.abs(ft["F"]).max()))
    norm = TwoSlopeNorm(0.0, -lim, lim)
    a.contour(g, g, Fg, levels=[0.0], colors="k", linewidths=1.2, linestyles="-")
    sc = a.scatter(ft["gamma1"], ft["gamma2"], c=ft["F"], cmap="RdBu_r", norm=norm, s=70, edgecolors="k", lw=0.4)
    fig.colorbar(sc, ax=a, label="measured F (red: forgetting)")
    t = np.linspace(-1, 1, 3)
    a.plot(t, -t, "--", color=PALETTE[4], lw=1.2, label="γ1+γ2=0 (per-feature boundary)")
    a.axvline(0, color=PALETTE[2], ls=":", lw=1.2, label="γ1=0 / γ2=0 (per-feature boundary)")
    a.axhline(0, color=PALETTE[2], ls=":", lw=1.2)
    bad = ft[(ft["forgot1"] != ft["pred1"]) | (ft["forgot2"] != ft["pred2"])]
    if len(bad):
        a.plot(bad["gamma1"], bad["gamma2"], "x", color="m", ms=10, label="sign ≠ prediction")
    a.plot([], [], "k-", label="theory F = 0 (large N)")
    a.set_xlabel("γ1")
    a.set_ylabel("γ2")
    a.set_title("forgetting phase diagram (K=2)")
    a.legend(fontsize=6, loc="lower left")
    return save_figure(fig, fig_dir / "ood_phase", ft[["gamma1", "gamma2", "F", "F_theory", "forgot1", "forgot2",
                                                       "pred1", "pred2"]])


def _fig_tiny(df, fig_dir: Path) -> Path:
    fig, (a, b) = new_figure(2)
    rows = []
    for i, (_, r) in enumerate(_part(df, "tiny").sort_values("layers").iterrows()):
        n = int(r["layers"])
        theory_vs_sim(a, r["theta_deg"], None, r["ood_loss"], label=f"{n} layer(s)", i=i)
        theory_vs_sim(b, r["gamma2_list"], None, r["F"], label=f"{n} layer(s)", i=i)
        if n in SEED_TINY:
            b.plot([-0.75, 0.0, 0.75], SEED_TINY[n], "x", color=PALETTE[i], ms=8)
        rows += [{"layers": n, "gamma2": g2, "F": f} for g2, f in zip(r["gamma2_list"], r["F"])]
    a.set_xlabel("rotation angle θ (degrees)")
    a.set_ylabel("OOD loss")
    a.set_title("tiny transformers (width 16, K=2)")
    a.legend(fontsize=7)
    b.axhline(0, color="k", lw=0.8)
    b.set_xlabel("γ2 (γ1 = tiny_gamma1; x: seed-reported)")
    b.set_ylabel("forgetting F")
    b.set_yscale("symlog", linthresh=1e-3)
    b.set_title("fine-tuning on U: source forgetting")
    b.legend(fontsize=7)
    return save_figure(fig, fig_dir / "ood_tiny", pd.DataFrame(rows))


def _fig_minilm(r, fig_dir: Path) -> Path:
    fig, (a, b) = new_figure(2)
    th = np.asarray(r["theta_deg"])
    theory_vs_sim(a, th, None, r["ood_acc"], label="source model on rotated", i=0)
    theory_vs_sim(a, th, None, r["adapt_acc"], label="fine-tuned, on rotated", i=1)
    theory_vs_sim(a, th, None, r["src_after_acc"], label="fine-tuned, on source", i=2)
    a.axhline(r["source_acc"], color="k", ls="--", lw=1, label="source model on source")
    a.axhline(r["majority_acc"], color="grey", ls=":", lw=1, label="majority class")
    a.set_xlabel(f"rotation θ after layer {int(r['layer'])} (degrees)")
    a.set_ylabel("test accuracy (region of country)")
    a.set_title("MiniLM, hidden states rotated")
    a.legend(fontsize=7)
    theory_vs_sim(b, th, None, r["F_ce"], label="F = ΔCE on source", i=3)
    theory_vs_sim(b, th, None, r["F_ce_vs_control"], label="F minus fine-tuning drift at θ=0", i=4)
    b.plot([90, 180], [-0.03, 0.25], "x", color="k", ms=8, label="seed-reported (BERT, MRPC)")
    b.axhline(0, color="k", lw=0.8)
    b.set_xlabel("rotation θ (degrees)")
    b.set_ylabel("source forgetting (cross-entropy)")
    b.legend(fontsize=7)
    data = {k: r[k] for k in ("theta_deg", "ood_acc", "adapt_acc", "src_after_acc", "ood_ce", "src_after_ce", "F_ce",
                              "F_ce_vs_control")}
    return save_figure(fig, fig_dir / "ood_minilm", data)


def figures(cfg, df: pd.DataFrame, fig_dir) -> list[Path]:
    fig_dir = Path(fig_dir)
    out = []
    if (r := _row(df, "pretrain")) is not None:
        out.append(_fig_trajectories(r, fig_dir))
    if (r := _row(df, "ood")) is not None:
        out += [_fig_rotation(r, fig_dir), _fig_collapse(r, fig_dir)]
    ft = _forget_table(df)
    if len(ft):
        out += [_fig_forgetting(ft, cfg, fig_dir), _fig_phase(ft, cfg, fig_dir)]
    if not _part(df, "tiny").empty:
        out.append(_fig_tiny(df, fig_dir))
    if (r := _row(df, "minilm")) is not None:
        out.append(_fig_minilm(r, fig_dir))
    return out


def _close(a, b, rel):
    return bool(abs(a - b) <= rel * abs(b))


def compare(cfg, df: pd.DataFrame) -> list[Comparison]:
    out: list[Comparison] = []
    if (r := _row(df, "pretrain")) is not None:
        out += [
            Comparison("α* (K=4) at the stopping rule", "2.872 [spec, large N]",
                       f"{r['alpha_star']:.4f} (SGD, N={cfg.n_tokens}); population GD at N: {r['theory_alpha_star']:.4f}",
                       _close(r["alpha_star"], r["theory_alpha_star"], 0.01),
                       f"large-N GD here gives {r['largeN_alpha_star']:.4f}; finite N needs a larger α for the same loss; "
                       "tolerance 1 % of population GD at the same N"),
            Comparison("β* = −α*/(K−1)", "−0.957 [spec]", f"{r['beta_star']:.4f} (max dev. from −α*/3: "
                       f"{r['beta_sym_dev']:.1e})", _close(r["beta_star"], -r["alpha_star"] / 3, 0.01), "SGD symmetry"),
            Comparison("steps to max_k L_k ≤ 0.0025", "397 [spec, GD η=1, large N]",
                       f"{int(r['steps'])} (checked every {cfg.log_every}); population GD at N: {int(r['theory_steps'])}",
                       abs(r["steps"] - r["theory_steps"]) <= cfg.log_every + 5, ""),
            Comparison("training loss at T1", "0.0024 [seed]", f"{r['train_loss']:.5f} (max_k {r['train_maxLk']:.5f})",
                       r["train_maxLk"] <= cfg.threshold, "exact population loss at N"),
            Comparison("conservation α_k + Σβ_mk = 0", "to 1e-6 [spec]", f"max {r['conservation_max']:.1e} over all "
                       "logged steps", r["conservation_max"] < 1e-10, "float64"),
            Comparison("Q stays in span{v_m v_kᵀ}", "off-span = 0 [spec]", f"max {r['offspan_max']:.1e}",
                       r["offspan_max"] < 1e-10, ""),
        ]
    if (r := _row(df, "ood")) is not None:
        th = list(r["theta_deg"])
        for deg, seed, spec in ((30, 0.0182, 0.0140), (60, 0.1450, 0.191), (90, 0.375, 0.375)):
            if deg in th:
                i = th.index(deg)
                out.append(Comparison(f"OOD loss, rotation θ={deg}°", f"{seed} [seed]; {spec} [spec, large N]",
                                      f"{r['L_mc'][i]:.4f} ± {r['L_se'][i]:.4f} (MC); theory at N: {r['L_theory'][i]:.4f}",
                                      abs(r["L_mc"][i] - r["L_theory"][i]) <= 3 * r["L_se"][i] + 1e-4,
                                      "ok = measured within 3 s.e. of theory at N; the seed value is not reproduced"
                                      if deg != 90 else "random-guessing level c(K−1)/K (N=40: slightly above)"))
        out.append(Comparison("OOD α/β closed form (§4.5)", "formula [seed]",
                              f"max |closed − UᵀQU| = {max(abs(a - b) for a, b in zip(r['alpha_u'], r['alpha_u_closed'])):.1e}"
                              f"; random M: {r['randomM_closed_vs_exact']:.1e}; attention vs theory {r['randomM_attn_maxdev']:.1e}",
                              r["randomM_attn_maxdev"] < 1e-10,
                              "the closed form assumes the symmetric S* (β all equal); SGD's small asymmetry shows for a random M"))
        for c, label in (("orthogonal", "U ⊥ V"), ("query_vbar", "query = v̄")):
            out.append(Comparison(f"collapse {label}: attention, error", "Attn 0.250, error 0.375 [seed]",
                                  f"Attn {r[f'{c}_sgd_attn_mean']:.3f} (max|A−1/K| {r[f'{c}_sgd_attn_maxdev']:.1e}), "
                                  f"error {r[f'{c}_sgd_err']:.4f}",
                                  abs(r[f"{c}_sgd_err"] - 0.375) < 0.02,
                                  "query = v̄: uniform attention returns the label mean, which IS the target wᵀv̄ — "
                                  "error ≈ 0, not 0.375" if c == "query_vbar" else "N=40 exact counts: c(K−1)/K·(1+…)"))
        for deg in (30, 60) if len(r["inspan30_mc"]) == 4 else ():
            out.append(Comparison(f"in-span (v1,v2) rotation {deg}°, per feature",
                                  ", ".join(f"{v:g}" for v in SPEC_INSPAN[deg]) + " [spec]",
                                  ", ".join(f"{v:.4f}" for v in r[f"inspan{deg}_mc"]) + " (MC, N=40)",
                                  None, "large-N spec vs N=40 measurement; theory at N: "
                                  + ", ".join(f"{v:.4f}" for v in r[f"inspan{deg}_theory"])))
    ft = _forget_table(df)
    if len(ft):
        for (g1, g2), spec in SPEC_F.items():
            m = ft[np.isclose(ft["gamma1"], g1) & np.isclose(ft["gamma2"], g2)]
            if len(m):
                m = m.iloc[0]
                out.append(Comparison(f"F (K=2) γ1={g1}, γ2={g2}", f"{spec:+.5f} [spec, large N]",
                                      f"{m['F']:+.5f} (theory at N {m['F_theory']:+.5f})",
                                      bool(np.sign(m["F"]) == np.sign(spec)), "ok = same sign"))
        for (g1, g2), seed in SEED_F.items():
            m = ft[np.isclose(ft["gamma1"], g1) & np.isclose(ft["gamma2"], g2)]
            if len(m):
                m = m.iloc[0]
                out.append(Comparison(f"F (K=2) γ1={g1:g}, γ2={g2}", f"{seed:+.3f} [seed]", f"{m['F']:+.5f}",
                                      _close(m["F"], seed, 0.5) if seed else abs(m["F"]) < 1e-3,
                                      "seed magnitudes are ~100–1000× what this model can produce from a 0.0025 start"))
        agree = ((ft["forgot1"] == ft["pred1"]) & (ft["forgot2"] == ft["pred2"])).mean()
        out.append(Comparison("per-feature forgetting sign vs −γ_kγ_m > γ_k²", "exact for K=2 [spec §4.8]",
                              f"{100 * agree:.1f} % of {len(ft)} (γ1, γ2) points", bool(agree == 1.0),
                              "signs with tolerance 1e-9 relative; boundary points count as 'unchanged'"))
    for _, r in _part(df, "tiny").sort_values("layers").iterrows() if "part" in df else []:
        n = int(r["layers"])
        if n in SEED_TINY:
            g2 = list(r["gamma2_list"])
            meas = [r["F"][g2.index(g)] if g in g2 else float("nan") for g in (-0.75, 0.0, 0.75)]
            out.append(Comparison(f"tiny transformer {n} layer(s): F at γ2 = −0.75/0/+0.75",
                                  " / ".join(f"{v:+.2f}" for v in SEED_TINY[n]) + " [seed]",
                                  " / ".join(f"{v:+.4f}" for v in meas),
                                  None, f"γ1 = {cfg.tiny_gamma1}; source loss before "
                                        f"{np.mean(r['source_before']):.4f}; seed γ convention unknown"))
    if (r := _row(df, "minilm")) is not None:
        th = list(r["theta_deg"])
        meas = " / ".join(f"{r['F_ce'][th.index(t)]:+.3f}" if t in th else "—" for t in (180, 90))
        out.append(Comparison("real encoder: F at θ = π / π/2", "+0.25 / −0.03 [seed, BERT-base MRPC]",
                              f"{meas} (MiniLM, country→region, layer {int(r['layer'])})", None,
                              "different model and task; sign pattern is the comparable part"))
        out.append(Comparison("real encoder: OOD drop at θ = π/2", "CE 0.35 → 1.28 [seed, MRPC]",
                              f"acc {r['source_acc']:.3f} → {r['ood_acc'][th.index(90)] if 90 in th else float('nan'):.3f}; "
                              f"CE {r['source_ce']:.2f} → {r['ood_ce'][th.index(90)] if 90 in th else float('nan'):.2f}",
                              None, "seed's angle not stated"))
    return out


def notes(cfg, df: pd.DataFrame) -> str:
    lines = ["**Conventions.** c = 1/2, balanced p, Q(0) = 0, plain SGD on Q (batch "
             f"{cfg.batch_size}, lr {cfg.lr}) on the w-averaged loss (spec §4.1), N = {cfg.n_tokens} i.i.d. tokens; "
             f"stopping rule max_k L_k ≤ {cfg.threshold} on the model's exact population loss at N, checked every "
             f"{cfg.log_every} steps. Theory lines are exact population GD at the same N (enumerating all count vectors) "
             "and the spec's large-N numbers. The spec's formulas are derived, not read from the paper.", ""]
    if (r := _row(df, "pretrain")) is not None:
        lines.append(f"- **α\\* differs from the spec's 2.872** because that is the large-N limit; at N = {cfg.n_tokens} "
                     f"population GD stops at α = {r['theory_alpha_star']:.3f} and SGD at {r['alpha_star']:.3f}.")
    if (r := _row(df, "ood")) is not None:
        th = list(r["theta_deg"])
        if 30 in th and 60 in th:
            lines.append(f"- **OOD error at π/6 and π/3**: seed reports 0.0182 and 0.1450; the model gives "
                         f"{r['L_mc'][th.index(30)]:.4f} and {r['L_mc'][th.index(60)]:.4f} (spec large-N 0.0140, 0.191). "
                         f"The ratios seed/measured ({0.0182 / r['L_mc'][th.index(30)]:.2f}, "
                         f"{0.1450 / r['L_mc'][th.index(60)]:.2f}) are not one common factor, so no loss prefactor c "
                         "explains them; the seed's numbers are not reproduced by the model as specified.")
        lines.append(f"- **Query at v̄**: attention is uniform (max|A−1/K| = {r['query_vbar_sgd_attn_maxdev']:.1e} for the "
                     f"SGD-trained Q, {r['query_vbar_closed_attn_maxdev']:.0e} for the symmetric Q\\*), as the seed says, "
                     f"but the error is {r['query_vbar_sgd_err']:.1e}, not 0.375: a uniform average of the labels is "
                     "exactly the target wᵀv̄. Uniform attention is 'random guessing' only when the query is a feature "
                     "(U ⊥ V, or u_k sharing one projection on span V, where the measured error is the label-average "
                     "error). Exact uniformity for a v̄ query needs Qv̄ = 0, i.e. zero *row* sums of S; the conservation "
                     "law gives zero *column* sums, so it holds exactly only for the symmetric (balanced) Q\\*.")
        lines.append("- The spec's 'C M = 0 (… or all u_k have the same projection on span V)' is slightly off: a "
                     "common projection a gives S^U = (aᵀSa)·11ᵀ, constant rather than 0 — attention is still uniform.")
    ft = _forget_table(df)
    if len(ft):
        lines.append("- **Forgetting magnitudes**: the seed reports F = +0.421 / −0.112 / −0.084 / −0.053 / 0.000 "
                     "(γ1 = 1, γ2 = −0.9 / −0.2 / 0 / 0.5 / 0.95). Starting from a source loss of 0.0025 per feature and "
                     "fine-tuning to the same rule, this model's F is of order 1e-4–1e-3 (spec §5.2 agrees). The seed also "
                     "labels γ2 = −0.9 as forgetting feature 1 (−γ1γ2 = 0.9 > γ1² = 1 is false); it is feature 2 "
                     "(0.9 > 0.81) that is forgotten.")
        lines.append("- **γ2 = 0.95 'F ≈ 0'** [seed]: here F < 0 (backward transfer), because fine-tuning to the "
                     "stopping rule still raises α_u and the source α with it.")
    tiny = _part(df, "tiny")
    if not tiny.empty:
        parts, agree, total = [], 0, 0
        for _, r in tiny.sort_values("layers").iterrows():
            parts.append(f"{int(r['layers'])} layer(s): source loss {np.mean(r['source_before']):.4f}, F = "
                         + " / ".join(f"{f:+.3f}" for f in r["F"])
                         + (f", layer-1 source Δα = " + " / ".join(f"{v:+.2f}" for v in r["dalpha1_src"])
                            + ", Δβ = " + " / ".join(f"{v:+.2f}" for v in r["dbeta1_src"]) if "dalpha1_src" in r
                            and isinstance(r["dalpha1_src"], list) else ""))
            agree += sum(int(a == b) for a, b in zip(list(r["forgot1"]) + list(r["forgot2"]),
                                                    list(r["pred1"]) + list(r["pred2"])))
            total += 2 * len(r["F"])
        g2 = " / ".join(f"{g:+g}" for g in tiny.iloc[0]["gamma2_list"])
        lines.append(f"- **Tiny transformers** (Adam, sampled-w MSE, fixed budget; γ1 = {cfg.tiny_gamma1}, γ2 = {g2}): "
                     + "; ".join(parts) + f". The per-feature change follows the merged-Q K = 2 sign rule in {agree} of "
                     f"{total} cases. The seed reports F = +0.28 / −0.06 / +0.15 (1 layer) growing with depth; here "
                     "fine-tuning a transformer with MLPs and LayerNorm on U changes the shared read-in/attention and "
                     "the source loss rises even where the merged-Q rule predicts backward transfer (γ2 = 0), and F "
                     "does not grow monotonically with depth. The merged-Q derivation does not cover this model.")
    if (r := _row(df, "minilm")) is not None:
        th = list(r["theta_deg"])
        fmt = lambda key: ", ".join(f"{t:g}°: {v:+.2f}" for t, v in zip(th, r[key]))
        lines.append(f"- **Real encoder**: MiniLM instead of BERT-base, a country→region task from countryinfo instead "
                     f"of MRPC/MNLI/SNLI (no GLUE offline); {int(r['n_train'])} training and {int(r['n_test'])} test "
                     f"sentences, Givens rotation of the hidden states after layer {int(r['layer'])}, frozen encoder, "
                     f"linear head. Source accuracy {r['source_acc']:.2f} (majority {r['majority_acc']:.2f}); rotated "
                     f"accuracy " + ", ".join(f"{t:g}°: {v:.2f}" for t, v in zip(th, r["ood_acc"])) + ". Forgetting "
                     f"ΔCE after fine-tuning the head on rotated inputs: {fmt('F_ce')} (minus the drift of the same "
                     f"fine-tuning at θ = 0: {fmt('F_ce_vs_control')}). The seed's θ = π forgetting (+0.25) has the same "
                     "sign here (θ = π is −I, so a head fit to −h fails on h); its 'orthogonal protection' at π/2 "
                     "(−0.03) is not reproduced.")
    return "\n".join(lines)
