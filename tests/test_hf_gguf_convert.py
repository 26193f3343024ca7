"""The GGUF → fp32 conversion parses each GGUF file once (``_one_parse_per_gguf``: transformers reads one file three
times, for the config, the tokenizer and the weights), and the cache it writes is byte-identical to three parses'."""

import contextlib
import hashlib

import numpy as np
import pytest

from iclab.hf import _gguf_convert, _loading


def _tiny_gguf(path) -> None:
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_string("general.name", "tiny")
    writer.add_tensor("w", np.arange(8, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_a_gguf_file_is_parsed_once_inside_the_block_only(tmp_path):
    import gguf

    path = tmp_path / "tiny.gguf"
    _tiny_gguf(path)
    original = gguf.GGUFReader
    with _gguf_convert._one_parse_per_gguf():
        first = gguf.GGUFReader(path)
        assert gguf.GGUFReader(str(path)) is first  # str or Path: one file, one parse
        assert np.array_equal(first.get_tensor(0).data, np.arange(8, dtype=np.float32))
    assert gguf.GGUFReader is original
    assert gguf.GGUFReader(path) is not first
    with pytest.raises(RuntimeError), _gguf_convert._one_parse_per_gguf():
        raise RuntimeError("a damaged file")
    assert gguf.GGUFReader is original  # restored after an error too


def _digests(folder) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_the_converted_cache_is_byte_identical_to_three_parses(tmp_path, monkeypatch):
    spec = _loading._PACKAGED["smollm2"]
    _gguf_convert.convert_gguf(spec, tmp_path / "once")
    monkeypatch.setattr(_gguf_convert, "_one_parse_per_gguf", contextlib.nullcontext)
    _gguf_convert.convert_gguf(spec, tmp_path / "thrice")
    once, thrice = _digests(tmp_path / "once"), _digests(tmp_path / "thrice")
    assert "model.safetensors" in once and "tokenizer.json" in once
    assert once == thrice
