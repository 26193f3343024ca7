"""The conventions by which the ``multihead`` experiment judges arXiv:2503.12734, fixed before any run
(docs/papers/multihead.md §7): the thresholds, the paper settings a claim needs, the rows of Figs. 2.4 and 2.5,
:mod:`.claims` declares the claims with them as records, with the statistics
of :mod:`.statistics`.

* Paper values are judged with :func:`iclab.stats.judge_value`: |measured − paper| ≤ k·√(SE² + SE_paper²), with
  k = 3 for the two tables (27 rows, family-wise false-alarm rate near 7 %), and for pooled-model values k the
  two-sided 95 % Student-t quantile over the models. SE_paper is the Monte Carlo error of the authors' own number
  (their prompt counts, with the per-prompt spread iclab measures for the same quantity) or half the last printed
  digit. Inside the band a value agrees only when the band is within the claim's tolerance (else too little power).
* Trained errors are judged as the paired difference to debiased GD at η* on the same prompts (``n_eval`` of
  them), never as a raw error: with one seed its SE is over prompts (normal quantile), with several over seeds
  (Student t with seeds − 1 degrees of freedom); two trained models are compared paired by seed (a seed's cells
  share their draws), one difference per seed.
* Claims about trained models at the paper's training need the paper's setup (d = 5, L = 40, σ² = 0.1, Adam lr
  1e-3, batch 256) and at least :data:`TRAINED_MIN_STEPS` Adam steps (stage I finished; the error on the solution
  manifold then changes by < 1e-3 through stage II, §4.5); the limits of stage II (|ω|, Σμ₊, purity) need the
  H ≥ 2 models to have trained the paper's 5·10⁵ steps (``stage2_steps``).
"""

from __future__ import annotations

from iclab.experiments.multihead.paper_values import PAPER_SETUP

TRAINED_MIN_STEPS = 20_000  # Adam steps at lr 1e-3 from which a trained-model claim is judged (stage I done)
K_TABLE = 3.0  # k of the k·SE band for the 27 rows of Figs. 2.4 and 2.5
# a table value agrees only when its band is within ±5 % of the error level: the figures draw H = 2, 4, 8 (within 3 %)
# and debiased GD, GD, the two-head model (1-6 % apart) as one curve, and H = 1, Nadaraya-Watson, Bayes (>= 40 % off)
# as others; the authors' own Monte Carlo error is about ±2 % of the error at k = 3
TABLE_REL_TOL = 0.05
PAPER_TRAINING = {**PAPER_SETUP, "lr": 1e-3, "batch_size": 256}
PAPER_LENGTHGEN = {**PAPER_TRAINING, "lengthgen_train": 40}  # Figs. 2.4 and 4.1 train at L = 40
ZERO_SUM_MAX = 0.1  # zero-sum OV: |Σμ|/Σ|μ| below this (a single-sign head set has 1)
SIGN_MATCH_MIN = 0.9  # "every head matches signs": the per-model fraction of matching live heads above this
STAGE_II_STEPS = 500_000  # the paper's training length, after which it reports the limits of |ω|, Σμ₊ and purity
MT_CODE = {"mt_law": "code", "mt_n": 48, "mt_d": 6}
TABLE_LENGTHS = (10, 40, 100)
FIG24_HEADS = (1, 2, 4, 8)
FIG25 = (
    ("dgd", "th_dgd_paper", "se_dgd_paper", "debiased GD at the paper's η = 0.897 (iclab's closed form)"),
    ("gd", "th_gd_paper", "se_gd_paper", "one-step GD at η = 0.897 (iclab's closed form)"),
    ("mh", "mc_mh_paper", "se_mh_paper", "two-head model ω = ±0.13, μ = ±3.45 (Monte Carlo)"),
    ("nw", "mc_nw", "se_nw", "single-head Nadaraya–Watson ω = 1/√d (Monte Carlo)"),
    ("bayes", "mc_bayes", "se_bayes", "ridge / Bayes posterior mean (Monte Carlo)"),
)
SRC = "arXiv:2503.12734"
SRC_CODE = "arXiv:2503.12734 (the authors' plots.ipynb)"
