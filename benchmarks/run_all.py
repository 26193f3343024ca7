"""``make bench``: import every ``benchmarks/bench_*.py`` and call its ``main()``, one header per file.

A failing benchmark is reported and the others still run; the exit status is non-zero if any failed.
Run as ``python benchmarks/run_all.py [substring ...]`` to run only files whose name contains a substring (a
name ending in ``.py`` matches that file only), and with ``--smoke`` to call ``main(smoke=True)``: each benchmark
at a tiny size (what ``tests/test_benchmarks.py`` runs, so a benchmark that breaks fails the test suite; the
numbers of a smoke run mean nothing). With ``--record DIR`` each benchmark whose ``main()`` returns a dict of its
headline numbers writes them, with the commit, date, machine and load average, to ``DIR/<benchmark>.json``
(``docs/measured_records.py``; the docs quote ``docs/measured/``); a smoke run never records.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent / "docs"


def main(argv: list[str] | None = None) -> int:
    wanted = list(sys.argv[1:] if argv is None else argv)
    smoke = "--smoke" in wanted
    wanted = [w for w in wanted if w != "--smoke"]
    record = None
    if "--record" in wanted:
        at = wanted.index("--record")
        if smoke or at + 1 >= len(wanted):
            print("--record DIR: a folder for the records, and not with --smoke (a smoke run's numbers mean nothing)")
            return 2
        record = Path(wanted.pop(at + 1))
        wanted.pop(at)
        git = _records().git_state()  # the code measured, before any benchmark runs
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))  # modules import by their plain name (workers re-import them so)
    files = sorted(
        p
        for p in HERE.glob("bench_*.py")
        if not wanted or any(w == p.name if w.endswith(".py") else w in p.stem for w in wanted)
    )
    failed = []
    for path in files:
        print(f"\n=== {path.name} " + "=" * max(0, 60 - len(path.name)), flush=True)
        start, load = time.perf_counter(), os.getloadavg()
        try:
            module = importlib.import_module(path.stem)
            numbers = module.main(smoke=True) if smoke else module.main()
            if record is not None and isinstance(numbers, dict):
                _record(path.stem, numbers, load, time.perf_counter() - start, record, git)
        except BaseException as exc:  # noqa: BLE001 - keep going; SystemExit from a bench counts as a failure
            if isinstance(exc, KeyboardInterrupt):
                raise
            traceback.print_exc()
            failed.append(path.name)
        print(f"--- {path.name}: {time.perf_counter() - start:.1f} s", flush=True)
    print(
        f"\n{len(files) - len(failed)} of {len(files)} benchmarks ran"
        + (f"; FAILED: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


def _records():
    """``docs/measured_records.py``, which writes and checks the records."""
    if str(DOCS) not in sys.path:
        sys.path.insert(0, str(DOCS))
    import measured_records

    return measured_records


def _record(name: str, numbers: dict, load: tuple[float, ...], seconds: float, folder: Path, git) -> None:
    command = f"python benchmarks/run_all.py --record {folder} {name}"
    records = _records()
    path = records.write(records.benchmark_record(name, command, numbers, load, seconds, git), folder)
    print(f"recorded {path}")


if __name__ == "__main__":
    sys.exit(main())
