"""The paper-vs-iclab table and the notes of the ``categorical`` experiment (Wang et al., arXiv:2405.17248). Every
disagreement written here is explained in docs/papers/categorical.md §6."""

from __future__ import annotations

import pandas as pd

from iclab.experiments import Comparison
from iclab.experiments.categorical.paper_values import PAPER_BLOCKS, PAPER_L_SWEEP
from iclab.experiments.categorical.tables import mean_with_se, part_rows

__all__ = ["ACC_TOL", "compare", "notes"]

ACC_TOL = 0.05  # accuracy tolerance for "within tolerance" (seed std of GD is ~0.003; settings differ, see notes)


def _setting(cfg) -> str:
    return f"iclab N={cfg.n_context}, {cfg.steps} steps of batch {cfg.batch_size}; authors N=125, 5000 epochs"


def _l_sweep_rows(cfg, sm: pd.DataFrame) -> list[Comparison]:
    """Two blocks, softmax kernel: accuracy (±ACC_TOL) and NLL (qualitative) at each L the authors report."""
    out = []
    for _, r in sm[sm["blocks"] == 2].iterrows():
        if int(r["L"]) in PAPER_L_SWEEP:
            ref = PAPER_L_SWEEP[int(r["L"])]
            j = 0 if r["model"] == "gd" else 1
            out.append(Comparison(f"{r['model'].upper()} 2 blocks softmax, L={int(r['L'])}: accuracy",
                                  f"{ref[j]:.3f}", f"{r['acc']:.3f}", abs(r["acc"] - ref[j]) <= ACC_TOL,
                                  f"±{ACC_TOL}; {_setting(cfg)}"))
            out.append(Comparison(f"{r['model'].upper()} 2 blocks softmax, L={int(r['L'])}: NLL",
                                  f"{ref[j + 2]:.3f}", f"{r['nll']:.3f}", None, "qualitative"))
    return out


def _blocks_rows(cfg, sm: pd.DataFrame) -> list[Comparison]:
    """Softmax kernel at L = 2048: accuracy against the authors' number-of-blocks values (2 blocks is in the L rows)."""
    out = []
    for _, r in sm[(sm["L"] == cfg.blocks_L)].iterrows():
        b = int(r["blocks"])
        if b in PAPER_BLOCKS and b != 2 and int(r["L"]) == 2048:
            ref = PAPER_BLOCKS[b]
            j = 0 if r["model"] == "gd" else 2
            out.append(Comparison(f"{r['model'].upper()} {b} block(s) softmax, L={int(r['L'])}: accuracy",
                                  f"{ref[j]:.3f}", f"{r['acc']:.3f}", abs(r["acc"] - ref[j]) <= ACC_TOL,
                                  f"±{ACC_TOL}; {_setting(cfg)}"))
    return out


def _small_l_rows(m: pd.DataFrame) -> list[Comparison]:
    """Qualitative: GD ≥ trained TF at the smallest L, per kernel and number of blocks (0.01 slack)."""
    out = []
    for (kernel, blocks), g in m.groupby(["kernel", "blocks"]):
        L0 = g["L"].min()
        gg = g[g["L"] == L0].set_index("model")
        if {"gd", "tf"} <= set(gg.index):
            out.append(Comparison(f"GD ≥ trained TF at small L ({kernel}, {int(blocks)} block(s), L={int(L0)})",
                                  "GD better (needs far less data)",
                                  f"GD {gg.loc['gd', 'acc']:.3f} vs TF {gg.loc['tf', 'acc']:.3f}",
                                  bool(gg.loc["gd", "acc"] >= gg.loc["tf", "acc"] - 0.01), "accuracy, 0.01 slack"))
    return out


def _blocks_trend_rows(cfg, sm: pd.DataFrame) -> list[Comparison]:
    """GD accuracy at the best number of blocks exceeds that of the fewest blocks."""
    gd = sm[(sm["model"] == "gd") & (sm["L"] == cfg.blocks_L)].sort_values("blocks")
    if gd["blocks"].nunique() <= 1:
        return []
    a0, a1 = gd["acc"].iloc[0], gd["acc"].max()
    return [Comparison("GD accuracy grows with blocks (1 → best)", "0.702 → 0.731", f"{a0:.3f} → {a1:.3f}",
                       bool(a1 > a0), "more blocks = more functional-GD steps")]


def _gd_likeness_rows(syn: pd.DataFrame) -> list[Comparison]:
    """Qualitative: how identity-like / diagonal the trained transformer's head-1 matrices are (§4.6 of the note)."""
    if "qk_diag_ratio" not in syn:
        return []
    tf = syn[syn["model"] == "tf"]
    return [Comparison("trained TF head-1 Q_x K_x^T ≈ scalar·I (diag/off-diag RMS ratio)",
                       "≈ scalar × identity (trained_tf_visualization)",
                       f"{tf['qk_diag_ratio'].min():.1f} … {tf['qk_diag_ratio'].max():.1f}", None,
                       "≈ 1 for random matrices; larger = more identity-like"),
            Comparison("trained TF V·P label→f block diagonal (diag/off-diag RMS ratio)",
                       "diagonal (\"E·D\" matrix)",
                       f"{tf['vp_wf_diag_ratio'].min():.1f} … {tf['vp_wf_diag_ratio'].max():.1f}", None,
                       "≈ 1 for random matrices")]


def _synthetic_rows(cfg, syn: pd.DataFrame) -> list[Comparison]:
    m = mean_with_se(syn, ["model", "kernel", "blocks", "L"], ["acc", "nll", "bayes_acc"])
    sm = m[m["kernel"] == "softmax"]
    out = _l_sweep_rows(cfg, sm) + _blocks_rows(cfg, sm) + _small_l_rows(m) + _blocks_trend_rows(cfg, sm)
    out += _gd_likeness_rows(syn)
    out.append(Comparison("Bayes-classifier accuracy (ceiling of the generator)", "— (not reported)",
                          f"{m['bayes_acc'].mean():.3f}", None, "argmax of the true class probabilities"))
    return out


def _features_rows(feat: pd.DataFrame) -> list[Comparison]:
    """Per dataset: the best GD model against the per-context linear probe (within 0.05 accuracy)."""
    out = []
    m = mean_with_se(feat, ["dataset", "blocks"], ["acc"])
    for ds, g in m.groupby("dataset"):
        g = g.set_index("blocks")
        if 0 in g.index and len(g) > 1:
            probe, best = g.loc[0, "acc"], g.drop(index=0)["acc"].max()
            nb = int(g.drop(index=0)["acc"].idxmax())
            out.append(Comparison(f"{ds}: best GD ({nb} block(s)) vs per-context linear probe",
                                  "2-3 GD blocks ≈ linear probe (ImageNet/VGG)",
                                  f"GD {best:.3f} vs probe {probe:.3f}", bool(best >= probe - 0.05),
                                  "within 0.05 accuracy; stand-in data (docs/papers/categorical.md §5.4)"))
    return out


def _language_rows(lm: pd.DataFrame) -> list[Comparison]:
    """Held-out perplexities; ok when GD+FF is within 25 % of the transformer."""
    m = mean_with_se(lm, ["model"], ["perplexity"]).set_index("model")
    txt = ", ".join(f"{k} {v:.2f}" for k, v in m["perplexity"].items())
    ok = None
    if {"gd_ff", "transformer"} <= set(m.index):
        ok = bool(m.loc["gd_ff", "perplexity"] <= 1.25 * m.loc["transformer", "perplexity"])
    return [Comparison("language: held-out perplexity (GD, GD+FF, 1-layer TF)",
                       "GD close to TF; GD+FF almost equal (GPT-4o grades)", txt, ok,
                       "ok if GD+FF within 25% of the transformer; character level, pydoc text")]


def _stationarity_rows(st: pd.DataFrame) -> list[Comparison]:
    """Per kernel: the x-coupling z after training (ok below 3) and the other off-pattern z (qualitative)."""
    out = []
    for _, r in st.iterrows():
        z = r["trained_x_coupling_z"]
        out.append(Comparison(f"stationarity ({r['kernel']}): x-coupling off-pattern gradient, z",
                              "0 (Thm 1-2)", f"z = {z:.2f}", bool(z < 3), "z ≈ 1 means zero within MC error"))
        out.append(Comparison(f"stationarity ({r['kernel']}): other off-pattern gradient after training, z",
                              "0 (Thm 1-2, reconstructed)", f"z = {r['trained_other_z']:.1f} "
                              f"(free params z = {r['trained_free_z']:.1f})", None,
                              "couplings among the label/scratch/f slots; see notes"))
    return out


def compare(cfg, df: pd.DataFrame) -> list[Comparison]:
    """Rows of the paper-vs-iclab table for every part with results."""
    out: list[Comparison] = []
    syn = part_rows(df, "synthetic")
    if len(syn):
        out += _synthetic_rows(cfg, syn)
    feat = part_rows(df, "features")
    if len(feat):
        out += _features_rows(feat)
    lm = part_rows(df, "language")
    if len(lm):
        out += _language_rows(lm)
    st = part_rows(df, "stationarity")
    if len(st):
        out += _stationarity_rows(st)
    return out


def _synthetic_notes(cfg, syn: pd.DataFrame) -> list[str]:
    m = mean_with_se(syn, ["model", "kernel", "blocks", "L"], ["acc", "bayes_acc"])
    return [
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
        "- **Erase head.** iclab uses the score −λ‖q−k‖² (an exact Kronecker delta, "
        "docs/papers/categorical.md §4.2) instead of the code's dot-product score; the trained transformer uses "
        "the same score form with learned Q/K.",
        "- **W_e.** One W_e (d' × C, init N(0,1)) is shared by the embedding, the cross-attention and the "
        "readout in both models; all C columns are learned (the torch code's convention).",
    ]


def _features_notes(cfg) -> list[str]:
    return ["- **Real features.** ImageNet/VGG16 need downloads; iclab uses scikit-learn's `load_digits` "
            "(5 training / 5 unseen digit classes) and MiniLM embeddings of sentences generated from "
            f"`countryinfo` facts, one class per UN sub-region ({cfg.sentence_test_classes} unseen test "
            f"classes), PCA to {cfg.feature_dim} dims fitted on training classes, linear kernel, d' = 5. "
            "The probe is retrained per context (Adam, weight decay 1e-3)."]


def _language_notes(cfg) -> list[str]:
    return ["- **Language.** TinyStories/Children-Stories, the GPT-2 tokenizer and GPT-4o grading are not "
            "available offline; iclab trains character-level models on the `pydoc_data.topics` text (Python "
            f"docs shipped with CPython), width {cfg.lm_width}, {cfg.lm_heads} heads, sequence "
            f"{cfg.lm_seq_len}, {cfg.lm_steps} AdamW steps, and compares held-out perplexity instead of "
            "GPT-4o scores."]


def _stationarity_notes(st: pd.DataFrame) -> list[str]:
    lines = ["- **Stationarity (Thm 1-2).** The statements were reconstructed, not read. iclab measures the "
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
    return lines


def notes(cfg, df: pd.DataFrame) -> str:
    """Markdown: where iclab and the paper differ, and why, for every part with results."""
    lines = ["### Where iclab and the paper differ, and why", ""]
    syn = part_rows(df, "synthetic")
    if len(syn):
        lines += _synthetic_notes(cfg, syn)
    if len(part_rows(df, "features")):
        lines += _features_notes(cfg)
    if len(part_rows(df, "language")):
        lines += _language_notes(cfg)
    st = part_rows(df, "stationarity")
    if len(st):
        lines += _stationarity_notes(st)
    return "\n".join(lines) + "\n"
