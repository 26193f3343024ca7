"""Figures, the paper-vs-iclab table and the notes of the ``categorical`` experiment. The authors' numbers are
the outputs kept in their notebook ``plot_training_data_results.ipynb`` (spec §5.3: C = 25, d = 10, N = 125,
softmax kernel, early stopping, mean over seeds)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from iclab.experiments import Comparison

__all__ = ["PAPER_L_SWEEP", "PAPER_BLOCKS", "figures", "compare", "notes"]

# L -> (GD acc, TF acc, GD NLL, TF NLL), two blocks (spec §5.3a)
PAPER_L_SWEEP = {2048: (0.718, 0.524, 0.971, 1.743), 4096: (0.723, 0.609, 0.945, 1.434),
                 8192: (0.718, 0.670, 0.944, 1.165), 12288: (0.723, 0.687, 0.939, 1.079),
                 16384: (0.722, 0.700, 0.936, 1.021), 20480: (0.724, 0.704, 0.933, 1.001),
                 24576: (0.719, 0.712, 0.930, 0.972), 32768: (0.727, 0.720, 0.934, 0.968)}
# blocks -> (GD acc, GD NLL, TF acc, TF NLL) at L = 2048 (spec §5.3b)
PAPER_BLOCKS = {1: (0.702, 1.058, 0.575, 1.520), 2: (0.718, 0.971, 0.524, 1.743), 3: (0.729, 0.943, 0.474, 1.847),
                4: (0.731, 0.924, 0.479, 1.847), 5: (0.728, 0.916, 0.481, 1.845), 6: (0.727, 0.921, 0.483, 1.838)}
ACC_TOL = 0.05  # accuracy tolerance for "within tolerance" (seed std of GD is ~0.003; settings differ, see notes)


def _part(df: pd.DataFrame, part: str) -> pd.DataFrame:
    return df[df["part"] == part] if "part" in df else df.iloc[0:0]


def _mean(df: pd.DataFrame, keys: list[str], cols: list[str]) -> pd.DataFrame:
    g = df.groupby(keys)
    out = g[cols].mean()
    for c in cols:
        out[c + "_se"] = g[c].std().fillna(0.0) / np.sqrt(g[c].count())
    return out.reset_index()


def figures(cfg, df: pd.DataFrame, fig_dir: Path) -> list[Path]:
    from iclab.plotting import color, new_figure, save_figure, theory_vs_sim

    fig_dir = Path(fig_dir)
    paths = []
    syn = _part(df, "synthetic")
    if len(syn):
        m = _mean(syn, ["model", "kernel", "blocks", "L"], ["acc", "nll", "bayes_acc", "bayes_nll"])
        fig, axes = new_figure(2, 1, width=8.4)
        i = 0
        for (model, kernel, blocks), g in m[m["blocks"].isin(cfg.layers)].groupby(["model", "kernel", "blocks"]):
            g = g.sort_values("L")
            for ax, col in zip(axes, ("acc", "nll")):
                theory_vs_sim(ax, g["L"], sim=g[col], sim_err=g[col + "_se"], i=i,
                              label=f"{'GD' if model == 'gd' else 'trained TF'}, {int(blocks)} block(s), {kernel}")
            i += 1
        Ls = sorted(PAPER_L_SWEEP)
        for ax, j, k, name in ((axes[0], 0, 1, "acc"), (axes[1], 2, 3, "nll")):
            ax.plot(Ls, [PAPER_L_SWEEP[L][j] for L in Ls], "--", color="0.3", label="authors: GD, 2 blocks (N=125)")
            ax.plot(Ls, [PAPER_L_SWEEP[L][k] for L in Ls], ":", color="0.3", label="authors: TF, 2 blocks (N=125)")
            ax.axhline(m[f"bayes_{name}"].mean(), color="0.6", lw=0.8, label="Bayes classifier (iclab data)")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("training contexts L")
        axes[0].set_ylabel("query top-1 accuracy")
        axes[1].set_ylabel("query NLL")
        axes[0].legend(fontsize=6)
        paths.append(save_figure(fig, fig_dir / "categorical_L_sweep.png", m))
        bl = m[(m["kernel"] == "softmax") & (m["L"] == cfg.blocks_L)]
        if bl["blocks"].nunique() > 1:
            fig, axes = new_figure(2, 1, width=8.4)
            for i, (model, g) in enumerate(bl.groupby("model")):
                g = g.sort_values("blocks")
                for ax, col in zip(axes, ("acc", "nll")):
                    theory_vs_sim(ax, g["blocks"], sim=g[col], sim_err=g[col + "_se"], i=i,
                                  label=f"iclab {'GD' if model == 'gd' else 'trained TF'} (N={cfg.n_context})")
            B = sorted(PAPER_BLOCKS)
            for ax, jg, jt in ((axes[0], 0, 2), (axes[1], 1, 3)):
                ax.plot(B, [PAPER_BLOCKS[b][jg] for b in B], "--", color=color(0), label="authors GD (N=125)")
                ax.plot(B, [PAPER_BLOCKS[b][jt] for b in B], ":", color=color(1), label="authors TF (N=125)")
                ax.set_xlabel("blocks (GD steps)")
            axes[0].set_ylabel("query top-1 accuracy")
            axes[1].set_ylabel("query NLL")
            axes[0].legend(fontsize=6)
            paths.append(save_figure(fig, fig_dir / "categorical_blocks.png", bl))
    feat = _part(df, "features")
    if len(feat):
        m = _mean(feat, ["dataset", "blocks"], ["acc"])
        fig, ax = new_figure()
        ds = sorted(m["dataset"].unique())
        blocks = sorted(m["blocks"].unique())
        w = 0.8 / len(blocks)
        for j, b in enumerate(blocks):
            g = m[m["blocks"] == b].set_index("dataset").reindex(ds)
            ax.bar(np.arange(len(ds)) + j * w, g["acc"], w, yerr=g["acc_se"], color=color(j),
                   label="linear probe (per context)" if b == 0 else f"GD, {int(b)} block(s)")
        ax.axhline(1 / cfg.n_way, color="0.6", lw=0.8, label="chance")
        ax.set_xticks(np.arange(len(ds)) + 0.4 - w / 2, ds)
        ax.set_ylabel(f"{cfg.n_way}-way {cfg.shots}-shot accuracy, unseen classes")
        ax.legend(fontsize=6)
        paths.append(save_figure(fig, fig_dir / "categorical_features.png", m))
    lm = _part(df, "language")
    if len(lm):
        m = _mean(lm, ["model"], ["perplexity"])
        fig, ax = new_figure()
        ax.bar(m["model"], m["perplexity"], yerr=m["perplexity_se"], color=[color(i) for i in range(len(m))])
        ax.set_ylabel("held-out character perplexity")
        paths.append(save_figure(fig, fig_dir / "categorical_language.png", m))
    st = _part(df, "stationarity")
    if len(st):
        groups = ["x_coupling", "other", "free", "W_e"]
        rows = []
        for _, r in st.iterrows():
            for tag in ("init", "trained"):
                for grp in groups:
                    rows.append({"kernel": r["kernel"], "state": tag, "group": grp, "z": r.get(f"{tag}_{grp}_z")})
        zt = pd.DataFrame(rows)
        fig, ax = new_figure()
        labels = [f"{k}\n{s}" for k in sorted(zt["kernel"].unique()) for s in ("init", "trained")]
        for j, grp in enumerate(groups):
            vals = [zt[(zt["kernel"] == k) & (zt["state"] == s) & (zt["group"] == grp)]["z"].mean()
                    for k in sorted(zt["kernel"].unique()) for s in ("init", "trained")]
            ax.bar(np.arange(len(labels)) + j * 0.2, vals, 0.2, color=color(j), label=grp)
        ax.axhline(1.0, color="0.3", ls="--", lw=0.8, label="zero expected gradient (z = 1)")
        ax.set_yscale("log")
        ax.set_xticks(np.arange(len(labels)) + 0.3, labels)
        ax.set_ylabel("|mean gradient| / standard error (RMS)")
        ax.legend(fontsize=6)
        paths.append(save_figure(fig, fig_dir / "categorical_stationarity.png", zt))
    return paths


def compare(cfg, df: pd.DataFrame) -> list[Comparison]:
    out: list[Comparison] = []
    syn = _part(df, "synthetic")
    setting = f"iclab N={cfg.n_context}, {cfg.steps} steps of batch {cfg.batch_size}; authors N=125, 5000 epochs"
    if len(syn):
        m = _mean(syn, ["model", "kernel", "blocks", "L"], ["acc", "nll", "bayes_acc"])
        sm = m[m["kernel"] == "softmax"]
        for _, r in sm[sm["blocks"] == 2].iterrows():
            if int(r["L"]) in PAPER_L_SWEEP:
                ref = PAPER_L_SWEEP[int(r["L"])]
                j = 0 if r["model"] == "gd" else 1
                out.append(Comparison(f"{r['model'].upper()} 2 blocks softmax, L={int(r['L'])}: accuracy",
                                      f"{ref[j]:.3f}", f"{r['acc']:.3f}", abs(r["acc"] - ref[j]) <= ACC_TOL,
                                      f"±{ACC_TOL}; {setting}"))
                out.append(Comparison(f"{r['model'].upper()} 2 blocks softmax, L={int(r['L'])}: NLL",
                                      f"{ref[j + 2]:.3f}", f"{r['nll']:.3f}", None, "qualitative"))
        for _, r in sm[(sm["L"] == cfg.blocks_L)].iterrows():
            b = int(r["blocks"])
            if b in PAPER_BLOCKS and b != 2 and int(r["L"]) == 2048:
                ref = PAPER_BLOCKS[b]
                j = 0 if r["model"] == "gd" else 2
                out.append(Comparison(f"{r['model'].upper()} {b} block(s) softmax, L={int(r['L'])}: accuracy",
                                      f"{ref[j]:.3f}", f"{r['acc']:.3f}", abs(r["acc"] - ref[j]) <= ACC_TOL,
                                      f"±{ACC_TOL}; {setting}"))
        # qualitative: GD >= trained TF at the smallest L, per kernel and blocks
        for (kernel, blocks), g in m.groupby(["kernel", "blocks"]):
            L0 = g["L"].min()
            gg = g[g["L"] == L0].set_index("model")
            if {"gd", "tf"} <= set(gg.index):
                out.append(Comparison(f"GD ≥ trained TF at small L ({kernel}, {int(blocks)} block(s), L={int(L0)})",
                                      "GD better (needs far less data)",
                                      f"GD {gg.loc['gd', 'acc']:.3f} vs TF {gg.loc['tf', 'acc']:.3f}",
                                      bool(gg.loc["gd", "acc"] >= gg.loc["tf", "acc"] - 0.01), "accuracy, 0.01 slack"))
        gd = sm[(sm["model"] == "gd") & (sm["L"] == cfg.blocks_L)].sort_values("blocks")
        if gd["blocks"].nunique() > 1:
            a0, a1 = gd["acc"].iloc[0], gd["acc"].max()
            out.append(Comparison("GD accuracy grows with blocks (1 → best)", "0.702 → 0.731",
                                  f"{a0:.3f} → {a1:.3f}", bool(a1 > a0), "more blocks = more functional-GD steps"))
        if "qk_diag_ratio" in syn:
            tf = syn[syn["model"] == "tf"]
            out.append(Comparison("trained TF head-1 Q_x K_x^T ≈ scalar·I (diag/off-diag RMS ratio)",
                                  "≈ scalar × identity (trained_tf_visualization)",
                                  f"{tf['qk_diag_ratio'].min():.1f} … {tf['qk_diag_ratio'].max():.1f}", None,
                                  "≈ 1 for random matrices; larger = more identity-like"))
            out.append(Comparison("trained TF V·P label→f block diagonal (diag/off-diag RMS ratio)",
                                  "diagonal (\"E·D\" matrix)",
                                  f"{tf['vp_wf_diag_ratio'].min():.1f} … {tf['vp_wf_diag_ratio'].max():.1f}", None,
                                  "≈ 1 for random matrices"))
        out.append(Comparison("Bayes-classifier accuracy (ceiling of the generator)", "— (not reported)",
                              f"{m['bayes_acc'].mean():.3f}", None, "argmax of the true class probabilities"))
    feat = _part(df, "features")
    if len(feat):
        m = _mean(feat, ["dataset", "blocks"], ["acc"])
        for ds, g in m.groupby("dataset"):
            g = g.set_index("blocks")
            if 0 in g.index and len(g) > 1:
                probe, best = g.loc[0, "acc"], g.drop(index=0)["acc"].max()
                nb = int(g.drop(index=0)["acc"].idxmax())
                out.append(Comparison(f"{ds}: best GD ({nb} block(s)) vs per-context linear probe",
                                      "2-3 GD blocks ≈ linear probe (ImageNet/VGG)",
                                      f"GD {best:.3f} vs probe {probe:.3f}", bool(best >= probe - 0.05),
                                      "within 0.05 accuracy; stand-in data (spec §3.2)"))
    lm = _part(df, "language")
    if len(lm):
        m = _mean(lm, ["model"], ["perplexity"]).set_index("model")
        txt = ", ".join(f"{k} {v:.2f}" for k, v in m["perplexity"].items())
        ok = None
        if {"gd_ff", "transformer"} <= set(m.index):
            ok = bool(m.loc["gd_ff", "perplexity"] <= 1.25 * m.loc["transformer", "perplexity"])
        out.append(Comparison("language: held-out perplexity (GD, GD+FF, 1-layer TF)",
                              "GD close to TF; GD+FF almost equal (GPT-4o grades)", txt, ok,
                              "ok if GD+FF within 25% of the transformer; character level, pydoc text"))
    st = _part(df, "stationarity")
    if len(st):
        for _, r in st.iterrows():
            z = r["trained_x_coupling_z"]
            out.append(Comparison(f"stationarity ({r['kernel']}): x-coupling off-pattern gradient, z",
                                  "0 (Thm 1-2)", f"z = {z:.2f}", bool(z < 3), "z ≈ 1 means zero within MC error"))
            out.append(Comparison(f"stationarity ({r['kernel']}): other off-pattern gradient after training, z",
                                  "0 (Thm 1-2, reconstructed)", f"z = {r['trained_other_z']:.1f} "
                                  f"(free params z = {r['trained_free_z']:.1f})", None,
                                  "couplings among the label/scratch/f slots; see notes"))
    return out


def notes(cfg, df: pd.DataFrame) -> str:
    lines = ["### Where iclab and the paper differ, and why", ""]
    syn = _part(df, "synthetic")
    if len(syn):
        m = _mean(syn, ["model", "kernel", "blocks", "L"], ["acc", "bayes_acc"])
        lines += [
            f"- **Training budget.** The authors train 5000 passes over the L contexts with minibatch 512 (up to "
            f"~300k steps at L = 32768) with early stopping; iclab's `{'quick' if cfg.steps < 1000 else 'full'}` "
            f"run uses {cfg.steps} steps of batch {cfg.batch_size} (early stopping on {cfg.n_val} validation "
            f"contexts), and N = {cfg.n_context} context points (authors 125). The trained transformer, which starts "
            "at N(0, (0.002/K)^2) weights, is far from converged in such a budget, so its gap to the GD model is "
            "larger than the paper's at equal L; the GD model has K·d' + 1 + d'·C parameters "
            f"({cfg.d_embed + 1 + cfg.d_embed * cfg.n_classes} for one block) and converges quickly.",
            "- **Learning rate of the GD model.** iclab uses Adam at "
            f"{cfg.lr_gd} (authors 1e-3 with 5000 epochs) so that the few GD parameters converge within the short "
            "budget; the trained transformer uses AdamW at "
            f"{cfg.lr_tf} (authors 1e-3/5e-4).",
            f"- **Ceiling.** The Bayes classifier (which knows the generating probabilities) reaches "
            f"{m['bayes_acc'].mean():.3f} on iclab's data (λ = {cfg.latent_scale}); the authors' λ for the "
            "reported runs is not recorded (argparse default 10, notebook 5, example 3), so absolute accuracies "
            "can shift with λ.",
            "- **Erase head.** iclab uses the score −λ‖q−k‖² (an exact Kronecker delta, spec §6) instead of the "
            "code's dot-product score; the trained transformer uses the same score form with learned Q/K.",
            "- **W_e.** One W_e (d' × C, init N(0,1)) is shared by the embedding, the cross-attention and the "
            "readout in both models; all C columns are learned (the torch code's convention).",
        ]
    if len(_part(df, "features")):
        lines += ["- **Real features.** ImageNet/VGG16 need downloads; iclab uses scikit-learn's `load_digits` "
                  "(5 training / 5 unseen digit classes) and MiniLM embeddings of sentences generated from "
                  f"`countryinfo` facts, one class per UN sub-region ({cfg.sentence_test_classes} unseen test "
                  f"classes), PCA to {cfg.feature_dim} dims fitted on training classes, linear kernel, d' = 5. "
                  "The probe is retrained per context (Adam, weight decay 1e-3)."]
    if len(_part(df, "language")):
        lines += ["- **Language.** TinyStories/Children-Stories, the GPT-2 tokenizer and GPT-4o grading are not "
                  "available offline; iclab trains character-level models on the `pydoc_data.topics` text (Python "
                  f"docs shipped with CPython), width {cfg.lm_width}, {cfg.lm_heads} heads, sequence "
                  f"{cfg.lm_seq_len}, {cfg.lm_steps} AdamW steps, and compares held-out perplexity instead of "
                  "GPT-4o scores."]
    st = _part(df, "stationarity")
    if len(st):
        lines += ["- **Stationarity (Thm 1-2).** The statements were reconstructed, not read. iclab measures the "
                  "Monte-Carlo gradient of the ICL loss w.r.t. every entry of every Q/K/V/P matrix and W_e at the GD "
                  "configuration (float64), before and after training the GD parameters (α, s, W_e), as z = RMS of "
                  "the mean gradient / RMS of its standard error (z ≈ 1: zero within Monte-Carlo error). Entries "
                  "that couple an x coordinate with anything else vanish already at a random GD configuration: "
                  "they need only the invariance of the covariate law under coordinate reflections. The remaining "
                  "off-pattern entries (couplings among the label, scratch and f slots) do not vanish at a random "
                  "GD configuration; they shrink together with the gradient of the free GD parameters as those are "
                  "trained, i.e. their stationarity is a property of the *optimal* GD configuration, as in the "
                  "theorems. Measured:"]
        for _, r in st.iterrows():
            lines.append(f"  - {r['kernel']}, {int(r['blocks'])} blocks: x-coupling z {r['init_x_coupling_z']:.2f} "
                         f"(random α) / {r['trained_x_coupling_z']:.2f} (trained); other off-pattern z "
                         f"{r['init_other_z']:.1f} / {r['trained_other_z']:.1f}; free GD parameters z "
                         f"{r['init_free_z']:.1f} / {r['trained_free_z']:.1f}; W_e z {r['init_W_e_z']:.1f} / "
                         f"{r['trained_W_e_z']:.1f}.")
    return "\n".join(lines) + "\n"
