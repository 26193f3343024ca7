"""Write the performance numbers into the docs from the records of measured runs in ``docs/measured/``
(``docs/measured_records.py``), never typed by hand: every wall time, overhead ratio and start-up time that the
README and the how-tos quote sits between ``<!-- measured:begin NAME -->`` and ``<!-- measured:end NAME -->`` and
names the record it comes from, with the record's commit, date, machine and load average.

``docs/gen_reference.py`` calls ``blocks``, ``stale`` and ``write`` beside its verdict blocks, so
``python docs/gen_reference.py`` (``make docs-gen``) rewrites both and ``--check`` checks both; a block is spliced
in place (inside a paragraph or a table row), so only the text between its markers changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import doc_blocks
import measured_records
from iclab.errors import ConfigError
from iclab.report import fmt_seconds

ROOT = Path(__file__).resolve().parents[1]
BEGIN = "<!-- measured:begin {} -->"
END = "<!-- measured:end {} -->"
NO_GPU = "not measured on a GPU in this repository"


def _k(n: int) -> str:
    return f"{n // 1024}k" if n % 1024 == 0 else str(n)


def _count(n: int) -> str:
    return f"{n:,}".replace(",", " ")


def _ratio(x: float) -> str:
    return f"{x:.2f}×"


def provenance(rec: dict) -> str:
    """``docs/measured/NAME.json: commit abc1234, 2026-12-02, 2-core AMD EPYC, no GPU, 1-min load average 1.2 →
    2.0`` (the load at the start and the end of the run)."""
    m = rec["machine"]
    gpu = "no GPU" if m["gpu"] == "none" else m["gpu"]
    if m["load_start"] is None and m["load_end"] is None:
        load = "load average not recorded"
    else:
        ones = [x[0] for x in (m["load_start"], m["load_end"]) if x]
        load = "1-min load average " + " → ".join(f"{x:.1f}" for x in ones)
        load += " (more runnable processes than cores: a loaded machine)" if max(ones) > m["cores"] else ""
    dirty = " (with uncommitted changes)" if rec["dirty"] else ""
    return (
        f"`docs/measured/{rec['name']}.json`: commit `{rec['commit'][:7]}`{dirty}, {rec['date'][:10]}, "
        f"{m['cores']}-core {m['cpu']}, {gpu}, {load}"
    )


def make_run(rec: dict) -> str:
    n = rec["numbers"]
    if "reproduce_s" not in n or "make_run_cpu_s" not in n:  # recorded without its log
        total = sum(e["wall_s"] for e in n["experiments"].values())
        return f"Measured: the quick sweeps took {fmt_seconds(total)} of wall time in all ({provenance(rec)})."
    cpu = n["make_run_cpu_s"] / (n["install_s"] + n["reproduce_s"])
    steps = sorted(n["experiments_s"].items(), key=lambda x: -x[1])[:2]
    return (
        f"Measured: the reproduce step took {fmt_seconds(n['reproduce_s'])} of wall time (longest: "
        + ", ".join(f"`{k}` {fmt_seconds(v)}" for k, v in steps)
        + f") and the install {fmt_seconds(n['install_s'])}, from a fresh clone; `make run` kept {cpu:.2f} of the "
        f"{rec['machine']['cores']} cores busy on average ({provenance(rec)})."
    )


def quick_run(name: str) -> Callable[[dict], str]:
    """The quick run of experiment ``name`` in the recorded ``make run``."""

    def text(rec: dict) -> str:
        n = rec["numbers"]
        e = n["experiments"][name]
        step = n.get("experiments_s", {}).get(name)
        return (
            (f"{fmt_seconds(step)} of wall time in the recorded `make run`, " if step is not None else "")
            + f"{fmt_seconds(e['wall_s'])} of it the sweep, {fmt_seconds(e['cell_s'])} summed over its "
            f"{e['cells']} cells ({provenance(rec)})"
        )

    return text


def sweep_engine(rec: dict) -> str:
    n, ex = rec["numbers"], rec["numbers"]["executors"]
    cpu = sorted(ex[e]["cpu_per_cell"] * 1e3 for e in ("local", "ray"))
    return (
        f"measured at {_count(n['cells'])} no-op cells with {n['workers']} workers (`benchmarks/bench_sweep_scale.py`; "
        f"{provenance(rec)}): {ex['local']['per_cell'] * 1e3:.2f} ms per cell for the local pool and "
        f"{ex['ray']['per_cell'] * 1e3:.2f} ms for a warm Ray (short cells travel in batches), "
        f"{cpu[0]:.2f}–{cpu[1]:.2f} ms of driver CPU per cell, but {fmt_seconds(ex['local']['startup'])} from the "
        f"call to a local pool's first finished cell and {fmt_seconds(ex['ray']['warmup'])} to start Ray and its workers (`ray.init` and a "
        f"{n['ray_warmup_cells']}-cell warm-up sweep)"
    )


def sweep_memory(rec: dict) -> str:
    n = rec["numbers"]
    again = sorted(n["kib_per_cell"]["again_peak_mib"].values())
    grid = max(n["kib_per_cell"]["grid_mib"].values())
    return (
        f"a second sweep of {_count(n['cells'])} cells in one process adds {again[0]:.2f}–{again[-1]:.2f} KiB a cell "
        f"(the grid itself: {grid:.2f} KiB a cell; `benchmarks/bench_sweep_scale.py`, {provenance(rec)})"
    )


def hf_overhead(rec: dict) -> str:
    n = rec["numbers"]
    clock = next(iter(n["models"].values())).get("clock", "wall")
    labels = {"minilm": "MiniLM", "llama-smollm2-shape": "a random-init Llama of SmolLM2's attention shape"}
    parts = [
        f"{labels[k]} fixed τ {_ratio(m['ratios']['tau=1.5 fixed'])}, adaptive τ {_ratio(m['ratios']['adaptive'])}"
        for k, m in n["models"].items()
    ]
    return (
        f"Overhead (`benchmarks/bench_hf.py`, {n['device']}, one thread, batch {n['batch']} × {n['tokens']} tokens, "
        f"median of {n['repeats']} interleaved forwards, {clock} time over the stock model's): "
        + "; ".join(parts)
        + f" ({provenance(rec)}); {NO_GPU}"
    )


def hf_long(rec: dict) -> str:
    n = rec["numbers"]["lengths"]
    cpu = ", ".join(
        f"{_ratio(r['fixed_cpu_ratio'])} and {_ratio(r['adaptive_cpu_ratio'])} at {_k(int(k))}" for k, r in n.items()
    )
    mem = ", ".join(
        f"{_ratio(r['fixed_peak_ratio'])} and {_ratio(r['adaptive_peak_ratio'])} at {_k(int(k))}" for k, r in n.items()
    )
    return (
        f"On the whole Gemma 3 270M on CPU (`benchmarks/bench_hf_long.py`, CPU time of one forward, fixed τ = "
        f"{rec['numbers']['fixed_tau']} and adaptive τ over the stock model): {cpu} tokens; process peak memory "
        f"{mem} ({provenance(rec)})"
    )


def scaling_rules(rec: dict) -> str:
    n = rec["numbers"]
    t, peaks = n["time"]["ratios"], n["memory_mib"]
    cap = _ratio(t["softcap:c=30"])
    long = f"{_ratio(n['softcap_long_time_ratio'])} at {_k(n['softcap_long_tokens'])}"
    return (
        f"Cost on CPU (`benchmarks/bench_scaling_rules.py`: a random-init Llama of SmolLM2's attention shape, "
        f"{n['layers']} layers, one thread, median CPU time of interleaved forwards over the stock model's `sdpa`): "
        f"the query rules at most {_ratio(n['query_rules_max_time_ratio'])} at {_k(n['tokens'])} tokens; "
        f"`softcap:c=30` {cap} at {_k(n['tokens'])} and {long}; process peak memory at most "
        f"{_ratio(max(peaks[r] / peaks['stock'] for r in peaks))} at {_k(n['tokens'])} ({provenance(rec)}); {NO_GPU}"
    )


def calibration(rec: dict) -> str:
    n = rec["numbers"]
    times = " and ".join(f"{float(s):.2f} s at {int(d):,} draws" for d, s in n["table_s"].items())
    return f"{n['claims']} claims take {times} per claim ({provenance(rec)})"


# block name -> (record name, text of the record)
TEXTS: dict[str, tuple[str, Callable[[dict], str]]] = {
    "make-run": ("make-run", make_run),
    "quick-temperature-gpt2-regression": ("make-run", quick_run("temperature-gpt2-regression")),
    "quick-ood": ("make-run", quick_run("ood")),
    "sweep-engine": ("bench_sweep_scale", sweep_engine),
    "sweep-memory": ("bench_sweep_scale", sweep_memory),
    "hf-overhead": ("bench_hf", hf_overhead),
    "hf-long": ("bench_hf_long", hf_long),
    "scaling-rules-cost": ("bench_scaling_rules", scaling_rules),
    "calibration": ("bench_calibration", calibration),
}
# file -> the blocks it holds
PLACES = {
    "README.md": [name for name in TEXTS if name not in ("calibration", "scaling-rules-cost")],
    "docs/calibration.md": ["calibration"],
    "docs/howto/ray.md": ["sweep-engine"],
    "docs/howto/gpu.md": ["hf-overhead"],
    "docs/howto/hf-temperature.md": ["scaling-rules-cost"],
}


def blocks(folder: Path = measured_records.FOLDER) -> dict[str, dict[str, str]]:
    """``{file: {block name: text}}`` from the records in ``folder``; a missing record is one ``ConfigError``."""
    records = measured_records.load_all(folder)
    texts = {}
    for name, (record, text) in TEXTS.items():
        if record not in records:
            raise ConfigError(f"{folder}/{record}.json", "missing", f"a record for block {name!r} (CONTRIBUTING.md)")
        texts[name] = text(records[record])
    return {path: {name: texts[name] for name in names} for path, names in PLACES.items()}


def spliced(text: str, named: dict[str, str], path: Path) -> str:
    """``text`` with each named block between its own markers (:func:`doc_blocks.splice`)."""
    for name, block in named.items():
        text = doc_blocks.splice(text, BEGIN.format(name), END.format(name), block, path)
    return text


def stale(generated: dict[str, dict[str, str]], root: Path = ROOT) -> list[str]:
    """The files under ``root`` with a block that differs from ``generated``."""
    return doc_blocks.stale(generated, spliced, root)


def write(generated: dict[str, dict[str, str]], root: Path = ROOT) -> list[str]:
    """Rewrite every out-of-date block under ``root`` (every file checked for its markers first); the files changed."""
    return doc_blocks.write(generated, spliced, root)


def marked(text: str) -> list[str]:
    """Names of the measured blocks in ``text`` (each ``begin`` marker)."""
    return re.findall(r"<!-- measured:begin (\S+) -->", text)
