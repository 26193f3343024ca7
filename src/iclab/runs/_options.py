"""How a sweep runs: one frozen :class:`RunOptions`, validated once where it is made (``iclab run`` /
``iclab reproduce`` build it from their flags; a Python caller passes it or the same keywords), then handed
unchanged from the CLI through :func:`iclab.report.run_and_report`, :func:`iclab.experiments.run_experiment` and
:func:`iclab.runs.run_sweep` to the executor that :func:`iclab.runs.make_executor` makes from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable

from iclab.config import check_choice, check_int, check_positive
from iclab.errors import ConfigError

__all__ = ["RunOptions", "OnCell", "EXECUTORS", "check_address"]

EXECUTORS = ("serial", "local", "ray")
_ADDRESS_HELP = "HOST:PORT of a Ray head node's GCS (e.g. 127.0.0.1:6379), ray://HOST:PORT, or auto"

OnCell = Callable[[int, dict], None]  # on_cell(index in the grid, results row) of run_sweep

_FLAGS = ("force", "retry_failed", "progress", "budget_check")  # the booleans


@dataclass(frozen=True)
class RunOptions:
    """Everything about *how* one sweep runs (what it computes is the :class:`~iclab.runs.Sweep`).

    Fields (errors name the ``iclab run`` flag of each):
        executor: ``serial`` (in the driver), ``local`` (a pool of spawned processes, the default) or ``ray``.
        workers: worker processes (local) or cells in flight (ray); None: one per CPU (per GPU for CUDA cells).
        address: a Ray cluster (``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``); only with ``executor="ray"``.
        force: discard the results of another config (or an unreadable store) in the run folder.
        retry_failed: rerun cells that failed before (else they are read back as failed).
        progress: show a progress bar on stderr.
        cell_timeout: seconds after which a cell fails as timed out (None: no limit); the sweep goes on.
        budget_check: check the experiment's memory/time estimate of a cell against this machine.
        on_cell: ``on_cell(idx, row)`` hears of every cell with an outcome (see :func:`iclab.runs.run_sweep`).
    """

    executor: str = "local"
    workers: int | None = None
    address: str | None = None
    force: bool = False
    retry_failed: bool = False
    progress: bool = True
    cell_timeout: float | None = None
    budget_check: bool = True
    on_cell: OnCell | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        check_choice("--executor", self.executor, EXECUTORS)
        if self.workers is not None:
            check_int("--workers", self.workers)
        if self.cell_timeout is not None:
            check_positive("--cell-timeout", self.cell_timeout)
        if self.address is not None:
            if self.executor != "ray":
                raise ConfigError("--address", self.address, f"no address with --executor {self.executor} (it is for "
                                  "--executor ray)")
            check_address(self.address)
        for name in _FLAGS:
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(name, getattr(self, name), "True or False")
        if self.on_cell is not None and not callable(self.on_cell):
            raise ConfigError("on_cell", self.on_cell, "a function on_cell(idx, row) or None")

    @classmethod
    def of(cls, options: RunOptions | None = None, **changes: Any) -> RunOptions:
        """``options`` (default ``RunOptions()``) with the fields named in ``changes`` replaced: the one place where
        the keyword arguments of :func:`~iclab.experiments.run_experiment` and
        :func:`~iclab.report.run_and_report` become options. An unknown name is one ConfigError listing the fields."""
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(changes) - set(names))
        if unknown:
            raise ConfigError("run option", unknown[0], "one of " + ", ".join(names))
        if options is None:
            return cls(**changes)
        if not isinstance(options, RunOptions):
            raise ConfigError("options", options, "a RunOptions or None")
        return replace(options, **changes) if changes else options


def check_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``HOST:PORT`` or ``ray://HOST:PORT``; None for ``auto``; ConfigError otherwise."""
    if address == "auto":
        return None
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536 or any(c.isspace() for c in host):
        raise ConfigError("--address", address, _ADDRESS_HELP)
    return host, int(port)
