"""Overhead of iclab.hf temperature control and probes vs the stock Hugging Face model, side by side.

For each model the variants run interleaved in one process (one forward each, round robin, median of the
repeats), so machine load hits them alike: stock sdpa, τ = 1 through the interface, fixed global τ = 1.5,
per-(layer, head) τ, adaptive τ (eager path) and the score probe at the last position (τ = 1); reported as time
ratios to the stock model. A parity line per model checks τ = 1 (bit-identical) and τ = 1.5 against the stock
model with its ``scaling`` divided by 1.5. Models: MiniLM (BERT, 6 layers, installed package; skipped if absent)
and a random-init Llama with SmolLM2-135M's attention shape (9 query / 3 key-value heads of dim 64).
``main(device=...)`` runs on CPU by default, on CUDA when asked (``python benchmarks/bench_hf.py cuda``).
"""

from __future__ import annotations

import contextlib
import copy
import statistics
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


def _bench(name, model, inputs, repeats) -> None:
    device = next(model.parameters()).device
    variants = _variants(model)
    times = {k: [] for k in variants}
    with torch.no_grad():
        print(f"{name}\n  {_parity(model, inputs)}")
        for ctx in variants.values():  # warm-up
            with ctx():
                model(**inputs)
        for _ in range(repeats):
            for k, ctx in variants.items():
                with ctx():
                    _sync(device)
                    t0 = time.perf_counter()
                    model(**inputs)
                    _sync(device)
                    times[k].append(time.perf_counter() - t0)
    base = statistics.median(times["stock"])
    for k, ts in times.items():
        print(f"  {k:24s} {1e3 * statistics.median(ts):8.2f} ms   ratio {statistics.median(ts) / base:5.3f}")


def main(device: str = "cpu") -> None:
    from transformers import LlamaConfig, LlamaForCausalLM

    dev = torch.device(device)
    cpu = dev.type == "cpu"
    threads = torch.get_num_threads()
    if cpu:
        torch.set_num_threads(1)
    B, n, repeats = (2, 128, 9) if cpu else (8, 1024, 30)
    try:
        torch.manual_seed(0)
        try:
            from iclab.hf import load_model

            model, _, src = load_model("minilm")
            ids = torch.randint(1000, 20000, (B, min(n, 512)), device=dev)
            _bench(f"MiniLM ({src.split(':')[0]}), batch {B} x {ids.shape[1]}, {device}", model.to(dev),
                   {"input_ids": ids, "attention_mask": torch.ones_like(ids)}, repeats)
        except Exception as exc:  # the package is optional on a bare machine
            print(f"MiniLM skipped: {exc}")
        layers = 4 if cpu else 30
        cfg = LlamaConfig(num_hidden_layers=layers, hidden_size=576, num_attention_heads=9, num_key_value_heads=3,
                          intermediate_size=1536, vocab_size=4096, max_position_embeddings=4096)
        llama = LlamaForCausalLM(cfg).eval().to(dev)
        ids = torch.randint(0, 4096, (B, n), device=dev)
        _bench(f"Llama GQA 9/3 heads (SmolLM2 shape), {layers} layers, random init, batch {B} x {n}, {device}",
               llama, {"input_ids": ids, "attention_mask": torch.ones_like(ids), "use_cache": False}, repeats)
    finally:
        torch.set_num_threads(threads)
    if cpu:
        print("(CPU, 1 thread; a shared machine inflates absolute times; ratios are measured side by side)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "cpu")
