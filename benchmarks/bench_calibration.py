"""What calibrating a whole run costs: ``iclab.stats.calibration_table`` over a run-sized set of test records.

A made-up run of 200 claims, mixed as the shipped experiments are (paper values with Student-t bands, equivalences,
effect directions with an SE or a bootstrap interval, absences, and one "at every l" claim of 200 cells), each with
its verdict's test record; the table at 1 000 and 5 000 draws per claim. Also the chance count every report
computes (:func:`iclab.experiments.family_summary`, 400 draws per claim). Seconds on whatever load the machine has.
"""

from __future__ import annotations

import time

import numpy as np


def _records(n: int, cells: int, seed: int = 0) -> list[dict]:
    from iclab.stats import judge_absence, judge_direction, judge_equivalence, judge_every_cell, judge_value

    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        se, z, dof = rng.uniform(0.01, 1), rng.normal(), [None, 4.0, 9.0][i % 3]
        kind = i % 4
        if kind == 0:
            v = judge_value(1 + z * se, se, 1.0, paper_se=0.3 * se, tol=rng.uniform(1, 8) * se, dof=dof, n=10)
        elif kind == 1:
            v = judge_equivalence(1 + z * se, se, 1.0, rel_tol=rng.uniform(0.5, 4) * se, dof=dof)
        elif kind == 2:
            v = judge_direction(z * se, se, dof=dof) if i % 8 else judge_direction(z, ci=(z - 2 * se, z + 3 * se))
        else:
            v = judge_absence(z * se, (z * se - 2 * se, z * se + 2 * se), smallest=3 * se)
        out.append({"experiment": "bench", "id": f"c{i}", "headline": False, "verdict": v.verdict,
                    "test_record": v.test_record})  # fmt: skip
    cell_list = [(f"l={j}", 1.0 + rng.normal() * 0.01, 0.01, 1.0) for j in range(cells)]
    every = judge_every_cell(cell_list, rel_tol=0.05)
    out.append({"experiment": "bench", "id": "every", "verdict": every.verdict, "test_record": every.test_record})
    return out


def main(smoke: bool = False) -> dict:
    """Print the timings; return them (``--record`` keeps them): seconds per table by draws, and the chance count's."""
    from iclab.experiments import COMPARISON_FIELDS, Comparison, family_summary
    from iclab.stats import calibration_table

    n, cells = (20, 10) if smoke else (200, 200)
    rows = _records(n, cells)
    calibration_table(rows[:2], draws=10)  # imports (scipy) outside the timing
    print(f"{'draws per claim':>16s} {'claims':>7s} {'seconds':>8s} {'worst rate':>11s}")
    out = {"claims": len(rows), "table_s": {}}
    for draws in (100,) if smoke else (1000, 5000):
        start = time.perf_counter()
        table = calibration_table(rows, draws=draws, seed=0)
        took = time.perf_counter() - start
        out["table_s"][str(draws)] = took
        print(f"{draws:16,d} {len(table):7d} {took:8.2f} {table['false_agree'].max():11.3f}")
    blank = dict.fromkeys(COMPARISON_FIELDS, "") | {"experiment": "bench", "kind": "effect direction"}
    comps = [Comparison(**blank | {"verdict": r["verdict"]}, id=r["id"], test_record=r["test_record"]) for r in rows]
    start = time.perf_counter()
    chance = family_summary(comps)["chance_agrees"]
    out["chance_s"], out["chance_draws"] = time.perf_counter() - start, chance["draws"]
    print(f"chance count ({chance['draws']} draws per claim): {chance['expected']:.2f} of {chance['judged']} judged "
          f"claims in {out['chance_s']:.2f} s")  # fmt: skip
    return out


if __name__ == "__main__":
    main()
