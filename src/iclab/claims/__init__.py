"""Claims as data and the one judge that reads them: what a paper package, or a plugin outside the repository,
imports to state a paper's claims (``from iclab.claims import ClaimRecord, Measure, Rule``).

A claim is a :class:`ClaimRecord`: an id, the claim's text, its source and kind, the paper's value, the config
values that run its cells (``runs_if``), a :class:`Measure` (which rows, which column, the unit of replication, an
optional paired baseline, how units combine) and a :class:`Rule` (the test of :mod:`iclab.stats` that decides and
its thresholds). Gates (:class:`Setting`, :class:`MinUnits`, :class:`PilotMinimum`, :class:`Screen`, …) are declared
on the measure; the judge writes every "not judged", "settings differ" and "not measured" text from them.
:func:`judge_records` judges a list of records on a results table; :func:`judge_run` turns a run's verdicts into the ledger's rows
(:class:`Comparison`), making a claim "not measured" when a cell it reads failed or did not run. The rules, what
each tests, its parameters and its least favourable truth are listed on the API page (``docs/api/claims.md``) and
by :func:`rule_table`.

Layer: below :mod:`iclab.experiments` (the paper packages import it; it imports only :mod:`iclab.stats`,
:mod:`iclab.errors` and the scientific stack), so a plugin needs nothing of iclab's experiments to state claims.
The modules: ``_records`` (records and :func:`judge_records`), ``_rule`` (:class:`Rule` and the can-fail check),
``_gates`` (declared gates), ``_sample`` (the rows of a measure, one per unit), ``_statistics`` (shared combine
rules a package names: :func:`across_units_or`, :func:`within_units`, …), ``_judge`` (ledger rows, "not measured",
Holm), ``_resample``, ``_calibrate_rows`` and ``_pilot`` (the small-sample gate, the row-level calibration at the
least favourable truth, and a claim's minimum of units fixed from a pilot).
"""

from iclab.claims._gates import CellReason as CellReason
from iclab.claims._gates import Diagnostic as Diagnostic
from iclab.claims._gates import GridEdge as GridEdge
from iclab.claims._gates import MinUnits as MinUnits
from iclab.claims._gates import NotComparable as NotComparable
from iclab.claims._gates import PilotMinimum as PilotMinimum
from iclab.claims._gates import Screen as Screen
from iclab.claims._gates import Setting as Setting
from iclab.claims._gates import TOO_FEW_UNITS as TOO_FEW_UNITS
from iclab.claims._gates import StandIn as StandIn
from iclab.claims._judge import COMPARISON_FIELDS as COMPARISON_FIELDS
from iclab.claims._judge import Claim as Claim
from iclab.claims._judge import Comparison as Comparison
from iclab.claims._judge import chance_line as chance_line
from iclab.claims._judge import downgraded_by as downgraded_by
from iclab.claims._judge import family_summary as family_summary
from iclab.claims._judge import judge_run as judge_run
from iclab.claims._cells import one_per_unit as one_per_unit
from iclab.claims._cells import part_rows as part_rows
from iclab.claims._judge import settings_differ as settings_differ
from iclab.claims._records import ClaimRecord as ClaimRecord
from iclab.claims._records import Estimate as Estimate
from iclab.claims._records import Measure as Measure
from iclab.claims._records import across_units as across_units
from iclab.claims._records import declared as declared
from iclab.claims._records import judge_records as judge_records
from iclab.claims._rule import BASE as BASE
from iclab.claims._rule import EFFECT_KINDS as EFFECT_KINDS
from iclab.claims._rule import TEST_KINDS as TEST_KINDS
from iclab.claims._rule import Rule as Rule
from iclab.claims._rule import cannot_fail as cannot_fail
from iclab.claims._rule import rule_table as rule_table
from iclab.claims._sample import Sample as Sample
from iclab.claims._statistics import across_units_or as across_units_or
from iclab.claims._statistics import binary_units as binary_units
from iclab.claims._statistics import binomial_share as binomial_share
from iclab.claims._statistics import lost_units as lost_units
from iclab.claims._statistics import measured_as as measured_as
from iclab.claims._statistics import not_configured as not_configured
from iclab.claims._statistics import some_at_most as some_at_most
from iclab.claims._statistics import whole_rows as whole_rows
from iclab.claims._statistics import within_units as within_units

__all__ = [
    "ClaimRecord",
    "Measure",
    "Rule",
    "Estimate",
    "Sample",
    "BASE",
    "TEST_KINDS",
    "EFFECT_KINDS",
    "Setting",
    "MinUnits",
    "PilotMinimum",
    "CellReason",
    "Screen",
    "GridEdge",
    "Diagnostic",
    "StandIn",
    "NotComparable",
    "across_units",
    "across_units_or",
    "binary_units",
    "binomial_share",
    "within_units",
    "lost_units",
    "measured_as",
    "whole_rows",
    "not_configured",
    "some_at_most",
    "part_rows",
    "one_per_unit",
    "declared",
    "judge_records",
    "cannot_fail",
    "rule_table",
    "Claim",
    "Comparison",
    "COMPARISON_FIELDS",
    "judge_run",
    "settings_differ",
    "family_summary",
    "chance_line",
]
