"""iclab: in-context learning in softmax attention.

Layers (imports point downwards): cli > report > experiments > runs > train, hf > models > estimators >
theory > data > attention > config, plotting > errors. See README.md and docs/design.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iclab._version import __version__ as __version__  # written in iclab/_version.py only
from iclab.errors import ConfigError, IclabError, RunFolderError, UnsupportedModelError

if TYPE_CHECKING:  # for type checkers and the API reference; at run time __getattr__ imports it on first use
    from iclab.experiments import load_run as load_run

__all__ = ["ConfigError", "IclabError", "RunFolderError", "UnsupportedModelError", "__version__", "load_run"]


def __getattr__(name: str) -> Any:
    """``iclab.load_run`` is imported on first use (it needs pandas and the experiments): ``import iclab`` stays
    light."""
    if name == "load_run":
        from iclab.experiments import load_run

        return load_run
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
