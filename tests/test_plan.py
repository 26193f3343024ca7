"""``iclab plan``: the sizes that would decide a run's undecided claims and their cost (issue 38).

A made-up run whose answer is known in closed form: ``fx_plan`` has one cell per seed, each giving a value built so
that the k values have mean μ and sample SD σ exactly, and one cell whose mean μ₂ has the standard error
σ₂/√n_prompts exactly. A direction test with smallest effect δ decides once its half-width falls below
``max(|μ|, δ − μ)``, so (the judge's rule, derived here independently) it needs
``n* = ⌈(t₀.₉₇₅(k−1)·σ / max(|μ|, δ − μ))²⌉`` seeds and ``⌈(z₀.₉₇₅·σ₂ / max(|μ₂|, δ₂ − μ₂))²⌉`` prompts. The cells'
seconds are set by hand, so each fresh run's cost is known too. Then the budget choice, the CLI's errors, the
budget parser (hypothesis), and ``iclab plan`` on every shipped reference.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from iclab.budget import MAX_DURATION, parse_duration
from iclab.cli import main
from iclab.config import Config
from iclab.errors import ConfigError
from iclab.experiments import Experiment, get_experiment, register, run_experiment
from iclab.claims._records import ClaimRecord, Measure, PilotMinimum, Rule, Setting, judge_records
from iclab.claims._statistics import within_units
from iclab.report import plan_sizes, reference_runs, rejudged_summary
from iclab.report._sizes import SIZED, choose_sizes, cost_note, size_claims

MU, SIGMA, DELTA, SEEDS = 0.1, 1.0, 0.5, 10
MU2, SIGMA2, DELTA2, PROMPTS = 0.2, 2.0, 0.1, 100
SEED_SECONDS, PROMPT_SECONDS = 2.0, 10.0


@dataclass(frozen=True)
class PlanConfig(Config):
    n_seeds: int = SEEDS
    n_prompts: int = PROMPTS
    seed: int = 0


def _cells(config: PlanConfig) -> list[dict]:
    return [{"part": "draw", "seed": s} for s in range(config.n_seeds)] + [{"part": "prompts", "seed": 0}]


def _run_cell(config: PlanConfig, cell: dict, shared) -> dict:
    if cell["part"] == "prompts":
        return {"mean": MU2, "se": SIGMA2 / math.sqrt(config.n_prompts)}
    i = np.arange(config.n_seeds, dtype=float)
    z = (i - i.mean()) / i.std(ddof=1)  # mean 0, sample SD 1 exactly
    return {"value": float(MU + SIGMA * z[cell["seed"]])}


def _claims(config: PlanConfig) -> list[ClaimRecord]:
    common = dict(source="made up", kind="effect direction")
    return [
        ClaimRecord(
            "seeds",
            "The mean over seeds is positive",
            **common,
            quantity="the value of one seed",
            measure=Measure({"part": "draw"}, "value", ("seed",)),
            rule=Rule("direction", smallest=DELTA),
        ),
        ClaimRecord(
            "prompts",
            "The mean over prompts is positive",
            **common,
            quantity="the mean over the cell's prompts",
            measure=Measure({"part": "prompts"}, "mean", ("seed",), se_column="se", combine=within_units()),
            rule=Rule("direction", smallest=DELTA2, n="n_prompts"),
        ),
        ClaimRecord(
            "settings",
            "Judged only at the paper's seeds",
            **common,
            quantity="the value of one seed",
            paper_settings={"n_seeds": 999},
            measure=Measure({"part": "draw"}, "value", ("seed",)),
            rule=Rule("direction", smallest=DELTA),
        ),
        ClaimRecord(
            "unreliable",
            "A second-hand number",
            **common,
            quantity="the value of one seed",
            unreliable="a summary, not the paper",
            measure=Measure({"part": "draw"}, "value", ("seed",)),
            rule=Rule("direction", smallest=DELTA),
        ),
    ]


register(
    Experiment(
        name="fx_plan",
        paper="fixture",
        title="a run whose deciding sizes are known in closed form",
        claim="",
        config_cls=PlanConfig,
        presets={"quick": PlanConfig(), "full": PlanConfig()},
        cells=_cells,
        run_cell=_run_cell,
        figures=lambda config, results, figure_dir: [],
        compare=lambda config, results: judge_records(_claims(config), config, results),
        claims=_claims,
    )
)


def _seeds_needed() -> int:
    t = sps.t.ppf(0.975, SEEDS - 1)
    return math.ceil((t * SIGMA / max(abs(MU), DELTA - MU)) ** 2)


def _prompts_needed() -> int:
    z = sps.norm.ppf(0.975)
    return math.ceil((z * SIGMA2 / max(abs(MU2), DELTA2 - MU2)) ** 2)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("plan") / "fx_plan"
    run_experiment("fx_plan", "quick", out=out, executor="serial", progress=False)
    with sqlite3.connect(out / "results.sqlite") as db:  # known seconds per cell: the costs are closed forms too
        db.execute(
            "UPDATE cells SET seconds = CASE json_extract(cell, '$.part') WHEN 'draw' THEN ? ELSE ? END",
            (SEED_SECONDS, PROMPT_SECONDS),
        )
    return out


def _by_id(plan) -> dict:
    return {c.id: c for c in plan.claims}


def test_the_closed_forms_are_what_the_fixture_gives():
    assert (_seeds_needed(), _prompts_needed()) == (32, 385)  # t(9) = 2.262: (2.262 / 0.4)² = 31.98


def test_the_plan_finds_each_size_its_field_and_its_cost(run_dir):
    plan = plan_sizes(run_dir)
    c = _by_id(plan)
    assert plan.seconds == pytest.approx(SEEDS * SEED_SECONDS + PROMPT_SECONDS)
    seeds, prompts = c["seeds"], c["prompts"]
    assert (seeds.status, seeds.n, seeds.needed, seeds.field, seeds.value) == (SIZED, SEEDS, 32, "n_seeds", 32)
    assert seeds.adds_cells and seeds.override == "n_seeds=32"
    assert seeds.seconds == pytest.approx(32 * SEED_SECONDS + PROMPT_SECONDS)  # new cells at their part's mean
    assert (prompts.status, prompts.n, prompts.needed, prompts.field) == (SIZED, PROMPTS, 385, "n_prompts")
    assert not prompts.adds_cells and prompts.value == 385
    assert prompts.seconds == pytest.approx(SEEDS * SEED_SECONDS + PROMPT_SECONDS * 385 / PROMPTS)  # inside a cell
    assert c["settings"].status == c["unreliable"].status == "not for samples"
    assert c["unreliable"].why == "unreliable source" and c["settings"].why.startswith("settings differ")


def test_a_reference_costs_its_recorded_cpu_time_not_its_cells_wall_time(run_dir, tmp_path):
    """A shipped reference records its CPU time (the whole process, timed): cells that shared their cores took longer
    than they computed, so every cost is the cells' seconds times CPU over their sum (here 0.5); without a record, or
    with an unreadable one, the cells' seconds stand."""
    import json
    import shutil

    folder = tmp_path / "fx_plan"
    shutil.copytree(run_dir, folder)
    cells = SEEDS * SEED_SECONDS + PROMPT_SECONDS
    (folder / "reference.json").write_text(json.dumps({"cpu_seconds": cells / 2}))
    plan = plan_sizes(folder)
    c = _by_id(plan)
    assert plan.cpu_scale == pytest.approx(0.5) and plan.seconds == pytest.approx(cells / 2)
    assert c["seeds"].seconds == pytest.approx((32 * SEED_SECONDS + PROMPT_SECONDS) / 2)
    assert c["prompts"].seconds == pytest.approx((SEEDS * SEED_SECONDS + PROMPT_SECONDS * 385 / PROMPTS) / 2)
    hours = (32 * SEED_SECONDS + PROMPT_SECONDS) / 2 / 3600
    reason = {r["id"]: r for r in rejudged_summary(folder, get_experiment("fx_plan"))["comparisons"]}["seeds"]["reason"]
    assert reason.endswith(f"a fresh run ≈ {hours:.2g} h CPU at this run's seconds per cell)"), reason
    for record in ('{"cpu_seconds": null}', '{"cpu_seconds": -3}', "not json"):
        (folder / "reference.json").write_text(record)
        assert plan_sizes(folder).seconds == pytest.approx(cells), record


def test_the_judge_carries_its_count_as_data(run_dir):
    rows = {r["id"]: r for r in rejudged_summary(run_dir, get_experiment("fx_plan"))["comparisons"]}
    assert rows["seeds"]["test_record"]["needed"] == _seeds_needed()
    assert rows["prompts"]["test_record"]["needed"] == _prompts_needed()
    assert "about 32 samples (now 10)" in rows["seeds"]["reason"]


def test_a_power_limited_reason_names_its_override_and_cpu_hours(run_dir):
    """Issue 38, item 4: the reason the reports show ends with the size, the field and the hours."""
    rows = {r["id"]: r for r in rejudged_summary(run_dir, get_experiment("fx_plan"))["comparisons"]}
    hours = (32 * SEED_SECONDS + PROMPT_SECONDS) / 3600
    assert rows["seeds"]["reason"].endswith(
        f"; plan: --set n_seeds=32 (32 units; a fresh run ≈ {hours:.2g} h CPU at this run's seconds per cell)"
    )
    assert "plan:" not in rows["unreliable"]["reason"]


def shifted(rows):
    """The seeds' values moved to a clear effect (mean 5.1, SD 1): the test decides from 10 seeds."""
    return rows["value"].to_numpy(float) + 5.0


def test_a_claim_short_of_its_minimum_from_a_pilot_is_sized_to_that_minimum(run_dir):
    """Issue 43: the test agrees from 10 seeds, but the claim declares 15 (fixed from a pilot): "too few units", and
    the plan asks for 15 seeds — at least, the minimum — at its cost. Under another gate too, it is not for samples."""
    import dataclasses

    from iclab.experiments import load_run

    def record(cid, *gates):
        return ClaimRecord(
            cid, "The shifted mean is positive", source="made up", kind="effect direction", quantity="a seed's value",
            measure=Measure({"part": "draw"}, shifted, ("seed",), gates=gates), rule=Rule("direction", smallest=DELTA),
        )  # fmt: skip

    recs = [record("minimum", PilotMinimum(15, "a pilot run")),
            record("other", Setting("n_seeds", minimum=999), PilotMinimum(15, "a pilot run"))]  # fmt: skip
    run = load_run(run_dir)
    verdicts = judge_records(recs, run.config, run.results)
    assert verdicts["minimum"].reason.startswith("too few units: 10 of the 15 seeds its test needs (the minimum, fixed")
    assert verdicts["minimum"].reason.endswith("(at these settings the test gave: agrees)")
    rows = [
        {"id": k, "verdict": v.verdict, "reason": v.reason, "test_record": v.test_record} for k, v in verdicts.items()
    ]
    exp = dataclasses.replace(get_experiment("fx_plan"), claims=lambda config: recs)
    plan = {c.id: c for c in size_claims(exp, run.config, run.results, rows).claims}
    m = plan["minimum"]
    assert (m.status, m.n, m.needed, m.at_least, m.field, m.value) == (SIZED, SEEDS, 15, True, "n_seeds", 15), m
    assert cost_note(m).startswith("plan: --set n_seeds=15 (at least 15 units; a fresh run ≈"), cost_note(m)
    assert plan["other"].status == "not for samples" and not cost_note(plan["other"])


def test_a_minimum_of_units_is_sized_in_units_when_the_test_counts_samples_inside_them(run_dir):
    """A gate counts units (here the 10 seeds, under a minimum of 15) while its test counts samples inside them (made
    up: 100, and power needs 385): the plan sizes the units, k' = max(15, ⌈10 · 385 / 100⌉) = 39 seeds — so the
    samples grow with them — never the test's n against the minimum (100 ≥ 15 read as "enough units", so "not for
    samples", as it was for dispersion's lookup/kv/smollm2: 392 questions in 8 of the 10 lists it needs)."""
    import dataclasses

    from iclab.experiments import load_run

    gate = PilotMinimum(15, "a pilot run")
    rec = ClaimRecord(
        "within", "The mean over prompts is positive", source="made up", kind="effect direction",
        quantity="a seed's mean over prompts", measure=Measure({"part": "draw"}, "value", ("seed",), gates=(gate,)),
        rule=Rule("direction", smallest=DELTA, n="n_prompts"),
    )  # fmt: skip
    run = load_run(run_dir)
    why = "too few units: 10 of the 15 seeds its test needs (the minimum, …); a run with 15 would judge it"
    record = {"judge": "direction", "n": 100, "needed": 385, "verdict": "not judged", "gate": why, "units": 10}
    row = {"id": "within", "verdict": "not judged", "reason": f"{why}; too little power", "test_record": record}
    exp = dataclasses.replace(get_experiment("fx_plan"), claims=lambda config: [rec])
    (c,) = size_claims(exp, run.config, run.results, [row]).claims
    assert (c.status, c.n, c.needed, c.at_least, c.field, c.value) == (SIZED, 10, 39, False, "n_seeds", 39), c
    old = size_claims(exp, run.config, run.results, [{**row, "test_record": {**record, "units": None}}]).claims[0]
    assert old.status == "not for samples"  # a record without the gate's count: its n reads as enough units
    judged = judge_records([dataclasses.replace(rec, rule=Rule("direction", smallest=DELTA))], run.config, run.results)
    assert judged["within"].test_record["units"] == 10  # the judge writes the count the gate read


@pytest.mark.parametrize(
    "budget, bought",
    [
        (10.0, []),  # not even the run as it is
        (60.0, ["prompts"]),  # 58.5 s
        (80.0, ["prompts"]),  # the seeds alone would fit (74 s), both together (102.5 s) do not: cheapest first
        (200.0, ["prompts", "seeds"]),
    ],
)
def test_the_budget_buys_the_cheapest_claims_that_fit_together(run_dir, budget, bought):
    choice = choose_sizes(plan_sizes(run_dir), budget)
    assert choice.bought == bought
    want = {"prompts": ("n_prompts", 385), "seeds": ("n_seeds", 32)}
    assert choice.overrides == dict(want[b] for b in bought)
    n_seeds = 32 if "seeds" in bought else SEEDS
    prompts = 385 if "prompts" in bought else PROMPTS
    assert choice.seconds == pytest.approx(n_seeds * SEED_SECONDS + PROMPT_SECONDS * prompts / PROMPTS)


def test_the_command_prints_the_table_and_the_overrides(run_dir, tmp_path, capsys):
    out = tmp_path / "plan.csv"
    assert main(["plan", str(run_dir), "--budget", "1m", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "--set n_prompts=385" in text and "--set n_seeds" not in text and "unreliable source" in text
    import pandas as pd

    table = pd.read_csv(out)
    assert list(table["claim"]) == ["seeds", "prompts", "settings", "unreliable"]
    assert main(["plan", str(run_dir), "--out", str(out)]) == 2  # exists: --force replaces it
    assert "--force" in capsys.readouterr().err
    assert main(["plan", str(run_dir), "--out", str(out), "--force"]) == 0


@pytest.mark.parametrize("budget", ["3 parsecs", "3", "", "0h", "-1h", "h"])
def test_a_bad_budget_is_one_error_line(run_dir, budget, capsys):
    assert main(["plan", str(run_dir), "--budget", budget]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: invalid --budget=") and "Traceback" not in err and err.count("\n") == 1


def test_a_folder_that_is_not_a_run_is_one_error_line(tmp_path, capsys):
    assert main(["plan", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err


@given(st.integers(0, 500), st.integers(0, 500), st.integers(0, 5000))
def test_a_duration_in_parts_is_their_sum(h, m, s):
    seconds = h * 3600 + m * 60 + s
    text = "".join(f"{v}{u}" for v, u in ((h, "h"), (m, "m"), (s, "s")) if v) or "0s"
    if seconds == 0:
        with pytest.raises(ConfigError):
            parse_duration("--budget", text)
    else:
        assert parse_duration("--budget", text) == seconds
        assert parse_duration("--budget", " ".join(text.upper().split())) == seconds


@given(st.floats(0.001, 1e4, allow_nan=False), st.sampled_from(["s", "m", "h", "d", "hours", "min"]))
def test_a_decimal_duration_reads_back(x, unit):
    per = {"s": 1, "m": 60, "min": 60, "h": 3600, "hours": 3600, "d": 86400}[unit]
    assert parse_duration("--budget", f"{x!r}{unit}") == pytest.approx(x * per)


@given(st.text(max_size=30))
def test_any_text_is_a_duration_or_one_config_error(text):
    try:
        seconds = parse_duration("--budget", text)
    except ConfigError as exc:
        assert "--budget" in str(exc)
    else:
        assert 0 < seconds <= MAX_DURATION


@pytest.mark.parametrize("experiment", sorted(reference_runs()))
def test_plan_runs_on_every_shipped_reference_and_lists_every_claim(experiment, capsys):
    folder = reference_runs()[experiment]
    plan = plan_sizes(folder)
    exp = get_experiment(experiment)
    from iclab.experiments import load_run

    assert [c.id for c in plan.claims] == [c.id for c in exp.claims(load_run(folder).config)]
    assert plan.seconds > 0
    for c in plan.claims:  # a sized claim has a field, a larger value and a cost; every other says why
        assert (c.status == SIZED) == bool(c.override)
        if c.status == SIZED:
            assert c.value > c.now and c.seconds > 0
        elif c.status != "decided":
            assert c.why
    assert main(["plan", str(folder), "--budget", "4h"]) == 0
    assert "within --budget 4 h" in capsys.readouterr().out


def test_a_size_the_experiment_cannot_run_is_no_size_naming_why():
    """The paper preset's antonym has 874 items, 262 of them kept for the screen's 256 questions and 6
    demonstrations: a claim of the shipped reference that needs more than 612 questions does not fit. The plan passes
    each override through the experiment's own pre-run checks (its ``budget``), so it is "no size decides" with the
    check's message, never a ``--set`` that the run would refuse (or, before that check, quietly run with fewer
    questions). (The screen's own limit, refused on ``screen_questions`` rather than as a negative n_questions, is
    tested in tests/test_experiment_temperature_llm.py: the shipped reference's screens are decided.)"""
    folder = reference_runs()["temperature-llm"]
    claims = plan_sizes(folder).claims
    too_many = [c for c in claims if c.needed and c.needed > 612 and c.why.startswith("n_questions=")]
    assert too_many, [(c.id, c.status, c.needed, c.why) for c in claims]
    for c in too_many:
        assert c.status != SIZED and f"n_questions={c.needed} is refused" in c.why, c
        assert "at most 612 for task 'antonym' (874 items" in c.why, c
