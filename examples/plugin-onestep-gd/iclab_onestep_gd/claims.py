"""The claims of ``onestep-gd`` as records, judged by iclab's one judge. The exact identity attention = GD is a
test of the cells (``max_gap`` ≈ 1e-16), not a claim; the claims are about what the step buys."""

from iclab.claims import ClaimRecord, Measure, Rule

SOURCE = "arXiv:2212.07677, Prop. 1 and Fig. 2"
SEED = ("seed",)


def gain_over_zero(rows):
    """Per seed: the zero predictor's risk minus the attention layer's."""
    return (rows["risk_zero"] - rows["risk_attention"]).to_numpy(float)


def ratio_to_ols(rows):
    """Per seed: the attention layer's risk over the least-squares risk."""
    return (rows["risk_attention"] / rows["risk_ols"]).to_numpy(float)


def claims(config) -> list[ClaimRecord]:
    return [
        ClaimRecord(
            id="gd-step-beats-zero",
            claim="The linear self-attention layer (one GD step) predicts better than the zero predictor.",
            source=SOURCE,
            kind="effect direction",
            quantity="zero-predictor risk minus the attention layer's risk, per seed",
            measure=Measure({"part": "risk"}, column=gain_over_zero, unit=SEED),
            rule=Rule("direction", sign=+1, smallest=0.05),
        ),
        ClaimRecord(
            id="gd-step-matches-ols",
            claim="One GD step is as good as least squares (deliberately false at n = 4d: a single step is far from "
            "the least-squares solution).",
            source=SOURCE,
            kind="theory vs simulation",
            quantity="the attention layer's risk over the least-squares risk, per seed",
            measure=Measure({"part": "risk"}, column=ratio_to_ols, unit=SEED),
            rule=Rule("equivalence", rel_tol=0.1, target=1.0, against="least squares"),
        ),
    ]
