"""The GGUF → fp32 conversion parses each GGUF file once (``_one_parse_per_gguf``: transformers reads one file three
times, for the config, the tokenizer and the weights), and the cache it writes is byte-identical to three parses'."""

import contextlib
import hashlib

import numpy as np
import pytest

from iclab.hf import _gguf_convert, _loading


def _tiny_gguf(path, arrays: dict | None = None, tensor: bool = True) -> None:
    """A GGUF file at ``path``: the metadata ``arrays`` (name -> values), ``general.name`` and, with ``tensor``, one
    float32 tensor ``w`` = 0 … 7 (without it the file ends with its metadata)."""
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    for name, values in (arrays or {}).items():
        writer.add_array(name, values)
    writer.add_string("general.name", "tiny")
    if tensor:
        writer.add_tensor("w", np.arange(8, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    if tensor:
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


def _fields(reader) -> list:
    """Every metadata field as the reader gives it: name, offset, types, data indices, the size of its parts and its
    values as transformers parses them (which it cannot for a nested array: its own limit) and as ``contents``."""
    from transformers.integrations.ggml import _gguf_parse_value

    def parsed(f) -> list:
        return [_gguf_parse_value(f.parts[i], f.types) for i in f.data] if len(f.types) <= 2 else []

    return [
        (k, f.offset, f.types, f.data, sum(int(p.nbytes) for p in f.parts), parsed(f), f.contents())
        for k, f in reader.fields.items()
    ]


def test_the_fast_reader_gives_the_stock_reader_s_fields(tmp_path):
    """``_fast_reader`` reads flat metadata arrays in one pass: every field (strings with non-ASCII bytes, float and
    int arrays, empty arrays, a nested array it leaves to the stock reader) and every tensor is the stock reader's,
    on a made-up file and on SmolLM2's packaged GGUF."""
    import gguf

    path = tmp_path / "arrays.gguf"
    arrays = {"tokens": ["a", "", "Ġthe", "日本", "▁x" * 40], "scores": [0.5, -1.25, 3.0], "types": [1, 2, 3, 6],
              "empty": [], "nested": [[1, 2], [3]]}  # fmt: skip
    _tiny_gguf(path, arrays)
    fast = _gguf_convert._fast_reader()
    spec = _loading._PACKAGED["smollm2"]
    packaged = spec.locate(tmp_path / "gguf") / spec.gguf_file
    for file in (path, packaged):
        stock, quick = gguf.GGUFReader(file), fast(file)
        assert _fields(quick) == _fields(stock), file
        assert [(t.name, t.data_offset, t.n_bytes) for t in quick.tensors] == [
            (t.name, t.data_offset, t.n_bytes) for t in stock.tensors
        ]


def test_the_fast_reader_refuses_a_file_cut_inside_an_array(tmp_path):
    """A vocabulary cut short (a truncated download) is an error at once, as the stock reader's, never a loop over
    the array's stated length."""
    path = tmp_path / "cut.gguf"
    _tiny_gguf(path, {"tokens": [f"token{i}" for i in range(1000)], "scores": [float(i) for i in range(1000)]}, False)
    data = path.read_bytes()
    fast = _gguf_convert._fast_reader()
    for cut in (len(data) // 3, len(data) - 100):  # inside the strings; inside the scores
        (tmp_path / "short.gguf").write_bytes(data[:cut])
        with pytest.raises(ValueError, match="runs past the end of the file"):
            fast(tmp_path / "short.gguf")
