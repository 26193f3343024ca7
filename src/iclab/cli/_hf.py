"""``iclab hf probe | tau``: score-moment probes and τ estimation for a Hugging Face model — the temperature of
arXiv:2511.01292's LLM experiment (§5.2, Fig. 3) in a model of your own (docs/papers/temperature.md §3.9; the τ
rules: §5.4). ``--model`` takes ``minilm``, ``smollm2``, ``gemma3-270m``, a local folder or a hub id in the local
cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from iclab.cli import app, show_progress
from iclab.config import check_int, strict_json_loads
from iclab.errors import ConfigError
from iclab.files import atomic_write, write_text_atomic

hf_app = typer.Typer(no_args_is_help=True, help="Attention temperature for Hugging Face models: probes, τ estimation.")
app.add_typer(hf_app, name="hf")

__all__ = ["hf_app", "read_prompts"]

# the options both commands take (typer copies an option's default object for each command)
_MODEL = typer.Option(..., "--model", help="minilm | smollm2 | local path | cached hub id")
_KEY_START = typer.Option(0, "--key-start", help="ignore keys before this position (e.g. 1: skip BOS)")
_BATCH_SIZE = typer.Option(8, "--batch-size", help="prompts per forward pass")
_DEVICE = typer.Option("cpu", "--device", help="cpu, cuda or cuda:N")
_DTYPE = typer.Option("float32", "--dtype", help="float32, bf16 or fp16")
_TAU_RULE = typer.Option(
    None, "--tau-rule", help="scaling rule(s) of long-context models, e.g. logn:L=2048 or yarn:s=4+softcap:c=30"
)


def read_prompts(path: Path) -> list[str]:
    r"""Prompts from a file: one per line, or JSON lines with a ``"prompt"`` (or ``"text"``) string field.
    ``\n`` inside a plain line stands for a newline. Blank lines are skipped; a malformed line is a ConfigError."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError("--prompts", str(path), "an existing text or JSONL file")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError("--prompts", str(path), f"a UTF-8 text file (byte {exc.start} is not UTF-8)") from None
    prompts = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            try:
                obj = strict_json_loads(line)
            except ValueError as exc:  # bad syntax, a key given twice, nesting past the parser's stack
                why = getattr(exc, "msg", str(exc))
                raise ConfigError("--prompts", f"{p}:{i}", f"valid JSON on every JSONL line ({why})") from None
            text = obj.get("prompt", obj.get("text")) if isinstance(obj, dict) else None
            if not isinstance(text, str) or not text.strip():
                raise ConfigError("--prompts", f"{p}:{i}", 'a JSON object with a non-empty "prompt" string')
            prompts.append(text)
        elif not line.replace("\\n", "\n").strip():
            raise ConfigError("--prompts", f"{p}:{i}", "a prompt with text (this line is only newlines)")
        else:
            prompts.append(line.replace("\\n", "\n"))
    if not prompts:
        raise ConfigError("--prompts", str(path), "at least one prompt")
    return prompts


def _positions(value: str):
    if value == "last":
        return "last"
    try:
        return int(value)
    except ValueError:
        raise ConfigError("--positions", value, "'last' or an integer query position") from None


def _load(model: str, device: str, dtype: str, generate: bool = False):
    """Load the model (``generate``: it must be a causal LM that can generate, for ``--task``)."""
    from iclab.hf import load_model

    need = (
        "a causal language model that can generate (--task scores its greedy answers); for an encoder such as "
        "'minilm' use --prompts FILE --shifted FILE"
    )
    try:
        m, tok, src = load_model(model, causal=True if generate else None, dtype=dtype)
    except ConfigError as exc:
        if generate and exc.field == "causal":
            raise ConfigError("--model", model, need) from None
        raise
    decoder = getattr(m.config, "is_decoder", None) is not False
    if generate and not (getattr(m, "can_generate", lambda: False)() and decoder):
        raise ConfigError("--model", model, need)
    typer.echo(f"model: {src}", err=True)
    return m.to(device), tok


def _check_device(device: str) -> str:
    """``cpu``, ``cuda`` or ``cuda:N`` that exists on this machine (checked before any model loads)."""
    import torch

    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ConfigError("--device", device, "cpu, cuda or cuda:N") from None
    if dev.type == "cuda" and (not torch.cuda.is_available() or (dev.index or 0) >= torch.cuda.device_count()):
        raise ConfigError("--device", device, f"cpu or a visible CUDA device ({torch.cuda.device_count()} visible)")
    if dev.type not in ("cpu", "cuda"):
        raise ConfigError("--device", device, "cpu, cuda or cuda:N")
    return device


def _check_key_start(key_start: int) -> None:
    check_int("--key-start", key_start, 0)


_PROBE_COLUMNS = "layer,head,rows,mean,var,row_var,spread,entropy"  # the header of `iclab hf probe --out`
_FORCE = typer.Option(False, "--force", help="replace an existing --out file that iclab did not write")


def _check_out(out: Optional[Path], force: bool, ours, what: str) -> None:
    """The output file may be written: not a folder, in an existing writable folder, and not a file iclab did not
    write (:func:`iclab.files.check_out`); checked before the model runs, so no result is lost, and nothing is
    created here."""
    if out is None:
        return
    import os
    import tempfile

    from iclab.files import check_out

    check_out(out, force, ours, what)
    folder = Path(out).expanduser().resolve().parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise ConfigError("--out", str(out), "a file path in an existing, writable folder")
    try:  # /proc and friends pass os.access but refuse new files: try one, then remove it
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ConfigError("--out", str(out), f"a writable file path ({exc.strerror})") from None


def _is_probe_table(path: Path) -> bool:
    with open(path, encoding="utf-8") as fh:
        return fh.readline().strip() == _PROBE_COLUMNS


def _is_tau_estimate(path: Path) -> bool:
    data = json.loads(path.read_text(encoding="utf-8"))
    return isinstance(data, dict) and {"layer_tau", "ratio", "best_tau", "moment_score"} <= set(data)


def _layer_table(mom) -> str:
    import numpy as np

    lines = [f"{'layer':>5} {'mean':>9} {'var':>9} {'rho':>9} {'spread':>8} {'entropy':>8}"]
    rho = mom.rho()
    for l in range(mom.mean.shape[0]):
        w = np.maximum(mom.rows[l], 1)
        lines.append(
            f"{l:5d} {mom.layer_mean[l]:9.4f} {mom.layer_var[l]:9.4f} {rho[l]:9.4f} "
            f"{np.average(mom.spread[l], weights=w):8.3f} {np.average(mom.entropy[l], weights=w):8.3f}"
        )
    return "\n".join(lines)


def _check_tau(tau: Optional[float]) -> None:
    import math

    if tau is not None and (not math.isfinite(tau) or tau <= 0):
        raise ConfigError("--tau", tau, "a finite temperature > 0")


def _parse_rule(text: Optional[str]) -> tuple:
    """``--tau-rule`` → scaling rules (empty when not given), checked before any model loads."""
    from iclab.hf import parse_scaling_rule

    if text is None:
        return ()
    try:
        return parse_scaling_rule(text)
    except ConfigError as exc:  # the whole text is the parameter: say what of it is wrong, under the flag's name
        why = f"expected {exc.allowed}" if exc.field == "text" and exc.allowed else str(exc)
        raise ConfigError("--tau-rule", text, message=f"invalid --tau-rule={text!r}: {why}") from None


def _check_grid(grid: List[float]) -> None:
    import math

    if not grid or any(not math.isfinite(t) or t <= 0 for t in grid):
        raise ConfigError("--grid", list(grid), "finite temperatures > 0 (repeat --grid for each)")


@hf_app.command("probe")
def probe(
    model: str = _MODEL,
    prompts: Path = typer.Option(..., "--prompts", help="text file (one prompt per line) or JSONL with 'prompt'"),
    positions: str = typer.Option("last", "--positions", help="'last' (answer position) or a query index"),
    tau: Optional[float] = typer.Option(None, "--tau", help="probe under this global temperature"),
    key_start: int = _KEY_START,
    batch_size: int = _BATCH_SIZE,
    out: Optional[Path] = typer.Option(None, "--out", help="write per-(layer, head) statistics as CSV"),
    force: bool = _FORCE,
    device: str = _DEVICE,
    dtype: str = _DTYPE,
    tau_rule: Optional[str] = _TAU_RULE,
) -> None:
    """Per-layer (and with --out per-head) moments of the pre-softmax scores and the attention entropy."""
    from iclab.hf import check_prompts, parse_dtype, probe_prompts, set_scaling_rule

    check_int("--batch-size", batch_size, 1)
    _check_key_start(key_start)
    _check_tau(tau)
    _check_device(device)
    parse_dtype(dtype)
    rules = _parse_rule(tau_rule)
    texts = read_prompts(prompts)
    _check_out(out, force, _is_probe_table, "a probe table of iclab hf probe")
    m, tok = _load(model, device, dtype)
    set_scaling_rule(m, rules or None)
    check_prompts(m, tok, texts, "--prompts")  # lengths and tokens before the first forward
    mom = probe_prompts(
        m,
        tok,
        texts,
        positions=_positions(positions),
        batch_size=batch_size,
        key_start=key_start,
        tau=tau,
        progress=show_progress(),
    )
    typer.echo(_layer_table(mom))
    typer.echo(f"mean entropy {mom.mean_entropy():.4f} nats over {len(texts)} prompts")
    if out is not None:
        frame = mom.to_frame()
        with atomic_write(out) as tmp:
            frame.to_csv(tmp, index=False)
        typer.echo(f"per-head statistics -> {out}")


@hf_app.command("tau")
def tau(
    model: str = _MODEL,
    task: Optional[str] = typer.Option(None, "--task", help="noisy-demonstration QA task (capital, antonym, …)"),
    prompts: Optional[Path] = typer.Option(None, "--prompts", help="clean prompts file (instead of --task)"),
    shifted: Optional[Path] = typer.Option(None, "--shifted", help="shifted prompts file (with --prompts)"),
    noise_ratio: float = typer.Option(0.6, "--noise-ratio", help="fraction of wrong demonstrations (--task)"),
    demos: int = typer.Option(6, "--demos", help="demonstrations per prompt (--task)"),
    questions: int = typer.Option(40, "--questions", help="questions: half probe the moments, half score the grid"),
    grid: List[float] = typer.Option([0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0], "--grid", help="τ grid (repeatable)"),
    key_start: int = _KEY_START,
    seed: int = typer.Option(0, "--seed", help="seed of the question split and the wrong demonstrations (--task)"),
    batch_size: int = _BATCH_SIZE,
    out: Optional[Path] = typer.Option(None, "--out", help="write the estimate as JSON"),
    force: bool = _FORCE,
    device: str = _DEVICE,
    dtype: str = _DTYPE,
    tau_rule: Optional[str] = _TAU_RULE,
) -> None:
    """Estimate τ: per-layer moment rule (clean vs shifted prompts) and, with --task, a held-out grid search;
    with --tau-rule, τ on top of that scaling rule."""
    from iclab.hf import check_prompts, estimate_tau, parse_dtype, set_scaling_rule

    check_int("--batch-size", batch_size, 1)
    check_int("--questions", questions, 2)  # half probe the moments, half score the grid
    _check_key_start(key_start)
    _check_grid(grid)
    _check_device(device)
    parse_dtype(dtype)
    rules = _parse_rule(tau_rule)
    _check_out(out, force, _is_tau_estimate, "a tau estimate of iclab hf tau")
    if (task is None) == (prompts is None):
        raise ConfigError(
            "--task/--prompts", (task, prompts), "exactly one of --task NAME or --prompts FILE --shifted FILE"
        )
    score = None
    if task is not None:
        from iclab.data import build_prompts, exact_match, get_task, split_items
        from iclab.hf import greedy_answers

        t = get_task(task)
        qs, pool = split_items(t, questions, seed)
        half = max(1, len(qs) // 2)
        probe_set = build_prompts(t, qs[:half], pool, demos, noise_ratio, seed)
        held = build_prompts(t, qs[half:], pool, demos, noise_ratio, seed)
        clean, noisy = probe_set.clean_prompts, probe_set.prompts
        m, tok = _load(model, device, dtype, generate=True)

        def score(mdl) -> float:
            em = exact_match(greedy_answers(mdl, tok, held.prompts, batch_size=batch_size), held.answers)
            return sum(em) / len(em)
    else:
        if shifted is None:
            raise ConfigError("--shifted", None, "a shifted prompts file together with --prompts")
        clean, noisy = read_prompts(prompts), read_prompts(shifted)
        m, tok = _load(model, device, dtype)
        check_prompts(m, tok, clean, "--prompts")  # both sets before the first forward
        check_prompts(m, tok, noisy, "--shifted")
    set_scaling_rule(m, rules or None)
    est = estimate_tau(
        m,
        tok,
        clean,
        noisy,
        score=score,
        grid=grid,
        key_start=key_start,
        batch_size=batch_size,
        progress=show_progress(),
    )
    typer.echo(f"{'layer':>5} {'rho_clean':>10} {'rho_shift':>10} {'tau':>7}")
    for l, (a, b, t_) in enumerate(zip(est.rho_clean, est.rho_shifted, est.layer_tau)):
        typer.echo(f"{l:5d} {a:10.4f} {b:10.4f} {t_:7.3f}" + ("" if est.valid[l] else "  (ratio invalid -> 1)"))
    typer.echo(f"moment rule: mean layer tau {est.layer_tau.mean():.3f}")
    if score is not None:
        typer.echo("grid: " + "  ".join(f"tau={g:g}: {s:.3f}" for g, s in zip(est.grid, est.grid_scores)))
        typer.echo(f"grid search best tau {est.best_tau:g}; moment-rule tau scores {est.moment_score:.3f}")
    if out is not None:
        write_text_atomic(out, json.dumps(est.summary(), indent=1))
        typer.echo(f"estimate -> {out}")
