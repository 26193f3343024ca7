"""The test of a claim record (:class:`Rule`: which test of :mod:`iclab.stats` decides, and its thresholds) and
its text, generated from the rule and the measure so the report's "test" column says exactly what the judge does.

A record states only the measured quantity (``ClaimRecord.quantity``: what one unit gives) and, where it truly needs
one, an extra sentence; :meth:`Rule.describe` writes the rest from the fields the judge reads: the unit of
replication, the combine rule (its own phrase: :func:`combine_phrase`), and the test with its thresholds and their
values. The rules stated are :mod:`iclab.stats`'s: a Student-t band of n − 1 dof from at least
:data:`iclab.stats.MIN_UNITS` units, two one-sided tests for equivalence and absence (a 95 % CI inside the margin),
the intersection–union test with a Bonferroni "disagrees" for every cell, and for a paper value the band
k·√(SE² + SE_paper²) that agrees only when the band around the measured value lies within the tolerance and a
value :data:`iclab.stats.SHIFT_SE` SE away falls inside it at most :data:`iclab.stats.NOMINAL` of the time
(``docs/calibration.md``). :func:`cannot_fail` refuses a record whose test cannot fail at the least favourable
truth of its claim's kind (issue 43).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from iclab.stats import DEFAULT_REL_TOL, KINDS, MIN_UNITS, NOMINAL, SHIFT_SE, units_to_agree

__all__ = ["BASE", "TEST_KINDS", "EFFECT_KINDS", "Rule", "cannot_fail", "combine_phrase", "units_of", "rule_table",
           "rule_table_markdown"]  # fmt: skip

#: the test kinds of :class:`Rule`, one per test of :mod:`iclab.stats`
TEST_KINDS = ("direction", "equivalence", "absence", "value", "every cell")
#: the claim kinds that state an effect (a direction, a difference, a trend, a sign); the others state closeness
EFFECT_KINDS = ("effect direction",)
_CLOSENESS_TESTS = ("equivalence", "absence", "value", "every cell")
#: ``Rule.target`` for an equivalence against the baseline cells (``Measure.base``) instead of a number
BASE = "base"
_CI = "the 95 % CI"
_OPEN = "else not judged (too little power)"


@dataclass(frozen=True)
class Rule:
    """The test of a claim and its thresholds, fixed before the run (the rules are :mod:`iclab.stats`'s).

    Fields:
        kind: one of :data:`TEST_KINDS`.
        sign: direction: the claimed sign of the effect (+1 or −1).
        smallest: direction, absence: the smallest effect that matters (absolute, or relative: ``relative_to``).
        relative_to: a column: ``smallest`` (or ``tol``) is a fraction of its mean over the reference rows (the
            baseline's when the measure is paired, else the selection's).
        rel_tol: equivalence, every cell, value: the allowed relative error.
        tol: value: the smallest difference that matters (absolute).
        target: equivalence: a number, or :data:`BASE` (the baseline's mean); every cell: the target column.
        paper, paper_se, k: value: the paper's number, its own spread, and the band (default Student t).
        n: a config field with the sample size behind the SE (prompts), to say how many would decide; "" the units.
        units: what the units are called ("seeds", "text segments"), in the test text and in how many would decide
            a paper value; "units": named after ``Measure.unit``.
        unit: text put after effects (``" (log τ)"``).
        against: what an equivalence target is, in the statistic (default "theory").
        by: every cell: the columns that make a cell.
        bound: direction: what zero of the quantity is when the quantity is measured from a threshold the claim
            states ("the ratio at Thm 1's bound"): a bound claim's least favourable truth is the bound itself, which
            its "agrees" excludes, so it needs no smallest effect (:func:`cannot_fail`).
    """

    kind: str
    sign: int = +1
    smallest: float = 0.0
    relative_to: str = ""
    rel_tol: float | None = None
    tol: float | None = None
    target: float | str | None = None
    paper: float | None = None
    paper_se: float = 0.0
    k: float | None = None
    n: str = ""
    units: str = "units"
    unit: str = ""
    against: str = "theory"
    by: tuple[str, ...] = ()
    bound: str = ""

    def __post_init__(self) -> None:
        if self.kind not in TEST_KINDS:
            raise ValueError(f"test kind {self.kind!r} is not one of {TEST_KINDS}")
        needs = {
            "equivalence": ("rel_tol", "target"),
            "every cell": ("rel_tol", "target", "by"),
            "value": ("paper",),
            "absence": ("smallest",),
        }.get(self.kind, ())
        for name in needs:
            value = getattr(self, name)
            if value is None or (value in (0.0, ()) and name != "paper"):  # a paper value may be 0
                raise ValueError(f"a {self.kind} test needs {name}")
        if self.kind == "value" and self.paper == 0 and self.tol is None:
            raise ValueError("a paper value of 0 needs an absolute tol (a relative tolerance of 0 is 0)")

    def describe(self, measure: Any) -> str:
        """The test text of this rule on ``measure`` (a :class:`~iclab.claims._records.Measure`): how the units
        are paired (a baseline) and combined (the combine's phrase: its ``describe(units)`` or
        :func:`combine_phrase`), then the test with its thresholds' values, as :mod:`iclab.stats` applies them."""
        units = units_of(measure.unit, self.units)
        own = getattr(measure.combine, "describe", None)  # a combine that states itself: ``describe(units)``
        phrase = own(units) if own is not None else combine_phrase(measure.combine)
        paired = measure.base is not None
        if paired:
            where = measure.where
            other = ", ".join(f"{k} = {v}" for k, v in measure.base.items() if where.get(k, object()) != v)
            op = "minus" if measure.contrast == "minus" else "log ratio against"
            pairing = f"paired per unit ({op} the baseline {'cells ' + other if other else 'on the same cells'})"
            phrase = f"{pairing}; {phrase}" if phrase else pairing
        test = {
            "direction": lambda: _direction(self, paired),
            "absence": lambda: _absence(self, paired),
            "equivalence": lambda: _equivalence(self),
            "every cell": lambda: _every_cell(self),
            "value": lambda: _value(self, paired),
        }[self.kind]()
        return f"{phrase}; {test}" if phrase else test


def cannot_fail(kind: str, rule: Rule) -> str:
    """Why a claim of ``kind`` judged by ``rule`` cannot fail at its least favourable truth, or "" (issue 43).

    A claim that states an effect (:data:`EFFECT_KINDS`) is judged by a direction test whose "agrees" excludes zero
    effect and the opposite sign: it declares its smallest effect of interest (``smallest`` > 0; an interval wholly
    below it disagrees, :func:`iclab.stats._rules.direction_rule`), or the ``bound`` its quantity is measured from.
    A claim of closeness (a paper value, an equivalence, theory vs simulation) asserts no effect beyond a tolerance:
    an equivalence, absence, paper-value or every-cell test, or a one-sided direction test on a quantity measured
    from the tolerance (``bound``: agrees only when the whole interval is inside it)."""
    if kind in EFFECT_KINDS:
        if rule.kind != "direction":
            return f"an effect claim judged by a {rule.kind} test states closeness: restate its kind"
        if rule.smallest <= 0 and not rule.bound:
            return "an effect claim needs its smallest effect of interest (Rule.smallest > 0) or its bound"
        return ""
    if rule.kind in _CLOSENESS_TESTS or (rule.kind == "direction" and rule.bound):
        return ""
    return "a closeness claim judged by a direction test needs the tolerance its quantity is measured from (bound)"


def num(x: float) -> str:
    """A threshold as text: 4 significant digits, a true minus sign."""
    return f"{float(x):.4g}".replace("-", "−")


def _pct(x: float) -> str:
    return f"{100 * float(x):.3g} %"


def units_of(unit: Sequence[str], name: str) -> str:
    """What the units are called: the record's ``name`` (``Rule.units``), else the unit column(s) ("seeds",
    "(task, seed) units")."""
    if name and name != "units":
        return name
    return f"{unit[0]}s" if len(unit) == 1 else f"({', '.join(unit)}) units"


def mean_over_units(units: str) -> str:
    """The phrase of the default combine (:func:`~iclab.claims._records.across_units`): mean ± SE over the
    units, Student t with n − 1 dof, at least :data:`iclab.stats.MIN_UNITS` units."""
    return f"mean ± SE over {units}, Student t with n − 1 dof (fewer than {MIN_UNITS} {units}: not judged)"


def combine_phrase(combine: Callable) -> str:
    """A named combine rule's own phrase: the first sentence of its docstring, markup removed (a ``partial`` is
    read through to its function, or to its first callable argument when that function is a generic wrapper without
    a docstring); "" without one (then the record's quantity says how the units are combined)."""
    fn = combine
    while isinstance(fn, functools.partial):
        inner = next((a for a in fn.args if callable(a)), None)
        fn = fn.func if fn.func.__doc__ or inner is None else inner
    doc = " ".join((fn.__doc__ or "").split())
    if not doc:  # a reading rule without a docstring: the record's quantity says how it combines
        return ""
    first = re.split(r"(?<=[^.]{3}\.)\s+(?=[A-Za-z(`])", doc, maxsplit=1)[0].rstrip(".")
    first = re.sub(r"\s*\(:\w+:`[^`]*`\)", "", first)  # "(:func:`x`)": a pointer for readers of the code
    return re.sub(r":\w+:`~?(?:[\w.]*\.)?([^`]*)`", r"\1", first).replace("``", "")


def _smallest(rule: Rule, value: float, paired: bool) -> str:
    """``value`` as text, or, relative to a column, as that fraction of its mean over the reference rows."""
    if not rule.relative_to:
        return f"{num(value)}{rule.unit}"
    return f"{num(value)} × the mean {rule.relative_to} of the {'baseline' if paired else 'selected'} cells"


def _direction(rule: Rule, paired: bool) -> str:
    want, other = ("above", "below") if rule.sign > 0 else ("below", "above")
    text = f"effect direction: agrees when {_CI} is {want} 0; disagrees when it is {other} 0"
    if rule.smallest > 0:
        edge = _smallest(rule, rule.smallest, paired)
        every = f"{'≥ ' if rule.sign > 0 else '≤ −'}{edge}"
        text = (
            f"effect direction: agrees when {_CI} is {want} 0 and reaches the smallest effect of interest {every}; "
            f"disagrees when it is {other} 0, or when it excludes every effect {every}"
        )
    if rule.bound:
        text += f" (0 is {rule.bound})"
    return f"{text}; {_OPEN}"


def _absence(rule: Rule, paired: bool) -> str:
    d = _smallest(rule, rule.smallest, paired)
    return (
        f"absence on both sides: agrees when {_CI} lies within ±{d} (no effect that large either way); disagrees "
        f"when it lies wholly above +{d} or wholly below −{d}; {_OPEN}"
    )


def _equivalence(rule: Rule) -> str:
    if rule.target == BASE:
        named = "" if rule.against == "theory" else f" ({rule.against})"
        where = f"±{_pct(rule.rel_tol)} of the baseline cells' mean{named}"
    else:
        t = float(rule.target)
        lo, hi = sorted((t - abs(t) * rule.rel_tol, t + abs(t) * rule.rel_tol))
        where = f"{num(t)} ± {_pct(rule.rel_tol)} = [{num(lo)}, {num(hi)}]"
    return f"equivalence: agrees when {_CI} lies within {where}; disagrees when it lies wholly outside; {_OPEN}"


def _every_cell(rule: Rule) -> str:
    return (
        f"at every cell ({', '.join(rule.by)}): agrees when every cell's 95 % CI lies within ±{_pct(rule.rel_tol)} "
        f"of the cell's {rule.target} (intersection–union test, no correction); disagrees when some cell's Bonferroni CI "
        f"(95 % over the cells) lies wholly outside; {_OPEN}"
    )


def _value(rule: Rule, paired: bool) -> str:
    p = num(rule.paper)
    spread = f"√(SE² + {num(rule.paper_se)}²)" if rule.paper_se else "√(SE² + SE_paper²)"
    k = f"k = {num(rule.k)}" if rule.k is not None else "k the 95 % Student-t quantile (n − 1 dof; 2 for a normal SE)"
    if not rule.paper_se:
        k += ", SE_paper the spread the combine adds (else 0)"
    if rule.tol is not None:
        tol = _smallest(rule, rule.tol, paired)
    else:
        rel = DEFAULT_REL_TOL if rule.rel_tol is None else rule.rel_tol
        tol = f"{_pct(rel)} of |{p}| = {num(rel * abs(rule.paper))}"
    need = units_to_agree(rule.k)
    power = f"a value {SHIFT_SE:g} SE away falls inside the band at most {_pct(NOMINAL)} of the time" + (
        f" (a Student-t band: at least {need} {rule.units})" if need and rule.k is None else ""
    )
    return (
        f"paper value {p}: disagrees when |measured − paper| > k·{spread}, {k}; agrees only when not, the band "
        f"|measured − paper| ± k·{spread} lies within the tolerance ±{tol} and {power}; {_OPEN}"
    )


#: One row per test kind of :class:`Rule`: what it tests, the fields it reads, when it agrees and disagrees, and the
#: least favourable truth the judge and the row-level calibration resample it at (issue 43; ``docs/calibration.md``).
_RULES = {
    "direction": (
        "an effect: a sign, a difference, a trend (claim kind 'effect direction'); or closeness to a bound the "
        "quantity is measured from",
        "sign, smallest (or bound), relative_to, unit",
        "the 95 % CI is on the claimed side of 0 and reaches the smallest effect of interest",
        "the CI is on the other side of 0, or excludes every effect at least the smallest",
        "true effect 0 (the bound itself for a bound claim); the power to agree at the smallest effect",
    ),
    "equivalence": (
        "closeness to a number or to the baseline cells' mean (theory vs simulation, one model is another)",
        "target (a number or BASE), rel_tol, against",
        "the 95 % CI lies within target ± rel_tol·abs(target) (two one-sided tests)",
        "the CI lies wholly outside that interval",
        "the gap exactly at each edge of the tolerance, ±rel_tol·abs(target)",
    ),
    "absence": (
        "no effect as large as a stated size, either way",
        "smallest, relative_to, unit",
        "the 95 % CI lies within ±smallest",
        "the CI lies wholly above +smallest or wholly below −smallest",
        "the effect exactly at ±smallest",
    ),
    "value": (
        "a number the paper reports (claim kind 'paper value')",
        "paper, paper_se, k, tol or rel_tol (default 10 %), n, units",
        "abs(measured − paper) ± k·√(SE² + SE_paper²) lies within the tolerance, and the band is narrow enough "
        f"that a value {SHIFT_SE:g} SE away falls inside it at most {_pct(NOMINAL)} of the time",
        "abs(measured − paper) > k·√(SE² + SE_paper²)",
        "the true value exactly at paper ± tol",
    ),
    "every cell": (
        "closeness at every cell of a table (theory vs simulation over a grid)",
        "target (a column), rel_tol, by",
        "every cell's 95 % CI lies within ±rel_tol of the cell's target (intersection–union test)",
        "some cell's Bonferroni CI (95 % over the cells) lies wholly outside",
        "one cell exactly at the edge of its tolerance, the others at their targets (simulated at the level of "
        "the statistic, docs/calibration.md §6)",
    ),
}
_COLUMNS = ("kind", "claim kinds", "tests", "fields", "agrees when", "disagrees when", "least favourable truth")


def _claim_kinds(test: str) -> str:
    """The claim kinds (:data:`iclab.stats.KINDS`) a test kind may judge, by :func:`cannot_fail`: a record of any
    other is refused when the experiment is built."""
    plain = Rule(test, smallest=1.0, rel_tol=0.1, target=1.0, paper=1.0, by=("cell",))
    bound = dataclasses.replace(plain, bound="a bound")
    ok = [k for k in KINDS if not cannot_fail(k, plain)]
    with_bound = [k for k in KINDS if k not in ok and not cannot_fail(k, bound)]
    text = ", ".join(f"'{k}'" for k in ok)
    return text + (f"; {', '.join(repr(k) for k in with_bound)} with a bound" if with_bound else "")


def rule_table() -> list[dict[str, str]]:
    """Every test kind of :class:`Rule` (:data:`TEST_KINDS`, in order) as a row: the claim kinds it may judge (one
    vocabulary: a claim's kind says what the paper states, the test kind how it is decided), what it tests, the
    fields it reads, when it agrees and when it disagrees (else "not judged: too little power"), and the least
    favourable truth at which the judge checks it can fail (an "agrees" there at most 5 % + 2 Monte Carlo SE of the
    time). Markdown-safe text: no ``|``."""
    return [dict(zip(_COLUMNS, (kind, _claim_kinds(kind), *_RULES[kind]))) for kind in TEST_KINDS]


def rule_table_markdown() -> str:
    """:func:`rule_table` as a markdown table (the claims API page quotes it between markers; a test keeps it so)."""
    head = "| " + " | ".join(_COLUMNS) + " |\n|" + "---|" * len(_COLUMNS)
    rows = ["| " + " | ".join(f"`{r['kind']}`" if c == "kind" else r[c] for c in _COLUMNS) + " |" for r in rule_table()]
    return "\n".join([head, *rows])
