"""iclab: in-context learning in softmax attention.

Layers (imports point downwards): cli > report > experiments > runs > train, hf > models, estimators,
theory > data > attention. See README.md and DESIGN.md.
"""

from iclab.errors import ConfigError, IclabError, RunFolderError, UnsupportedModelError

__version__ = "0.1.0"

__all__ = ["ConfigError", "IclabError", "RunFolderError", "UnsupportedModelError", "__version__"]
