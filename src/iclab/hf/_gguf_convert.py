"""Dequantise a packaged GGUF model once into iclab's fp32 cache (:mod:`iclab.hf._loading`): the packages a conversion
needs, a lock so that processes finding the cache missing at once convert one at a time, and the conversion itself
(written to a scratch folder, then moved into place). ``spec`` is a packaged model of ``_loading`` (its alias, GGUF
file name, ``locate(workdir)`` and ``package``), untyped here so that this module imports nothing of ``_loading``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any, Iterator

import torch

from iclab.errors import UnsupportedModelError
from iclab.files import process_ended

__all__: list[str] = []  # used by iclab.hf._loading only


def require_converter(spec: Any) -> None:
    """The packages a conversion needs: the model's own, ``gguf`` and ``accelerate`` (else one install line)."""
    package = spec.package
    for module, name in ((package.module, package.distribution), ("gguf", "gguf"), ("accelerate", "accelerate")):
        if importlib.util.find_spec(module) is None:
            raise package.missing(name)


@contextlib.contextmanager
def conversion_lock(target: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``<target>.lock`` beside the cache folder ``target``: processes that find the
    cache missing at once (the workers of a pool, test processes side by side on a fresh machine) convert the model
    one at a time, and the later ones find the cache written. Where no lock can be taken (no ``fcntl``, a cache
    folder that cannot be written) it holds nothing: the conversion then reports an unwritable cache itself."""
    try:
        import fcntl

        target.parent.mkdir(parents=True, exist_ok=True)
        handle = open(target.with_name(target.name + ".lock"), "a")
    except (ImportError, OSError):
        handle = None
    if handle is None:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        yield


def convert_gguf(spec: Any, target: Path) -> None:
    """Dequantise ``spec``'s GGUF file into fp32 safetensors + tokenizer at ``target`` (written atomically: into the
    scratch folder ``<target>.tmp<pid>``, then renamed). A full disk or an unwritable cache while writing is one
    UnsupportedModelError, and nothing is left at ``target``; the scratch folders of conversions whose process was
    killed (``kill -9``) are removed first."""
    from safetensors import SafetensorError  # a dependency of transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    package = spec.package
    work = target.with_name(target.name + f".tmp{os.getpid()}")
    _remove_stale_scratch(target)
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UnsupportedModelError(
            f"model {spec.alias!r}: cannot write the model cache {target.parent} ({exc}); "
            "set ICLAB_CACHE to a writable folder"
        ) from None
    try:
        try:
            folder = spec.locate(work / "gguf")
        except ImportError:
            raise package.missing(package.distribution) from None
        except (OSError, ValueError) as exc:
            raise UnsupportedModelError(
                f"model {spec.alias!r}: its package {package.distribution} is broken ({first_line(exc)}); "
                f"reinstall it: iclab models install {spec.alias}"
            ) from None
        if not (folder / spec.gguf_file).exists():
            raise UnsupportedModelError(
                f"model {spec.alias!r}: {folder} has no {spec.gguf_file}; reinstall it: iclab models install {spec.alias}"
            )
        try:  # a zero-byte or truncated GGUF: "cannot mmap an empty file", "cannot reshape array of size …"
            with _one_parse_per_gguf():
                tok = AutoTokenizer.from_pretrained(folder, gguf_file=spec.gguf_file)
                model = _dequantised_copy(
                    AutoModelForCausalLM.from_pretrained(folder, gguf_file=spec.gguf_file, dtype=torch.float32)
                )
        except Exception as exc:  # noqa: BLE001 - a damaged file fails anywhere in the parser (struct.error …)
            raise UnsupportedModelError(
                f"model {spec.alias!r}: {folder / spec.gguf_file} is damaged ({first_line(exc)}); reinstall it: "
                f"iclab models install {spec.alias}"
            ) from None
        out = work / "model"
        try:  # a full disk: OSError from Python's writes, SafetensorError ("… (os error 28)") from the weights'
            model.save_pretrained(out, safe_serialization=True)
            tok.save_pretrained(out)
            if not target.exists():  # else another process cached it meanwhile
                out.replace(target)
        except (OSError, SafetensorError) as exc:
            raise UnsupportedModelError(
                f"model {spec.alias!r}: cannot write the model cache {target.parent} ({first_line(exc)}); "
                "free space there or set ICLAB_CACHE to a folder with room, then load it again"
            ) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def _one_parse_per_gguf():
    """Within this block ``gguf.GGUFReader(path)`` parses each file once, with :func:`_fast_reader`: transformers reads
    one GGUF file three times (the config, the tokenizer, the weights; ``load_gguf_checkpoint`` imports the reader at
    each call), and parsing Gemma 3's 262k-token vocabulary is most of its conversion time. The reader is read-only
    (a memory map), so the three loads see what three parses would give; the converted cache is byte-identical
    (``tests/test_hf_gguf_convert.py``)."""
    import gguf

    original, readers, fast = gguf.GGUFReader, {}, _fast_reader()

    def reader(path, *args, **kwargs):
        key = (os.fspath(path), args, tuple(sorted(kwargs.items())))
        if key not in readers:
            readers[key] = fast(path, *args, **kwargs)
        return readers[key]

    gguf.GGUFReader = reader
    try:
        yield
    finally:
        gguf.GGUFReader = original


class _Bytes(bytes):
    """A string's bytes as a GGUF reader part: what the reader and transformers read of a part (``nbytes``,
    ``tobytes``, indexing and ``list()``, which transformers calls on every string of a vocabulary), without a
    numpy array per string."""

    @property
    def nbytes(self) -> int:
        return len(self)

    def tobytes(self) -> bytes:
        return bytes(self)


def _fast_reader():
    """``gguf.GGUFReader`` with flat metadata arrays (a vocabulary's strings, scores and token types) read in one
    pass: the stock reader builds every element from memory-map slices (Gemma 3: 786k elements, 12.8M slices, 17 s
    of a 52 s conversion); this one gives the same fields — the same parts, data indices and types, each string's
    bytes a :class:`_Bytes` — from one read of the array. Anything else (a nested array, a big-endian file) is the
    stock reader's."""
    import gguf
    import numpy as np
    from gguf.constants import GGUFValueType

    class FastReader(gguf.GGUFReader):
        def _get_field_parts(self, orig_offs: int, raw_type: int):
            if GGUFValueType(raw_type) != GGUFValueType.ARRAY or self.byte_order != "I" or sys.byteorder != "little":
                return super()._get_field_parts(orig_offs, raw_type)
            raw_itype = self._get(orig_offs, np.uint32)
            alen = self._get(orig_offs + 4, np.uint64)
            itype, n, offs = GGUFValueType(raw_itype[0]), int(alen[0]), orig_offs + 12
            scalar = self.gguf_scalar_to_np.get(itype)
            if itype != GGUFValueType.STRING and scalar is None:
                return super()._get_field_parts(orig_offs, raw_type)
            parts: list = [raw_itype, alen]
            end = len(self.data)
            if itype == GGUFValueType.STRING:
                buf = memoryview(self.data)
                for _ in range(n):
                    size = int.from_bytes(buf[offs : offs + 8], "little") if offs + 8 <= end else end
                    if offs + 8 + size > end:  # as the stock reader, a file cut short is an error, never a loop
                        raise ValueError(f"GGUF array at offset {orig_offs} runs past the end of the file")
                    parts += [np.array([size], dtype=np.uint64), _Bytes(buf[offs + 8 : offs + 8 + size])]
                    offs += 8 + size
                data = list(range(3, 2 + 2 * n, 2))
            else:
                values = self._get(offs, scalar, n).view(np.ndarray)
                if len(values) != n:
                    raise ValueError(f"GGUF array at offset {orig_offs} runs past the end of the file")
                parts += [values[i : i + 1] for i in range(n)]
                offs += int(values.nbytes)
                data = list(range(2, 2 + n))
            types = [GGUFValueType.ARRAY] + ([itype] if n else [])
            return offs - orig_offs, parts, data, types

    return FastReader


def _remove_stale_scratch(target: Path) -> None:
    """Remove the scratch folders ``<target>.tmp<pid>`` of conversions whose process no longer runs (best effort)."""
    pattern = re.compile(rf"{re.escape(target.name)}\.tmp([1-9][0-9]{{0,9}})")
    with contextlib.suppress(OSError), os.scandir(target.parent) as entries:
        for entry in entries:
            found = pattern.fullmatch(entry.name)
            if found and process_ended(int(found.group(1))):
                shutil.rmtree(entry.path, ignore_errors=True)


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


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type's name when it has none): one line for an error."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
