"""Run folders: ``config.json`` (config, its hash, iclab version, seed, git revision, package versions),
``results.sqlite``, ``figures/`` and ``report.md``.

A folder written by another config or another iclab version is never mixed with a new run: opening it
raises :class:`RunFolderError` asking for ``--out`` or ``--force`` (which clears the old results).
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from iclab import __version__
from iclab.errors import RunFolderError

__all__ = ["RunFolder", "iclab_version", "environment_versions", "git_revision", "code_hash"]

_PACKAGES = ("torch", "numpy", "scipy", "transformers", "ray", "pandas", "matplotlib")


def iclab_version() -> str:
    """The running iclab's version (single source: ``iclab.__version__``)."""
    return __version__


def environment_versions() -> dict[str, str]:
    """Versions of Python and of the packages results depend on (stored in ``config.json``)."""
    out = {"python": platform.python_version()}
    for pkg in _PACKAGES:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def code_hash() -> str:
    """SHA-256 (16 hex) of iclab's own source files: a run folder written by other code is never resumed.

    Unlike the version string (fixed between releases) or the git revision (absent outside a checkout,
    blind to uncommitted edits), it changes exactly when the code that computes cells changes."""
    import hashlib

    root = Path(__file__).resolve().parents[1]  # the iclab package
    digest = hashlib.sha256()
    for file in sorted(root.rglob("*.py")):
        digest.update(str(file.relative_to(root)).encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def git_revision() -> str | None:
    """The checkout's git commit, or None outside a git checkout."""
    try:
        here = Path(__file__).resolve().parent
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5)
        return rev.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


@dataclass
class RunFolder:
    path: Path
    meta: dict[str, Any]

    @property
    def figures(self) -> Path:
        return self.path / "figures"

    @classmethod
    def open(cls, path: str | Path, *, experiment: str, preset: str, config: dict, config_hash: str,
             seed: int, force: bool = False) -> "RunFolder":
        """Create ``path`` or reopen it for the same (experiment, config hash, iclab version, code hash)."""
        path = Path(path)
        meta_path = path / "config.json"
        version = iclab_version()
        code = code_hash()
        if meta_path.exists():
            try:
                old = json.loads(meta_path.read_text())
            except json.JSONDecodeError as exc:
                raise RunFolderError(f"{meta_path} is not valid JSON ({exc}); use --out DIR or --force") from None
            same = (old.get("experiment") == experiment and old.get("config_hash") == config_hash
                    and old.get("iclab_version") == version and old.get("code_hash", code) == code)
            if same:
                return cls(path, old)
            if not force:
                what = []
                if old.get("experiment") != experiment:
                    what.append(f"experiment {old.get('experiment')!r} (now {experiment!r})")
                if old.get("config_hash") != config_hash:
                    what.append(f"config hash {old.get('config_hash')} (now {config_hash})")
                if old.get("iclab_version") != version:
                    what.append(f"iclab {old.get('iclab_version')} (now {version})")
                if old.get("code_hash", code) != code:
                    what.append(f"iclab code {old.get('code_hash')} (now {code}: the source changed since)")
                raise RunFolderError(
                    f"run folder {path} holds results of another run: " + "; ".join(what)
                    + ". Results are never mixed: pass --out DIR for a new folder, or --force to discard them.")
            for item in ("results.sqlite", "results.sqlite-wal", "results.sqlite-shm", "figures", "report.md"):
                target = path / item
                if target.is_dir():
                    shutil.rmtree(target)
                elif target.exists():
                    target.unlink()
        path.mkdir(parents=True, exist_ok=True)
        meta = {
            "experiment": experiment,
            "preset": preset,
            "config": config,
            "config_hash": config_hash,
            "seed": seed,
            "iclab_version": version,
            "code_hash": code,
            "git_revision": git_revision(),
            "versions": environment_versions(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        tmp = meta_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(meta, indent=2, sort_keys=True))
        tmp.replace(meta_path)
        return cls(path, meta)

    @classmethod
    def load(cls, path: str | Path) -> "RunFolder":
        """Open an existing run folder for reading (``iclab report``, ``iclab export``)."""
        path = Path(path)
        meta_path = path / "config.json"
        if not meta_path.exists():
            raise RunFolderError(f"{path} is not an iclab run folder (no config.json)")
        try:
            return cls(path, json.loads(meta_path.read_text()))
        except json.JSONDecodeError as exc:
            raise RunFolderError(f"{meta_path} is not valid JSON: {exc}") from None
