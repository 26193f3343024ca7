"""A sweep's ``shared`` computed ahead: one spawned helper process computes the ``shared`` of the sweeps a command will
run, in their order, while the sweeps before them run, so the driver finds it ready instead of computing it
between two sweeps with the pool idle (``temperature-gpt2-regression`` trains its model there: about a minute of
one core on a 2-core machine).

``shared`` is a function of the config alone (``Sweep.shared``), so computed here it is the value the driver would
have computed: the helper is a fresh spawned process, as the driver was at its start (same torch defaults). A
``shared`` that raises raises the same exception in the driver when its sweep asks for it; one whose value or
exception cannot be sent back, or a helper that died, leaves the driver to compute it as before. The helper prints
nothing (its progress bars would cut through the running sweep's; what fails reaches the driver as the exception),
ignores Ctrl-C (the driver stops it) and ends itself when the driver dies, as pool workers do."""

from __future__ import annotations

import multiprocessing as mp
import pickle
from typing import Any, Sequence

__all__ = ["SharedAhead"]


def _helper_main(conn, jobs: list[tuple[str, Any, Any]]) -> None:
    """Compute ``fn(config)`` for each ``(key, fn, config)`` in order and send ``(key, ok, value or exception)``."""
    import os

    from iclab.runs._local import _follow_driver

    _follow_driver()
    quiet = os.open(os.devnull, os.O_WRONLY)  # its progress bars would cut through the running sweep's
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    for key, fn, config in jobs:
        try:
            message = (key, True, fn(config))
        except Exception as exc:  # noqa: BLE001 - the driver raises it when the sweep asks for its shared
            message = (key, False, exc)
        try:  # plain pickle, by value: torch's multiprocessing pickler would share tensors through this process
            data = pickle.dumps(message)
        except Exception:  # noqa: BLE001 - does not pickle: the driver computes this one itself
            data = pickle.dumps((key, None, None))
        conn.send_bytes(data)


class SharedAhead:
    """The helper process for ``sweeps`` (those with a ``shared``); :meth:`take` gives a sweep's value."""

    def __init__(self, sweeps: Sequence[Any]) -> None:
        jobs = [(s.config_hash, s.shared, s.config) for s in sweeps if s.shared is not None]
        self.pending = {key for key, _, _ in jobs}  # the sweeps whose shared the helper computes, not yet taken
        self.received: dict[str, tuple[bool | None, Any]] = {}
        self.proc = self.conn = None
        if not jobs:
            return
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe(duplex=False)
        try:
            self.proc = ctx.Process(target=_helper_main, args=(child, jobs), daemon=True, name="iclab-shared")
            self.proc.start()  # pickles the jobs: a shared function that does not pickle is computed by the driver
        except Exception:  # noqa: BLE001
            self.proc = None
            self.pending = set()
        finally:
            child.close()

    def take(self, sweep: Any) -> tuple[bool, Any]:
        """``(True, shared)`` of ``sweep`` once the helper has it (waiting for it), else ``(False, None)``: not a
        sweep given ahead, or not computable there; the caller then computes it itself."""
        key = sweep.config_hash
        if self.proc is None or key not in self.pending:
            return False, None
        while key not in self.received:
            try:
                k, ok, value = pickle.loads(self.conn.recv_bytes())
            except (EOFError, OSError):  # the helper died: the driver computes what is left
                self.close()
                return False, None
            self.received[k] = (ok, value)
        ok, value = self.received.pop(key)
        self.pending.discard(key)  # taken once: a second run of the sweep computes its own
        if ok is False:
            raise value
        return (True, value) if ok else (False, None)

    def close(self) -> None:
        """Stop the helper (it may still be computing a shared no sweep asked for)."""
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(5)
            self.conn.close()
        self.proc, self.pending, self.received = None, set(), {}
