"""The claims of arXiv:2503.12734 that the ``multihead`` experiment judges, as records (docs/papers/multihead.md
§6–7; the vocabulary and the one judge: :mod:`iclab.claims._records`): the rows of Figs. 2.4 and 2.5, the
trained models' errors and patterns (Thm 1, Figs. 2.2–2.8, 3.1), length generalisation, the multi-task and
activation extensions (Figs. 3.2–3.5, 4.2), Thm 1's Bayes-risk ratio and the unreliable second-hand summary.

The records are built per config (η* and debiased GD's exact risk, the targets, depend on d, L, σ²); what the
vocabulary cannot say is in :mod:`.statistics`. Replicates are seeds; the claims on the stage-II limits and patterns
pool every trained H ≥ 2 model of every seed (Student t over models: three models may disagree, not agree). Gates
(declared, :mod:`iclab.claims._gates`): ``paper_settings``, :data:`TRAINED_GATE` (≥ 2·10⁴ Adam steps) and
:data:`STAGE_II_GATE` (the H ≥ 2 models trained the paper's 5·10⁵ steps for stage II).
"""

from __future__ import annotations

from functools import partial


from iclab.claims import BASE, ClaimRecord, Measure, measured_as, Rule, Setting, whole_rows
from iclab.experiments.multihead import statistics as st
from iclab.experiments.multihead.config import ACTIVATION_NAMES
from iclab.experiments.multihead.conventions import (
    FIG24_HEADS, FIG25, K_TABLE, MT_CODE, PAPER_LENGTHGEN, PAPER_TRAINING, SIGN_MATCH_MIN, SRC, SRC_CODE,
    STAGE_II_STEPS, TABLE_LENGTHS, TABLE_REL_TOL, TRAINED_MIN_STEPS, ZERO_SUM_MAX,
)  # fmt: skip
from iclab.experiments.multihead.paper_values import (
    FIG24_PROMPTS, FIG24_TRAINED, FIG25_ESTIMATORS, MU_PLUS_PRINTED_SE, OMEGA_PRINTED_SE, PAPER_MU,
    PAPER_OMEGA_LOGIT, PAPER_SETUP, PURITY, SEED_SUMMARY, SEED_SUMMARY_LENGTHGEN,
)  # fmt: skip
from iclab.theory import multihead as th

__all__ = ["claims"]

SEED = ("seed",)  # the unit of replication of one trained model (a paired measure pairs the seeds)
MODEL = ("H", "seed")  # the rows of a claim pooled over every trained H ≥ 2 model, averaged per seed (st.over_seeds)
#: a trained-model claim needs stage I finished (the judge writes "settings differ" below it)
TRAINED_GATE = Setting("steps", minimum=TRAINED_MIN_STEPS, why="stage I finished", paper=STAGE_II_STEPS)
#: the limits of stage II need the H ≥ 2 models trained the paper's steps (rows without ``trained_steps``: ``steps``)
STAGE_II_GATE = Setting("steps", minimum=STAGE_II_STEPS, why="the limits of stage II", paper=STAGE_II_STEPS,
                        column=st.h2_trained_steps, label="the H ≥ 2 models' trained steps")  # fmt: skip
GATES = (TRAINED_GATE,)
ZERO_SUM_BOUND = f"|Σμ| at {ZERO_SUM_MAX:.0%} of Σ|μ|"  # what 0 of the zero-sum margin is (Rule.bound)
THM1_BOUND = "the ratio at Thm 1's bound"  # what 0 of the slack is (Rule.bound)
PGD_SMALLEST = 0.05  # fig3.1: the smallest gap between the two GD fits of interest, 5 % of the Bayes error
ISO = {"part": "iso", "attention": "softmax"}
DIGIT = "SE_paper: half the last printed digit"
POOLED = "per seed, the mean over its trained H ≥ 2 models (they share the seed's batches) of "
PATTERNS_TEXT = measured_as("{v:.4g} (KQ diag. mass {rows[diag_kq_diag_mass]:.4f}, OV last-entry mass "
                            "{rows[diag_ov_last_mass]:.4f})")  # fmt: skip
ANISO_TEXT = measured_as("{v:.3g} (corr(KQ, Σ⁻¹) {rows[corr_sigma_inv]:.3f}, corr(KQ, I) {rows[corr_identity]:.3f})")


def _iso(H: int) -> dict:
    return {**ISO, "H": H}


def _rec(cid, claim, source, kind, quantity, paper, measure, rule, headline=False, settings=None, extra="",
         **kw) -> ClaimRecord:  # fmt: skip
    return ClaimRecord(cid, claim, source, kind, quantity=quantity, extra=extra, paper_value=paper, headline=headline,
                       paper_settings=settings or {}, measure=measure, rule=rule, **kw)  # fmt: skip


def _tables() -> list[ClaimRecord]:
    """The rows of Fig. 2.5 (estimators; closed forms exact) and Fig. 2.4 (trained models, paired with debiased GD)."""
    out = [
        _rec(f"fig2.5/{key}/L{n}", f"Risk E(ŷ − y_q)² of the {label} at L = {n} (d = 5, σ² = 0.1)",
             f"{SRC_CODE}, Fig. 2.5", "paper value",
             f"the {label}'s risk at L = {n} (a closed form: exact; Monte Carlo: SE over n_mc prompts)",
             f"{FIG25_ESTIMATORS[key][n]:.4f}",
             Measure({"part": "baseline"}, st.at(col, n), SEED, combine=partial(st.fig25, se_col, n, col[:3] == "th_"),
                     measured=measured_as("{v:.4f}")),
             Rule("value", paper=FIG25_ESTIMATORS[key][n], k=K_TABLE, rel_tol=TABLE_REL_TOL, n="n_mc", units="prompts"),
             settings={"d": 5, "sigma2": 0.1}, extra="")
        for key, col, se_col, label in FIG25 for n in TABLE_LENGTHS
    ]  # fmt: skip
    for H in FIG24_HEADS:
        for n in TABLE_LENGTHS:
            ref = FIG24_TRAINED[H][n] - 0.1
            risk = float(th.gd_risk(th.eta_star(5, 40, 0.1), 5, n, 0.1))
            gap = ref - risk
            if H >= 2:
                out.append(_is_dgd(H, n, risk, ref))
                continue
            cv = partial(st.fig24, FIG24_PROMPTS[H], ref, n)
            out.append(_rec(
                f"fig2.4/H{H}/L{n}",
                f"Trained H = {H} softmax model (L = 40) tested at L' = {n}: its error minus debiased GD at η*",
                f"{SRC_CODE}, Fig. 2.4 (printed value − 0.1, σ² counted twice there) and iclab's exact "
                "debiased-GD risk",
                "paper value",
                f"per seed, the paired difference model − debiased GD(η*) at L' = {n} on the same n_eval prompts",
                f"{gap:+.4f} (= {ref:.4f} − {ref - gap:.4f})",
                Measure(_iso(H), st.at("dgd_diff", n), SEED, combine=cv, measured=partial(st.fig24_text, n),
                        gates=GATES),
                Rule("value", paper=gap, k=K_TABLE, tol=TABLE_REL_TOL * ref),  # a tolerance of the error, not the gap
                settings=PAPER_TRAINING, extra=f"The tolerance is ±{TABLE_REL_TOL:.0%} of the error {ref:.4f}, not "
                "of the gap",
            ))  # fmt: skip
    return out


def _is_dgd(H: int, n: int, risk: float, ref: float) -> ClaimRecord:
    """Fig. 2.4 at H ≥ 2, restated as what the paper claims (issue 43): the trained model *is* debiased GD at η*
    (Thm 1), an equivalence of its error with debiased GD's exact risk at L' = n, not a match of the printed gap (a
    few thousandths, inside the paper's own resolution, compared within a tolerance of the error)."""
    return _rec(
        f"fig2.4/H{H}/L{n}",
        f"Trained H = {H} softmax model (L = 40) tested at L' = {n} is debiased GD at η*: its error equals debiased "
        "GD's", f"{SRC}, Thm 1; {SRC_CODE}, Fig. 2.4 (printed value − 0.1, σ² counted twice there) and iclab's exact "
        "debiased-GD risk", "theory vs simulation",
        f"per seed, the model's error at L' = {n}: debiased GD's exact risk at η* + the paired difference model − "
        "debiased GD on the same n_eval prompts",
        f"≈ debiased GD {risk:.4f} (Fig. 2.4 prints {ref:.4f}: gap {ref - risk:+.4f})",
        Measure(_iso(H), st.at("dgd_diff", n), SEED, gates=GATES, measured=partial(st.dgd_level_text, risk),
                combine=partial(st.seed_mean, st.at("dgd_diff_se", n), plus=risk)),
        Rule("equivalence", rel_tol=TABLE_REL_TOL, target=risk, n="n_eval"), settings=PAPER_TRAINING,
    )  # fmt: skip


def _equal_to_dgd(cfg, where: dict, measured) -> dict:
    """The model's error (debiased GD's exact risk at η* + the paired difference) within ±3 % of that risk."""
    R, n = st.dgd_risk(cfg, cfg.n_train), cfg.n_train
    return dict(measure=Measure(where, st.at("dgd_diff", n), SEED, gates=GATES, measured=measured,
                                combine=partial(st.seed_mean, st.at("dgd_diff_se", n), plus=R)),
                rule=Rule("equivalence", rel_tol=0.03, target=R, n="n_eval"))  # fmt: skip


def _models(cfg) -> list[ClaimRecord]:
    """The trained models' errors: Thm 1 against debiased GD, Fig. 2.4, length generalisation."""
    n, lh = cfg.n_train, cfg.lengthgen_heads
    gap, level = st.at("dgd_diff", n), st.at("dgd_diff", n, st.dgd_risk(cfg, n))
    # per seed, the paired difference of the two models' gaps over debiased GD (each over its own n_eval prompts),
    # its SE √(se_a² + se_b²); over seeds from MIN_SEEDS on
    paired = dict(se_column=st.at("dgd_diff_se", n), combine=partial(st.seed_mean, None), gates=GATES)
    lg = "lengthgen" if cfg.lengthgen_train != cfg.n_train else "iso"  # else the iso models serve
    return [
        ClaimRecord(
            "thm1/trained-is-debiased-gd",
            "With H ≥ 2 heads the trained model is debiased one-step GD at the optimal step η*: the H = 2 model's "
            "risk equals debiased GD's", f"{SRC}, Thm 1 (approximation + optimality), Fig. 2.4", "theory vs simulation",
            quantity="per seed, the H = 2 error: debiased GD's exact risk at η* + the paired difference on n_eval "
            "prompts", paper_value="≈ debiased GD", headline=True, paper_settings=PAPER_TRAINING,
            **_equal_to_dgd(cfg, _iso(2), st.h2_text),
        ),
        _rec("fig2.4/h1-worse", "A single head (a Nadaraya–Watson kernel regressor) is clearly worse than H = 2",
             f"{SRC}, Fig. 2.4", "effect direction",
             "per seed, the H = 1 error at L = n_train, paired with debiased GD on the same prompts",
             "+0.165 (0.406 vs 0.241)",
             Measure(_iso(1), gap, SEED, base=_iso(2), **paired),
             Rule("direction", smallest=0.01, n="n_eval"), True, PAPER_TRAINING),
        *[
            _rec(f"fig2.4/H{H}-equals-H2", f"H = {H} reaches the error of H = 2 (all H ≥ 2 coincide)",
                 f"{SRC}, Fig. 2.4", "theory vs simulation",
                 f"per seed, the H = {H} error at L = n_train (paired through debiased GD)", "indistinguishable",
                 # the tolerance is of H = 2's error on the seeds both have
                 Measure(_iso(H), level, SEED, base=_iso(2), **paired),
                 Rule("equivalence", rel_tol=0.03, target=BASE, n="n_eval"), settings=PAPER_TRAINING)
            for H in (4, 8)
        ],
        _rec("lengthgen/softmax-improves", "A softmax model trained at L = 40 keeps improving on longer prompts",
             f"{SRC}, Fig. 2.4", "effect direction", "per seed, the error at the training length and at the longest "
             "test length (independent prompt sets)", "0.241 → 0.168 (H = 2, L' = 100)",
             Measure({"part": lg, "attention": "softmax", "H": lh}, unit=SEED, gates=GATES,
                     **_lengthgen(cfg, -1)),
             Rule("direction", smallest=0.01, n="n_eval"), True, PAPER_LENGTHGEN),
        _rec("lengthgen/linear-degrades", "Linear attention (1/L frozen at training) gets worse on longer prompts",
             f"{SRC}, Fig. 4.1", "effect direction", "per seed, the error at the training length and at the longest "
             "test length", "grows (no numbers)",
             Measure({"part": lg, "attention": "linear"}, unit=SEED, gates=GATES,
                     **_lengthgen(cfg, 1)),
             Rule("direction", smallest=0.01, n="n_eval"), settings=PAPER_LENGTHGEN),
    ]  # fmt: skip


def _pooled(key: str, digits: int = 4, gates=(STAGE_II_GATE,), combine=st.over_seeds, measured=None, col=st.multi):
    """A column of every trained H ≥ 2 model, averaged per seed (the default combine rule: Student t over seeds,
    :func:`~iclab.experiments.multihead.statistics.over_seeds`)."""
    text = measured or measured_as(f"{{v:.{digits}g}} ({{n}} seed(s))")
    return Measure(ISO, partial(col, key), MODEL, combine=combine, measured=text, gates=gates)


def _patterns(cfg) -> list[ClaimRecord]:
    """The ω and μ limits (Fig. 2.8), η_eff (Thm 1), the KQ and OV patterns (Figs. 2.2, 3.1)."""

    # tolerances: |ω| and Σμ₊ within 10 % (printed with two digits, 0.13 and 3.45); a purity within its own
    # off-pattern mass 1 − paper (the band must tell the reported leakage from twice as much)
    def purity(key: str) -> Rule:
        return Rule("value", paper=PURITY[key], paper_se=5e-6, tol=1.0 - PURITY[key], units="seeds")

    zero_sum = f"{ZERO_SUM_MAX:g} − |Σμ|/Σ|μ| (above 0: |Σμ| below {ZERO_SUM_MAX * 100:g} % of Σ|μ|)"
    eta = th.eta_star(cfg.d, cfg.n_train, cfg.sigma2)
    return [
        _rec("fig2.8/omega-limit", "Every live head of an H ≥ 2 model ends at |ω^(h)| = γ ≈ 0.13 (logged /√7)",
             f"{SRC_CODE}, Fig. 2.8", "paper value", f"{POOLED}|ω| of the live heads as a logit coefficient (the "
             f"paper's 0.13 logged /√7 is 0.13·√(7/6) = {PAPER_OMEGA_LOGIT:.3f})", f"{PAPER_OMEGA_LOGIT:.3f} (0.13 logged)",
             _pooled("diag_gamma"), Rule("value", paper=PAPER_OMEGA_LOGIT, paper_se=OMEGA_PRINTED_SE,
                                         tol=0.1 * PAPER_OMEGA_LOGIT, units="seeds"), settings=PAPER_TRAINING,
             extra=DIGIT),
        _rec("fig2.8/mu-plus-limit", "Σ_{h∈H+} μ^(h) ends at ≈ 3.5 (3.45 in the estimator plots) for every H ≥ 2",
             f"{SRC_CODE}, Fig. 2.8", "paper value", f"{POOLED}Σ_(h∈H+) μ^(h)", f"{PAPER_MU}",
             _pooled("diag_mu_plus"), Rule("value", paper=PAPER_MU, paper_se=MU_PLUS_PRINTED_SE, tol=0.1 * PAPER_MU,
                                           units="seeds"), settings=PAPER_TRAINING),
        _rec("thm1/eta-eff", "The learned effective step η_eff = Σ_h μ^(h) ω^(h) is Thm 1's η* = (1 + (1+σ²)d/L)⁻¹",
             f"{SRC}, Thm 1 (optimality)", "theory vs simulation", f"{POOLED}η_eff = Σ_h μ^(h) ω^(h)",
             "η* = 0.879 (paper's 2·0.13·3.45 = 0.897)",
             _pooled("diag_eta_eff", gates=GATES, measured=measured_as("{v:.4f} ({n} seed(s))")),
             Rule("equivalence", rel_tol=0.05, target=eta), settings=PAPER_TRAINING),
        _rec("fig2.2/kq-diagonal", "KQ circuits are diagonal: the top-left d×d block of each live head is ω^(h) I_d",
             f"{SRC_CODE}, Fig. 2.2 (pattern purity cell)", "paper value", f"{POOLED}iclab's KQ diagonal mass "
             "Σdiag²/Σall² (the paper's helper is unpublished, its definition may differ)",
             f"{PURITY['kq_diag_mass']}", _pooled("diag_kq_diag_mass", 6), purity("kq_diag_mass"), True, PAPER_TRAINING,
             extra=DIGIT),
        _rec("fig2.2/ov-last-entry", "OV circuits use only their last entry μ^(h)",
             f"{SRC_CODE}, Fig. 2.2 (pattern purity cell)", "paper value", f"{POOLED}iclab's OV last-entry mass "
             "μ²/‖OV_(d+1,:)‖²", f"{PURITY['ov_last_mass']}",
             _pooled("diag_ov_last_mass", 6), purity("ov_last_mass"), settings=PAPER_TRAINING, extra=DIGIT),
        _rec("fig2.2/ov-zero-sum", "OV circuits are zero-sum, Σ_h μ^(h) ≈ 0 (unlike the single-sign kernel "
             "regressor, for which |Σμ|/Σ|μ| = 1)", f"{SRC}, Fig. 2.2", "effect direction",
             f"{POOLED}{zero_sum}", "|Σμ|/Σ|μ| ≈ 0",
             _pooled(True, gates=GATES, measured=st.zero_sum_text, col=st.zero_sum), Rule("direction", bound=ZERO_SUM_BOUND),
             True,
             PAPER_TRAINING),
        _rec("fig2.2/sign-matching", "Heads match signs: sign ω^(h) = sign μ^(h) for every live head",
             f"{SRC}, Fig. 2.2", "effect direction", f"{POOLED}the fraction of matching live heads (per model) − "
             f"{SIGN_MATCH_MIN:g}", "all heads",
             _pooled("diag_sign_match", gates=GATES, combine=st.sign_matching, measured=st.sign_text),
             Rule("direction", bound=f"{SIGN_MATCH_MIN:.0%} of the live heads matching"), settings=PAPER_TRAINING),
        _rec("fig3.1/preconditioned", "With anisotropic inputs x ~ N(0, Σ) the heads learn KQ ≈ ±γΣ⁻¹: "
             "preconditioned debiased GD, not plain debiased GD", f"{SRC}, Fig. 3.1", "effect direction",
             "per seed, E(ŷ − ŷ_dgd)² − E(ŷ − ŷ_pgd(Σ⁻¹))² (each GD at the model's own least-squares step), paired "
             "on n_eval prompts; Σ_ij = ρ^|i−j| (the paper does not say which Σ)", "Ω ≈ Σ⁻¹",
             Measure({"part": "aniso"}, partial(st.scalar, "closer_to_pgd"), SEED, measured=ANISO_TEXT,
                     combine=partial(st.seed_mean, partial(st.scalar, "closer_to_pgd_se")), gates=GATES),
             Rule("direction", smallest=PGD_SMALLEST, relative_to="err_bayes", n="n_eval")),
    ]  # fmt: skip


def _multitask() -> list[ClaimRecord]:
    """Multi-task regression and superposition across heads (Figs. 3.2–3.5; the authors' code's data law)."""
    src = f"{SRC}, Figs. 3.2–3.5 (the authors' icl_linear_multitask.ipynb)"
    share = (
        "a head's share of task n = the rise of task n's error when the head is removed, over the task's error "
        "(paired, n_eval prompts); sharing = the smaller share of the head the weights say serves both tasks most"
    )
    gap_se = partial(st.per_row, st.task_gap, 1)
    shared = dict(combine=partial(st.seed_mean, partial(st.per_row, st.sharing, 1), drop_nan=False), gates=GATES)
    indep = "results without that mean: per-task SEs combined as if independent"
    mt = {H: {"part": "multitask", "H": H} for H in (3, 4)}
    sharing = partial(st.per_row, st.sharing, 0)
    return [
        _rec("multitask/H3-superposition", "With 2 < H < 2N (N = 2 tasks, H = 3) heads serve both tasks at once "
             "(superposition)", src, "effect direction", share + "; per seed, the sharing", "superposition",
             Measure(mt[3], sharing, SEED, measured=measured_as("sharing {v:.3f}"), **shared),
             Rule("direction", smallest=0.05, n="n_eval"), settings=MT_CODE),
        _rec("multitask/H4-pairs", "With H = 2N = 4 each head pair serves one task: no head serves both tasks", src,
             "effect direction", share + "; per seed, 0.05 − the sharing (a head that serves both tasks disagrees)",
             "one head pair per task",
             Measure(mt[4], sharing, SEED, measured=measured_as("sharing {d:.3f} (margin 0.05)"), combine=partial(
                 st.seed_mean, partial(st.per_row, st.sharing, 1), drop_nan=False, below=0.05), gates=GATES),
             Rule("direction", n="n_eval", bound="a sharing of 0.05"), settings=MT_CODE),
        _rec("multitask/H3-equals-H4", "H = 3 learns the same per-task predictors as H = 4", src,
             "theory vs simulation", "per seed, the mean task error of H = 3 (paired through per-task debiased GD, the "
             f"mean over the two tasks paired per prompt; {indep}), paired by seed with H = 4", "same predictor",
             # paired by seed: a seed's H = 3 and H = 4 cells share their prompts, so debiased GD's level cancels
             # and the difference is that of the two gaps; its SE √(se_3² + se_4²) for one seed
             Measure(mt[3], st.mt_error, SEED, base=mt[4], se_column=gap_se, gates=GATES,
                     combine=partial(st.seed_mean, None, drop_nan=False)),
             Rule("equivalence", rel_tol=0.05, target=BASE, n="n_eval"), settings=MT_CODE),
        # the model's error against per-task debiased GD scored in the same cells (base_column): per seed the paired
        # gap, its SE paired per prompt
        _rec("multitask/H4-is-debiased-gd", "H = 4 implements debiased GD per task on the task's own support", src,
             "theory vs simulation", "per seed, the mean task error of H = 4 against per-task debiased GD on its "
             f"support at the least-squares step, paired per prompt over both tasks ({indep})", "2μ̆ω̆ ≈ 1 per task",
             Measure(mt[4], st.mt_error, SEED, base=mt[4], base_column=st.dgd_level, gates=GATES,
                     combine=partial(st.seed_mean, gap_se, drop_nan=False)),
             Rule("equivalence", rel_tol=0.05, target=BASE, n="n_eval"), settings=MT_CODE),
    ]  # fmt: skip


def _lengthgen(cfg, sign: int) -> dict:
    """The column, SE column, combine rule and measured text of a length-generalisation claim: per seed
    ``sign``·(error at the longest test length − at the training length), combined over seeds."""
    change = partial(st.lengthgen_change, sign, cfg.lengthgen_train, cfg.n_eval)
    return dict(column=partial(change, 0), se_column=partial(change, 1), measured=partial(st.lengthgen_text, sign),
                combine=partial(st.seed_mean, None, drop_nan=False))  # fmt: skip


def _ratio(cfg) -> list[ClaimRecord]:
    """Thm 1's Bayes-risk ratio bound: debiased GD at large d and at the paper's size; the trained H = 2 model."""
    slack = (
        "bound − E(debiased GD)/Bayes, both risks exact in β, ε, x_q and paired over n_ratio draws of X (delta method)"
    )

    def cell(which: str) -> Measure:
        point = partial(st.ratio_slack, which, cfg.d, cfg.n_train)  # (0: the slack, 1: its SE) per cell
        return Measure(
            {"part": "ratio"},
            partial(point, 0),
            SEED,
            se_column=partial(point, 1),
            combine=partial(st.seed_mean, None, drop_nan=False),
            measured=partial(st.slack_text, which),
        )

    return [
        _rec("thm1-ratio/dgd-large-d", "Debiased GD at η* is within Thm 1's factor of the Bayes risk (ratio ≤ 1 + "
             "σ⁻²{(1+ξσ²)(1+σ²+ξ⁻¹)}⁻¹ as L → ∞, d/L → ξ), here at ξ = 1/8 and the largest d of the sweep",
             f"{SRC}, Thm 1 (Bayes risk)", "effect direction", slack, "ratio ≤ 2.085 at ξ = 1/8, σ² = 0.1",
             cell("d"), Rule("direction", n="n_ratio", bound=THM1_BOUND), True, PAPER_SETUP, extra=""),
        _rec("thm1-ratio/dgd-paper-size", "Thm 1's asymptotic factor also bounds debiased GD at the paper's own size "
             "d = 5, L = 40", f"{SRC}, Thm 1 (Bayes risk), read at the experiments' d, L", "effect direction",
             f"{slack}, at (d, n_train)", "ratio ≤ 2.085", cell("L"),
             Rule("direction", n="n_ratio", bound=THM1_BOUND), settings=PAPER_SETUP, extra=""),
        _rec("thm1-ratio/trained", "The trained H = 2 model is within Thm 1's factor of the Bayes risk",
             f"{SRC}, Thm 1 (Bayes risk) and Fig. 2.4", "effect direction", "per seed, error(model)/error(Bayes) at "
             "L = n_train, paired on n_eval prompts", "ratio ≤ 2.085",
             Measure(_iso(2), st.at("bayes_ratio", cfg.n_train), SEED, combine=st.bayes_slack,
                     measured=st.bayes_text, gates=GATES),
             Rule("direction", n="n_eval", bound=THM1_BOUND), settings=PAPER_TRAINING),
    ]  # fmt: skip


_F = {"softmax": "exp (softmax, C_f = 1)", "affine": "f = 1 + Cs (C_f = C)",
      "affine_squared": "f = (1 + Cs)² (C_f = 2C)", "one_plus_tanh": "f = 1 + tanh s (C_f = 1)"}  # fmt: skip


def _activation(cfg) -> list[ClaimRecord]:
    """The activation ablation (Fig. 4.2): η_eff, the debiased-GD predictor and zero-sum OV for every f."""
    out = []
    for att in ("softmax",) + ACTIVATION_NAMES:
        f = _F[att]
        src = f"{SRC}, Fig. 4.2 (activation ablation)" if att != "softmax" else f"{SRC}, Thm 1 and Fig. 4.2"
        cells = _iso(cfg.activation_heads) if att == "softmax" else {"part": "activation", "attention": att}
        out.append(_rec(
            f"fig4.2/{att}/eta-eff", f"{f}: the trained H = 2 model is debiased GD with step η_eff = 2C_f‖ω‖∞‖μ‖∞",
            src, "theory vs simulation", "per seed, the least-squares step of the model's ŷ on debiased GD (robust "
            "SE over the n_eval held-out prompts), against 2C_f‖ω‖∞‖μ‖∞ read off the weights (its mean over seeds, "
            "taken as exact)", "2C_f‖ω‖∞‖μ‖∞",
            # the fitted step against 2C_f‖ω‖∞‖μ‖∞ of the same cells (base_column), per seed
            Measure(cells, partial(st.scalar, "dgd_eta_fit"), SEED, base=cells,
                    base_column=partial(st.scalar, "eta_weights"), measured=st.eta_text, gates=GATES,
                    combine=partial(st.seed_mean, partial(st.scalar, "dgd_eta_fit_se"))),
            Rule("equivalence", rel_tol=0.10, target=BASE, n="n_eval"),
        ))  # fmt: skip
        if att != "softmax":
            out.append(ClaimRecord(
                f"fig4.2/{att}/debiased-gd", f"{f}: the same patterns give the same predictor, debiased GD at η*", src,
                "theory vs simulation", quantity="per seed, the error: debiased GD's exact risk at η* + the paired "
                "difference", paper_value="same patterns",
                **_equal_to_dgd(cfg, cells, PATTERNS_TEXT),
            ))  # fmt: skip
    out.append(_rec(
        "fig4.2/ov-zero-sum", "With every activation f the OV circuits are zero-sum", f"{SRC}, Fig. 4.2",
        "effect direction", "per seed, the mean over its activation-ablation models (they share the seed's batches) of "
        f"{ZERO_SUM_MAX:g} − |Σμ|/Σ|μ| (above 0: |Σμ| below "
        f"{ZERO_SUM_MAX * 100:g} % of Σ|μ|)", "same patterns",
        Measure({"part": "activation"}, partial(st.zero_sum, False), ("attention",) + MODEL, combine=st.over_seeds,
                measured=st.zero_sum_text, gates=GATES),
        Rule("direction", bound=ZERO_SUM_BOUND),
    ))  # fmt: skip
    return out


def _second_hand() -> list[ClaimRecord]:
    """The seed summary's table (an AI-written note): never judged; the reason shows iclab's theory at its (d, n)."""
    why = (
        "an AI-written summary, not the paper: its errors lie below the Bayes risk (and the noise floor σ²) at its "
        "own (d, n), impossible for any predictor (docs/papers/multihead.md §6.4)"
    )
    d, ltr, lte, sm, lin = SEED_SUMMARY_LENGTHGEN
    rows = [
        (k, f"Errors at {k}: multi-head, single head, linear, Bayes", ", ".join(map(str, v[2:])), v[2])
        for k, v in SEED_SUMMARY.items()
    ]
    rows.append(
        (
            "lengthgen",
            f"Length generalisation d = {d}, trained at n = {ltr}, tested at n = {lte}: softmax and linear errors",
            f"softmax {sm}; linear {lin}",
            sm,
        )
    )
    return [
        _rec(f"second-hand/{key.replace(' ', '')}", claim, "second-hand summary", "paper value",
             "the summary's row (never read: the source is unreliable)", paper,
             Measure({"part": "baseline"}, whole_rows, SEED), Rule("value", paper=value), extra="", unreliable=why,
             not_run=partial(st.below_bayes, key))
        for key, claim, paper, value in rows
    ]  # fmt: skip


def claims(cfg) -> list[ClaimRecord]:
    """Every claim of the paper this experiment judges, declared before the run (the same ids for every preset)."""
    return _tables() + _models(cfg) + _patterns(cfg) + _multitask() + _ratio(cfg) + _activation(cfg) + _second_hand()
