"""The claims the ``ood`` experiment judges, as records read by the one judge (arXiv:2609.36448; docs/papers/ood.md
§2, §5.10, §6; :mod:`iclab.claims._records`).

Sources: "arXiv:2609.36448, abstract" for what the abstract states; "second-hand summary (…)" for the paper's
numbers and formulas known only through the summary (those the note shows cannot come from the model as specified
are ``unreliable``: shown, never judged); "docs/papers/ood.md §N" for iclab's own derivations, which the
theory-vs-simulation rows compare the simulation with (never with a paper number).

The records read the judged rows (:func:`judged_rows`): the stored cells (``view`` = ``cell``) and, derived from
their lists, one row per unit (:func:`~iclab.experiments.ood.tables.unit_rows`: per SGD run, angle, feature, table
point, target domain). Each record names its cells (``part``, the ``view``, and θ, γ1, γ2 or the depth), the
measured column and its unit of replication, so the one judge selects, pairs and combines the units
(:mod:`iclab.experiments.ood.statistics` holds the few combine rules and measured texts of its own). The two shares
of forget points that follow a rule (``forget-sign-rule``, ``forget-alpha-rises``) take the point as the unit and
sum its hits (:func:`iclab.claims.binomial_share`, Clopper–Pearson).

Not claims: what holds for any run of the model as specified is a test (``tests/test_claim_identities.py``): the
conservation law α_k + Σ_m β_mk = 0 (v̄ᵀ∇Q = 0 under any objective), random guessing c(K−1)/K for span U ⟂ span V
(every logit is 0), and the training loss 0.0024 at T1 (the stopping rule pins it).
"""

from __future__ import annotations

import pandas as pd

from iclab.claims import ClaimRecord, Measure, PilotMinimum, Rule, across_units_or, binomial_share
from iclab.experiments.ood import statistics as st
from iclab.experiments.ood.reference import PAPER_ENCODER_F, PAPER_F, PAPER_OOD, PAPER_TINY
from iclab.experiments.ood.cells import gamma_rows
from iclab.experiments.ood.tables import CELL, unit_rows

__all__ = ["claims", "judged_rows", "TV", "PV", "ED"]

TV, PV, ED = "theory vs simulation", "paper value", "effect direction"
SUMMARY = "second-hand summary"
SYNTHETIC = {"K": 4, "d": 8, "threshold": 0.0025, "c": 0.5}  # the paper's synthetic setting (second-hand)
#: the smallest forgetting of interest (F, a change of loss; synthetic and tiny tables): a tenth of the source loss
#: fine-tuning starts from (the stopping threshold)
SMALLEST_F = 0.1 * SYNTHETIC["threshold"]
SMALLEST_CE = 0.1  # MiniLM: the smallest change of a cross-entropy of interest, a tenth of a nat
PEAK_BOUND = "a second peak of 10 % of the curve's range"  # what 0 of the prominence margin is (Rule.bound)
_GD = "— (iclab's population GD at N)"
_EXACT = "— (iclab's exact formula at N)"
#: the pilot of the claims' minimums of units (iclab.claims._pilot, issue 43)
PILOT = "the shipped reference run ood-paper"
#: SGD runs ``alpha-star-vs-gd`` needs, fixed once from PILOT (10 runs, one far from the rest: as a run judges them,
#: they agree 11.8 % of the time at the least favourable truth, the gap at -0.02): computed by docs/pilot_minimums.py
#: (1 000 draws per count), the first count at most 5 % + 2 MC SE, 34 runs: 6.5 % ± 0.8 % (fresh draws: 6.4 %)
ALPHA_STAR_MIN_RUNS = 34
#: (γ1, γ2) points ``forget-F-vs-gd`` needs, fixed from PILOT: first from the seed-0 reference (15 points, one far:
#: 17.8 % at the gap at +0.1; 54 points: 5.1 % ± 0.7 %), then recomputed from the seed-2 reference, the first run at
#: that size, as the new pilot (57 points, 53 with a finite F / F_theory, whose ratios near F_theory ≈ 0 spread
#: far: 12.5 % at 57; 156 points: 5.9 % ± 0.7 %, fresh draws 6.0 %)
FORGET_F_MIN_POINTS = 156
#: the shipped reference at seed 2 (issue 43) as pilot, computed as above (1 000 draws per count): the random-M
#: features ``ood-closed-form`` needs (its 4 agree 7.7 % of the time at the gap at +0.05; 5: 3.5 %, fresh 5.3 %),
#: and the trained networks per depth ``tiny-paper-2-layer--0.75`` needs (5: 8.4 %; 8: 5.9 %, fresh 5.3 %)
CLOSED_FORM_MIN_FEATURES = 5
TINY_PAPER_2_MIN_NETWORKS = 8
_BERT = "BERT-base in the paper; here MiniLM on country → region sentences (docs/papers/ood.md §5.6, §5.9)"

_UNRELIABLE_OOD = (
    "docs/papers/ood.md §6.2: the two second-hand OOD errors are not one common factor away from the model's (one "
    "lies below, the other above), so no loss constant makes the model as specified give them"
)
_UNRELIABLE_VBAR = (
    "docs/papers/ood.md §4.7/§6.3: uniform attention at a v̄ query averages the labels to exactly the "
    "target wᵀv̄ (error ≈ 0), so the second-hand 0.375 cannot come from the model as specified"
)
_UNRELIABLE_F = (
    "docs/papers/ood.md §6.5: F is the change of a loss that starts at most at 0.0025 (the stopping rule), so "
    "backward transfer (F < 0) can never exceed 0.0025 in size, which the second-hand values do; the run's F is "
    "far smaller in size than the second-hand F everywhere (the report notes' 'Forgetting magnitudes')"
)
_UNRELIABLE_TINY = (
    "docs/papers/ood.md §6.6: second-hand, and the tiny experiment's γ convention and training budget are unknown"
)


def judged_rows(config, results: pd.DataFrame) -> pd.DataFrame:
    """The rows the records read: the stored cells, marked ``view`` = ``cell``, and one row per unit derived from
    their lists (:func:`~iclab.experiments.ood.tables.unit_rows`, each marked by its own view, which no selection of
    the cells matches). What the cells compute and store is unchanged."""
    cells = results.copy()  # one block per dtype: a new column without fragmenting warnings
    cells["view"] = CELL
    units = unit_rows(config, results)
    return cells if units.empty else pd.concat([cells, units], ignore_index=True)


def _forget_points(config) -> list[dict]:
    """Every (γ1, γ2) point of the forget cells (a share over them is never judged on a subset)."""
    return [{"gamma1": g1, "gamma2": g2} for g1, g2s in gamma_rows(config).items() for g2 in g2s]


def _shares(what: str) -> Measure:
    """The share of the forget points' features that follow a rule (``what``: ``sign``, ``alpha``), the point the
    unit (:func:`iclab.claims.binomial_share` over its ``{what}_hits`` of ``{what}_trials``), every point needed."""
    share = binomial_share(f"{what}_hits", f"{what}_trials", "point")
    where = {"part": "forget", "view": "point"}
    return Measure(where, f"{what}_hits", ("gamma1", "gamma2"), combine=share, measured=share.measured,
                   cells=_forget_points)  # fmt: skip


def _units(part: str, view: str, column: str, unit: tuple, measured, **kw) -> Measure:
    """The rows of ``view`` derived from the cells ``part`` (``where``: the other cell columns), ``column`` per unit."""
    where = kw.pop("where", {})
    return Measure({"part": part, "view": view, **where}, column, unit, measured=measured, **kw)


def _one(part: str, view: str, column: str, se_column: str, measured, sentences: bool = False, **kw) -> Measure:
    """One estimate with its own SE (``se_column``): its cell (``part``, one trained model or encoder) is its one unit."""
    combine = st.own_se_sentences if sentences else st.own_se
    return _units(part, view, column, ("part",), measured, se_column=se_column, combine=combine, **kw)


def _F_table_cells(config) -> list[dict]:
    """Every (γ1, γ2) point of the forgetting table (``forget-F-vs-gd`` is never judged on a subset of them)."""
    return [{"gamma1": float(g1), "gamma2": float(g2)} for g1 in config.gamma1_table for g2 in config.gamma2_table]


def _pretraining() -> list[ClaimRecord]:
    return [
        ClaimRecord(
            "beta-symmetric",
            "At the stopping time every β_{v_m,v_k} = −α*/(K−1) (balanced features)",
            f"{SUMMARY} (β^(T1) = −α*_(K,ε)/(K−1)); docs/papers/ood.md §4.5",
            TV,
            quantity="per SGD run, 1 + the largest relative deviation of a β_mk from −α_k/(K−1)",
            paper_value="β = −α*/(K−1)",
            paper_settings={"K": 4, "d": 8},
            measure=_units("pretrain", "run", "beta_ratio", ("run",), st.beta_text),
            rule=Rule("equivalence", rel_tol=0.05, target=1.0, units="SGD runs"),
        ),
        ClaimRecord(
            "alpha-star-vs-gd",
            "SGD stops at the α* of exact population gradient descent at the same N (the paper "
            "gives no number; the derived large-N limit is 2.872, docs/papers/ood.md §5.8)",
            "docs/papers/ood.md §4.3–4.5 (derived)",
            TV,
            quantity="per SGD run, α* over population GD's at N",
            paper_value=_GD,
            measure=_units(
                "pretrain",
                "run",
                "alpha_ratio",
                ("run",),
                st.alpha_text,
                gates=(PilotMinimum(ALPHA_STAR_MIN_RUNS, PILOT),),
            ),
            rule=Rule("equivalence", rel_tol=0.02, target=1.0, units="SGD runs"),
        ),
        ClaimRecord(
            "stop-steps-vs-gd",
            "SGD meets the stopping rule max_k L_k ≤ ε/K after as many steps as exact population "
            "gradient descent at the same N",
            "docs/papers/ood.md §4.3, §5.1 (derived)",
            TV,
            quantity="per SGD run, the stopping step over population GD's on the check grid (every log_every steps)",
            paper_value=_GD,
            measure=_units(
                "pretrain",
                "run",
                "steps_ratio",
                ("run",),
                st.steps_text,
                se_column="steps_grid_se",
                combine=st.across_runs_and_grid,
            ),
            rule=Rule("equivalence", rel_tol=0.05, target=1.0, units="SGD runs"),
        ),
    ]


def _ood(cfg) -> list[ClaimRecord]:
    out = [
        ClaimRecord(
            f"ood-error-formula-{deg}",
            f"The OOD error under rotation θ = {deg}° follows the exact formula: S^U = MᵀSM and the count-averaged "
            "loss at N",
            "docs/papers/ood.md §4.6–4.7 (derived)",
            TV,
            quantity="Monte-Carlo error (sampled w) over the exact value at N, SE over prompts",
            paper_value=_EXACT,
            measure=_one("ood", "theta", "L_ratio", "L_ratio_se", st.formula_text, where={"theta_deg": deg}),
            rule=Rule("equivalence", rel_tol=0.1, target=1.0, n="ood_prompts"),
        )
        for deg in (30, 60)
    ]
    out.append(
        ClaimRecord(
            "ood-error-grows",
            "The OOD error grows sharply with the rotation angle: L(π/3) > L(π/6)",
            f"arXiv:2609.36448, abstract; {SUMMARY} (main table)",
            ED,
            quantity="MC error at 60° minus at 30° (independent prompts: their SEs combined by hypot)",
            paper_value=f"{PAPER_OOD[30]} → {PAPER_OOD[60]}",
            headline=True,
            paper_settings=SYNTHETIC,
            measure=_one(
                "ood",
                "theta",
                "L_mc",
                "L_se",
                st.growth_text,
                where={"theta_deg": 60},
                base={"part": "ood", "view": "theta", "theta_deg": 30},
            ),
            rule=Rule("direction", smallest=cfg.threshold, n="ood_prompts"),
        )
    )
    out += [
        ClaimRecord(
            f"ood-error-paper-{deg}",
            f"OOD error under rotation θ = {deg}° (K = 4, d = 8)",
            f"{SUMMARY} (main table)",
            PV,
            quantity=f"MC error at {deg}°, SE over prompts",
            paper_value=f"{PAPER_OOD[deg]}",
            paper_settings=SYNTHETIC,
            unreliable=_UNRELIABLE_OOD,
            measure=_one("ood", "theta", "L_mc", "L_se", st.error_text, where={"theta_deg": deg}),
            rule=Rule("value", paper=PAPER_OOD[deg], n="ood_prompts"),
        )
        for deg in (30, 60)
    ]
    return out + [
        ClaimRecord(
            "ood-closed-form",
            "For any alignment M = VᵀU the trained model's OOD confidence u_kᵀQu_k is "
            "(Kα*/(K−1))[(MᵀM)_kk − K⟨u_k, v̄⟩²]",
            f"{SUMMARY} (formula of α_(u_k)^(T1)); docs/papers/ood.md §4.6",
            TV,
            quantity="per feature u_k, measured / closed-form α_(u_k) for a random M (‖M‖₂ = 0.9)",
            paper_value="closed form (M, ⟨u_k, v̄⟩)",
            measure=_units(
                "ood",
                "feature",
                "alpha_u_ratio",
                ("feature",),
                st.closed_form_text,
                gates=(PilotMinimum(CLOSED_FORM_MIN_FEATURES, PILOT),),
            ),
            rule=Rule("equivalence", rel_tol=0.05, target=1.0),
        ),
        ClaimRecord(
            "inspan-formula",
            "Rotating the (v1, v2) plane inside span V by 30° and 60°: the per-feature OOD error follows the exact "
            "formula",
            "docs/papers/ood.md §4.6–4.7 (derived)",
            TV,
            quantity="per (rotation, feature), the MC per-feature error over the exact value at N, SE over prompts",
            paper_value=_EXACT,
            measure=_units(
                "ood",
                "inspan",
                "inspan_ratio",
                ("rotation", "feature"),
                st.inspan_text,
                se_column="inspan_ratio_se",
                combine=st.own_se,
            ),
            rule=Rule("equivalence", rel_tol=0.1, target=1.0, n="ood_prompts"),
        ),
        ClaimRecord(
            "query-vbar-uniform",
            "A query at the mean training feature v̄ gets uniform attention 1/K",
            f"{SUMMARY} (Corollary 5.2 (1)); docs/papers/ood.md §4.7",
            TV,
            quantity="mean over prompts of the largest attention mass (exact counts; uncertainty: float64 rounding, "
            "every prompt has the same counts)",
            paper_value="1/K = 0.250",
            paper_settings={"K": 4},
            measure=_units(
                "ood",
                CELL,
                "query_vbar_sgd_attn_max_mean",
                ("part",),
                st.vbar_attention_text,
                combine=st.rounding_only,
            ),
            rule=Rule("equivalence", rel_tol=0.01, target=1 / cfg.K),
        ),
        ClaimRecord(
            "query-vbar-error-paper",
            "A query at v̄ has error 0.375 (random guessing)",
            f"{SUMMARY} (main table, Corollary 5.2 (1))",
            PV,
            quantity="MC error at a v̄ query, SE over prompts",
            paper_value="0.375",
            paper_settings=SYNTHETIC,
            unreliable=_UNRELIABLE_VBAR,
            measure=_one("ood", CELL, "query_vbar_sgd_err", "query_vbar_sgd_err_se", st.vbar_error_text),
            rule=Rule("value", paper=0.375, n="ood_prompts"),
        ),
    ]


def _forgetting() -> list[ClaimRecord]:
    out = [
        ClaimRecord(
            "forget-sign-rule",
            "Fine-tuning on U (K = 2) raises feature k's source loss iff −γ_kγ_m > γ_k², and lowers it otherwise",
            f"arXiv:2609.36448, abstract; {SUMMARY} (phase condition); docs/papers/ood.md §4.9",
            TV,
            quantity="share of (γ1, γ2, k) whose measured sign of change equals the rule's (Clopper–Pearson 95 % "
            "interval)",
            paper_value="every point",
            headline=True,
            measure=_shares("sign"),
            rule=Rule("equivalence", rel_tol=0.05, target=1.0),
        ),
        ClaimRecord(
            "forget-alpha-rises",
            "Fine-tuning on OOD data raises the confidence α_{v_k} in the source features",
            "arXiv:2609.36448, abstract; docs/papers/ood.md §4.8",
            TV,
            quantity="share of (γ1, γ2, k) with γ_k ≠ 0 where the source α rises (Clopper–Pearson 95 % interval)",
            paper_value="always",
            headline=True,
            measure=_shares("alpha"),
            rule=Rule("equivalence", rel_tol=0.05, target=1.0),
        ),
        ClaimRecord(
            "forget-F-vs-gd",
            "SGD fine-tuning's forgetting F equals that of exact population fine-tuning at N",
            "docs/papers/ood.md §4.8–4.9 (derived)",
            TV,
            quantity="per table point (γ1, γ2) with |F_theory| ≥ 1e-5, F / F_theory",
            paper_value=_GD,
            measure=_units(
                "forget",
                "point",
                "F_ratio",
                ("gamma1", "gamma2"),
                st.forgetting_vs_gd_text,
                where={"table_point": True},
                cells=_F_table_cells,
                gates=(PilotMinimum(FORGET_F_MIN_POINTS, PILOT),),
            ),
            rule=Rule("equivalence", rel_tol=0.1, target=1.0, units="table points"),
        ),
    ]
    signs = ("improves the source (F < 0, backward transfer)", "forgets the source (F > 0)")
    paper = [(g1, g2, ref) for (g1, g2), ref in PAPER_F.items() if ref]  # γ2 = 0.95 'F ≈ 0': see notes.py
    out += [
        ClaimRecord(
            f"forget-sign-paper-{g2:g}",
            f"γ1 = 1, γ2 = {g2:g}: fine-tuning {signs[ref > 0]}",
            f"{SUMMARY} (forgetting table, γ1 = 1)",
            ED,
            quantity="per SGD fine-tuning, F",
            paper_value=f"{ref:+.3f}",
            paper_settings={"c": 0.5, "threshold": 0.0025},
            measure=_units(
                "forget", "ft_run", "F_run", ("run",), st.forgetting_runs_text, where={"gamma1": g1, "gamma2": g2}
            ),
            rule=Rule("direction", sign=1 if ref > 0 else -1, smallest=SMALLEST_F, units="SGD fine-tunings"),
            extra="The smallest effect of interest is a tenth of the source loss fine-tuning starts from (0.0025)",
        )
        for g1, g2, ref in paper
    ]
    return out + [
        ClaimRecord(
            f"forget-paper-{g2:g}",
            f"γ1 = 1, γ2 = {g2:g}: forgetting F = {ref:+.3f}",
            f"{SUMMARY} (forgetting table)",
            PV,
            quantity="per SGD fine-tuning, F",
            paper_value=f"{ref:+.3f}",
            unreliable=_UNRELIABLE_F,
            measure=_units(
                "forget", "ft_run", "F_run", ("run",), st.forgetting_runs_text, where={"gamma1": g1, "gamma2": g2}
            ),
            rule=Rule("value", paper=ref, units="SGD fine-tunings"),
        )
        for g1, g2, ref in paper  # a paper value of 0 has no relative tolerance
    ]


#: the tiny transformers' combine rule: the mean over the trained networks (``tiny_seeds`` replicates per depth)
#: with its SE across them; fewer than 3 is "too few units", never judged on one network's SE over its evaluation
#: prompts, which leaves out the spread of training (issue 43: two references of one network per depth, seeds 0 and
#: 1, gave tiny-depth-amplifies opposite signs, each with a tight prompt-level interval)
TINY_NETWORKS = across_units_or(unit="trained network", planned="tiny_seeds", fallback=False)


def _tiny_F(layers: int, g2: float, base: int | None = None, minimum: int = 0) -> Measure:
    """F at (``layers``, γ2 = ``g2``) per trained network (replicate), combined across them; with ``base`` (a depth)
    paired on the replicate: F here minus F at that depth (the same seed: basis, batches, evaluation prompts)."""
    point = {"part": "tiny", "view": "point", "gamma2": g2}
    pair = None if base is None else {**point, "layers": base}
    where = {"layers": layers, "gamma2": g2}
    gates = (PilotMinimum(minimum, PILOT),) if minimum else ()
    return _units(
        "tiny", "point", "F", ("replicate",), st.tiny_text, where=where, base=pair, combine=TINY_NETWORKS, gates=gates
    )


def _tiny() -> list[ClaimRecord]:
    tiny = {"tiny_gamma1": 1.0, "tiny_width": 16}
    source = f"{SUMMARY} (forgetting table, TinyTransformer)"
    out = [
        ClaimRecord(
            "tiny-forgets-anti",
            "Tiny transformer (1 layer, width 16), γ1 = 1, γ2 = −0.75: fine-tuning forgets the source (F > 0)",
            source,
            ED,
            quantity="F on the same evaluation prompts before/after (paired)",
            paper_value=f"{PAPER_TINY[1][0]:+.2f}",
            paper_settings=tiny,
            measure=_tiny_F(1, -0.75),
            rule=Rule("direction", smallest=SMALLEST_F, n="tiny_seeds", units="trained networks"),
        ),
        ClaimRecord(
            "tiny-bwt-orthogonal",
            "Tiny transformer (1 layer), γ1 = 1, γ2 = 0: fine-tuning improves the source (F < 0)",
            source,
            ED,
            quantity="F on the same evaluation prompts before/after (paired)",
            paper_value=f"{PAPER_TINY[1][1]:+.2f}",
            paper_settings=tiny,
            measure=_tiny_F(1, 0.0),
            rule=Rule("direction", sign=-1, smallest=SMALLEST_F, n="tiny_seeds", units="trained networks"),
        ),
        ClaimRecord(
            "tiny-depth-amplifies",
            "Depth amplifies forgetting: F at γ2 = −0.75 is larger with 3 layers than with 1 (+46 %)",
            f"{SUMMARY} (forgetting table, key findings)",
            ED,
            quantity="F with 3 layers, against 1 layer",
            paper_value=f"{PAPER_TINY[1][0]:+.2f} → {PAPER_TINY[3][0]:+.2f}",
            paper_settings=tiny,
            measure=_tiny_F(3, -0.75, base=1),
            rule=Rule("direction", smallest=SMALLEST_F, n="tiny_seeds", units="trained networks"),
        ),
    ]
    return out + [
        ClaimRecord(
            f"tiny-paper-{layers}-layer-{g2:g}",
            f"Tiny transformer ({layers} layer{'s' if layers > 1 else ''}), γ1 = 1, γ2 = {g2:g}: F = {ref:+.2f}",
            f"{SUMMARY} (forgetting table)",
            PV,
            quantity="F on the same evaluation prompts before/after (paired), SE across trained networks",
            paper_value=f"{ref:+.2f}",
            unreliable=_UNRELIABLE_TINY,
            measure=_tiny_F(layers, g2, minimum=TINY_PAPER_2_MIN_NETWORKS if (layers, g2) == (2, -0.75) else 0),
            rule=Rule("value", paper=ref, n="tiny_seeds", units="trained networks"),
        )
        for layers, refs in PAPER_TINY.items()
        for g2, ref in zip((-0.75, 0.0, 0.75), refs)
    ]


def _peak(scenario: str) -> Measure:
    """The second-peak excess of weight-gap ``scenario`` with its bootstrap interval over test sentences."""
    where = {"scenario": scenario}
    return _units(
        "minilm_shift", "scenario", "excess", ("part",), st.second_peak_text, where=where, combine=st.own_interval
    )


def _minilm() -> list[ClaimRecord]:
    paired = "paired over test sentences"
    prominence = "second-largest peak prominence minus 10 % of the curve's range over one turn"
    return [
        ClaimRecord(
            "minilm-ood-drop",
            "Rotating a real encoder's hidden states raises the source model's loss",
            f"{SUMMARY} (main table, BERT-base MRPC, scenario 1); {_BERT}",
            ED,
            quantity=f"cross-entropy at θ = 90° minus unrotated, {paired}",
            paper_value="CE 0.35 → 1.28",
            measure=_one("minilm", "theta", "ce_drop", "ood_ce_se", st.minilm_drop_text, True, where={"theta_deg": 90}),
            rule=Rule("direction", smallest=SMALLEST_CE, unit=" nats"),
        ),
        ClaimRecord(
            "minilm-forget-pi",
            "Fine-tuning on inputs rotated by θ = π forgets the source (F > 0)",
            f"{SUMMARY} (forgetting table, BERT-base MRPC); {_BERT}",
            ED,
            quantity=f"source CE after − before fine-tuning, {paired}",
            paper_value=f"{PAPER_ENCODER_F[180]:+.2f}",
            measure=_one("minilm", "theta", "F_ce", "F_ce_se", st.minilm_F_text, True, where={"theta_deg": 180}),
            rule=Rule("direction", smallest=SMALLEST_CE, unit=" nats"),
        ),
        ClaimRecord(
            "minilm-protect-half-pi",
            "Fine-tuning on inputs rotated by θ = π/2 does not hurt the source (F < 0, 'orthogonal protection')",
            f"{SUMMARY} (forgetting table, BERT-base MRPC); {_BERT}",
            ED,
            quantity=f"source CE after − before fine-tuning, {paired}",
            paper_value=f"{PAPER_ENCODER_F[90]:+.2f}",
            measure=_one("minilm", "theta", "F_ce", "F_ce_se", st.minilm_F_text, True, where={"theta_deg": 90}),
            rule=Rule("direction", sign=-1, smallest=abs(PAPER_ENCODER_F[90])),
        ),
        ClaimRecord(
            "minilm-gap-single-peak",
            "Rotating hidden dimensions with a large weight gap (scenario 1) gives an OOD loss that rises to a single "
            "peak",
            f"{SUMMARY} (main table, BERT-base MRPC, scenario 1); {_BERT}",
            ED,
            quantity=prominence,
            paper_value="monotone, single peak",
            measure=_peak("gap1"),
            rule=Rule("direction", sign=-1, bound=PEAK_BOUND),
        ),
        ClaimRecord(
            "minilm-gap-two-peaks",
            "Rotating hidden dimensions with a small weight gap (scenario 2) gives a non-monotone, two-peaked OOD loss",
            f"{SUMMARY} (main table, BERT-base MRPC, scenario 2); {_BERT}",
            ED,
            quantity=prominence,
            paper_value="two peaks",
            measure=_peak("gap2"),
            rule=Rule("direction", bound=PEAK_BOUND),
        ),
        ClaimRecord(
            "minilm-domain-similarity",
            "Under a natural domain shift the loss grows as the cosine similarity between source and target domain "
            "falls",
            f"{SUMMARY} (main table, BERT-base, MNLI genres); {_BERT}",
            ED,
            quantity="per target domain, Spearman ρ between similarity and CE over its source domains",
            paper_value="CE 0.38 → 0.62 as similarity falls",
            measure=_units("minilm_shift", "target", "rho", ("target",), st.domain_text),
            rule=Rule("direction", sign=-1, smallest=0.2, units="target domains"),
        ),
    ]


def claims(config) -> list[ClaimRecord]:
    """Every claim the ``ood`` experiment judges (ids stable across presets; the MiniLM ones only with ``minilm``)."""
    out = _pretraining() + _ood(config) + _forgetting() + _tiny()
    return out + (_minilm() if config.minilm else [])
