"""The ``ood`` report notes (arXiv:2609.36448; docs/papers/ood.md §6) compute what the note's prose points to from the
results table: the derived F table against the run's F, the second-hand F magnitudes against the run's, and the
error of the 90° rotation against its exact level at N."""

import numpy as np
import test_notes
import test_verdicts_ood as v_ood

from iclab.experiments.ood.notes import notes
from iclab.experiments.ood.reference import DERIVED_F, PAPER_F


def _made_up(derived_signs: int = 10):
    """The made-up table of the notes tests with every forget F at a point of the derived table set to the derived
    value, the first ``10 - derived_signs`` of them with the opposite sign."""
    df = test_notes._ood(v_ood._table(True))
    flips = list(DERIVED_F)[: len(DERIVED_F) - derived_signs]
    for i in df.index[df["part"] == "forget"]:
        g1, F = float(df.at[i, "gamma1"]), list(df.at[i, "F"])
        for j, g2 in enumerate(df.at[i, "gamma2_list"]):
            key = next((k for k in DERIVED_F if np.isclose(k[0], g1) and np.isclose(k[1], g2)), None)
            if key is not None:
                F[j] = -DERIVED_F[key] if key in flips else DERIVED_F[key]
        df.at[i, "F"] = F
    return df


def _line(text: str, start: str) -> str:
    return next(x for x in text.splitlines() if x.startswith(start))


def test_the_derived_table_line_counts_the_signs_and_sizes_of_the_runs_f():
    same = _line(notes(v_ood.CFG, _made_up(10)), "- **Derived large-N F table**")
    assert "same sign at 10 of 10 points; sizes within 0%" in same, same
    flipped = _line(notes(v_ood.CFG, _made_up(8)), "- **Derived large-N F table**")
    assert "same sign at 8 of 10 points; sizes within 200%" in flipped, flipped


def test_the_magnitude_line_is_the_ratio_of_the_second_hand_f_to_the_runs():
    df = _made_up()
    i = df.index[(df["part"] == "forget") & np.isclose(df["gamma1"].astype(float), 1.0)][0]
    F, shrink = list(df.at[i, "F"]), {-0.9: 1000}  # γ2 = -0.9 a thousand times smaller, the others a hundred
    for j, g2 in enumerate(df.at[i, "gamma2_list"]):
        paper = next((p for (g1, g), p in PAPER_F.items() if g1 == 1.0 and np.isclose(g, g2)), None)
        if paper:  # the summary's 0 at γ2 = 0.95 has no ratio
            F[j] = paper / shrink.get(round(g2, 6), 100)
    df.at[i, "F"] = F
    line = _line(notes(v_ood.CFG, df), "- **Forgetting magnitudes**")
    assert "the second-hand |F| is 100 to 1000 times this run's" in line, line


def test_the_90_degree_line_reads_the_runs_error_at_90_degrees_and_is_absent_without_it():
    df = _made_up()
    i = df.index[df["part"] == "ood"][0]
    L = list(df.at[i, "L_mc"])
    L[list(df.at[i, "theta_deg"]).index(90.0)] = 0.4321
    df.at[i, "L_mc"] = L
    line = _line(notes(v_ood.CFG, df), "- **U ⊥ V**")
    assert "rotation by 90°): 0.4321 ± " in line and f"at N = {v_ood.CFG.n_tokens} is 0.3840" in line, line
    for col in ("theta_deg", "L_mc", "L_se", "L_theory", "L_largeN"):
        df.at[i, col] = list(df.at[i, col])[:-1]  # no 90° point
    assert "rotation by 90°" not in notes(v_ood.CFG, df)
