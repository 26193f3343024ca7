"""Gates live in the judge (issue 43, item 6): each declared gate kind of :mod:`iclab.claims._gates` on a made-up
table — one where it must fire and one where it must not — judged through the one judge; a screen record gates the
records that name it (a missing screen cell is "not measured", never "agrees"); and no paper package builds a verdict
or refusal text in code (only the judge writes "not judged", "settings differ", "not measured", "no uncertainty")."""

import ast
import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iclab.experiments import PAPER_PACKAGES
from iclab.claims._records import (
    CellReason,
    ClaimRecord,
    Diagnostic,
    GridEdge,
    Measure,
    MinUnits,
    NotComparable,
    PilotMinimum,
    RAISED,
    Rule,
    Screen,
    Setting,
    StandIn,
    judge_records,
)
from iclab.stats import AGREES, DISAGREES, NOT_JUDGED

EXPERIMENTS = Path(__file__).resolve().parents[1] / "src" / "iclab" / "experiments"
PHRASES = ("not judged", "settings differ", "not measured", "no uncertainty")


@dataclass(frozen=True)
class Cfg:
    steps: int = 30_000
    beta_step: float = 0.1
    taus: tuple = (0.5, 1.0, 2.0, 4.0)


def _table(effect: float = 0.1, seeds: int = 5, **cols) -> pd.DataFrame:
    """One row per seed in part ``p`` with a clear effect ``effect`` (tiny noise), plus constant columns ``cols``."""
    rng = np.random.default_rng(7)
    rows = [{"part": "p", "seed": s, "acc": effect + rng.normal(0, 0.005)} | cols for s in range(seeds)]
    return pd.DataFrame(rows)


def _rec(*gates, cid="x/claim", where=None, column="acc") -> ClaimRecord:
    m = Measure(where or {"part": "p"}, column, ("seed",), gates=gates)
    return ClaimRecord(
        cid, "a claim", "arXiv:0000.00000, Fig. 1", "effect direction", quantity="q", measure=m,
        rule=Rule("direction", smallest=0.02, units="seeds"),
    )  # fmt: skip


def _judge(rec, df, cfg=Cfg()):
    return judge_records([rec], cfg, df)[rec.id]


def test_without_gates_the_made_up_table_agrees():
    assert _judge(_rec(), _table()).verdict == AGREES


@pytest.mark.parametrize(
    ("gate", "cfg", "fires"),
    [
        (Setting("steps", minimum=20_000, why="stage I finished", paper=500_000), Cfg(steps=30_000), ""),
        (
            Setting("steps", minimum=20_000, why="stage I finished", paper=500_000),
            Cfg(steps=1500),
            "settings differ: steps = 1500 (paper 500000; this claim needs ≥ 20,000: stage I finished)",
        ),
        (Setting("beta_step", maximum=0.2), Cfg(beta_step=0.1), ""),
        (
            Setting("beta_step", maximum=0.2),
            Cfg(beta_step=0.5),
            "settings differ: beta_step = 0.5 (this claim needs ≤ 0.2)",
        ),
    ],
)
def test_a_setting_below_or_above_what_the_claim_needs_differs(gate, cfg, fires):
    v = _judge(_rec(gate), _table(), cfg)
    if not fires:
        assert v.verdict == AGREES
    else:
        assert v.verdict == NOT_JUDGED and v.reason == f"{fires} (at these settings the test gave: agrees)"
        assert v.test_record["gate"] == fires


def test_a_setting_read_from_the_rows_counts_their_least_value():
    steps = Setting("steps", minimum=500_000, column=lambda rows: rows["trained"].to_numpy(float), label="trained")
    df = _table(trained=500_000.0)
    assert _judge(_rec(steps), df).verdict == AGREES
    df.loc[2, "trained"] = 30_000.0
    v = _judge(_rec(steps), df)
    assert v.verdict == NOT_JUDGED and v.reason.startswith(
        "settings differ: trained = 30000 (this claim needs ≥ 500,000"
    )
    df["trained"] = math.nan  # rows from before the column: the config field stands in (steps = 30 000 < 500 000)
    assert _judge(_rec(steps), df).reason.startswith("settings differ: trained = 30000")
    with pytest.raises(ValueError, match="minimum or a maximum"):
        Setting("steps")


def test_a_minimum_of_units_with_a_value():
    gate = MinUnits(3, "with enough fit sets", detail=lambda cfg, s: f"{len(s.values)} rows read")
    df = _table(seeds=4)
    assert _judge(_rec(gate), df).verdict == AGREES
    df.loc[[0, 1], "acc"] = math.nan  # two of four seeds have no value: 2 < 3
    v = _judge(_rec(gate), df)
    assert v.verdict == NOT_JUDGED
    assert v.reason.startswith("not measured: 2 of 4 seeds with enough fit sets (needs 3; 4 rows read)")


def test_a_minimum_of_units_fixed_from_a_pilot_refuses_fewer_whatever_the_test_gave():
    """Not "not measured" (every unit has its value): "too few units", k of the minimum, naming the pilot; a run at
    the minimum is judged. Over a "disagrees" too: the size is fixed before the run, whatever it gives."""
    gate = PilotMinimum(5, "the shipped reference run p-paper")
    assert _judge(_rec(gate), _table(seeds=5)).verdict == AGREES
    v = _judge(_rec(gate), _table(seeds=4))
    assert v.verdict == NOT_JUDGED and v.reason.startswith(
        "too few units: 4 of the 5 seeds its test needs (the minimum, fixed from the shipped reference run p-paper as "
        "pilot: fewer units drawn from the pilot's, at the least favourable truth, agree more than 5 % + 2 Monte Carlo "
        "SE of the time); a run with 5 would judge it (at these settings the test gave: agrees)"
    ), v.reason
    assert "disagrees)" in _judge(_rec(gate), _table(effect=-0.1, seeds=4)).reason
    capped = _judge(_rec(PilotMinimum(200, "the pilot", capped=True)), _table(seeds=4)).reason
    assert "4 of the 200 seeds" in capped and "the search's cap" in capped and "even 200 units" in capped
    assert "at least 5 seeds (a minimum fixed from the shipped reference run p-paper as pilot), else too few units" in (
        _rec(gate).test
    )


def test_a_cell_that_reports_why_it_could_not_measure():
    gate = CellReason("the model could not be loaded here")
    assert _judge(_rec(gate), _table(available=1, reason="")).verdict == AGREES
    v = _judge(_rec(gate), _table(available=0, reason="no weights offline"))
    assert v.verdict == NOT_JUDGED
    assert v.reason.startswith("not measured: the model could not be loaded here (no weights offline)")


def test_an_argmin_on_the_grid_edge_is_no_argmin():
    gate = GridEdge("best_tau", "taus", "best τ")
    assert _judge(_rec(gate), _table(best_tau=2.0)).verdict == AGREES
    v = _judge(_rec(gate), _table(best_tau=4.0))
    assert v.verdict == NOT_JUDGED
    assert v.reason.startswith("a best τ lies on the edge of the grid `taus` 0.5…4, which is no argmin (widen `taus`)")


def test_a_diagnostic_over_its_declared_threshold():
    gate = Diagnostic("free_z", 3.0, "not at the optimum", "the free gradient is non-zero", "train longer", ".1f")
    assert _judge(_rec(gate), _table(free_z=2.5)).verdict == AGREES
    assert _judge(_rec(gate), _table()).verdict == AGREES  # rows from before the diagnostic was recorded
    v = _judge(_rec(gate), _table(free_z=4.25))
    assert v.verdict == NOT_JUDGED
    assert v.reason.startswith("not at the optimum: the free gradient is non-zero (free_z = 4.2 > 3.0); train longer")


def test_a_stand_in_and_a_model_that_is_not_comparable_always_gate():
    v = _judge(_rec(StandIn("a toy corpus", "the paper's corpus", "the real corpus")), _table())
    assert v.reason.startswith("settings differ: a toy corpus stands in for the paper's corpus (the real corpus would")
    v = _judge(_rec(NotComparable("their model is another model")), _table())
    assert v.verdict == NOT_JUDGED and v.reason.startswith("not comparable: their model is another model")


def _screened(screen_effect: float | None, seeds: int = 5):
    """A screen record on part ``s`` and a dependant on part ``p`` (a clear effect); ``None``: no screen cell."""
    screen = _rec(cid="x/screen", where={"part": "s"})
    dependant = _rec(Screen("x/screen", "the premise holds"), cid="x/dependant")
    df = _table()
    if screen_effect is not None:
        df = pd.concat([df, _table(screen_effect, seeds).assign(part="s")], ignore_index=True)
    return judge_records([dependant, screen], Cfg(), df)  # the dependant first: the judge orders them itself


def test_a_screen_that_agrees_lets_its_dependants_be_judged():
    v = _screened(0.1)
    assert v["x/screen"].verdict == AGREES and v["x/dependant"].verdict == AGREES


def test_a_screen_that_does_not_agree_holds_its_dependants_back_naming_it():
    v = _screened(0.0)  # no harm: the screen disagrees (no effect of interest)
    assert v["x/screen"].verdict == DISAGREES
    d = v["x/dependant"]
    assert d.verdict == NOT_JUDGED and d.reason.startswith("screened out: `x/screen` (the premise holds) is disagrees")
    assert "(at these settings the test gave: agrees)" in d.reason
    two = _screened(0.1, seeds=2)  # two seeds: the screen is not judged (too few units), so are its dependants
    assert two["x/screen"].verdict == NOT_JUDGED and two["x/dependant"].verdict == NOT_JUDGED


def test_a_screen_whose_paper_settings_differ_lets_nothing_through():
    """The screen counts as the ledger shows it: an "agrees" that its paper settings make "not judged" screens out."""
    screen = dataclasses.replace(_rec(cid="x/screen", where={"part": "s"}), paper_settings={"steps": 500_000})
    dependant = _rec(Screen("x/screen"), cid="x/dependant")
    df = pd.concat([_table(), _table().assign(part="s")], ignore_index=True)
    v = judge_records([screen, dependant], Cfg(), df)
    assert v["x/screen"].verdict == AGREES  # judge_run puts the settings over it later
    d = v["x/dependant"]
    assert d.verdict == NOT_JUDGED and "is not judged (" in d.reason and "settings differ: steps = 30000" in d.reason


def test_a_missing_screen_cell_makes_its_dependants_not_measured_never_agrees():
    v = _screened(None)
    assert v["x/screen"].reason.startswith("not measured")
    d = v["x/dependant"]
    assert d.verdict == NOT_JUDGED and d.reason.startswith("not measured: its screen `x/screen` (the premise holds)")


def test_a_screen_that_is_not_declared_or_depends_on_its_dependant_is_a_judging_error():
    lone = _rec(Screen("x/absent"), cid="x/dependant")
    assert RAISED in _judge(lone, _table()).reason
    a = _rec(Screen("x/b"), cid="x/a")
    b = _rec(Screen("x/a"), cid="x/b")
    v = judge_records([a, b], Cfg(), _table())
    assert all(x.verdict == NOT_JUDGED for x in v.values()) and any(RAISED in x.reason for x in v.values())


# --- no paper package writes a verdict or refusal text ------------------------------------------------------------


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions (text for readers, not built)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _built_phrases(path: Path) -> list[str]:
    """``line: phrase`` for every string in the code of ``path`` (docstrings and comments aside) that holds a
    verdict or refusal phrase."""
    tree = ast.parse(path.read_text())
    skip = _docstrings(tree)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            hits += [f"{node.lineno}: {p!r}" for p in PHRASES if p in node.value.lower()]
    return hits


def test_no_paper_package_builds_a_verdict_or_refusal_text():
    packages = [EXPERIMENTS / p.rsplit(".", 1)[-1] for p in PAPER_PACKAGES]
    files = [f for pkg in packages for f in sorted(pkg.rglob("*.py"))]
    assert len(files) > 40  # the packages were found
    found = {str(f.relative_to(EXPERIMENTS)): h for f in files if (h := _built_phrases(f))}
    assert not found, f"verdict or refusal text built in a paper package (the judge writes it: _gates): {found}"


def test_the_phrase_finder_finds_a_built_phrase_and_skips_docstrings_and_comments(tmp_path):
    src = tmp_path / "x.py"
    src.write_text(
        '"""Not judged: a docstring."""\n# not measured\ndef f(x):\n    """settings differ"""\n    return 1\n'
    )
    assert _built_phrases(src) == []
    src.write_text('def f(x):\n    return f"settings differ: x = {x}"\n')
    assert _built_phrases(src) == ["2: 'settings differ'"]
