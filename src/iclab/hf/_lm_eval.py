r"""iclab's attention temperature inside EleutherAI's lm-evaluation-harness: the model ``iclab-hf``, lm-eval's
``HFLM`` with every attention score divided by τ (arXiv:2511.01292 §5.2, docs/papers/temperature.md §3.9), so any
lm-eval task runs under a chosen τ.

``tau=`` takes what :func:`iclab.hf.set_temperature` takes: one float, ``adaptive`` (the entropy rule of
arXiv:2410.01104 Fig. 4, docs/papers/dispersion.md §3.5) or a JSON file of per-layer ``(L,)`` or per-(layer, head)
``(L, H)`` values (a list, or the ``layer_tau`` of ``iclab hf tau --out tau.json``). ``pretrained=smollm2`` or
``gemma3-270m`` loads through :func:`iclab.hf.load_model`; any other folder or hub id goes to ``HFLM``'s own loader,
so every ``--model hf`` argument works there. τ = 1 gives the stock ``--model hf`` numbers exactly.

lm-eval 0.4.13 finds third-party models only once their module is imported (no plugin entry points): importing
this module registers ``iclab-hf``, and :func:`main` (the ``iclab-lm-eval`` command) is lm-eval's own command line
with it registered. Needs the ``lm-eval`` extra; importing :mod:`iclab` or :mod:`iclab.hf` never imports lm-eval.
"""

from __future__ import annotations

import contextlib
import math
import sys
from pathlib import Path
from typing import Any

try:
    from lm_eval.api.registry import register_model
    from lm_eval.models.huggingface import HFLM
except ImportError as exc:  # the optional extra is missing: say how to install it, once
    raise ImportError(f"iclab-hf needs lm-evaluation-harness: pip install 'iclab[lm-eval]' ({exc})") from None

from iclab.config import strict_json_loads
from iclab.errors import ConfigError, IclabError, UnsupportedModelError
from iclab.hf._gguf_convert import first_line
from iclab.hf._loading import load_model, parse_dtype
from iclab.hf._scaling_rules import parse_scaling_rule, set_scaling_rule
from iclab.hf._temperature import set_temperature

__all__ = ["IclabHFLM", "parse_tau", "main"]

PACKAGED_ALIASES = ("smollm2", "gemma3-270m")  # causal LMs that exist only through iclab.hf.load_model
_TAU_ALLOWED = (
    "a positive float, 'adaptive', or a JSON file of per-layer (L) or per-(layer, head) (L, H) values "
    "(a list, or the 'layer_tau' of `iclab hf tau --out tau.json`)"
)
# HFLM arguments that only its own loader understands (they need a hub id or folder, not a loaded model).
_LOADER_ONLY = ("parallelize", "tp_plan", "peft", "delta", "autogptq", "gptqmodel", "gguf_file", "subfolder")


def parse_tau(tau: Any) -> float | str | list:
    """τ from an lm-eval ``model_args`` value: a float, ``"adaptive"``, or the values of a JSON file (a list
    ``(L,)`` / ``(L, H)``, or an object with ``layer_tau``). Shapes are checked by :func:`set_temperature`."""
    if isinstance(tau, (int, float)) and not isinstance(tau, bool):
        return _positive(tau, float(tau))
    if not isinstance(tau, str) or not tau:
        raise ConfigError("tau", tau, _TAU_ALLOWED)
    if tau == "adaptive":
        return tau
    try:
        return _positive(tau, float(tau))
    except ValueError as exc:
        if isinstance(exc, ConfigError):
            raise
    path = Path(tau).expanduser()
    if not path.is_file():
        raise ConfigError("tau", tau, _TAU_ALLOWED)
    try:
        values = strict_json_loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # UnicodeDecodeError, JSONDecodeError, a repeated key, nesting too deep
        raise ConfigError("tau", tau, f"{_TAU_ALLOWED}; cannot read it as JSON ({exc})") from None
    if isinstance(values, dict):
        values = values.get("layer_tau")
    if not isinstance(values, list) or not values:
        raise ConfigError("tau", tau, _TAU_ALLOWED)
    return values


def _positive(raw: Any, value: float) -> float:
    """``value`` when it is a finite temperature > 0 (checked here, before a model loads for half a minute)."""
    if not math.isfinite(value) or value <= 0:
        raise ConfigError("tau", raw, _TAU_ALLOWED)
    return value


def _on_a_device_here(kwargs: dict) -> dict:
    """``kwargs`` with ``device=cpu`` where CUDA is asked for (lm-eval's default is ``cuda``) but this machine has
    none: one note on stderr instead of torch's ``AssertionError: Torch not compiled with CUDA enabled``."""
    import torch

    device = kwargs.get("device") or "cuda"
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        print(f"iclab-hf: device={device} but this machine has no CUDA device; running on cpu", file=sys.stderr)
        return {**kwargs, "device": "cpu"}
    return kwargs


def _check_pretrained(pretrained: Any) -> None:
    """ConfigError for a ``pretrained`` that names a folder which does not exist (a path: absolute, starting with
    ``.`` or ``~``, or with more than one ``/``), instead of the hub's ``Repo id must be in the form …``."""
    if not isinstance(pretrained, str):
        return
    path = Path(pretrained).expanduser()
    looks_like_a_path = path.is_absolute() or pretrained.startswith((".", "~")) or pretrained.count("/") > 1
    if not path.exists() and (looks_like_a_path or not pretrained.strip()):
        raise ConfigError(
            "pretrained", pretrained, "an existing model folder, a cached hub id, or " + " / ".join(PACKAGED_ALIASES)
        )


@contextlib.contextmanager
def _clean_errors():
    """Under lm-eval's own command line (``lm_eval …``, which prints a traceback for any exception), an iclab error
    is one ``error: …`` line and exit status 2, as under ``iclab-lm-eval``; elsewhere it is raised as is."""
    try:
        yield
    except IclabError as exc:
        main_module = getattr(sys.modules.get("__main__"), "__spec__", None)
        if Path(sys.argv[0]).name in ("lm_eval", "lm-eval") or getattr(main_module, "name", "") == "lm_eval.__main__":
            print(f"error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
        raise


def _load_packaged(pretrained: str, device: str | None, dtype: Any, attn_implementation: str | None, kwargs: dict):
    """``(model, tokenizer)`` of an iclab alias through :func:`load_model`, on ``device`` (default: CUDA if any)."""
    import torch

    given = sorted(k for k in _LOADER_ONLY if kwargs.get(k))
    if given:
        raise ConfigError(given[0], kwargs[given[0]], f"not with pretrained={pretrained} (a model iclab loads)")
    dtype = torch.float32 if dtype in (None, "auto") else parse_dtype(dtype)
    model, tok, _ = load_model(pretrained, causal=True, dtype=dtype, attn_implementation=attn_implementation)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    return model.to(device), tok


def _parse_tau_rule(tau_rule: Any) -> tuple:
    """``tau_rule=`` of the model arguments as scaling rules (none for None); an error names ``tau_rule``, the
    argument lm-eval users write, with the reason of :func:`iclab.hf.parse_scaling_rule`."""
    if tau_rule is None:
        return ()
    try:
        return parse_scaling_rule(tau_rule)
    except ConfigError as exc:
        if exc.field != "text":
            raise
        raise ConfigError("tau_rule", exc.value, exc.allowed) from None


@register_model("iclab-hf")
class IclabHFLM(HFLM):
    r"""lm-eval's ``HFLM`` at attention temperature τ: scores :math:`q^\top k\, s/\tau_{\ell h}` in every layer and
    head (:func:`iclab.hf.set_temperature`; arXiv:2511.01292 §5.2, docs/papers/temperature.md §3.9).

    ``pretrained``: ``smollm2``, ``gemma3-270m`` (through :func:`iclab.hf.load_model`), a local folder, a hub id, or
    a loaded ``PreTrainedModel``. ``tau``: see :func:`parse_tau` (default 1, the stock model). ``tau_rule``: named
    scaling rules of long-context models (:func:`iclab.hf.parse_scaling_rule`, e.g. ``logn:L=2048``; ``:`` between
    parameters, ``+`` between rules, as model_args split on commas), composed with τ. Every other argument is
    ``HFLM``'s (``batch_size``, ``device``, ``dtype``, ``max_length``, …).
    """

    def __init__(self, pretrained: Any, tau: Any = 1.0, tau_rule: str | None = None, **kwargs: Any) -> None:
        with _clean_errors():
            tau = parse_tau(tau)  # every argument is checked before a model loads
            rules = _parse_tau_rule(tau_rule)
            kwargs = _on_a_device_here(kwargs)
            if isinstance(pretrained, str) and pretrained.lower() in PACKAGED_ALIASES:
                model, tok = _load_packaged(
                    pretrained.lower(),
                    kwargs.pop("device", None),
                    kwargs.pop("dtype", None),
                    kwargs.pop("attn_implementation", None),
                    kwargs,
                )
                kwargs.setdefault("tokenizer", tok)
                pretrained = model
            _check_pretrained(pretrained)
            try:
                super().__init__(pretrained=pretrained, **kwargs)
            except OSError as exc:  # a hub id that is not cached (offline), a folder without a model
                raise UnsupportedModelError(f"pretrained={pretrained!r}: cannot load it ({first_line(exc)})") from None
            set_temperature(self.model, tau)  # τ = 1 routes through the hook too, and is bit-identical to stock
            set_scaling_rule(self.model, rules or None)
            self.tau, self.tau_rule = tau, "+".join(map(str, rules)) or None

    def get_model_info(self) -> dict:
        """``HFLM``'s model information plus ``iclab_tau`` (τ as given: float, ``adaptive`` or the file's values) and
        ``iclab_tau_rule`` (the scaling rules, or None)."""
        return {**super().get_model_info(), "iclab_tau": self.tau, "iclab_tau_rule": self.tau_rule}


def main(argv: list[str] | None = None) -> int:
    """``iclab-lm-eval ARGS``: lm-eval's command line (``lm_eval ARGS``) with ``--model iclab-hf`` available; iclab's
    own input errors (a bad ``tau=``) print one line and exit 2."""
    from lm_eval.__main__ import cli_evaluate

    saved = sys.argv
    if argv is not None:
        sys.argv = [sys.argv[0], *argv]
    try:
        cli_evaluate()
    except IclabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        sys.argv = saved
    return 0
