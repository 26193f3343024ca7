"""Write section 7 of ``docs/calibration.md``: every claim of every shipped reference run calibrated at the level of
its result rows (:mod:`iclab.claims._calibrate_rows`, issue 43 item 2) — its units resampled and shifted to
the claim's least favourable truth, judged through the run's own code path, with all units, one unit lost and one
cell failed.

    python docs/gen_calibration_rows.py           # rewrite the block (make docs-gen)
    python docs/gen_calibration_rows.py --check   # exit 1 when the block is out of date
    python docs/gen_calibration_rows.py --jobs 2  # experiments side by side (the same rows)

The block lies between ``<!-- calibration-rows:begin -->`` and ``<!-- calibration-rows:end -->``. Its output depends
only on the code and the reference runs (each claim's draws are seeded by seed 0, its experiment and its id), so a
test can regenerate any claim's row alone and compare (``tests/test_calibration_rows.py``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import doc_blocks  # noqa: E402 - splicing a generated block between its markers
from iclab.experiments import Experiment, load_run, paper_experiments  # noqa: E402
from iclab.claims._calibrate_rows import NOMINAL, RowCalibration, calibrate_records  # noqa: E402
from iclab.report._reference import reference_runs  # noqa: E402
from iclab.claims._resample import within_nominal  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BEGIN = "<!-- calibration-rows:begin -->"
END = "<!-- calibration-rows:end -->"
FILE = "docs/calibration.md"
DRAWS = 1000  # per claim, truth and setting (issue 43: at least 1 000); the MC SE of a 5 % rate is 0.7 points
SETTINGS = ("all units", "one unit lost", "one cell failed")
REGENERATE = "out of date: run python docs/gen_calibration_rows.py (make docs-gen)"


def records_and_rows(exp: Experiment, folder: Path):
    """The records ``exp`` declares for the reference run in ``folder``, its config and the rows they read."""
    run = load_run(folder)
    module = importlib.import_module(f"{exp.compare.package}.claims")
    derive = getattr(module, "judged_rows", None)
    rows = run.results if derive is None else derive(run.config, run.results)
    return module.claims(run.config), run.config, rows


def experiment_rows(exp: Experiment, folder: Path, draws: int = DRAWS, only: set[str] | None = None):
    """The :class:`RowCalibration` of every claim of ``exp``'s reference in ``folder`` (or of the claims ``only``)."""
    records, config, rows = records_and_rows(exp, folder)
    planned = exp.compare.planned(config)
    return calibrate_records(
        records, config, rows, experiment=exp.name, draws=draws, seed=0, planned=planned, only=only
    )


def _experiment_rows_by_name(name: str, draws: int) -> list[RowCalibration]:
    """:func:`experiment_rows` of the experiment ``name``'s shipped reference (a worker process's task)."""
    from iclab.experiments import get_experiment

    return experiment_rows(get_experiment(name), reference_runs()[name], draws)


def all_rows(draws: int = DRAWS, jobs: int = 1) -> list[RowCalibration]:
    """Every claim of every shipped reference, experiments in the registry's order; ``jobs`` worker processes
    calibrate experiments side by side (each claim's draws are seeded by its own id, so the rows are the same)."""
    shipped = reference_runs()
    names = [e.name for e in paper_experiments() if e.name in shipped and hasattr(e.compare, "package")]
    if jobs <= 1:
        return [c for name in names for c in _experiment_rows_by_name(name, draws)]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        parts = list(pool.map(_experiment_rows_by_name, names, [draws] * len(names)))
    return [c for part in parts for c in part]


def table_line(c: RowCalibration) -> str:
    """One claim's row of the table."""

    def rate(s: str) -> str:
        if s not in c.rates:
            return "—"
        r = c.rates[s]
        text = f"{r:.1%} ± {c.mc_se(s):.1%}"
        return text if within_nominal(r, c.draws) else f"**{text}**"

    passes = "—" if c.passes is None else ("yes" if c.passes else "**no**")
    truth = c.truth or c.why
    if c.as_run:  # the test alone was over the line: simulated again as a run judges it
        truth += f"; as a run judges it, small-sample gate included (the test alone: {c.alone:.1%})"
    if c.minimum > c.units:  # its declared minimum, fixed from this run as pilot, refuses every draw
        truth += f"; it needs {c.minimum} units, a minimum fixed from this run as pilot: {c.units} are too few"
    return (
        f"| `{c.experiment}` | `{c.claim}` | {c.test} | {c.units} | {c.verdict} | {truth.replace('|', '/')} | "
        + " | ".join(rate(s) for s in SETTINGS)
        + f" | {passes} |"
    )


def _category(why: str) -> str:
    """The kind of reason a claim was not simulated, for the block's count: the reason's first clause (a verdict
    without a test: the verdict's own first clause)."""
    head = "the run's verdict has no test ("
    if why.startswith(head):
        return f"no test in the run's verdict ({why[len(head) :].split(':')[0]})"
    return why.split(":")[0]


def block(rows: list[RowCalibration], draws: int = DRAWS) -> str:
    simulated = [c for c in rows if c.rates]
    over = [c for c in simulated if not c.passes]
    gated = [c for c in simulated if c.as_run]
    short = [c for c in rows if c.minimum > c.units]
    why: dict[str, int] = {}
    for c in rows:
        if not c.rates:
            why[_category(c.why)] = why.get(_category(c.why), 0) + 1
    lines = [
        "",
        f"{len(rows)} claims of the shipped reference runs; {len(simulated)} simulated at the level of their rows, "
        f"{draws:,} draws per truth and setting; {len(over)} over {NOMINAL:.0%} + 2 Monte Carlo SE in some setting"
        + (": " + ", ".join(f"`{c.experiment}` `{c.claim}`" for c in over) if over else "")
        + (
            f". {len(gated)} over it with the test alone were simulated again as a run judges them (the small-sample "
            "gate included): " + ", ".join(f"`{c.experiment}` `{c.claim}`" for c in gated)
            if gated
            else ""
        )
        + (
            f". {len(short)} declare a minimum of units fixed from their reference run as pilot "
            "(`docs/pilot_minimums.py`) that its units do not reach, so no draw agrees: "
            + ", ".join(f"`{c.experiment}` `{c.claim}` ({c.units} of {c.minimum})" for c in short)
            if short
            else ""
        )
        + ". Not simulated: "
        + "; ".join(f"{k} ({v})" for k, v in sorted(why.items(), key=lambda kv: -kv[1]))
        + ".",
        "",
        "| experiment | claim | test | units | reference verdict | least favourable truth (or why not simulated) "
        "| all units | one unit lost | one cell failed | passes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [table_line(c) for c in rows]
    return "\n".join(lines) + "\n"


def splice(text: str, value: str, path: Path) -> str:
    return doc_blocks.splice(text, BEGIN, END, value, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the block is out of date")
    parser.add_argument("--jobs", type=int, default=1, help="experiments calibrated side by side (processes)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs {args.jobs}: expected a whole number of processes, 1 or more")
    generated = {FILE: block(all_rows(jobs=args.jobs))}
    if args.check:
        out = doc_blocks.stale(generated, splice, ROOT)
        for name in out:
            print(f"{name}: out of date; run python docs/gen_calibration_rows.py", file=sys.stderr)
        return 1 if out else 0
    for name in doc_blocks.write(generated, splice, ROOT):
        print(f"rewrote {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
