"""Claims and their verdicts: what an experiment promises to judge before it runs, and the rows it reports.

An experiment declares its claims before the run (``claims(config) -> [Claim]``), so the denominator is fixed: a
claim whose cells failed, or whose comparison raised, still appears — as "not judged (not measured)". After the
run, ``compare(config, results) -> {claim id: Verdict}`` judges each claim with one of the tests of
:mod:`iclab.stats`. A claim may name the paper's settings it needs (``paper_settings``: config field -> the
paper's value); when the run's config differs, the verdict is "not judged (settings differ)", naming the fields,
and the measured value is still shown.

The rules every experiment's ``compare`` shares live here, once (the tests themselves are :mod:`iclab.stats`):

- :func:`downgrade`: a verdict that cannot count (settings differ, unreliable source, not converged, not
  comparable) becomes "not judged" and keeps what the test gave at these settings.
- the rows of a claim's cells, one per unit, and "not measured" when a cell it names is missing:
  :mod:`iclab.claims._cells`.
- :func:`holm`: the headline claims of a run are one family; an "agrees" stands only when its Holm-adjusted p-value
  (Holm 1979, step-down, family-wise α = :data:`FAMILY_ALPHA`) is at most α, else it is "not judged (Holm: …)".
- :func:`family_summary`: the number of agreements expected by chance under no effect (the sum over judged claims
  of each test's false-agree rate, :func:`iclab.stats.calibrate`) and the Holm family, for ``summary.json``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from iclab.claims._cells import _scalar, _short, planned_cells
from iclab.stats import AGREES, KINDS, NOT_JUDGED, Verdict, calibrate, claim_rng, not_judged

__all__ = [
    "Claim",
    "Comparison",
    "COMPARISON_FIELDS",
    "judge_run",
    "settings_differ",
    "claim_gate",
    "downgrade",
    "holm",
    "family_summary",
    "chance_line",
    "FAMILY_ALPHA",
]

#: the family-wise error rate of a run's headline "agrees" (:func:`holm`)
FAMILY_ALPHA = 0.05

#: draws per claim behind the chance count of :func:`family_summary` (modest: it runs with every report)
CHANCE_DRAWS = 400

COMPARISON_FIELDS = (
    "paper",
    "experiment",
    "claim",
    "source",
    "kind",
    "paper_value",
    "measured",
    "uncertainty",
    "test",
    "statistic",
    "verdict",
    "reason",
)


@dataclass(frozen=True)
class Claim:
    """A claim of the paper that an experiment judges, declared before the run.

    Fields:
        id: stable identifier, unique within the experiment (e.g. ``"thm4.2-vs-mc/cov"``).
        claim: the claim in one sentence.
        source: where it comes from: paper + table/figure/equation (``"arXiv:2511.01292, Thm 4.2"``), or
            ``"second-hand summary"`` for numbers known only from a summary.
        kind: ``"paper value"``, ``"theory vs simulation"``, ``"equivalence"`` (closeness) or ``"effect direction"``.
        test: what would make it fail, fixed before the run.
        paper_value: what the paper reports, as text (``"—"`` when it reports no number).
        headline: one of the paper's headline claims (listed first in the report's ledger).
        paper_settings: config fields and the paper's values that judging this claim needs.
        unreliable: why the paper's value cannot be trusted (then the claim is never judged against it).
    """

    id: str
    claim: str
    source: str
    kind: str
    test: str
    paper_value: str = "—"
    headline: bool = False
    paper_settings: Mapping[str, Any] = field(default_factory=dict)
    unreliable: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id!r}: kind {self.kind!r} is not one of {KINDS}")
        for name in ("id", "claim", "source", "test"):
            if not str(getattr(self, name)).strip():
                raise ValueError(f"claim {self.id!r}: {name} is empty")


@dataclass(frozen=True)
class Comparison:
    """One row of a paper's comparison table, of ``summary.json`` and of ``runs/report/comparisons.csv``."""

    paper: str
    experiment: str
    claim: str
    source: str
    kind: str
    paper_value: str
    measured: str
    uncertainty: str
    test: str
    statistic: str
    verdict: str
    reason: str
    id: str = ""
    headline: bool = False
    test_record: dict | None = field(default=None, compare=False)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def settings_differ(config: Any, paper_settings: Mapping[str, Any]) -> str:
    """ "" when ``config`` has every paper setting, else "settings differ: FIELD = VALUE (paper P), …"."""
    diffs = []
    for name, paper in paper_settings.items():
        value = getattr(config, name)
        same = (
            tuple(value) == tuple(paper)
            if isinstance(value, (tuple, list)) and isinstance(paper, (tuple, list))
            else value == paper
        )
        if not same:
            diffs.append(f"{name} = {_short(value)} (paper {_short(paper)})")
    return "settings differ: " + ", ".join(diffs) if diffs else ""


def claim_gate(claim: Claim, config: Any) -> str:
    """What the ledger puts over a claim's verdict whatever its test said: its unreliable source, else its paper
    settings the config lacks (:func:`settings_differ`), else ""."""
    return (
        claim.unreliable and f"unreliable source: {claim.unreliable}" or settings_differ(config, claim.paper_settings)
    )


def downgrade(verdict: Verdict, why: str) -> Verdict:
    """``verdict`` as "not judged" because ``why`` (e.g. "settings differ: steps = 30 (paper 500000)"): a judged
    verdict keeps its measured value and statistic and says "(at these settings the test gave: V)"; a verdict that
    was already not judged gets ``why`` before its own reason. ``why`` empty: ``verdict`` unchanged."""
    if not why:
        return verdict
    record = None if verdict.test_record is None else {**verdict.test_record, "gate": why}
    if verdict.verdict == NOT_JUDGED:
        return dataclasses.replace(verdict, reason=f"{why}; {verdict.reason}", test_record=record)
    return dataclasses.replace(
        verdict,
        verdict=NOT_JUDGED,
        reason=f"{why} {_GAVE}{verdict.verdict})",
        test_record=record,
    )


_GAVE = "(at these settings the test gave: "  # what downgrade() writes after its gate: the one place it is written


def downgraded_by(reason: str, why: str) -> bool:
    """Whether ``reason`` is what :func:`downgrade` wrote for a judged verdict that ``why`` (its one gate) made
    "not judged"."""
    return bool(why) and reason.startswith(f"{why} {_GAVE}")


def _row(claim: Claim, verdict: Verdict, paper: str, experiment: str) -> Comparison:
    return Comparison(
        paper,
        experiment,
        claim.claim,
        claim.source,
        claim.kind,
        claim.paper_value,
        verdict.measured,
        verdict.uncertainty,
        claim.test,
        verdict.statistic,
        verdict.verdict,
        verdict.reason,
        claim.id,
        claim.headline,
        verdict.test_record,
    )


def judge_run(
    *,
    paper: str,
    experiment: str,
    config: Any,
    results: pd.DataFrame,
    failed: pd.DataFrame,
    claims: Callable[[Any], Sequence[Claim]],
    compare: Callable[[Any, pd.DataFrame], Mapping[str, Verdict]],
    not_run: Sequence[Mapping[str, Any]] = (),
) -> tuple[list[Comparison], list[str]]:
    """Every declared claim of one run with its verdict; and the errors met on the way.

    A claim that ``compare`` did not judge (its cells failed, or ``compare`` raised) is "not judged (not
    measured)"; so is a claim record that reads a failed cell or one of ``not_run`` (the planned cells the store
    holds no row of: a run stopped before they ran), naming them. One whose ``paper_settings`` the config lacks, or
    whose paper value is ``unreliable``, is "not judged" with that reason whatever the test said. A verdict for an
    undeclared claim is an error (the denominator is fixed before the run)."""
    declared = list(claims(config))
    ids = [c.id for c in declared]
    errors = [f"claim id {i!r} is declared twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
    verdicts: Mapping[str, Verdict] = {}
    why_missing = "no finished cells" if not len(results) else "the comparison did not measure it"
    if len(failed):
        why_missing += f" ({len(failed)} failed cell(s); rerun with --retry-failed)"
    if len(results):
        try:
            verdicts = dict(compare(config, results))
        except Exception as exc:  # noqa: BLE001 - a broken comparison must not lose the other rows
            errors.append(f"compare failed: {type(exc).__name__}: {exc}")
            why_missing = f"the comparison raised {type(exc).__name__}"
    errors += [f"verdict for undeclared claim {k!r}" for k in verdicts if k not in ids]
    lost, unrun = failed_cells(failed), [dict(c) for c in not_run]
    columns = list(getattr(results, "columns", ()))
    rows = []
    for claim in declared:
        verdict = verdicts.get(claim.id) or not_judged(f"not measured: {why_missing}")
        verdict = _reads_lost(claim, lost, columns, _FAILED) or _reads_lost(claim, unrun, columns, _NOT_RUN) or verdict
        verdict = downgrade(verdict, claim_gate(claim, config))
        rows.append(_row(claim, verdict, paper, experiment))
    return holm(rows), errors


def failed_cells(failed: pd.DataFrame) -> list[dict]:
    """The cells of a run's failed rows: each row's ``cell`` mapping where the table has one, else its columns
    that are not the store's own (``_status``, ``_error``, …), without the empty ones."""
    if not len(failed):
        return []
    if "cell" in failed.columns:
        return [dict(c) for c in failed["cell"] if isinstance(c, Mapping)]
    keep = [c for c in failed.columns if not str(c).startswith("_") and c != "error"]
    return [{k: v for k, v in row.items() if _scalar(v)} for row in failed[keep].to_dict("records")]


_FAILED = ("failed cell(s)", "rerun with --retry-failed")
_NOT_RUN = ("cell(s) not run", "resume the run (the same command) to compute them")


def _reads_lost(claim: Claim, lost: Sequence[Mapping[str, Any]], columns: list, how: tuple[str, str]) -> Verdict | None:
    """ "not measured", naming them, when a ``lost`` cell (failed, or planned and not run: ``how`` says which and
    what to do) is one the claim record reads (its ``where`` or ``base``: :func:`planned_cells`; a cell a
    ``Measure.cells`` names makes it "not measured" when it lacks a row): a lost seed, model or grid point never
    leaves a claim judged on the units left (issue 43, item 4). None for a claim that is not a record or reads no
    lost cell."""
    m = getattr(claim, "measure", None)
    if not lost or m is None:
        return None
    hit = planned_cells(lost, m.selections(), columns + [k for c in lost for k in c])
    if not hit:
        return None
    shown = [", ".join(f"{k} = {_short(v)}" for k, v in c.items()) for c in hit[:3]]
    more = f"; … {len(hit) - 3} more" if len(hit) > 3 else ""
    return not_judged(
        f"not measured: {len(hit)} {how[0]} it reads ({'; '.join(shown)}{more}) — {how[1]}; "
        "a claim is never judged on the cells that are left"
    )


def _judged(row: Comparison) -> bool:
    """The test ran and decides the row: a test record, no gate put over it (``downgrade`` marks one; any other
    change of the test's own verdict but Holm's counts as one)."""
    rec = row.test_record
    if not rec or rec.get("gate"):
        return False
    return row.verdict == rec.get("verdict") or bool(rec.get("holm", {}).get("demoted"))


def holm(rows: Sequence[Comparison], alpha: float = FAMILY_ALPHA) -> list[Comparison]:
    r"""``rows`` with Holm's step-down (Holm 1979) over the headline claims that were judged: with the family's m
    p-values sorted, :math:`p_{(1)} \le \dots \le p_{(m)}`, the adjusted
    :math:`\tilde p_{(i)} = \max_{j \le i} \min(1, (m - j + 1)\,p_{(j)})`; an "agrees" with
    :math:`\tilde p > \alpha` becomes "not judged (Holm: …)". Each test's p is that of its "agrees"
    (:mod:`iclab.stats._rules`); a missing p counts as 1. Every family member's record gets ``holm``."""
    family = [i for i, r in enumerate(rows) if r.headline and _judged(r)]
    ps = {i: float(rows[i].test_record.get("p", 1.0)) for i in family}
    ps = {i: (p if np.isfinite(p) else 1.0) for i, p in ps.items()}
    m, out, running = len(family), list(rows), 0.0
    for rank, i in enumerate(sorted(family, key=lambda i: ps[i])):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        row = rows[i]
        demote = row.verdict == AGREES and running > alpha
        record = {**row.test_record, "holm": {"family": m, "p_adjusted": running, "alpha": alpha, "demoted": demote}}
        change = {"test_record": record}
        if demote:
            change |= {
                "verdict": NOT_JUDGED,
                "reason": f"Holm: family of {m} headline claims, adjusted p = {running:.3g} > {alpha:g} "
                f"(the test gave: agrees, p = {ps[i]:.3g})",
            }
        out[i] = dataclasses.replace(row, **change)
    return out


def family_summary(rows: Sequence[Comparison], draws: int = CHANCE_DRAWS, seed: int = 0) -> dict:
    """``{"chance_agrees": …, "holm": …}`` of one run's rows (from :func:`judge_run`), for ``summary.json``.

    ``chance_agrees["expected"]`` is the number of "agrees" expected by chance under no effect: the sum over the
    ``judged`` claims (a test ran and no gate decided instead) of each test's false-agree rate under its least
    favourable false claim (:func:`iclab.stats.calibrate`, ``draws`` tables each, seeded by ``seed`` and the claim;
    before Holm, so an upper bound for the headline claims). ``untested`` counts claims without a test record
    (refused, not measured, gated, or a verdict built by hand). ``holm`` names the family, the adjusted p-values and
    the demoted claims; ``outside`` the headline "agrees" without a test record (a verdict built by hand), which no
    family correction covers."""
    judged = [r for r in rows if _judged(r)]
    rates = [calibrate(r.test_record, draws, claim_rng(seed, r.experiment, r.id)).rate for r in judged]
    family = {r.id: r.test_record["holm"]["p_adjusted"] for r in rows if "holm" in (r.test_record or {})}
    return {
        "chance_agrees": {
            "expected": float(sum(rates)),
            "judged": len(judged),
            "claims": len(rows),
            "untested": len(rows) - len(judged),
            "draws": draws,
            "seed": seed,
        },
        "holm": {
            "alpha": FAMILY_ALPHA,
            "family": len(family),
            "p_adjusted": family,
            "demoted": [r.id for r in rows if (r.test_record or {}).get("holm", {}).get("demoted")],
            "headline_untested": [r.id for r in rows if r.headline and r.id not in family],
            "outside": [r.id for r in rows if r.headline and r.verdict == AGREES and r.id not in family],
        },
    }


def chance_line(summaries: Sequence[Mapping[str, Any]]) -> str:
    """One ledger line from the ``summary.json`` of one run or of several: "Expected agreements by chance under no
    effect: X (of N judged claims); headline claims: Holm family-wise α = 0.05" (summaries without the count, from
    an older iclab, are named)."""
    have = [s["chance_agrees"] for s in summaries if isinstance(s.get("chance_agrees"), Mapping)]
    if not have:
        return "Expected agreements by chance under no effect: not computed (summaries from an older iclab)"
    expected, judged = sum(c["expected"] for c in have), sum(c["judged"] for c in have)
    missing = len(summaries) - len(have)
    outside = [i for s in summaries for i in (s.get("holm") or {}).get("outside", [])]
    return (
        f"Expected agreements by chance under no effect: {expected:.2f} (of {judged} judged claims"
        + (f"; {missing} run(s) without the count" if missing else "")
        + f"); headline claims: Holm family-wise α = {FAMILY_ALPHA:g}"
        + (f" ({len(outside)} headline agreement(s) without a test record stand outside it)" if outside else "")
    )
