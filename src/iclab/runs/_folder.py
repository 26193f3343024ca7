"""Run folders: ``config.json`` (config, its hash, iclab version, seed, git revision, package versions),
``results.sqlite``, ``figures/`` and ``report.md``.

A folder written by another config or another iclab version is never mixed with a new run: opening it
raises :class:`RunFolderError` asking for ``--out`` or ``--force`` (which clears the old results).
:meth:`RunFolder.foreign_code` says what differs (``iclab report`` refuses such a folder without ``--force``); a change to
the code that only judges a run (claims, notes, figures: :mod:`iclab.runs._code`) re-judges it instead
(:meth:`RunFolder.rejudged`). A folder
that is not empty and holds no ``config.json`` is not a run folder and is never written, ``--force`` or not:
iclab overwrites no file it did not write. A path that cannot be a folder (a file, under a file, too long a
name, not writable) is one :class:`RunFolderError` naming the path and the reason.
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

from iclab._version import __version__
from iclab.config import config_hash as hash_of_config
from iclab.errors import RunFolderError
from iclab.files import write_text_atomic
from iclab.runs._code import code_hash, judging_hash

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

    @staticmethod
    def check_target(path: str | Path) -> Path:
        """Refuse, creating nothing, a path that is not a new folder, an empty folder or a run folder."""
        path = Path(path)
        try:
            if path.exists() and not path.is_dir():
                raise RunFolderError(f"{path} is a file, not a folder; pass --out with a new or empty folder")
            if not path.exists():
                return path
            meta = path / "config.json"
            others = sorted(p.name for p in path.iterdir() if p.name != ".lock")
        except OSError as exc:
            raise RunFolderError(f"cannot use {path} as a run folder: {exc.strerror or exc}") from None
        if others and not meta.exists():
            shown = ", ".join(others[:3]) + (", …" if len(others) > 3 else "")
            raise RunFolderError(f"{path} is not empty ({shown}) and is not an iclab run folder (no config.json); "
                                 "iclab never writes into it: pass --out with a new or empty folder")
        return path

    @staticmethod
    def make(path: Path) -> None:
        """``mkdir -p path``; any OS error is one RunFolderError naming the path and the reason."""
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunFolderError(f"cannot create run folder {path}: {exc.strerror or exc}") from None

    @classmethod
    def open(cls, path: str | Path, *, experiment: str, preset: str, config: dict, config_hash: str,
             seed: int, force: bool = False) -> "RunFolder":
        """Create ``path`` or reopen it for the same (experiment, config hash, iclab version, code hash)."""
        path = cls.check_target(path)
        try:
            return cls._open(path, experiment, preset, config, config_hash, seed, force)
        except OSError as exc:  # PermissionError, read-only file system, disk full, ...
            raise RunFolderError(f"cannot write run folder {path}: {exc.strerror or exc}; make it writable or pass "
                                 "--out DIR") from None

    @classmethod
    def check_reuse(cls, path: str | Path, *, experiment: str, config_hash: str, force: bool = False) -> dict | None:
        """What :meth:`open` finds in ``path``, read only: the record of this very run (same experiment, config
        hash, iclab version and code: its cells are reused), or None (no record yet, or ``force`` discards
        another's). A record of another run, or an unreadable one, without ``force`` is the RunFolderError
        :meth:`open` raises."""
        meta_path = Path(path) / "config.json"
        try:
            if not meta_path.exists():
                return None
            old = json.loads(meta_path.read_text())
            if not isinstance(old, dict):
                raise ValueError("not a JSON object")
        except (ValueError, IsADirectoryError) as exc:  # JSONDecodeError, UnicodeDecodeError included
            if not force:
                raise RunFolderError(f"{meta_path} is not a valid run record ({exc}); use --out DIR, or "
                                     "--force to discard this folder's results") from None
            return None
        except OSError as exc:
            raise RunFolderError(f"cannot read {meta_path}: {exc.strerror or exc}") from None
        what = []
        if old.get("experiment") != experiment:
            what.append(f"experiment {old.get('experiment')!r} (now {experiment!r})")
        if old.get("config_hash") != config_hash:
            what.append(f"config hash {old.get('config_hash')} (now {config_hash})")
        what += cls.foreign_code(old)
        if not what:
            return old
        if not force:
            raise RunFolderError(
                f"run folder {path} holds results of another run: " + "; ".join(what)
                + ". Results are never mixed: pass --out DIR for a new folder, or --force to discard them.")
        return None

    @classmethod
    def _open(cls, path: Path, experiment: str, preset: str, config: dict, config_hash: str, seed: int,
              force: bool) -> "RunFolder":
        meta_path = path / "config.json"
        old = cls.check_reuse(path, experiment=experiment, config_hash=config_hash, force=force)
        if old is not None:
            return cls(path, old)
        if meta_path.exists():  # another run's record (or an unreadable one), and --force
            cls.discard_results(path)
            if meta_path.is_dir():
                shutil.rmtree(meta_path)
        cls.make(path)
        meta = {
            "experiment": experiment,
            "preset": preset,
            "config": config,
            "config_hash": config_hash,
            "seed": seed,
            "iclab_version": iclab_version(),
            "code_hash": code_hash(),
            "judging_hash": judging_hash(),
            "git_revision": git_revision(),
            "versions": environment_versions(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        write_text_atomic(meta_path, json.dumps(meta, indent=2, sort_keys=True))
        return cls(path, meta)

    @staticmethod
    def foreign_code(meta: dict[str, Any]) -> list[str]:
        """What differs between the iclab that wrote ``meta`` and this one: its version, the hash of its code that
        computes cells (:func:`~iclab.runs._code.code_hash`; a record without one predates it and is judged by the
        version alone). Empty when they are the same; a change to judging code alone is :meth:`rejudged`."""
        version, code = iclab_version(), code_hash()
        what = []
        if meta.get("iclab_version") != version:
            what.append(f"iclab {meta.get('iclab_version')} (now {version})")
        if meta.get("code_hash", code) != code:
            what.append(f"iclab code {meta.get('code_hash')} (now {code}: the source changed since)")
        return what

    @staticmethod
    def rejudged(meta: dict[str, Any]) -> str:
        """What changed since the run in the code that only judges and presents it (claims, notes, figures, the
        judge, the report: :func:`~iclab.runs._code.judging_hash`), which a report re-judges with, never refuses;
        "" when nothing did, or when the record predates the split."""
        now = judging_hash()
        if meta.get("judging_hash", now) == now:
            return ""
        return f"judging code {meta.get('judging_hash')} (now {now}: claims, notes, figures or the judge changed since)"

    @staticmethod
    def discard_results(path: Path) -> None:
        """Remove what a run writes besides ``config.json`` (``--force``): the store, figures and the report."""
        for item in ("results.sqlite", "results.sqlite-wal", "results.sqlite-shm", "figures", "report.md",
                     "summary.json"):
            target = path / item
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()

    @classmethod
    def load(cls, path: str | Path) -> "RunFolder":
        """Open an existing run folder for reading (``iclab report``, ``iclab export``); changes nothing."""
        path = Path(path)
        if not path.is_dir():
            raise RunFolderError(f"{path} is not a run folder ({'a file' if path.exists() else 'no such folder'})")
        meta_path = path / "config.json"
        if not meta_path.is_file():
            raise RunFolderError(f"{path} is not an iclab run folder (no config.json)")
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError) as exc:
            raise RunFolderError(f"{meta_path} is not a readable run record: {exc}") from None
        if not isinstance(meta, dict) or not isinstance(meta.get("experiment"), str) or \
                not isinstance(meta.get("config"), dict):
            raise RunFolderError(f"{meta_path} is not a run record (it needs 'experiment' and 'config')")
        recorded, actual = meta.get("config_hash"), hash_of_config({"experiment": meta["experiment"],
                                                                  "config": meta["config"]})
        if recorded is not None and recorded != actual:  # edited by hand, or a record pieced together
            raise RunFolderError(f"{meta_path} does not match itself: its config hashes to {actual}, the record says "
                                 f"{recorded} (the config was edited after the run); its results are not reported "
                                 "under another config: restore the file, or rerun with --out DIR")
        return cls(path, meta)
