"""Overhead of iclab.hf temperature control and probes vs the stock Hugging Face model, side by side.

For each model the variants run interleaved in one process (one forward each, round robin, median of the
repeats), so machine load hits them alike: stock sdpa, τ = 1 through the interface, fixed global τ = 1.5,
per-(layer, head) τ, adaptive τ (eager path) and the score probe at the last position (τ = 1); reported as time
ratios to the stock model: of CPU time on CPU (one torch thread), of wall time on CUDA. A parity line per model checks τ = 1 (bit-identical) and τ = 1.5 against the stock
model with its ``scaling`` divided by 1.5. Models: MiniLM (BERT, 6 layers, installed package; skipped if absent)
and a random-init Llama with SmolLM2-135M's attention shape (9 query / 3 key-value heads of dim 64).
``main(device=...)`` runs on CPU by default, on CUDA when asked (``python benchmarks/bench_hf.py cuda``);
``main(smoke=True)`` runs the same at 16 tokens, one repeat, and the long-context layer at 256 tokens.

``long_context(device)`` (part of ``main``) measures the adaptive hf path — the streaming O(n)-memory kernel of
``iclab.attention`` — against stock SDPA on one Gemma 3 270M attention layer (4 query heads sharing 1 key/value
head of dim 256, causal) at 1k–16k tokens: time ratio and peak memory, each (variant, n) in a fresh subprocess
(peak resident memory on CPU, ``torch.cuda.max_memory_allocated`` on CUDA). The old dense adaptive path (full
score matrix) is run where it fits (≤ 4k tokens) for comparison.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import statistics
import subprocess
import sys
import time

import torch


def _variants(model):
    from iclab.hf import probe_attention, with_temperature

    L, H = model.config.num_hidden_layers, model.config.num_attention_heads
    table = 1.0 + 0.5 * torch.rand(L, H, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    return {
        "stock": contextlib.nullcontext,
        "tau=1 (interface)": lambda: with_temperature(model, 1.0),
        "tau=1.5 fixed": lambda: with_temperature(model, 1.5),
        "tau per (layer, head)": lambda: with_temperature(model, table),
        "adaptive": lambda: with_temperature(model, "adaptive"),
        "probe (last position)": lambda: probe_attention(model, positions=-1),
    }


def _out(model, inputs):
    out = model(**inputs)
    return out.logits if hasattr(out, "logits") else out.last_hidden_state


def _parity(model, inputs) -> str:
    from iclab.hf import with_temperature

    stock = _out(model, inputs)
    with with_temperature(model, 1.0):
        same = torch.equal(_out(model, inputs), stock)
    ref = copy.deepcopy(model)
    for m in ref.modules():
        if hasattr(m, "scaling") and isinstance(getattr(m, "layer_idx", None), int):
            m.scaling = m.scaling / 1.5
    with with_temperature(model, 1.5):
        diff = (_out(model, inputs) - _out(ref, inputs)).abs().max() / stock.abs().max()
    return f"parity: tau=1 bit-identical {same}; tau=1.5 vs scaled stock, max rel diff {float(diff):.1e}"


def _sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _bench(name, model, inputs, repeats) -> dict:
    """Print and return ``{variant: median time / median stock time}`` (and the stock median in ms): on CPU the
    forward's CPU time (one torch thread, so the work done, which other processes do not inflate), on CUDA its wall
    time; the wall-time ratios are printed too."""
    device = next(model.parameters()).device
    clock = time.process_time if device.type == "cpu" else time.perf_counter
    variants = _variants(model)
    times = {k: [] for k in variants}
    walls = {k: [] for k in variants}
    with torch.no_grad():
        print(f"{name}\n  {_parity(model, inputs)}")
        for ctx in variants.values():  # warm-up
            with ctx():
                model(**inputs)
        for _ in range(repeats):
            for k, ctx in variants.items():
                with ctx():
                    _sync(device)
                    t0, w0 = clock(), time.perf_counter()
                    model(**inputs)
                    _sync(device)
                    times[k].append(clock() - t0)
                    walls[k].append(time.perf_counter() - w0)
    base, wall = statistics.median(times["stock"]), statistics.median(walls["stock"])
    what = "CPU" if device.type == "cpu" else "wall"
    for k, ts in times.items():
        print(
            f"  {k:24s} {1e3 * statistics.median(ts):8.2f} ms {what}  ratio {statistics.median(ts) / base:5.3f}"
            f"   (wall ratio {statistics.median(walls[k]) / wall:5.3f})"
        )
    return {
        "stock_ms": 1e3 * base,
        "clock": what,
        "ratios": {k: statistics.median(ts) / base for k, ts in times.items()},
    }


def main(device: str = "cpu", smoke: bool = False) -> dict:
    """Print every table; return the headline numbers (``--record`` keeps them): per model the time ratios to stock,
    and the long-context rows."""
    from transformers import LlamaConfig, LlamaForCausalLM

    dev = torch.device(device)
    cpu = dev.type == "cpu"
    threads = torch.get_num_threads()
    if cpu:
        torch.set_num_threads(1)
    B, n, repeats = (2, 128, 9) if cpu else (8, 1024, 30)
    if smoke:
        B, n, repeats = 1, 16, 1
    out = {"device": device, "threads": 1 if cpu else None, "batch": B, "tokens": n, "repeats": repeats, "models": {}}
    try:
        torch.manual_seed(0)
        try:
            from iclab.hf import load_model

            model, _, src = load_model("minilm")
            ids = torch.randint(1000, 20000, (B, min(n, 512)), device=dev)
            out["models"]["minilm"] = _bench(
                f"MiniLM ({src.split(':')[0]}), batch {B} x {ids.shape[1]}, {device}",
                model.to(dev),
                {"input_ids": ids, "attention_mask": torch.ones_like(ids)},
                repeats,
            )
        except Exception as exc:  # the package is optional on a bare machine
            print(f"MiniLM skipped: {exc}")
        layers = 1 if smoke else 4 if cpu else 30
        cfg = LlamaConfig(
            num_hidden_layers=layers,
            hidden_size=576,
            num_attention_heads=9,
            num_key_value_heads=3,
            intermediate_size=1536,
            vocab_size=4096,
            max_position_embeddings=4096,
        )
        llama = LlamaForCausalLM(cfg).eval().to(dev)
        ids = torch.randint(0, 4096, (B, n), device=dev)
        out["models"]["llama-smollm2-shape"] = _bench(
            f"Llama GQA 9/3 heads (SmolLM2 shape), {layers} layers, random init, batch {B} x {n}, {device}",
            llama,
            {"input_ids": ids, "attention_mask": torch.ones_like(ids), "use_cache": False},
            repeats,
        )
    finally:
        torch.set_num_threads(threads)
    if cpu:
        print("(CPU, 1 thread; ratios of CPU time, measured side by side; a shared machine inflates wall times)")
    out["long_context"] = long_context(device, lengths=(256,) if smoke else LONG_N)
    return out


LONG_N = (1024, 2048, 4096, 8192, 16384)
DENSE_MAX_N = 4096  # the dense adaptive path keeps several (H, n, n) float32 matrices: 4 GiB each at 16k


def _one_layer(variant: str, n: int, device: str) -> dict:
    """Time and peak memory of one causal Gemma-3-shaped attention layer (B=1, H=4, H_kv=1, d=256) at ``n`` tokens."""
    import resource
    import types

    import torch.nn.functional as F

    from iclab.attention import normalise
    from iclab.hf._backends import adaptive_forward
    from iclab.hf import AdaptiveTemperature

    torch.set_num_threads(1)
    dev = torch.device(device)
    g = torch.Generator(device="cpu").manual_seed(0)
    q = torch.randn(1, 4, n, 256, generator=g).to(dev)  # (B, H, n, d), RMS-normed scale as in Gemma 3
    k = torch.randn(1, 1, n, 256, generator=g).to(dev)  # (B, H_kv, n, d)
    v = torch.randn(1, 1, n, 256, generator=g).to(dev)
    module = types.SimpleNamespace(is_causal=True, training=False)
    params = AdaptiveTemperature().params()

    def run():
        if variant == "sdpa":
            return F.scaled_dot_product_attention(
                q, k.expand(1, 4, n, 256), v.expand(1, 4, n, 256), is_causal=True, scale=256**-0.5
            )
        if variant == "adaptive (streaming)":
            return adaptive_forward(module, q, k, v, None, 256**-0.5, 0.0, params, True)[0]
        s = (q @ k.transpose(-1, -2)) * 256**-0.5  # dense adaptive: the full (B, H, n, n) score matrix
        vis = torch.ones(n, n, dtype=torch.bool, device=dev).tril()
        return normalise("adaptive_softmax", s, vis, **params) @ v

    if dev.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    else:
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t0 = time.perf_counter()
    with torch.no_grad():
        run()
    _sync(dev)
    seconds = time.perf_counter() - t0
    if dev.type == "cuda":
        peak = torch.cuda.max_memory_allocated() - base
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
    return {"seconds": seconds, "peak_mib": peak / 2**20}


def _measure(variant: str, n: int, device: str) -> dict:
    code = (
        f"import sys, json; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
        f"import bench_hf; print(json.dumps(bench_hf._one_layer({variant!r}, {n}, {device!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def long_context(device: str = "cpu", lengths=LONG_N) -> list[dict]:
    """Streaming adaptive vs stock SDPA (and dense adaptive where it fits) at each length; prints and returns rows."""
    print(
        f"Adaptive temperature at long context: one Gemma 3 270M attention layer (H=4, H_kv=1, d=256, causal), "
        f"{device}, fresh process per cell"
    )
    print(f"  {'n':>6} {'sdpa s':>8} {'stream s':>9} {'ratio':>6} {'sdpa MiB':>9} {'stream MiB':>11} {'dense MiB':>10}")
    rows = []
    for n in lengths:
        sdpa = _measure("sdpa", n, device)
        stream = _measure("adaptive (streaming)", n, device)
        dense = _measure("adaptive (dense)", n, device) if n <= DENSE_MAX_N else None
        rows.append({"n": n, "sdpa": sdpa, "streaming": stream, "dense": dense})
        print(
            f"  {n:6d} {sdpa['seconds']:8.2f} {stream['seconds']:9.2f} {stream['seconds'] / sdpa['seconds']:6.2f} "
            f"{sdpa['peak_mib']:9.0f} {stream['peak_mib']:11.0f} "
            + (f"{dense['peak_mib']:10.0f}" if dense else f"{'(skipped)':>10}")
        )
    return rows


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "long":
        long_context(sys.argv[1])
    else:
        args = [a for a in sys.argv[1:] if a != "--smoke"]
        main(args[0] if args else "cpu", smoke="--smoke" in sys.argv[1:])
