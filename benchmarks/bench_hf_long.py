"""Temperature control on the whole Gemma 3 270M at long context, against the stock model, side by side.

``bench_hf.long_context`` times one attention layer; here the whole model runs (18 layers: 15 sliding-window
layers of 512 keys and 3 global ones, 4 query heads sharing 1 key/value head of dim 256, MLPs, norms), so attention
is only part of the time. Variants: ``stock`` (the model as loaded, sdpa), ``fixed`` (``with_temperature(model,
1.3)``: a global τ, which rescales the logits before the same sdpa call) and ``adaptive``
(``with_temperature(model, "adaptive")``: the entropy-adaptive τ of arXiv:2410.01104, Fig. 4, through the streaming
kernel of ``iclab.attention``; docs/papers/dispersion.md §4.5). Goals of issue 25 on CPU: fixed ≤ 1.02×, adaptive
≤ 1.5× the stock time at 1k, 4k and 16k tokens, peak memory within 10 % of stock.

Each (variant, n) runs in a fresh process: load the model (``iclab.hf.load_model("gemma3-270m")``, fp32, one torch
thread), one warm-up forward of 8 tokens (it pages in every weight: the tied embedding is the LM head), then **one**
timed forward of a batch of 1 × n random token ids (``logits_to_keep=1``, as a long-context prefill that reads the
next token: the full logits would be n × 262 144 floats, 16 GiB at 16k). Memory: the child runs with
``MALLOC_MMAP_THRESHOLD_=65536`` (freed buffers go back to the OS), resets the kernel's peak-RSS counter
(``/proc/self/clear_refs``) after the warm-up and reports ``VmHWM - VmRSS`` (the peak the forward added: activations,
masks, kernel work space) and ``VmHWM`` (the process's peak, weights included). Time: the forward's CPU seconds
(``time.process_time``; one torch thread, so CPU time is the work done, which other processes on a shared machine do
not inflate as they do wall time; the ratios are of CPU time) and its wall seconds. One forward per setting because
a 16k forward takes minutes on a 2-core machine; the three variants of one length run at the same time, in three
processes (their CPU times are compared; their wall times share the machine).
``main(smoke=True)`` runs the same on a tiny random-init Gemma 3 (2 layers, sliding window 16) at 64 tokens.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
LENGTHS = (1024, 4096, 16384)
VARIANTS = ("stock", "fixed", "adaptive")
FIXED_TAU = 1.3


def _status(key: str) -> int:
    with open("/proc/self/status") as fh:
        return int(re.search(key + r":\s+(\d+)", fh.read()).group(1)) * 1024


def _model(name: str):
    """``gemma3-270m`` (installed package, fp32 cache) or ``tiny``: a random-init Gemma 3 of the same layout."""
    import torch

    if name != "tiny":
        from iclab.hf import load_model

        return load_model(name)[0]
    from transformers import Gemma3TextConfig, Gemma3ForCausalLM

    torch.manual_seed(0)
    cfg = Gemma3TextConfig(
        vocab_size=512,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=16,
        sliding_window=16,
        layer_types=["sliding_attention", "full_attention"],
        max_position_embeddings=256,
    )
    return Gemma3ForCausalLM(cfg).eval()


def _child(name: str, variant: str, n: int) -> dict:
    """One timed forward of ``variant`` at ``n`` tokens in this (fresh) process; see the module docstring."""
    import contextlib

    import torch

    from iclab.hf import with_temperature

    torch.set_num_threads(1)
    model = _model(name)
    ctx = {
        "stock": contextlib.nullcontext,
        "fixed": lambda: with_temperature(model, FIXED_TAU),
        "adaptive": lambda: with_temperature(model, "adaptive"),
    }[variant]
    g = torch.Generator().manual_seed(0)
    vocab = model.config.vocab_size
    warm, ids = torch.randint(4, vocab, (1, 8), generator=g), torch.randint(4, vocab, (1, n), generator=g)
    with torch.no_grad(), ctx():
        model(input_ids=warm, use_cache=False, logits_to_keep=1)
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        base = _status("VmRSS")
        start, cpu = time.perf_counter(), time.process_time()
        logits = model(input_ids=ids, use_cache=False, logits_to_keep=1).logits
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        added, peak = _status("VmHWM") - base, _status("VmHWM")
    assert logits.shape[:2] == (1, 1) and bool(torch.isfinite(logits).all())
    return {"seconds": seconds, "cpu": cpu, "added_mib": added / 2**20, "peak_mib": peak / 2**20}


def _measure(name: str, variant: str, n: int) -> dict:
    code = (
        f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import bench_hf_long as b; "
        f"print('ROW ' + json.dumps(b._child({name!r}, {variant!r}, {n})))"
    )
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    rows = [x for x in p.stdout.splitlines() if x.startswith("ROW ")]
    if p.returncode or not rows:
        raise RuntimeError(f"child ({name}, {variant}, n={n}) failed (exit {p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(rows[-1][4:])


def headline(rows: list[dict]) -> dict:
    """Per length: the stock forward's CPU and wall seconds and the fixed and adaptive CPU-time and process-peak
    memory ratios to stock (what ``--record`` keeps and the docs quote)."""
    out = {}
    for r in rows:
        s = r["stock"]
        out[str(r["n"])] = {
            "stock_cpu_s": s["cpu"],
            "stock_wall_s": s["seconds"],
            **{f"{v}_cpu_ratio": r[v]["cpu"] / s["cpu"] for v in ("fixed", "adaptive")},
            **{f"{v}_peak_ratio": r[v]["peak_mib"] / s["peak_mib"] for v in ("fixed", "adaptive")},
        }
    return out


def main(smoke: bool = False, lengths=LENGTHS) -> dict:
    name, lengths = ("tiny", (64,)) if smoke else ("gemma3-270m", lengths)
    print(
        f"whole {name} model, CPU, 1 thread, batch 1, one forward per (variant, n) in a fresh process "
        f"(fixed τ = {FIXED_TAU}); ratios to stock; memory: peak the forward added / process peak (MiB)"
    )
    print(
        f"  {'n':>6} {'stock CPU s':>11} {'fixed':>7} {'adaptive':>9} | {'wall s: stock':>13} {'fixed':>7} "
        f"{'adaptive':>8} | {'stock MiB':>16} {'fixed MiB':>16} {'adaptive MiB':>16} | {'adaptive mem':>12}"
    )
    rows = []
    for n in lengths:
        with ThreadPoolExecutor(len(VARIANTS)) as pool:
            r = dict(zip(VARIANTS, pool.map(lambda v, n=n: _measure(name, v, n), VARIANTS)))
        rows.append({"n": n, **r})
        s = r["stock"]
        mem = lambda x: f"{x['added_mib']:7.0f} / {x['peak_mib']:6.0f}"  # noqa: E731
        print(
            f"  {n:6d} {s['cpu']:11.2f} {r['fixed']['cpu'] / s['cpu']:6.3f}x {r['adaptive']['cpu'] / s['cpu']:8.3f}x | "
            f"{s['seconds']:13.2f} {r['fixed']['seconds']:7.2f} {r['adaptive']['seconds']:8.2f} | "
            f"{mem(s):>16} {mem(r['fixed']):>16} "
            f"{mem(r['adaptive']):>16} | {r['adaptive']['peak_mib'] / s['peak_mib']:11.3f}x",
            flush=True,
        )
    print("  goals (issue 25, CPU): fixed ≤ 1.02x, adaptive ≤ 1.5x (CPU time), adaptive memory (process peak) ≤ 1.1x")
    return {"model": name, "fixed_tau": FIXED_TAU, "threads": 1, "lengths": headline(rows)}


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--smoke"]
    main(smoke="--smoke" in sys.argv[1:], lengths=tuple(map(int, args)) or LENGTHS)
