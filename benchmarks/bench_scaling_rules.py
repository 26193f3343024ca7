"""Cost of iclab.hf's named scaling rules (logn, llama4, ministral, ssmax, yarn, softcap) vs the stock model.

A random-init Llama with SmolLM2-135M's attention shape (9 query / 3 key-value heads of dim 64) runs one forward per
variant, round robin, median of the repeats, so machine load hits all alike: the stock model on ``sdpa``, each
query-scaling rule (the rule's factor on the query rows, then the model's own sdpa), and ``softcap`` (row-blocked
dense attention, the logits rule). Reported as ratios to stock: of CPU time on CPU (one torch thread), of wall time
on CUDA. The targets (docs/howto/hf-temperature.md): a query rule within 2 % of stock, the logits rule within 1.5×
at 8k tokens. ``memory()`` measures peak memory of one forward per variant in a fresh process each (resident set on
CPU, ``torch.cuda.max_memory_allocated`` on CUDA); the target is within 10 % of stock for the query rules.
``python benchmarks/bench_scaling_rules.py [cpu|cuda] [--tokens N]`` (CPU: every rule at 1024 tokens and 2
layers, then stock and softcap alone at 8192, the 1.5× target's length; CUDA: 8192 tokens and 30 layers); ``main(smoke=True)`` runs the same at 32 tokens.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
import time

import torch

_LONG = 8192  # tokens of the logits rule's target
RULES = ("logn:L=512", "llama4:a=0.1:f=512", "ministral:beta=0.1:L=512", "ssmax:L=512", "yarn:s=4", "softcap:c=30")


def _model(layers: int, device: torch.device):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        num_hidden_layers=layers,
        hidden_size=576,
        num_attention_heads=9,
        num_key_value_heads=3,
        intermediate_size=1536,
        vocab_size=4096,
        max_position_embeddings=16384,
        attn_implementation="sdpa",
    )
    return LlamaForCausalLM(cfg).eval().to(device)


def _variants(model) -> dict:
    from iclab.hf import with_scaling_rule

    return {"stock": contextlib.nullcontext, **{r: (lambda r=r: with_scaling_rule(model, r)) for r in RULES}}


def _sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def timing(model, ids: torch.Tensor, repeats: int, only: tuple[str, ...] | None = None) -> dict:
    """``{variant: median time / median stock time}`` (``only``: stock and these variants); prints one row each."""
    device = ids.device
    clock = time.process_time if device.type == "cpu" else time.perf_counter
    variants = {k: v for k, v in _variants(model).items() if only is None or k == "stock" or k in only}
    times: dict[str, list[float]] = {k: [] for k in variants}
    with torch.no_grad():
        for ctx in variants.values():  # warm-up
            with ctx():
                model(input_ids=ids, use_cache=False)
        for _ in range(repeats):
            for k, ctx in variants.items():
                with ctx():
                    _sync(device)
                    t0 = clock()
                    model(input_ids=ids, use_cache=False)
                    _sync(device)
                    times[k].append(clock() - t0)
    base = statistics.median(times["stock"])
    ratios = {k: statistics.median(ts) / base for k, ts in times.items()}
    what = "CPU" if device.type == "cpu" else "wall"
    for k, ts in times.items():
        print(f"  {k:26s} {1e3 * statistics.median(ts):9.1f} ms {what}  ratio {ratios[k]:6.3f}")
    return {"stock_ms": 1e3 * base, "clock": what, "ratios": ratios}


def _peak(variant: str, n: int, layers: int, device: str) -> float:
    """Peak memory (MiB) of one forward of ``variant`` at ``n`` tokens, in this (fresh) process."""
    import resource

    dev = torch.device(device)
    torch.set_num_threads(1)
    model = _model(layers, dev)
    ids = torch.randint(0, 4096, (1, n), generator=torch.Generator().manual_seed(1)).to(dev)
    ctx = _variants(model)[variant]
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    with ctx(), torch.no_grad():
        model(input_ids=ids, use_cache=False)
    if dev.type == "cuda":
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10


def memory(n: int, layers: int, device: str) -> dict:
    """``{variant: peak MiB}``, each in a fresh process; prints them with the ratio to stock."""
    here = os.path.dirname(os.path.abspath(__file__))
    peaks = {}
    for variant in ("stock", *RULES):
        code = (
            f"import sys; sys.path.insert(0, {here!r}); import bench_scaling_rules as b; "
            f"print(b._peak({variant!r}, {n}, {layers}, {device!r}))"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        peaks[variant] = float(done.stdout.strip().splitlines()[-1])
    for k, mib in peaks.items():
        print(f"  {k:26s} {mib:9.0f} MiB peak  ratio {mib / peaks['stock']:6.3f}")
    return peaks


def main(device: str = "cpu", smoke: bool = False, tokens: int | None = None) -> dict:
    """Print the tables; return the headline numbers (``--record`` keeps them)."""
    dev = torch.device(device)
    cpu = dev.type == "cpu"
    threads = torch.get_num_threads()
    if cpu:
        torch.set_num_threads(1)
    n, layers, repeats = (1024, 2, 7) if cpu else (8192, 30, 10)
    if tokens is not None:
        n, repeats = tokens, min(repeats, 3) if cpu and tokens > 2048 else repeats
    if smoke:
        n, layers, repeats = 32, 1, 1
    out: dict = {"device": device, "tokens": n, "layers": layers, "repeats": repeats}
    try:
        model = _model(layers, dev)
        ids = torch.randint(0, 4096, (1, n), generator=torch.Generator().manual_seed(0)).to(dev)
        print(f"Scaling rules vs stock sdpa: Llama, SmolLM2 attention shape, {layers} layers, 1 x {n} tokens, {device}")
        out["time"] = timing(model, ids, repeats)
        if cpu and not smoke and n < _LONG:  # the logits rule's target is at 8k: stock and softcap alone there
            long_ids = torch.randint(0, 4096, (1, _LONG), generator=torch.Generator().manual_seed(0))
            print(f"Softcap vs stock at {_LONG} tokens, {layers} layers, cpu")
            out["time_8k"] = timing(model, long_ids, 3, only=("softcap:c=30",))
    finally:
        torch.set_num_threads(threads)
    print(f"Peak memory of one forward, fresh process per variant, {n} tokens")
    out["memory_mib"] = memory(n, layers, device)
    ratios, peaks = out["time"]["ratios"], out["memory_mib"]
    out["query_rules_max_time_ratio"] = max(ratios[r] for r in RULES if not r.startswith("softcap"))
    out["max_memory_ratio"] = max(peaks[r] / peaks["stock"] for r in RULES)
    long_n, long_ratios = (_LONG, out["time_8k"]["ratios"]) if "time_8k" in out else (n, ratios)
    out["softcap_long_time_ratio"], out["softcap_long_tokens"] = long_ratios["softcap:c=30"], long_n
    print(
        f"targets: query rules within 2 % of stock: {out['query_rules_max_time_ratio']:.3f}x; softcap within 1.5x "
        f"at 8k: {long_ratios['softcap:c=30']:.3f}x at {long_n}; memory within 10 %: {out['max_memory_ratio']:.3f}x"
    )
    if cpu:
        print("(CPU, 1 thread; ratios of CPU time, measured side by side)")
    return out


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("device", nargs="?", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--tokens", type=int, default=None, help="prompt length (default 1024 on CPU, 8192 on CUDA)")
    parser.add_argument("--smoke", action="store_true", help="32 tokens, 1 layer, 1 repeat")
    opts = parser.parse_args()
    main(opts.device, smoke=opts.smoke, tokens=opts.tokens)
