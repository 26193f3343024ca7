"""iclab: in-context learning in softmax attention.

Layers (imports point downwards): cli > report > experiments > runs > train, hf > models > estimators >
theory > data > attention > config, plotting > errors. See README.md and docs/design.md.
"""

from iclab.errors import ConfigError, IclabError, RunFolderError, UnsupportedModelError

__version__ = "0.1.0"

__all__ = ["ConfigError", "IclabError", "RunFolderError", "UnsupportedModelError", "__version__"]
