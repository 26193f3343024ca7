"""The ``dispersion`` claims on pretrained transformers (arXiv:2410.01104; docs/papers/dispersion.md §2, §6):
dispersion of their global heads as the context grows (Thm 2.2), its onset from the heads' logit spread (Lemma 2.1),
and the inference-only adaptive temperature on key–value and pass-key lookup. Each model's claims need its cells
loaded here (:data:`MODEL_LOADED`) and, where a pilot fixed one, a minimum of units (:mod:`.claims_minimums`).
"""

from __future__ import annotations

import math
from functools import partial

from iclab.claims import CellReason, ClaimRecord, Measure, Rule, binary_units, some_at_most
from iclab.experiments.dispersion import statistics as st
from iclab.experiments.dispersion.claims_minimums import (
    LOOKUP_MIN_LISTS,
    ONSET_MIN_SEGMENTS,
    PILOT,
    PILOT_2,
    RATE_MIN_SEGMENTS,
    pilot_gate,
)
from iclab.experiments.dispersion.statistics import ONSET_TOKENS
from iclab.experiments.dispersion.tables import ONSET_N

__all__ = ["ARXIV", "MODEL_LOADED", "SEED", "lookup_claims", "real_claims"]

ARXIV = "arXiv:2410.01104"  # the paper every dispersion claim cites
SMALLEST_SLOPE = 0.1  # |log-log slope| of a real transformer's heads below which they do not disperse
RATE_TOL = 0.25  # Θ(1/n): the log-log slope within −1 ± 0.25
#: lookup: the lists are the units (a list's queries share its context), their band at least ±3/queries wide
LOOKUP_LISTS = binary_units("queries", unit="list")
LOOKUP_SMALLEST = 0.05  # lookup accuracy: a change below 5 points, either way, is no change worth the name
#: a real model's cells say whether it loaded here, and why not (``available``, ``reason``)
MODEL_LOADED = CellReason("the model could not be loaded here")
SEED = ("seed",)


def _segment_gates(model: str, minimum: dict, pilot: str = PILOT) -> tuple:
    """A real model's cells loaded, and the model's minimum of text segments (fixed from ``pilot``) where the claim
    declares one."""
    return (MODEL_LOADED,) + pilot_gate(minimum, model, pilot)


def real_claims(config) -> list[ClaimRecord]:
    """Dispersion in pretrained transformers, per model: the mean slope falls (Thm 2.2), at the rate Θ(1/n), and the
    logit spread δ puts its onset within the first tokens (Lemma 2.1); the units are text segments."""
    thm = f"{ARXIV}, Thm 2.2 (statement second-hand [PN])"
    slope = (
        "per text segment, the mean over global heads of the log–log slope of the head's mean largest "
        "coefficient against the context length n (real_sizes up to the model's limit)"
    )
    out = []
    for m in config.real_models:
        segments = partial(Measure, {"part": "real", "model": m}, unit=SEED, gates=(MODEL_LOADED,))

        out += [
            ClaimRecord(
                f"thm2.2/disperses/{m}",
                f"{m}: on average over the global heads, a head's largest attention coefficient falls as the "
                "context grows (Thm 2.2 says every global head's does; the test is on the mean slope)",
                thm,
                "effect direction",
                quantity=slope,
                paper_value="every coefficient → 0 as n grows",
                headline=True,
                measure=segments(column=st.real_slope, measured=st.real_measured),
                rule=Rule("direction", sign=-1, smallest=SMALLEST_SLOPE, units="text segments"),
            ),
            ClaimRecord(
                f"thm2.2/rate/{m}",
                f"{m}: the largest attention coefficient of the global heads falls like Θ(1/n)",
                thm,
                "theory vs simulation",
                quantity=slope,
                extra="Thm 2.2 is asymptotic; this tests the measured sizes only",
                paper_value="log–log slope −1",
                headline=True,
                measure=segments(
                    column=st.real_slope, measured=st.real_measured, gates=_segment_gates(m, RATE_MIN_SEGMENTS, PILOT_2)
                ),
                rule=Rule("equivalence", rel_tol=RATE_TOL, target=-1.0, units="text segments"),
            ),
            ClaimRecord(
                f"lemma2.1/onset/{m}",
                f"{m}: the heads' logit spread δ is small enough that dispersion sets in "
                f"within about {ONSET_TOKENS} tokens, as for Gemma (δ ≈ 5.7, e^δ ≈ 300)",
                f"second-hand summary [PN, δ-repl] of {ARXIV}'s Gemma δ table, with Lemma 2.1",
                "effect direction",
                quantity=f"per text segment, ln {ONSET_TOKENS} − δ, δ the median over global heads of the logit "
                f"spread (mean over the rows at the largest measured n ≤ {ONSET_N}, which the claim needs); above "
                f"0: the Lemma 2.1 top-coefficient bound e^δ/(e^δ + n − 1) of the median head is below 1/2 by "
                f"n = {ONSET_TOKENS}",
                paper_value="Gemma 2B δ = 5.69 ± 2.05 → onset ≈ 300 tokens",
                not_run=some_at_most("real_sizes", ONSET_N),
                measure=segments(
                    column=st.onset_margin, measured=st.onset_measured, gates=_segment_gates(m, ONSET_MIN_SEGMENTS)
                ),
                rule=Rule(
                    "direction",
                    units="text segments",
                    bound=f"δ = ln {ONSET_TOKENS}, the onset at {ONSET_TOKENS} tokens",
                ),
            ),
        ]
    return out


_TASK_NAMES = {"kv": "key–value lookup", "passkey": "pass-key retrieval"}


def lookup_claims(config) -> list[ClaimRecord]:
    """Inference-only adaptive temperature leaves lookup accuracy at long inputs unchanged, per task and model; the
    units are lists (their queries share a context)."""
    src = (
        f"{ARXIV} v1 on CLRS-Text, quoted in llama.cpp PR #10057 [PR] (inference-only adaptive temperature "
        "'does not empirically work well'); judged on retrieval tasks with pretrained LMs"
    )
    queries = config.lookup_lists * config.lookup_queries
    extra = (
        f"Above: adaptive helps; below: adaptive hurts (not 'no change'). No change agrees only when 3/queries < "
        f"{LOOKUP_SMALLEST:g}, more than {math.ceil(3 / LOOKUP_SMALLEST)} queries per size (here "
        f"{config.lookup_lists} × {config.lookup_queries} = {queries}"
        + ("; too few: this preset cannot decide a null, too little power" if 3 / queries >= LOOKUP_SMALLEST else "")
        + ")"
    )
    return [
        ClaimRecord(
            f"lookup/{t}/{m}",
            f"{m}: adaptive temperature switched on only at inference, in every head of a "
            f"pretrained LM, leaves {_TASK_NAMES[t]} accuracy at long inputs unchanged (neither raises nor lowers "
            f"it by {LOOKUP_SMALLEST:.2f} or more)",
            src,
            "equivalence",
            quantity="at the largest lookup_sizes, greedy exact match per query of each list",
            extra=extra,
            paper_value="inference-only does not work well",
            measure=Measure(
                {
                    "part": "lookup",
                    "view": st.LIST,
                    "task": t,
                    "model": m,
                    "n_pairs": max(config.lookup_sizes, default=0),
                },
                "diff",
                ("list",),
                combine=LOOKUP_LISTS,
                measured=st.lookup_measured,
                gates=pilot_gate(LOOKUP_MIN_LISTS, (t, m), PILOT_2),
            ),
            rule=Rule("absence", smallest=LOOKUP_SMALLEST),
        )
        for t in config.lookup_tasks
        for m in config.lookup_models
    ]
