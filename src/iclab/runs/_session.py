"""Which executor a sweep runs on, and a block of sweeps that share their processes (``iclab reproduce``).

:func:`make_executor` builds the executor that :class:`~iclab.runs.RunOptions` names. Inside :func:`kept_workers`,
the sweeps that run on the local executor keep one pool of worker processes between them
(:class:`~iclab.runs.LocalExecutor` with ``keep=True``), and the ``shared`` of the sweeps named ``ahead`` is
computed by one helper process while the sweeps before them run (:class:`~iclab.runs._ahead.SharedAhead`). Each
worker then imports iclab and loads each model once for the whole block, and the pool does not wait idle while the
driver computes a ``shared``. Results are the same as without the block.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from iclab.errors import IclabError
from iclab.runs._ahead import SharedAhead
from iclab.runs._executors import Executor, SerialExecutor
from iclab.runs._local import LocalExecutor
from iclab.runs._options import RunOptions
from iclab.runs._ray import RayExecutor

__all__ = ["kept_workers", "make_executor", "shared_for"]


@dataclass
class _Block:
    """One open :func:`kept_workers` block: its local pools (by workers and cell timeout) and its helper."""

    pools: dict[tuple, LocalExecutor] = field(default_factory=dict)
    ahead: SharedAhead | None = None


_BLOCKS: list[_Block] = []  # the open blocks, innermost last


@contextmanager
def kept_workers(ahead: Sequence[Any] = ()) -> Iterator[None]:
    """Within this block, the sweeps that run on the local executor keep one pool of worker processes between them
    (per workers and cell timeout), and the ``shared`` of the sweeps ``ahead`` (in the order they will run; give only
    sweeps that will compute it: a new run folder) is computed ahead by one helper process. The workers and the
    helper stop when the block ends (an error or Ctrl-C included). ``iclab reproduce`` runs its experiments in one."""
    block = _Block()
    _BLOCKS.append(block)
    try:
        block.ahead = SharedAhead(ahead) if ahead else None
        yield
    finally:
        _BLOCKS.remove(block)
        try:
            if block.ahead is not None:
                block.ahead.close()
        finally:
            for runner in block.pools.values():
                runner.close()


def shared_for(sweep: Any) -> Any:
    """``sweep.shared(sweep.config)`` (None without one): computed ahead where the open block has it, else here."""
    if sweep.shared is None:
        return None
    if _BLOCKS and _BLOCKS[-1].ahead is not None:
        ready, value = _BLOCKS[-1].ahead.take(sweep)
        if ready:
            return value
    return sweep.shared(sweep.config)


def make_executor(options: RunOptions) -> Executor:
    """The executor ``options.executor`` names, configured by ``options`` (workers, address, cell timeout); it
    starts nothing (a Ray ``address`` is probed, so an unreachable one fails here, before any run folder is made).
    Inside :func:`kept_workers` a local executor is the block's one pool for these workers and timeout."""
    if options.executor == "serial":
        return SerialExecutor(options)
    if options.executor == "local":
        if not _BLOCKS:
            return LocalExecutor(options)
        key = (options.workers, options.cell_timeout)
        pools = _BLOCKS[-1].pools
        if key not in pools:
            pools[key] = LocalExecutor(options, keep=True)
        return pools[key]
    try:
        import ray  # noqa: F401 - imported lazily: ray is heavy
    except ImportError:
        raise IclabError("--executor ray needs Ray: pip install ray==2.60.0 (make install does)") from None
    return RayExecutor(options)
