"""Time and peak memory of the adaptive-temperature attention of arXiv:2410.01104 ("Softmax is not enough"; Fig. 4,
streamed as in docs/papers/dispersion.md §4.5): dense vs streaming vs plain-softmax SDPA.

For d = 64 and H = 4 heads (batch 1) and n keys from 1k to 64k, side by side in one run:
* ``sdpa``: ``F.scaled_dot_product_attention`` (plain softmax; the speed and memory target),
* ``streaming``: :func:`iclab.attention.adaptive_attention` (pass 1 over key chunks of ~4M logits, pass 2 in the
  fused sdpa kernel; memory O(n·d) plus one chunk),
* ``dense``: ``adaptive_softmax(q k^T / sqrt d) @ v`` (materialises the n_q x n score matrix several times).

Two shapes: ``keys`` (n_q = 64 queries against n keys, n up to 64k: the long-context read of a block of queries;
self-attention at 64k keys would take minutes per call on a CPU) and ``self`` (n_q = n up to 4k, where dense memory
grows as n²); and forward+backward at n_q = 64. Dense is skipped where its estimate exceeds 1.5 GiB.

Memory method (honest about what it measures): on CUDA, ``torch.cuda.max_memory_allocated`` above the inputs. On
CPU, a child process started with ``MALLOC_MMAP_THRESHOLD_=65536`` (so every tensor buffer is its own mmap and
freeing returns it to the OS) resets the kernel's peak-RSS counter (``/proc/self/clear_refs`` = 5) after the
inputs exist, runs the call once, and reports ``VmHWM - VmRSS``: the peak resident memory the call added, which
includes allocator and library overhead, not only tensors. Timings are the best of 3 calls after a warm-up, on
whatever the machine's other load allows; the ratios are the meaningful part. ``main(smoke=True)`` runs one small
size per shape (``SMOKE_N``), in seconds: a check that the benchmark runs.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

D, H, NQ = 64, 4, 64
KEYS_N = (1024, 4096, 16384, 65536)
SELF_N = (1024, 2048, 4096)
BWD_N = (4096, 16384)
SMOKE_N = 256
DENSE_LIMIT = 1.5 * 2**30


def _inputs(nq: int, n: int, device, grad: bool = False):
    g = torch.Generator(device="cpu").manual_seed(0)
    q, k, v = (torch.randn(1, H, m, D, generator=g).to(device) for m in (nq, n, n))
    if grad:
        for t in (q, k, v):
            t.requires_grad_()
    return q, k, v


def _call(method: str, q, k, v, backward: bool):
    from iclab.attention import adaptive_attention, adaptive_softmax

    if method == "sdpa":
        out = F.scaled_dot_product_attention(q, k, v)
    elif method == "streaming":
        out = adaptive_attention(q, k, v)  # auto chunk: ~4M logits per chunk, >= 1024 keys
    else:
        out = adaptive_softmax(q @ k.transpose(-1, -2) / math.sqrt(D)) @ v
    if backward:
        out.sum().backward()
    return out


def _dense_ok(nq: int, n: int, backward: bool) -> bool:
    return (8 if backward else 5) * H * nq * n * 4 <= DENSE_LIMIT


def _configs(smoke: bool = False):
    for n in (SMOKE_N,) if smoke else KEYS_N:
        yield "keys", NQ, n, False
    for n in (SMOKE_N,) if smoke else SELF_N:
        yield "self", n, n, False
    for n in (SMOKE_N,) if smoke else BWD_N:
        yield "fwd+bwd", NQ, n, True


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def _time(method, nq, n, backward, device) -> float:
    q, k, v = _inputs(nq, n, device, backward)
    ctx = torch.enable_grad() if backward else torch.no_grad()
    with ctx:
        _call(method, q, k, v, backward)
        ts = []
        for _ in range(3):
            _sync(device)
            t0 = time.perf_counter()
            _call(method, q, k, v, backward)
            _sync(device)
            ts.append(time.perf_counter() - t0)
    return min(ts)


def _status(key: str) -> int:
    return int(re.search(key + r":\s+(\d+)", open("/proc/self/status").read()).group(1)) * 1024


def _peak_cpu(method, nq, n, backward) -> float:
    q, k, v = _inputs(nq, n, torch.device("cpu"), backward)
    ctx = torch.enable_grad() if backward else torch.no_grad()
    with ctx:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        base = _status("VmRSS")
        out = _call(method, q, k, v, backward)
        peak = _status("VmHWM") - base
    del out
    return peak / 2**20


def _peak_cuda(method, nq, n, backward, device) -> float:
    q, k, v = _inputs(nq, n, device, backward)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    with torch.enable_grad() if backward else torch.no_grad():
        _call(method, q, k, v, backward)
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - base) / 2**20


def _memory_child(smoke: bool = False) -> None:
    torch.set_num_threads(1)
    res = {}
    for kind, nq, n, bwd in _configs(smoke):
        for m in ("sdpa", "streaming", "dense"):
            if m == "dense" and not _dense_ok(nq, n, bwd):
                continue
            res[f"{kind}/{nq}/{n}/{m}"] = _peak_cpu(m, nq, n, bwd)
    print("MEMORY " + json.dumps(res))


def _cpu_memory(smoke: bool = False) -> dict:
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")
    p = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--memory-child"] + (["--smoke"] if smoke else []),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    line = [x for x in p.stdout.splitlines() if x.startswith("MEMORY ")]
    if not line:
        raise RuntimeError("memory child failed: " + p.stderr[-2000:])
    return json.loads(line[0][7:])


def main(smoke: bool = False) -> None:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    mem = _cpu_memory(smoke) if device.type == "cpu" else None
    how = "peak RSS added (child process, VmHWM)" if mem is not None else "torch.cuda.max_memory_allocated added"
    print(
        f"adaptive attention benchmark on {device} ({torch.get_num_threads()} threads), d={D}, heads={H}, "
        f"auto chunk; memory = {how}"
    )
    print(
        f"{'shape':8s} {'n_q':>6s} {'n':>6s} | {'sdpa ms':>9s} {'stream ms':>9s} {'dense ms':>9s} | "
        f"{'sdpa MiB':>9s} {'strm MiB':>9s} {'dense MiB':>9s} | {'stream/sdpa t':>13s} {'dense/stream mem':>16s}"
    )
    for kind, nq, n, bwd in _configs(smoke):
        row_t, row_m = {}, {}
        for m in ("sdpa", "streaming", "dense"):
            if m == "dense" and not _dense_ok(nq, n, bwd):
                continue
            row_t[m] = 1e3 * _time(m, nq, n, bwd, device)
            row_m[m] = mem[f"{kind}/{nq}/{n}/{m}"] if mem is not None else _peak_cuda(m, nq, n, bwd, device)
        fmt = lambda d, k: f"{d[k]:9.1f}" if k in d else f"{'skipped':>9s}"  # noqa: E731
        ratio_m = f"{row_m['dense'] / max(row_m['streaming'], 1e-3):16.1f}" if "dense" in row_m else f"{'—':>16s}"
        print(
            f"{kind:8s} {nq:6d} {n:6d} | {fmt(row_t, 'sdpa')} {fmt(row_t, 'streaming')} {fmt(row_t, 'dense')} | "
            f"{fmt(row_m, 'sdpa')} {fmt(row_m, 'streaming')} {fmt(row_m, 'dense')} | "
            f"{row_t['streaming'] / row_t['sdpa']:13.2f} {ratio_m}"
        )
    print(
        f"dense skipped where 5 (8 with backward) copies of the H x n_q x n float32 scores exceed "
        f"{DENSE_LIMIT / 2**30:.1f} GiB."
    )


if __name__ == "__main__":
    if "--memory-child" in sys.argv:
        _memory_child("--smoke" in sys.argv)
    else:
        main("--smoke" in sys.argv)
