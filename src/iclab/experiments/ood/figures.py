"""Figures of the ``ood`` experiment (arXiv:2609.36448; docs/papers/ood.md §5): theory = lines, measurement =
markers, reference numbers (``reference``) = crosses. Each figure is saved as PNG with its CSV beside it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from iclab.experiments.ood.reference import DERIVED_F, DERIVED_INSPAN, PAPER_ENCODER_F, PAPER_OOD, PAPER_TINY
from iclab.claims import part_rows
from iclab.experiments.ood.tables import first_row, forget_table, tiny_means, within_target_spearman
from iclab.experiments._plot import panel, paper_values
from iclab.plotting import color, new_figure, save_figure, theory_vs_sim
from iclab.theory import ood as T

__all__ = ["figures"]


def _fig_trajectories(r, fig_dir: Path) -> Path:
    """α/β during pre-training (SGD band and mean vs population GD at N and large N); conservation and span."""
    fig, (a, b) = new_figure(2)
    st = np.asarray(r["traj_step"])
    for i, (name, sym) in enumerate((("alpha", "α"), ("beta", "β"))):
        th = np.asarray(r[f"theory_{name}"])
        theory_vs_sim(a, st, None, np.asarray(r[f"traj_{name}"]), label=f"{sym} (SGD, N=40)", i=i)
        a.fill_between(st, r[f"traj_{name}_min"], r[f"traj_{name}_max"], color=color(i), alpha=0.2)
        a.plot(np.arange(len(th)), th, "-", color=color(i), label=f"{sym} population GD, N=40")
        lg = np.asarray(r[f"largeN_{name}"])
        a.plot(np.arange(len(lg)), lg, ":", color=color(i), label=f"{sym} large-N theory")
    panel(a, xlabel="step", ylabel="logit", title="α/β during pre-training (K=4, d=8)", legend=7)
    b.semilogy(st, np.maximum(r["traj_conservation"], 1e-18), "o", ms=3, label="max_k |α_k + Σ_m β_mk|")
    b.semilogy(st, np.maximum(r["traj_offspan"], 1e-18), "s", ms=3, mfc="white", label="‖Q − P_V Q P_V‖_F")
    b.axhline(1e-6, color="k", ls="--", lw=1, label="derivation's check level 1e-6")
    panel(b, xlabel="step", title="conservation law, span (every log step)", legend=7)
    data = {
        "step": st,
        "alpha": r["traj_alpha"],
        "beta": r["traj_beta"],
        "conservation": r["traj_conservation"],
        "offspan": r["traj_offspan"],
    }
    return save_figure(fig, fig_dir / "ood_trajectories", data)


def _fig_rotation(r, fig_dir: Path) -> Path:
    """OOD loss vs rotation angle (MC vs exact at N and large N); α_u/β_u vs their closed form."""
    fig, (a, b) = new_figure(2)
    th = np.asarray(r["theta_deg"])
    theory_vs_sim(a, th, r["L_theory"], r["L_mc"], r["L_se"], label="OOD error, N=40", i=0)
    a.plot(th, r["L_largeN"], ":", color=color(0), label="large-N theory (note §4.7)")
    a.axhline(r["random_guess_N"], color="k", ls="--", lw=1, label="random guessing (uniform attention)")
    paper_values(a, PAPER_OOD, keys=(30, 60), label="paper (2nd-hand)")
    title = "OOD error under rotation (K=4, d=8)"
    panel(
        a, yscale="log", xlabel="rotation angle θ (degrees)", ylabel="mean per-feature OOD loss", title=title, legend=7
    )
    theory_vs_sim(b, th, r["alpha_u_closed"], r["alpha_u"], label="α_u", i=1)
    theory_vs_sim(b, th, r["beta_u_closed"], r["beta_u"], label="β_u", i=2)
    panel(b, xlabel="rotation angle θ (degrees)", title="OOD α/β: closed form (§4.6) vs UᵀQU", legend=7)
    cols = ["theta_deg", "L_mc", "L_se", "L_theory", "L_largeN", "alpha_u", "alpha_u_closed", "beta_u", "beta_u_closed"]
    return save_figure(fig, fig_dir / "ood_rotation", r[cols])


def _fig_collapse(r, fig_dir: Path) -> Path:
    """Collapse cases (uniform-attention theory vs measured error) and in-span rotations per feature."""
    fig, (a, b) = new_figure(2)
    cases = ("orthogonal", "shared_projection", "query_vbar")
    x = np.arange(len(cases))
    meas = [r[f"{c}_sgd_err"] for c in cases]
    theo = [r.get(f"{c}_err_theory", 0.0) for c in cases]
    a.bar(x - 0.2, theo, 0.4, color=color(0), label="theory (uniform attention)")
    a.bar(x + 0.2, meas, 0.4, color=color(1), label="measured (SGD-trained Q)")
    a.plot(x, [PAPER_OOD[90]] * 3, "x", color="k", ms=8, label=f"paper {PAPER_OOD[90]} (2nd-hand)")
    for i, c in enumerate(cases):
        a.text(i, max(meas[i], theo[i]) + 0.02, f"max|A−1/K|\n{r[f'{c}_sgd_attn_maxdev']:.0e}", ha="center", fontsize=7)
    a.set_xticks(x, ["U ⊥ V", "shared proj.\non v̄", "query = v̄"])
    panel(a, ylabel="loss", ylim=(0, 0.5), title="collapse cases (K=4, exact counts)", legend=7)
    k = np.arange(len(r["inspan30_mc"]))
    for i, th in enumerate((30, 60)):
        theory_vs_sim(b, k + 1, r[f"inspan{th}_theory"], r[f"inspan{th}_mc"], label=f"in-span {th}°", i=i)
        if len(k) == len(DERIVED_INSPAN[th]):
            b.plot(k + 1, DERIVED_INSPAN[th], "x", color=color(i), ms=8)
    xlabel = "feature k (x: derived large-N values)"
    panel(b, xlabel=xlabel, ylabel="OOD loss of u_k", yscale="log", title="rotation of the (v1, v2) plane", legend=7)
    data = {
        "case": list(cases),
        "measured": meas,
        "theory": theo,
        "attn_maxdev": [r[f"{c}_sgd_attn_maxdev"] for c in cases],
    }
    return save_figure(fig, fig_dir / "ood_collapse", data)


def _fig_forgetting(ft: pd.DataFrame, cfg, fig_dir: Path) -> Path:
    """F vs γ2 for each table γ1: SGD vs population GD at N, with the derived large-N table."""
    fig, a = new_figure(1, width=5.5)
    for i, g1 in enumerate(sorted({round(float(g), 6) for g in cfg.gamma1_table})):
        sub = ft[np.isclose(ft["gamma1"], g1)].sort_values("gamma2")
        theory_vs_sim(a, sub["gamma2"], sub["F_theory"], sub["F"], label=f"γ1={g1:g}", i=i)
        paper_values(a, {g2: f for (s1, g2), f in DERIVED_F.items() if np.isclose(s1, g1)}, color=color(i))
    a.axhline(0, color="k", lw=0.8)
    xlabel = "γ2 = ⟨v2, u2⟩  (x: derived large-N values, note §5.8)"
    panel(a, xlabel=xlabel, ylabel="forgetting F = ΔL_source", title="K=2 fine-tuning (F > 0: forgetting)", legend=7)
    return save_figure(fig, fig_dir / "ood_forgetting", ft)


def _theory_grid(cfg, n: int = 21):
    """Large-N population-GD forgetting F on an n x n (γ1, γ2) grid over [-1, 1]²: ``(g, F (γ2, γ1))``."""
    S = T.population_gd(np.zeros((2, 2)), None, None, cfg.c, cfg.lr, cfg.threshold)["S"]
    g = np.linspace(-1, 1, n)
    Fg = np.array(
        [
            [T.finetune(S, np.diag([g1, g2]), None, None, cfg.c, cfg.lr, cfg.threshold, 2000)["F"] for g1 in g]
            for g2 in g
        ]
    )  # (γ2, γ1)
    return g, Fg


def _fig_phase(ft: pd.DataFrame, cfg, fig_dir: Path) -> Path:
    """Measured F over the (γ1, γ2) grid with the theory's F = 0 contour and the per-feature boundaries."""
    from matplotlib.colors import TwoSlopeNorm

    fig, a = new_figure(1, width=5.6, height=4.6)
    g, Fg = _theory_grid(cfg)
    lim = max(1e-6, float(np.abs(ft["F"]).max()))
    norm = TwoSlopeNorm(0.0, -lim, lim)
    a.contour(g, g, Fg, levels=[0.0], colors="k", linewidths=1.2, linestyles="-")
    sc = a.scatter(ft["gamma1"], ft["gamma2"], c=ft["F"], cmap="RdBu_r", norm=norm, s=70, edgecolors="k", lw=0.4)
    fig.colorbar(sc, ax=a, label="measured F (red: forgetting)")
    t = np.linspace(-1, 1, 3)
    a.plot(t, -t, "--", color=color(4), lw=1.2, label="γ1+γ2=0 (per-feature boundary)")
    a.axvline(0, color=color(2), ls=":", lw=1.2, label="γ1=0 / γ2=0 (per-feature boundary)")
    a.axhline(0, color=color(2), ls=":", lw=1.2)
    bad = ft[(ft["forgot1"] != ft["pred1"]) | (ft["forgot2"] != ft["pred2"])]
    if len(bad):
        a.plot(bad["gamma1"], bad["gamma2"], "x", color="m", ms=10, label="sign ≠ prediction")
    a.plot([], [], "k-", label="theory F = 0 (large N)")
    panel(
        a, xlabel="γ1", ylabel="γ2", title="forgetting phase diagram (K=2)", legend={"fontsize": 6, "loc": "lower left"}
    )
    return save_figure(
        fig, fig_dir / "ood_phase", ft[["gamma1", "gamma2", "F", "F_theory", "forgot1", "forgot2", "pred1", "pred2"]]
    )


def _fig_tiny(df, fig_dir: Path) -> Path:
    """Tiny transformers: OOD loss vs θ and source forgetting F vs γ2, per depth (the mean over its trained networks)."""
    fig, (a, b) = new_figure(2)
    rows = []
    for i, (n, r) in enumerate(tiny_means(part_rows(df, "tiny")).items()):
        label = f"{n} layer(s)" + (f", mean of {r['networks']}" if r["networks"] > 1 else "")
        theory_vs_sim(a, r["theta_deg"], None, r["ood_loss"], label=label, i=i)
        theory_vs_sim(b, r["gamma2_list"], None, r["F"], label=label, i=i)
        if n in PAPER_TINY:
            b.plot([-0.75, 0.0, 0.75], PAPER_TINY[n], "x", color=color(i), ms=8)
        rows += [{"layers": n, "gamma2": g2, "F": f} for g2, f in zip(r["gamma2_list"], r["F"])]
    panel(
        a, xlabel="rotation angle θ (degrees)", ylabel="OOD loss", title="tiny transformers (width 16, K=2)", legend=7
    )
    b.axhline(0, color="k", lw=0.8)
    b.set_yscale("symlog", linthresh=1e-3)
    xlabel = "γ2 (γ1 = tiny_gamma1; x: paper, 2nd-hand)"
    panel(b, xlabel=xlabel, ylabel="forgetting F", title="fine-tuning on U: source forgetting", legend=7)
    return save_figure(fig, fig_dir / "ood_tiny", pd.DataFrame(rows))


def _fig_minilm(r, fig_dir: Path) -> Path:
    """MiniLM under hidden-state rotation: accuracies vs θ, and source forgetting (raw and minus the θ=0 drift)."""
    fig, (a, b) = new_figure(2)
    th = np.asarray(r["theta_deg"])
    theory_vs_sim(a, th, None, r["ood_acc"], label="source model on rotated", i=0)
    theory_vs_sim(a, th, None, r["adapt_acc"], label="fine-tuned, on rotated", i=1)
    theory_vs_sim(a, th, None, r["src_after_acc"], label="fine-tuned, on source", i=2)
    a.axhline(r["source_acc"], color="k", ls="--", lw=1, label="source model on source")
    a.axhline(r["majority_acc"], color="grey", ls=":", lw=1, label="majority class")
    xlabel = f"rotation θ after layer {int(r['layer'])} (degrees)"
    panel(a, xlabel=xlabel, ylabel="test accuracy (region of country)", title="MiniLM, hidden states rotated", legend=7)
    theory_vs_sim(b, th, None, r["F_ce"], label="F = ΔCE on source", i=3)
    theory_vs_sim(b, th, None, r["F_ce_vs_control"], label="F minus fine-tuning drift at θ=0", i=4)
    paper_values(b, PAPER_ENCODER_F, label="paper (BERT, MRPC; 2nd-hand)")
    b.axhline(0, color="k", lw=0.8)
    panel(b, xlabel="rotation θ (degrees)", ylabel="source forgetting (cross-entropy)", legend=7)
    cols = ["theta_deg", "ood_acc", "adapt_acc", "src_after_acc", "ood_ce", "src_after_ce", "F_ce", "F_ce_vs_control"]
    return save_figure(fig, fig_dir / "ood_minilm", r[cols])


def _fig_scenarios(ood, shift, fig_dir: Path) -> Path:
    """The two rotation scenarios over a full turn: in the merged-Q model (exact loss at N; left) and on MiniLM's
    last-layer coordinates paired by large / small head-weight gap (right)."""
    fig, (a, b) = new_figure(2)
    data = {}
    if ood is not None:
        th = np.asarray(ood["scen_theta_deg"])
        ins = np.asarray(ood["scen_inspan_L"])  # (n_theta, K)
        a.plot(th, ins.mean(1), "-", color=color(1), label="in span V: (v1, v2) plane, mean over u_k")
        a.plot(th, ins[:, 0], ":", color=color(1), label="in span V: u_1 only")
        a.plot(th, ood["scen_outspan_L"], "-", color=color(0), label="out of span: v_k → v_k^⊥ (all k)")
        title = "merged-Q model: small vs large weight gap"
        panel(
            a, yscale="log", xlabel="rotation angle θ (degrees)", ylabel="OOD loss (exact at N)", title=title, legend=7
        )
        data.update(
            {"theta_deg": th, "inspan_mean": ins.mean(1), "inspan_u1": ins[:, 0], "outspan": ood["scen_outspan_L"]}
        )
    if shift is not None:
        th = np.asarray(shift["gap_theta_deg"])
        for i, key in enumerate(("gap1", "gap2")):
            label = ("scenario 1: large weight gap", "scenario 2: small weight gap")[i]
            theory_vs_sim(b, th, None, shift[f"{key}_L"], shift[f"{key}_L_se"], label=label, i=i + 2)
        title = f"MiniLM: {int(shift['gap_planes'])} planes of the head's input rotated"
        panel(b, xlabel="rotation angle θ (degrees)", ylabel="test cross-entropy", title=title, legend=7)
        data.update({"minilm_theta_deg": th, "scenario1": shift["gap1_L"], "scenario2": shift["gap2_L"]})
    return save_figure(fig, fig_dir / "ood_scenarios", data)


def _fig_domains(r, fig_dir: Path) -> Path:
    """Natural shift: cross-entropy of each source domain's head on each target domain against the centroid cosine
    similarity of the two domains (one colour per target; lines join a target's points)."""
    fig, a = new_figure(1, width=6.0)
    sim, ce, doms = np.asarray(r["domain_sim"]), np.asarray(r["domain_ce"]), list(r["domains"])
    rho = within_target_spearman(sim, ce)
    rows = []
    for t, name in enumerate(doms):
        s = [i for i in range(len(doms)) if i != t]
        order = np.argsort(sim[s, t])
        x, y = sim[s, t][order], ce[s, t][order]
        a.plot(x, y, "o-", color=color(t), ms=4, lw=0.8, label=f"{name} (ρ = {rho[t]:+.2f})")
        a.plot([1.0], [ce[t, t]], "*", color=color(t), ms=8)
        rows += [{"source": doms[i], "target": name, "similarity": sim[i, t], "ce": ce[i, t]} for i in range(len(doms))]
    a.set_xlabel("cosine similarity of source and target domain (centroids)")
    a.set_ylabel("target test cross-entropy of the source head")
    a.set_title("MiniLM, natural shift between sentence domains (★: in-domain)")
    a.legend(fontsize=6, title="target domain", title_fontsize=7)
    return save_figure(fig, fig_dir / "ood_domains", pd.DataFrame(rows))


def figures(cfg, df: pd.DataFrame, fig_dir) -> list[Path]:
    """Every figure whose part is in ``df``: trajectories, rotation, collapse, forgetting, phase, tiny, minilm."""
    fig_dir = Path(fig_dir)
    out = []
    if (r := first_row(df, "pretrain")) is not None:
        out.append(_fig_trajectories(r, fig_dir))
    if (r := first_row(df, "ood")) is not None:
        out += [_fig_rotation(r, fig_dir), _fig_collapse(r, fig_dir)]
    ft = forget_table(df)
    if len(ft):
        out += [_fig_forgetting(ft, cfg, fig_dir), _fig_phase(ft, cfg, fig_dir)]
    if not part_rows(df, "tiny").empty:
        out.append(_fig_tiny(df, fig_dir))
    if (r := first_row(df, "minilm")) is not None:
        out.append(_fig_minilm(r, fig_dir))
    ood, shift = first_row(df, "ood"), first_row(df, "minilm_shift")
    if ood is not None or shift is not None:
        out.append(_fig_scenarios(ood, shift, fig_dir))
    if shift is not None and isinstance(shift.get("domain_sim"), list):
        out.append(_fig_domains(shift, fig_dir))
    return out
