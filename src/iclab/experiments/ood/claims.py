"""The claims the ``ood`` experiment judges, declared before the run (arXiv:2609.36448; docs/papers/ood.md §2, §6).

Sources: "arXiv:2609.36448, abstract" for what the abstract states; "second-hand summary (…)" for the paper's
numbers and formulas known only through the summary (several do not reproduce; those the note shows cannot come
from the model as specified are ``unreliable``: shown, never judged); "docs/papers/ood.md §N" for iclab's own
derivations, which the theory-vs-simulation rows compare the simulation with (never with a paper number).

Not claims: what holds for any run of the model as specified is a test (``tests/test_claim_identities.py``): the
conservation law α_k + Σ_m β_mk = 0 (v̄ᵀ∇Q = 0 under any objective, every token having the same projection on v̄),
random guessing c(K−1)/K = 0.375 for span U ⟂ span V (Q stays in span V, so every logit is 0), and the training
loss 0.0024 at T1 (the stopping rule max_k L_k ≤ 0.0025 pins it). Each agreed with any table the run could give.
"""

from __future__ import annotations

from iclab.experiments._judge import Claim
from iclab.experiments.ood.reference import PAPER_ENCODER_F, PAPER_F, PAPER_OOD, PAPER_TINY

__all__ = ["claims", "TV", "PV", "ED"]

TV, PV, ED = "theory vs simulation", "paper value", "effect direction"
SUMMARY = "second-hand summary"
SYNTHETIC = {"K": 4, "d": 8, "threshold": 0.0025, "c": 0.5}  # the paper's synthetic setting (second-hand)
_DIRECTION = "95 % interval of the effect must exclude 0 on the claimed side"

_UNRELIABLE_OOD = (
    "docs/papers/ood.md §6.2: the two second-hand OOD errors are not one common factor away from the "
    "model's (ratios 1.3 and 0.76), so no loss constant makes the model as specified give them"
)
_UNRELIABLE_VBAR = (
    "docs/papers/ood.md §4.7/§6.3: uniform attention at a v̄ query averages the labels to exactly the "
    "target wᵀv̄ (error ≈ 0), so the second-hand 0.375 cannot come from the model as specified"
)
_UNRELIABLE_F = (
    "docs/papers/ood.md §6.5: from a source loss of 0.0025 per feature and fine-tuning to the same "
    "rule, F of this model is 1e-4–1e-3; the second-hand magnitudes are 100–1000× larger"
)
_UNRELIABLE_TINY = (
    "docs/papers/ood.md §6.6: second-hand, and the tiny experiment's γ convention and training budget are unknown"
)


def _pretraining() -> list[Claim]:
    return [
        Claim(
            "beta-symmetric",
            "At the stopping time every β_{v_m,v_k} = −α*/(K−1) (balanced features)",
            f"{SUMMARY} (β^(T1) = −α*_(K,ε)/(K−1)); docs/papers/ood.md §4.5",
            TV,
            "largest relative deviation of a β_mk from −α_k/(K−1), mean ± SE over SGD runs (t), within 5 %",
            "β = −α*/(K−1)",
            paper_settings={"K": 4, "d": 8},
        ),
        Claim(
            "alpha-star-vs-gd",
            "SGD stops at the α* of exact population gradient descent at the same N (the paper "
            "gives no number; the derived large-N limit is 2.872, docs/papers/ood.md §5.8)",
            "docs/papers/ood.md §4.3–4.5 (derived)",
            TV,
            "α* mean ± SE over SGD runs (t) within 2 % of population GD at N",
            "— (iclab's population GD at N)",
        ),
        Claim(
            "stop-steps-vs-gd",
            "SGD meets the stopping rule max_k L_k ≤ ε/K after as many steps as exact population "
            "gradient descent at the same N",
            "docs/papers/ood.md §4.3, §5.1 (derived)",
            TV,
            "stopping step mean ± SE over SGD runs (t; plus the check interval's quantisation) within 5 % of "
            "population GD at N",
            "— (iclab's population GD at N)",
        ),
    ]


def _ood() -> list[Claim]:
    out = []
    for deg in (30, 60):
        out.append(
            Claim(
                f"ood-error-formula-{deg}",
                f"The OOD error under rotation θ = {deg}° follows the exact "
                "formula: S^U = MᵀSM and the count-averaged loss at N",
                "docs/papers/ood.md §4.6–4.7 (derived)",
                TV,
                "Monte-Carlo error (sampled w) within 10 % of the exact value at N, 95 % CI",
                "— (iclab's exact formula at N)",
            )
        )
    out.append(
        Claim(
            "ood-error-grows",
            "The OOD error grows sharply with the rotation angle: L(π/3) > L(π/6)",
            f"arXiv:2609.36448, abstract; {SUMMARY} (main table)",
            ED,
            f"MC error at 60° minus at 30° (independent prompts); {_DIRECTION}; smallest effect 0.0025",
            f"{PAPER_OOD[30]} → {PAPER_OOD[60]}",
            headline=True,
            paper_settings=SYNTHETIC,
        )
    )
    for deg in (30, 60):
        out.append(
            Claim(
                f"ood-error-paper-{deg}",
                f"OOD error under rotation θ = {deg}° (K = 4, d = 8)",
                f"{SUMMARY} (main table)",
                PV,
                "|MC − paper| ≤ 2 SE",
                f"{PAPER_OOD[deg]}",
                paper_settings=SYNTHETIC,
                unreliable=_UNRELIABLE_OOD,
            )
        )
    return out


def _ood_structure() -> list[Claim]:
    """The closed form of the OOD confidence and the rotation scenarios' shape."""
    return [
        Claim(
            "ood-closed-form",
            "For any alignment M = VᵀU the trained model's OOD confidence u_kᵀQu_k is "
            "(Kα*/(K−1))[(MᵀM)_kk − K⟨u_k, v̄⟩²]",
            f"{SUMMARY} (formula of α_(u_k)^(T1)); docs/papers/ood.md §4.6",
            TV,
            "measured / closed-form α_(u_k) for a random M (‖M‖₂ = 0.9), mean ± SE over the K features (t), within 5 %",
            "closed form (M, ⟨u_k, v̄⟩)",
        ),
        Claim(
            "inspan-formula",
            "Rotating the (v1, v2) plane inside span V by 30° and 60°: the per-feature OOD error "
            "follows the exact formula",
            "docs/papers/ood.md §4.6–4.7 (derived)",
            TV,
            "mean of MC / exact-at-N over the 2 × K per-feature errors (SE propagated) within 10 %",
            "— (iclab's exact formula at N)",
        ),
        Claim(
            "query-vbar-uniform",
            "A query at the mean training feature v̄ gets uniform attention 1/K",
            f"{SUMMARY} (Corollary 5.2 (1)); docs/papers/ood.md §4.7",
            TV,
            "mean over prompts of the largest attention mass within 1 % of 1/K (exact counts; uncertainty: float64 "
            "rounding, every prompt has the same counts)",
            "1/K = 0.250",
            paper_settings={"K": 4},
        ),
        Claim(
            "query-vbar-error-paper",
            "A query at v̄ has error 0.375 (random guessing)",
            f"{SUMMARY} (main table, Corollary 5.2 (1))",
            PV,
            "|MC error − 0.375| ≤ 2 SE",
            "0.375",
            paper_settings=SYNTHETIC,
            unreliable=_UNRELIABLE_VBAR,
        ),
    ]


def _forgetting() -> list[Claim]:
    out = [
        Claim(
            "forget-sign-rule",
            "Fine-tuning on U (K = 2) raises feature k's source loss iff −γ_kγ_m > γ_k², and lowers it otherwise",
            f"arXiv:2609.36448, abstract; {SUMMARY} (phase condition); docs/papers/ood.md §4.9",
            TV,
            "share of (γ1, γ2, k) whose measured sign of change equals the rule's, "
            "within 5 % of 1 (Clopper–Pearson 95 % interval)",
            "every point",
            headline=True,
        ),
        Claim(
            "forget-alpha-rises",
            "Fine-tuning on OOD data raises the confidence α_{v_k} in the source features",
            "arXiv:2609.36448, abstract; docs/papers/ood.md §4.8",
            TV,
            "share of (γ1, γ2, k) with γ_k ≠ 0 where the source α rises, within 5 % of 1 (Clopper–Pearson)",
            "always",
            headline=True,
        ),
        Claim(
            "forget-F-vs-gd",
            "SGD fine-tuning's forgetting F equals that of exact population fine-tuning at N",
            "docs/papers/ood.md §4.8–4.9 (derived)",
            TV,
            "F / F_theory over the table points with |F_theory| ≥ 1e-5, mean ± SE (t), within 10 %",
            "— (iclab's population GD at N)",
        ),
    ]
    for g2, ref in sorted(PAPER_F.items(), key=lambda kv: kv[0][1]):
        if ref == 0:
            continue
        sign = "forgets the source (F > 0)" if ref > 0 else "improves the source (F < 0, backward transfer)"
        out.append(
            Claim(
                f"forget-sign-paper-{g2[1]:g}",
                f"γ1 = 1, γ2 = {g2[1]:g}: fine-tuning {sign}",
                f"{SUMMARY} (forgetting table, γ1 = 1)",
                ED,
                f"F mean over SGD fine-tuning runs (t); {_DIRECTION}",
                f"{ref:+.3f}",
                paper_settings={"c": 0.5, "threshold": 0.0025},
            )
        )
    out.append(
        Claim(
            "forget-paper-values",
            "F = +0.421 / −0.112 / −0.084 / −0.053 / 0.000 at γ1 = 1, γ2 = −0.9 / −0.2 / 0 / 0.5 / 0.95",
            f"{SUMMARY} (forgetting table)",
            PV,
            "each |F − paper| ≤ 2 SE",
            " / ".join(f"{v:+.3f}" for v in PAPER_F.values()),
            unreliable=_UNRELIABLE_F,
        )
    )
    return out


def _tiny() -> list[Claim]:
    tiny = {"tiny_gamma1": 1.0, "tiny_width": 16}
    return [
        Claim(
            "tiny-forgets-anti",
            "Tiny transformer (1 layer, width 16), γ1 = 1, γ2 = −0.75: fine-tuning forgets the source (F > 0)",
            f"{SUMMARY} (forgetting table, TinyTransformer)",
            ED,
            f"F on the same evaluation prompts before/after (paired); {_DIRECTION}",
            f"{PAPER_TINY[1][0]:+.2f}",
            paper_settings=tiny,
        ),
        Claim(
            "tiny-bwt-orthogonal",
            "Tiny transformer (1 layer), γ1 = 1, γ2 = 0: fine-tuning improves the source (F < 0)",
            f"{SUMMARY} (forgetting table, TinyTransformer)",
            ED,
            f"F on the same evaluation prompts (paired); {_DIRECTION}",
            f"{PAPER_TINY[1][1]:+.2f}",
            paper_settings=tiny,
        ),
        Claim(
            "tiny-depth-amplifies",
            "Depth amplifies forgetting: F at γ2 = −0.75 is larger with 3 layers than with 1 (+46 %)",
            f"{SUMMARY} (forgetting table, key findings)",
            ED,
            f"F(3 layers) − F(1 layer), SEs combined as independent; {_DIRECTION}",
            f"{PAPER_TINY[1][0]:+.2f} → {PAPER_TINY[3][0]:+.2f}",
            paper_settings=tiny,
        ),
        Claim(
            "tiny-paper-values",
            "Tiny transformers' F at γ2 = −0.75 / 0 / +0.75 for 1, 2, 3 layers",
            f"{SUMMARY} (forgetting table)",
            PV,
            "each |F − paper| ≤ 2 SE",
            "; ".join(" / ".join(f"{v:+.2f}" for v in PAPER_TINY[n]) for n in (1, 2, 3)),
            unreliable=_UNRELIABLE_TINY,
        ),
    ]


def _minilm() -> list[Claim]:
    bert = "BERT-base in the paper; here MiniLM on country → region sentences (docs/papers/ood.md §5.6, §5.9)"
    return [
        Claim(
            "minilm-ood-drop",
            "Rotating a real encoder's hidden states raises the source model's loss",
            f"{SUMMARY} (main table, BERT-base MRPC, scenario 1); {bert}",
            ED,
            f"cross-entropy at θ = 90° minus unrotated, paired over test sentences; {_DIRECTION}",
            "CE 0.35 → 1.28",
        ),
        Claim(
            "minilm-forget-pi",
            "Fine-tuning on inputs rotated by θ = π forgets the source (F > 0)",
            f"{SUMMARY} (forgetting table, BERT-base MRPC); {bert}",
            ED,
            f"source CE after − before fine-tuning, paired over test sentences; {_DIRECTION}",
            f"{PAPER_ENCODER_F[180]:+.2f}",
        ),
        Claim(
            "minilm-protect-half-pi",
            "Fine-tuning on inputs rotated by θ = π/2 does not hurt the source (F < 0, 'orthogonal protection')",
            f"{SUMMARY} (forgetting table, BERT-base MRPC); {bert}",
            ED,
            f"source CE after − before, paired over test sentences; {_DIRECTION}; smallest effect 0.03",
            f"{PAPER_ENCODER_F[90]:+.2f}",
        ),
        Claim(
            "minilm-gap-single-peak",
            "Rotating hidden dimensions with a large weight gap (scenario 1) gives an OOD "
            "loss that rises to a single peak",
            f"{SUMMARY} (main table, BERT-base MRPC, scenario 1); {bert}",
            ED,
            "second-largest peak prominence minus 10 % of the curve's range over one turn, bootstrap 95 % interval "
            "over test sentences, must lie below 0",
            "monotone, single peak",
        ),
        Claim(
            "minilm-gap-two-peaks",
            "Rotating hidden dimensions with a small weight gap (scenario 2) gives a non-monotone, two-peaked OOD loss",
            f"{SUMMARY} (main table, BERT-base MRPC, scenario 2); {bert}",
            ED,
            "second-largest peak prominence minus 10 % of the curve's range over one turn, bootstrap 95 % interval "
            "over test sentences, must lie above 0",
            "two peaks",
        ),
        Claim(
            "minilm-domain-similarity",
            "Under a natural domain shift the loss grows as the cosine similarity "
            "between source and target domain falls",
            f"{SUMMARY} (main table, BERT-base, MNLI genres); {bert}",
            ED,
            "Spearman ρ between similarity and CE over the sources of each target domain, mean over targets ± SE "
            f"(t); {_DIRECTION} (ρ < 0); smallest effect |ρ| = 0.2",
            "CE 0.38 → 0.62 as similarity falls",
        ),
    ]


def claims(config) -> list[Claim]:
    """Every claim the ``ood`` experiment judges (ids stable across presets; the MiniLM ones only with ``minilm``)."""
    out = _pretraining() + _ood() + _ood_structure() + _forgetting() + _tiny()
    return out + (_minilm() if config.minilm else [])
