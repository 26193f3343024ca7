"""The minimums of units that ``dispersion``'s claims declare, each fixed once from a reference run used as a pilot
(issue 43; :class:`~iclab.claims.PilotMinimum`, computed by ``docs/pilot_minimums.py``): below its minimum a claim
reads "too few units", whatever its test gives. A minimum only refuses, never makes a claim agree."""

from __future__ import annotations

from typing import Any, Mapping

from iclab.claims import PilotMinimum

__all__ = ["PILOT", "PILOT_2", "ONSET_MIN_SEGMENTS", "RATE_MIN_SEGMENTS", "BETA_MIN_SEEDS", "LOOKUP_MIN_LISTS",
           "pilot_gate"]  # fmt: skip

#: the pilot of the claims' minimums of units (iclab.claims._pilot, issue 43)
PILOT = "the reference run dispersion-paper shipped 2026-12-02 (seed 0, 5 text segments)"
#: text segments a model's ``lemma2.1/onset`` claim needs, fixed once from PILOT (5 segments, one far from the rest:
#: as a run judges them they agree 26.6 % (minilm), 7.7 % (smollm2), 12.1 % (gemma3-270m) of the time at the least
#: favourable truth, δ = ln 300): computed by docs/pilot_minimums.py (1 000 draws per count), the first count at most
#: 5 % + 2 MC SE: 13 segments 4.7 % ± 0.7 % (fresh draws 5.2 %), 12 5.8 % ± 0.7 % (5.2 %; 10 passed once, 6.9 % on
#: fresh draws), 13 5.9 % ± 0.7 % (5.9 %)
ONSET_MIN_SEGMENTS = {"minilm": 13, "smollm2": 12, "gemma3-270m": 13}
#: the second pilot: the fresh reference sized from PILOT. Its row-level calibration found four claims over the line
#: (docs/calibration.md §7), so their minimums are fixed from it (docs/pilot_minimums.py, 1 000 draws per count); a
#: minimum only refuses ("too few units"), never makes a claim agree
PILOT_2 = "the reference run dispersion-paper shipped 2026-12-07 (seed 1, 13 text segments)"
#: text segments ``thm2.2/rate`` needs, from PILOT_2 (its 13 segments agree 9.4 % (minilm), 12.2 % (gemma3-270m) at
#: the slope's edge −0.75 as a run judges them; minilm: 17 segments 5.7 % ± 0.7 %, fresh draws 6.5 %; gemma3-270m: 44
#: segments 6.0 % ± 0.8 %, fresh draws 6.3 %, more than the offline text holds at 4096 tokens); smollm2's 13 are within
#: the line. (PILOT had asked gemma3-270m for 6: its 5 segments agreed 8.1 %.)
RATE_MIN_SEGMENTS = {"minilm": 17, "gemma3-270m": 44}
#: seeds with fit sets near H = 3 that ``fig6/beta/H=3`` needs, from PILOT_2 (its 6 agree 7.7 % at the edge +0.222 of
#: P(3); 9 seeds 5.7 % ± 0.7 %, fresh draws 6.3 %)
BETA_MIN_SEEDS = {3.0: 9}
#: lists ``lookup/kv/smollm2`` needs, from PILOT_2 (its 8 agree 8.5 % at a true change of +0.05; 10 lists 5.2 % ±
#: 0.7 %, fresh draws 6.3 %; 9 passed once, 6.8 % on fresh draws)
LOOKUP_MIN_LISTS = {("kv", "smollm2"): 10}


def pilot_gate(minimums: Mapping[Any, int], key: Any, pilot: str) -> tuple:
    """The :class:`~iclab.claims.PilotMinimum` gate that ``minimums`` declares for ``key`` (fixed from ``pilot``), or
    no gate."""
    return (PilotMinimum(minimums[key], pilot),) if key in minimums else ()
