"""The test of a claim at every cell of a family (theory vs simulation at every l): an intersection–union test of
per-cell equivalences, with a Bonferroni "disagrees" (:mod:`iclab.stats`, whose docstring states each rule)."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from iclab.domain import positive, real
from iclab.errors import ConfigError
from iclab.stats._arguments import check_judge
from iclab.stats._judges import _tested, judge_equivalence
from iclab.stats._verdict import AGREES, DISAGREES, NOT_JUDGED, Verdict, fmt, not_judged

__all__ = ["judge_every_cell"]


def judge_every_cell(
    cells: Sequence[tuple[str, float, float, float]],
    *,
    rel_tol: float,
    confidence: float = 0.95,
    n: int | None = None,
) -> Verdict:
    """Theory vs simulation at every cell of a family; ``cells`` are ``(label, estimate, se, target)``.

    Agrees when every cell's ``confidence`` interval lies within ``target (1 ± rel_tol)`` (an intersection–union
    test: "every cell agrees" is concluded at the level of each cell's test, no correction, Berger 1982). Disagrees
    when some cell's interval at the Bonferroni level ``1 − (1 − confidence)/m`` lies wholly outside: Holm's
    step-down rejects some cell exactly when its first (Bonferroni) step does, so a "disagrees" has family-wise error
    at most ``1 − confidence``. Otherwise not judged, naming the undecided cells.

    Arguments: ``cells`` (label, estimate, se, target) tuples of a string and three real numbers; ``rel_tol`` a
    finite number > 0; ``confidence`` in (0, 1); ``n`` None or an integer >= 0."""
    positive("rel_tol", rel_tol)
    check_judge(confidence, n)
    if not isinstance(cells, (list, tuple)) or not all(isinstance(c, (list, tuple)) and len(c) == 4 for c in cells):
        raise ConfigError("cells", cells, "a list of (label, estimate, se, target) tuples")
    cells = [(str(c[0]), *(real(k, v) for k, v in zip(("estimate", "se", "target"), c[1:]))) for c in cells]
    m = len(cells)
    if not m:
        return not_judged("not measured (no cells)")
    bonferroni = 1 - (1 - confidence) / m
    each = [(lab, judge_equivalence(e, s, t, rel_tol=rel_tol, confidence=confidence, n=n)) for lab, e, s, t in cells]
    strict = [(lab, judge_equivalence(e, s, t, rel_tol=rel_tol, confidence=bonferroni, n=n)) for lab, e, s, t in cells]
    gaps = [abs(e - t) / abs(t) if t else math.inf for _, e, _, t in cells]
    worst = int(np.nanargmax(gaps)) if any(math.isfinite(g) for g in gaps) else 0
    lab, e, s, t = cells[worst]
    measured = f"worst |gap| {gaps[worst]:.1%} at {lab}"
    unc = f"± {fmt(abs(s / t) if t else s, 2)} (SE, relative) there"
    inside = sum(v.verdict == AGREES for _, v in each)
    outside = [lab for lab, v in strict if v.verdict == DISAGREES]
    stat = (
        f"{inside}/{m} cells with the {confidence:.0%} CI within ±{rel_tol:.0%} of theory; "
        f"{len(outside)} wholly outside at the Bonferroni {bonferroni:.2%} level"
        + (f" ({', '.join(outside[:4])}{', …' if len(outside) > 4 else ''})" if outside else "")
        + f"; worst: {each[worst][1].statistic}"
    )
    record = _every_cell_record(cells, each, rel_tol, confidence, n)
    if outside:
        verdict = Verdict(DISAGREES, measured, unc, stat, f"outside ±{rel_tol:.0%} at {', '.join(outside[:4])}")
    elif inside == m:
        verdict = Verdict(AGREES, measured, unc, stat)
    else:
        open_ = [(lab, v) for lab, v in each if v.verdict != AGREES]
        if record is not None:  # every cell must decide: the largest count any open cell needs (None: some has none)
            counts = [(v.test_record or {}).get("needed") for _, v in open_]
            record["needed"] = None if None in counts else max(counts)
        verdict = Verdict(
            NOT_JUDGED,
            measured,
            unc,
            stat,
            f"{len(open_)} of {m} cells undecided ({', '.join(lab for lab, _ in open_[:4])}"
            f"{', …' if len(open_) > 4 else ''}); {open_[0][0]}: {open_[0][1].reason}",
        )
    return verdict if record is None else _tested(verdict, record)


def _every_cell_record(cells, each, rel_tol: float, confidence: float, n: int | None) -> dict | None:
    """The test record of :func:`judge_every_cell`: every cell, the thresholds, and the intersection–union p (the
    largest cell's TOST p); ``None`` when a cell was refused (no uncertainty), as the family was then not tested."""
    if any(v.test_record is None for _, v in each):
        return None
    return {
        "judge": "every_cell",
        "cells": [[str(lab), float(e), float(s), float(t)] for lab, e, s, t in cells],
        "rel_tol": float(rel_tol),
        "confidence": float(confidence),
        "n": n,
        "p": max(float(v.test_record["p"]) for _, v in each),
    }
