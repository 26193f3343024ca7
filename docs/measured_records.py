"""Records of measured runs, the only source of the performance numbers the README and the docs quote.

A record is one JSON file in ``docs/measured/``: what was run (``command``), on which code (``commit``, and
``dirty`` when tracked files under ``src/`` or ``benchmarks/`` had uncommitted changes), when (``date``, UTC), on
which machine (``machine``: CPU model, cores, GPU or ``"none"``, and ``os.getloadavg()`` at the start and the end,
so a run on a loaded machine says so), the ``numbers`` it measured, and ``sources``: where each part of the record
was read from. Two kinds:

* ``benchmark``: written by ``python benchmarks/run_all.py --record docs/measured NAME`` from the dict of headline
  numbers the benchmark's ``main()`` returns (a ``--smoke`` run never records);
* ``make-run``: built from a finished ``make run`` (``iclab reproduce --quick``) by
  ``python docs/measured_records.py make-run RUNS_DIR [--log LOG]``: per experiment the quick run's wall and cell
  seconds from ``RUNS_DIR/<experiment>-quick/summary.json``, commit and dates from its ``config.json``, and, from a
  ``make run`` log whose every line starts with the seconds since the start (``--log``), the install and reproduce
  steps' wall seconds and the CPU time ``/usr/bin/time -v`` reported.

``load(path)`` checks a record: a missing field, a NaN or an infinity is one ``ConfigError`` naming the file and the
field. ``docs/gen_measured.py`` turns the records into the sentences of the docs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

from iclab.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "docs" / "measured"
KINDS = ("benchmark", "make-run")
FIELDS = ("name", "kind", "command", "commit", "dirty", "date", "machine", "numbers", "sources")
MACHINE_FIELDS = ("cpu", "cores", "gpu", "load_start", "load_end")


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (``"unknown"`` where there is none)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    found = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    return found.group(1).strip() if found else "unknown"


def gpu_name() -> str:
    """The first CUDA device's name, or ``"none"``."""
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"


def machine(load_start: tuple[float, ...] | None) -> dict:
    """The machine this process runs on, with the load average at the start (given) and now."""
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "gpu": gpu_name(),
        "load_start": None if load_start is None else [round(x, 2) for x in load_start],
        "load_end": [round(x, 2) for x in os.getloadavg()],
    }


def git_state(root: Path = ROOT, paths: tuple[str, ...] = ("src", "benchmarks")) -> tuple[str, bool]:
    """``(commit, dirty)`` of the checkout at ``root``: HEAD, and whether tracked files under ``paths`` (the code
    that is measured) differ from it."""
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    status = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", *paths],
        capture_output=True,
        text=True,
    )
    return (head.stdout.strip() or "unknown"), bool(status.stdout.strip())


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def benchmark_record(
    name: str, command: str, numbers: dict, load_start: tuple[float, ...], seconds: float, git: tuple[str, bool]
) -> dict:
    """The record of one benchmark run that just finished in this process, on the code ``git`` (``git_state()``
    when the run started; module docstring)."""
    commit, dirty = git
    return {
        "name": name,
        "kind": "benchmark",
        "command": command,
        "commit": commit,
        "dirty": dirty,
        "date": now(),
        "machine": machine(load_start),
        "seconds": seconds,
        "numbers": numbers,
        "sources": {"numbers": f"the dict benchmarks/{name}.py's main() returned", "machine": "this process"},
    }


def _bad_numbers(value: object, where: str) -> str | None:
    """The first place in ``value`` holding a NaN or an infinity, or ``None``."""
    if isinstance(value, float) and not math.isfinite(value):
        return where
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        bad = _bad_numbers(item, f"{where}.{key}")
        if bad:
            return bad
    return None


def check(record: dict, path: Path | str) -> dict:
    """``record`` if it has every field and only finite numbers; else one ``ConfigError`` naming file and field."""
    missing = [f for f in FIELDS if f not in record] + [
        f"machine.{f}" for f in MACHINE_FIELDS if f not in (record.get("machine") or {})
    ]
    if missing:
        raise ConfigError(
            missing[0], message=f"{path}: field {missing[0]!r} is missing (a record has {', '.join(FIELDS)})"
        )
    if record["kind"] not in KINDS:
        raise ConfigError(f"{path}: kind", record["kind"], " or ".join(KINDS))
    bad = _bad_numbers(record, "record")
    if bad:
        field = bad.removeprefix("record.")
        raise ConfigError(field, message=f"{path}: field {field!r} is not a finite number (NaN or infinity)")
    return record


def load(path: Path | str) -> dict:
    """The checked record in ``path`` (NaN and infinity parse, then fail the check)."""
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError("record", str(path), message=f"{path}: not a readable JSON record ({exc})") from None
    return check(record, path)


def load_all(folder: Path = FOLDER) -> dict[str, dict]:
    """``{name: record}`` of every ``*.json`` in ``folder``."""
    return {p.stem: load(p) for p in sorted(Path(folder).glob("*.json"))}


def write(record: dict, folder: Path | str) -> Path:
    """Check ``record`` and write it to ``folder/<name>.json`` (replacing the previous record of that name)."""
    path = Path(folder) / f"{record['name']}.json"
    check(record, path)
    Path(folder).mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
    return path


LOG_LINE = re.compile(r"^\s*(\d+(?:\.\d+)?) (.*)$")


def log_steps(log: Path) -> dict:
    """Seconds of the install and reproduce steps of a timed ``make run`` log, and its CPU seconds.

    install: from the first line to the ``iclab reproduce --quick`` line; reproduce: from that line to the line
    where ``/usr/bin/time`` reports the end (``Command being timed``), else the last line; per experiment: see
    ``experiment_steps``."""
    lines = [(float(m.group(1)), m.group(2)) for m in map(LOG_LINE.match, log.read_text().splitlines()) if m]
    start = next((t for t, text in lines if "iclab reproduce --quick" in text), None)
    if not lines or start is None:
        raise ConfigError("--log", str(log), "a `make run` log, every line prefixed with seconds since the start")
    end = next((t for t, text in lines if "Command being timed" in text), lines[-1][0])
    out = {"install_s": round(start - lines[0][0], 1), "reproduce_s": round(end - start, 1)}
    out["experiments_s"] = experiment_steps(lines)
    times = {k: next((float(x.split(":")[-1]) for _, x in lines if k in x), None) for k in ("User time", "System time")}
    if None not in times.values():
        out["make_run_cpu_s"] = round(times["User time"] + times["System time"], 2)
    return out


def experiment_steps(lines: list[tuple[float, str]]) -> dict[str, float]:
    """Wall seconds of each experiment in the log: from its ``== NAME (quick)`` line to the next experiment's, the
    last one to the ``report:`` line (the experiment's whole step: shared set-up such as training included)."""
    marks = [(t, m.group(1)) for t, text in lines if (m := re.match(r"== (\S+) \(quick\)", text))]
    report = next((t for t, text in lines if text.startswith("report: ")), lines[-1][0])
    ends = [t for t, _ in marks[1:]] + [report]
    return {name: round(end - t, 1) for (t, name), end in zip(marks, ends)}


def make_run_record(runs: Path, log: Path | None = None) -> dict:
    """The ``make-run`` record of the finished runs folder ``runs`` (and its timed log; module docstring)."""
    experiments, commits, created = {}, set(), []
    for folder in sorted(Path(runs).glob("*-quick")):
        summary = json.loads((folder / "summary.json").read_text())
        config = json.loads((folder / "config.json").read_text())
        experiments[summary["experiment"]] = {
            "wall_s": summary["wall_seconds"],
            "cell_s": summary["cell_seconds"],
            "cells": summary["cells"]["done"],
            "failed": summary["cells"]["failed"],
        }
        commits.add(config["git_revision"])
        created.append(config["created"])
    if not experiments or len(commits) != 1:
        raise ConfigError("RUNS_DIR", str(runs), "a finished `make run` runs folder (quick runs of one commit)")
    numbers = {"experiments": experiments, **(log_steps(log) if log else {})}
    sources = {
        "numbers.experiments": f"{runs}/<experiment>-quick/summary.json (wall_seconds, cell_seconds, cells)",
        "commit, date": f"{runs}/<experiment>-quick/config.json (git_revision; the earliest created)",
        "machine": "the machine that builds the record (run it where `make run` ran); load average not in the runs",
    }
    if log:
        sources["numbers.install_s, reproduce_s, experiments_s, make_run_cpu_s"] = (
            f"{Path(log).name}: the seconds prefixes of its lines (install: to the `iclab reproduce --quick` line; "
            "reproduce: from it to `Command being timed`; per experiment: from its `== NAME (quick)` line to the "
            "next, the last to `report:`); CPU: User + System time of /usr/bin/time -v (install included)"
        )
    return {
        "name": "make-run",
        "kind": "make-run",
        "command": "make run (iclab reproduce --quick)",
        "commit": commits.pop(),
        "dirty": False,
        "date": min(dt.datetime.strptime(c, "%Y-%m-%dT%H:%M:%S%z") for c in created)
        .astimezone(dt.timezone.utc)
        .strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(None) | {"load_end": None},
        "numbers": numbers,
        "sources": sources,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    mk = sub.add_parser("make-run", help="record a finished `make run` from its runs folder (and timed log)")
    mk.add_argument("runs", type=Path, help="the runs folder `make run` wrote (runs/)")
    mk.add_argument("--log", type=Path, help="the `make run` log, each line prefixed with seconds since the start")
    mk.add_argument("--out", type=Path, default=FOLDER, help="folder of the records (default docs/measured)")
    args = parser.parse_args(argv)
    try:
        print(f"wrote {write(make_run_record(args.runs, args.log), args.out)}")
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
