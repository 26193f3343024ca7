"""What the input checks of issue 15 cost, measured side by side in one process.

* Normalisers: every registered normaliser is wrapped once (``iclab.attention._registry._checked``) to check the
  scores, the mask and the keywords, and to compute float16/bfloat16 in float32. Timed against the unwrapped
  function (``fn.__wrapped__``) on a tiny score row (where a fixed cost shows most) and on a typical (8, 64, 64)
  block; and float16 input (upcast) against float32 input.
* Budgets: ``budget(config)`` + ``check_budget`` of every experiment's quick preset, once before a run.
* Reading results: ``ResultStore(readonly=True)`` (immutable open, no side files) against a read-write open.

Timings are the best of 5 repeats of a loop, on whatever the machine's other load allows; ratios are the point.
"""

from __future__ import annotations

import inspect
import tempfile
import time
from pathlib import Path

import torch


def _best(fn, loops: int, repeats: int = 5) -> float:
    """Seconds per call: the best of ``repeats`` timings of ``loops`` calls."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        best = min(best, (time.perf_counter() - start) / loops)
    return best


def normalisers(scale: float = 1.0) -> None:
    from iclab.attention import get_normaliser, normaliser_names

    print(f"{'normaliser':18s} {'shape':12s} {'checked µs':>11s} {'raw µs':>8s} {'ratio':>6s} {'fp16/fp32':>9s}")
    for shape, loops in (((1, 8), 3000), ((8, 64, 64), 300)):
        loops = max(1, int(loops * scale))
        s32 = torch.randn(shape)
        s16 = s32.half()
        for name in normaliser_names():
            fn = get_normaliser(name)
            takes_tau = name != "linear" and "tau" in inspect.signature(fn.__wrapped__).parameters
            kw = {"tau": 0.7} if takes_tau else {}  # linear accepts only tau = 1
            checked = _best(lambda fn=fn, kw=kw, s32=s32: fn(s32, None, **kw), loops)
            raw = _best(lambda fn=fn, kw=kw, s32=s32: fn.__wrapped__(s32, None, **kw), loops)
            half = _best(lambda fn=fn, kw=kw, s16=s16: fn(s16, None, **kw), loops)
            print(
                f"{name:18s} {str(shape):12s} {checked * 1e6:11.1f} {raw * 1e6:8.1f} {checked / raw:6.2f} "
                f"{half / checked:9.2f}"
            )


def budgets(repeats: int = 3) -> None:
    from iclab.budget import check_budget
    from iclab.experiments import all_experiments
    from iclab.runs import CELL_SECONDS_LIMIT

    for exp in all_experiments():
        cfg = exp.presets["quick"]
        exp.budget(cfg)  # first call imports what the estimate needs
        seconds = _best(lambda exp=exp, cfg=cfg: check_budget(exp.budget(cfg), CELL_SECONDS_LIMIT), repeats, repeats)
        print(f"budget check {exp.name:28s} {seconds * 1e3:8.2f} ms")


def stores(loops: int = 50) -> None:
    from iclab.runs import ResultStore

    with tempfile.TemporaryDirectory() as tmp:
        with ResultStore(tmp) as store:
            for i in range(200):
                store.put(f"k{i}", i, {"i": i}, result={"x": float(i), "curve": [1.0, 2.0, 3.0]})

        def read(readonly: bool):
            with ResultStore(tmp, readonly=readonly) as st:
                return list(st.rows())

        ro, rw = _best(lambda: read(True), loops), _best(lambda: read(False), loops)
        print(
            f"read 200 rows: read-only {ro * 1e3:.2f} ms, read-write {rw * 1e3:.2f} ms "
            f"(side files left by read-only: {sorted(p.name for p in Path(tmp).iterdir())})"
        )


def main(smoke: bool = False) -> None:
    """The tables of the module docstring; ``smoke=True``: one loop each (a check that it runs, in seconds)."""
    torch.set_num_threads(1)
    normalisers(1e-3 if smoke else 1.0)
    budgets(1 if smoke else 3)
    stores(1 if smoke else 50)


if __name__ == "__main__":
    import sys

    main(smoke="--smoke" in sys.argv[1:])
