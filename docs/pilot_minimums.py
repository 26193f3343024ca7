"""Compute a claim's minimum of units from the shipped reference run as pilot (issue 43;
:func:`iclab.claims._pilot.pilot_minimum_units`): once, by hand, before the number is written in the claim's record
as a :class:`~iclab.claims._gates.PilotMinimum` gate — never while a run is judged.

    python docs/pilot_minimums.py                            # every record that declares a PilotMinimum
    python docs/pilot_minimums.py ood:alpha-star-vs-gd ...   # these claims (EXPERIMENT:CLAIM)

Prints one JSON line per claim (the pilot's units, the minimum, whether the search hit its cap, the worst truth,
its rate at the minimum and on the confirming draws, the rate of every count tried, the counts that passed
once but not on fresh draws) and, for a record that declares a
minimum, whether the declared number is the computed one. 1 000 draws per count and truth (the row-level
calibration's); a minute to a quarter of an hour per claim on one core.

A declared minimum stays what its pilot gave until a newer reference's row-level calibration finds the claim over the
line (``docs/gen_calibration_rows.py``); then the minimum is computed again from that reference. A minimum only
refuses ("too few units"), never makes a claim agree, so it gates the reference it came from as well, and sizes the
next fresh run. Each record names the run its minimum came from (``PILOT``, ``PILOT_2``, …); an earlier pilot's files
are in the git history of ``src/iclab/reference/``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_calibration_rows import DRAWS, records_and_rows  # noqa: E402 - the docs' reader of a reference run
from iclab.claims._gates import PilotMinimum  # noqa: E402
from iclab.claims._pilot import CAP, pilot_minimum_units  # noqa: E402
from iclab.experiments import get_experiment  # noqa: E402
from iclab.report._reference import reference_runs  # noqa: E402


def declared_minimums() -> list[str]:
    """``EXPERIMENT:CLAIM`` of every record of a shipped reference run that declares a PilotMinimum."""
    out = []
    for name, folder in reference_runs().items():
        exp = get_experiment(name)
        if not hasattr(exp.compare, "package"):
            continue
        records, _, _ = records_and_rows(exp, folder)
        out += [f"{name}:{r.id}" for r in records if any(isinstance(g, PilotMinimum) for g in r.measure.gates)]
    return out


def search(experiment: str, claim: str, draws: int = DRAWS, cap: int = CAP) -> dict:
    """The search for ``claim`` of ``experiment``'s shipped reference run, as a JSON-ready dict."""
    exp = get_experiment(experiment)
    records, config, rows = records_and_rows(exp, reference_runs()[experiment])
    rec = next(r for r in records if r.id == claim)
    start = time.time()
    s = pilot_minimum_units(
        rec, config, rows, experiment=experiment, planned=exp.compare.planned(config), draws=draws, cap=cap
    )
    declared = [g.minimum for g in rec.measure.gates if isinstance(g, PilotMinimum)]
    return {
        "experiment": experiment,
        "claim": claim,
        "units": s.units,
        "minimum": s.minimum,
        "capped": s.capped,
        "draws": s.draws,
        "truth": s.truth,
        "rate": s.rate,
        "mc_se": s.mc_se(s.rate),
        "confirmed": s.confirmed,
        "declared": declared[0] if declared else None,
        "seconds": round(time.time() - start, 1),
        "rates": s.rates,
        "rejected": s.rejected,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("claims", nargs="*", help="EXPERIMENT:CLAIM (default: every record declaring a minimum)")
    parser.add_argument("--draws", type=int, default=DRAWS)
    parser.add_argument("--cap", type=int, default=CAP)
    args = parser.parse_args(argv)
    differ = 0
    for item in args.claims or declared_minimums():
        experiment, claim = item.split(":", 1)
        out = search(experiment, claim, args.draws, args.cap)
        differ += out["declared"] is not None and out["declared"] != out["minimum"]
        print(json.dumps(out), flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
