"""float32 vs bf16 for the language models of ``temperature-llm`` (``dtype = auto`` picks bf16 where the hardware
computes it natively: a CPU with ``avx512_bf16`` or AMX, a CUDA GPU of capability ≥ 8), side by side in one process.

1. Forward time: SmolLM2-135M (and Gemma 3 270M where its converted weights are cached) in float32 and in bf16, one
   teacher-forced forward of a ``B × n`` batch each, interleaved round robin (median of the repeats), CPU time on one
   torch thread (the work done, which other processes do not inflate); the ratio float32 / bf16.
2. Exact match: ``temperature-llm``'s own cells (:func:`run_cell`, τ = 1, the stock model) on the quick task
   (``capital``) and the reference run's (``antonym``), clean and at noise 0.8, in float32 and bf16: EM of each, how
   many answers change, and each cell's wall time (the models loaded before).

On a CPU without native bf16 the bf16 rows are emulated (slower than float32); the header says which this is.
``main(smoke=True)``: a random-init 1-layer Llama for the forward, 4 questions of ``capital`` for the EM.
"""

from __future__ import annotations

import copy
import statistics
import time

import torch


def _forward_ms(models: dict[str, torch.nn.Module], ids: torch.Tensor, repeats: int) -> dict[str, float]:
    """Median CPU milliseconds of one forward per variant, run round robin so load hits them alike."""
    times = {k: [] for k in models}
    with torch.no_grad():
        for m in models.values():  # warm-up
            m(input_ids=ids, use_cache=False)
        for _ in range(repeats):
            for k, m in models.items():
                t0 = time.process_time()
                m(input_ids=ids, use_cache=False)
                times[k].append(time.process_time() - t0)
    return {k: 1e3 * statistics.median(ts) for k, ts in times.items()}


def _models(smoke: bool) -> dict[str, torch.nn.Module]:
    """float32 models to time: the real ones installed (Gemma 3 only if its converted cache exists), or a tiny one."""
    if smoke:
        from transformers import LlamaConfig, LlamaForCausalLM

        torch.manual_seed(0)
        cfg = LlamaConfig(num_hidden_layers=1, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                          intermediate_size=128, vocab_size=512)  # fmt: skip
        return {"tiny llama (random init)": LlamaForCausalLM(cfg).eval()}
    from iclab.hf import cache_dir, load_model

    out = {"smollm2": load_model("smollm2", causal=True)[0]}
    if (cache_dir() / "gemma3-270m-fp32").exists():
        out["gemma3-270m"] = load_model("gemma3-270m", causal=True)[0]
    else:
        print("gemma3-270m skipped: its converted weights are not cached (its first load converts them, minutes)")
    return out


def forward_times(smoke: bool = False) -> dict:
    B, n, repeats = (1, 16, 1) if smoke else (4, 128, 5)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    rows = {}
    try:
        for name, model in _models(smoke).items():
            ids = torch.randint(10, model.config.vocab_size, (B, n), generator=torch.Generator().manual_seed(0))
            ms = _forward_ms({"float32": model, "bf16": copy.deepcopy(model).to(torch.bfloat16)}, ids, repeats)
            rows[name] = {**ms, "speedup": ms["float32"] / ms["bf16"]}
            print(f"  {name:26s} float32 {ms['float32']:9.1f} ms   bf16 {ms['bf16']:9.1f} ms   "
                  f"float32/bf16 {rows[name]['speedup']:5.2f}x   (batch {B} x {n}, CPU time, 1 thread)")  # fmt: skip
    finally:
        torch.set_num_threads(threads)
    return rows


def exact_match(smoke: bool = False) -> dict:
    """EM at τ = 1 of temperature-llm's cells in float32 and bf16, per model, task and noise ratio."""
    import numpy as np

    from iclab.experiments.temperature.llm.cells import run_cell
    from iclab.experiments.temperature.llm.config import TemperatureLLMConfig

    tasks, n_q, models = (("capital",), 4, ("smollm2",)) if smoke else (("capital", "antonym"), 120, ("smollm2",))
    from iclab.hf import shared_model

    rows = {}
    for model in models:
        for dtype in ("float32", "bf16"):  # loaded before any cell is timed
            shared_model(model, causal=True, dtype=dtype)
        for task in tasks:
            for noise in (0.0, 0.8):
                cell = {"part": "noise", "model": model, "task": task, "noise_ratio": noise, "n_demos": 6}
                got = {}
                for dtype in ("float32", "bf16"):
                    cfg = TemperatureLLMConfig(models=(model,), tasks=(task,), taus=(1.0,), n_questions=n_q,
                                               group_size=10, moment_rule=False, adaptive=False, demo_counts=(),
                                               noise_ratios=(noise,), dtype=dtype)  # fmt: skip
                    out = run_cell(cfg, cell, None)
                    got[dtype] = (np.asarray(out["em"][0]), out["seconds"], out["dtype"])
                (a, ta, da), (b, tb, db) = got["float32"], got["bf16"]
                key = f"{model}/{task}/noise {noise}"
                rows[key] = {"em_float32": float(a.mean()), "em_bf16": float(b.mean()), "changed": int((a != b).sum()),
                             "questions": len(a), "seconds_float32": ta, "seconds_bf16": tb}  # fmt: skip
                print(f"  {key:30s} EM {da} {a.mean():.3f}  {db} {b.mean():.3f}  ({rows[key]['changed']} of {len(a)} "
                      f"answers change)   cell {ta:6.1f} s vs {tb:6.1f} s")  # fmt: skip
    return rows


def main(smoke: bool = False) -> dict:
    """Print both tables; return their numbers (``--record`` keeps them)."""
    from iclab.hf import parse_dtype

    auto = str(parse_dtype("auto")).removeprefix("torch.")
    print(f"dtype=auto picks {auto} on this CPU ({'native' if auto == 'bfloat16' else 'no native'} bf16)")
    print("forward time, float32 vs bf16, side by side:")
    forward = forward_times(smoke)
    print("exact match at tau = 1 (temperature-llm cells), float32 vs bf16:")
    em = exact_match(smoke)
    return {"auto": auto, "forward": forward, "exact_match": em}


if __name__ == "__main__":
    main()
