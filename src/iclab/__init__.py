"""iclab: in-context learning in softmax attention.

Layers (imports point downwards): cli > report > experiments > runs > train, hf > models > estimators >
theory > data > attention > config, plotting > errors. See README.md and docs/design.md.
"""

__version__ = "0.1.0"  # the one place the version is written (pyproject.toml reads it; `iclab --version`)

from iclab.errors import ConfigError, IclabError, RunFolderError, UnsupportedModelError  # noqa: E402

__all__ = ["ConfigError", "IclabError", "RunFolderError", "UnsupportedModelError", "__version__"]
