"""Makes ``lm_eval --model iclab-hf`` work: registers iclab's lm-eval model when lm-eval loads its models.

lm-evaluation-harness 0.4.13 has no plugin entry points: a third-party model is known to ``lm_eval`` only once
something registers it in ``lm_eval.api.registry.model_registry``. The one-line ``iclab_lm_eval.pth`` that iclab
installs into ``site-packages`` imports this module when Python starts. It imports nothing of iclab, torch or
lm-eval; it adds one finder to ``sys.meta_path`` that waits for ``lm_eval.models`` to load, then registers
``iclab-hf`` as lm-eval's own lazy placeholder ``"iclab.hf._lm_eval:IclabHFLM"`` (the class is imported only when
``--model iclab-hf`` is asked for). Any failure here is swallowed: a hook must never break an unrelated program.
"""

from __future__ import annotations

import sys

WATCHED = "lm_eval.models"
ALIAS = "iclab-hf"
TARGET = "iclab.hf._lm_eval:IclabHFLM"


def register() -> None:
    """Register ``iclab-hf`` in lm-eval's model registry as a lazy placeholder (no-op if already there)."""
    from lm_eval.api.registry import model_registry

    if ALIAS not in model_registry:
        model_registry.register(ALIAS, target=TARGET)


class _RegisterAfterLoad:
    """A loader that runs the real loader of ``lm_eval.models``, then :func:`register`."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.loader.exec_module(module)
        try:
            register()
        except Exception:  # noqa: BLE001 - an lm-eval without this registry API simply lacks iclab-hf
            pass

    def __getattr__(self, name):  # get_code, get_source, is_package, ... of the real loader
        return getattr(self.loader, name)


class LmEvalModelsFinder:
    """A ``sys.meta_path`` finder that answers only for ``lm_eval.models``: the spec of the other finders, with its
    loader wrapped in :class:`_RegisterAfterLoad`."""

    def find_spec(self, name, path=None, target=None):
        if name != WATCHED:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            try:
                spec = finder.find_spec(name, path, target)
            except Exception:  # noqa: BLE001
                return None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _RegisterAfterLoad(spec.loader)
                return spec
        return None


def install() -> None:
    """Add the finder once (importing this module twice, or a second .pth, adds nothing)."""
    if not any(isinstance(f, LmEvalModelsFinder) for f in sys.meta_path):
        if WATCHED in sys.modules:  # lm_eval.models already loaded (hook imported late): register now
            try:
                register()
            except Exception:  # noqa: BLE001
                pass
            return
        sys.meta_path.insert(0, LmEvalModelsFinder())


try:
    install()
except Exception:  # noqa: BLE001 - see the module docstring
    pass
