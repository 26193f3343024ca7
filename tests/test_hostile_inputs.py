"""Regression tests for the hostile inputs of issue 40: each case crashed, hung, printed a traceback, replaced a
user's file or was silently accepted on main 14f4820; each now gives one clear error or the right result."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

from iclab.attention import (
    adaptive_attention,
    attention_entropy,
    dispersion_summary,
    logit_spread,
    max_coefficient,
    normalise,
    softmax,
)
from iclab.errors import ConfigError


def _qkv(n_q: int, n_k: int, batch: int = 1, d: int = 8, dtype=torch.float32):
    g = torch.Generator().manual_seed(3)
    return tuple(torch.randn(batch, 1, n, d, generator=g, dtype=dtype) for n in (n_q, n_k, n_k))


# --- attention: empty inputs return empty (or zero) outputs; the CPU flash kernel died on them (exit 136) ---


@pytest.mark.parametrize("n_q, n_k, batch", [(2, 0, 1), (0, 0, 1), (0, 3, 1), (2, 3, 0)])
def test_adaptive_attention_on_empty_inputs_returns_zeros_of_the_output_shape(n_q, n_k, batch):
    q, k, v = _qkv(n_q, n_k, batch)
    out = adaptive_attention(q, k, v)
    assert out.shape == (batch, 1, n_q, 8) and out.dtype == torch.float32
    assert bool((out == 0).all())  # no key visible: a zero row, as for a fully masked row


def test_adaptive_attention_with_no_key_keeps_the_autograd_graph():
    q, k, v = (t.requires_grad_() for t in _qkv(2, 0))
    adaptive_attention(q, k, v).sum().backward()
    assert q.grad is not None and bool((q.grad == 0).all())


@pytest.mark.parametrize(
    "kwargs, names",
    [
        ({"scale": float("nan")}, "scale"),
        ({"scale": float("inf")}, "scale"),
        ({"scale": -1.0}, "scale"),
    ],
)
def test_adaptive_attention_refuses_a_scale_that_is_not_finite_and_positive(kwargs, names):
    with pytest.raises(ConfigError, match=names):
        adaptive_attention(*_qkv(2, 3), **kwargs)


def test_adaptive_attention_refuses_mixed_dtypes_the_meta_device_and_d_zero():
    q, k, v = _qkv(2, 3)
    with pytest.raises(ConfigError, match="dtype and device of q"):
        adaptive_attention(q.half(), k, v)
    with pytest.raises(ConfigError, match="meta"):
        adaptive_attention(q.to("meta"), k.to("meta"), v.to("meta"))
    with pytest.raises(ConfigError, match="d >= 1"):
        adaptive_attention(q[..., :0], k[..., :0], v)
    with pytest.raises(ConfigError, match="torch.Tensor"):
        adaptive_attention(q.tolist(), k, v)


def test_normalisers_refuse_a_tau_that_does_not_broadcast_and_meta_scores():
    scores = torch.randn(2, 3, 5)
    with pytest.raises(ConfigError, match="broadcastable to \\(2, 3, 5\\)"):
        softmax(scores, tau=torch.ones(4))
    with pytest.raises(ConfigError, match="broadcastable"):
        normalise("adaptive_softmax", scores, tau=torch.ones(3, 1, 1))  # would grow the scores to (3, 3, 5)
    assert normalise("softmax", scores, tau=torch.full((3, 1), 2.0)).shape == scores.shape  # per-row τ is fine
    with pytest.raises(ConfigError, match="meta"):
        normalise("softmax", scores.to("meta"))


def test_dispersion_diagnostics_of_rows_with_no_key_are_nan_not_an_error():
    empty = torch.randn(2, 0)
    assert logit_spread(empty).shape == (2,) and bool(torch.isnan(logit_spread(empty)).all())
    assert bool(torch.isnan(max_coefficient(empty)).all())
    assert bool((attention_entropy(empty) == 0).all())
    summary = dispersion_summary(empty)
    assert bool(torch.isnan(summary["min_coef"]).all()) and bool((summary["n"] == 0).all())
    with pytest.raises(ConfigError, match="meta"):
        logit_spread(torch.randn(2, 3, device="meta"))


# --- iclab.hf.set_temperature: τ range per dtype, complex τ, a deep copy's forward ---


def _gpt2():
    from _hf_helpers import tiny_models

    return tiny_models(dtype=torch.float32)["gpt2"]


@pytest.mark.parametrize(
    "tau",
    [1e308, 1e-45, 1j, np.complex128(1 + 0j), np.ones(3, dtype=complex), torch.ones(3, dtype=torch.complex64)],
    ids=["1e308", "1e-45", "1j", "np.complex128", "complex array", "complex tensor"],
)
def test_set_temperature_refuses_tau_outside_the_models_dtype_range_or_complex(tau):
    from iclab.hf import get_temperature, set_temperature

    model = _gpt2()
    with pytest.raises(ConfigError, match="tau"):
        set_temperature(model, tau)
    assert get_temperature(model) is None  # nothing was installed


def test_set_temperature_keeps_the_extremes_of_float32_that_give_finite_logits():
    from iclab.hf import set_temperature

    model = _gpt2()
    for tau in (1e38, 1e-38):
        set_temperature(model, tau)
        assert bool(torch.isfinite(model(torch.tensor([[1, 2, 3, 4]])).logits).all())


def test_a_deep_copy_of_a_model_with_a_temperature_says_what_to_do():
    from iclab.errors import UnsupportedModelError
    from iclab.hf import set_temperature

    model = set_temperature(_gpt2(), 0.5)
    with pytest.raises(UnsupportedModelError, match="call set_temperature on the copy"):
        copy.deepcopy(model)(torch.tensor([[1, 2, 3]]))
    assert math.isfinite(float(model(torch.tensor([[1, 2, 3]])).logits.detach().sum()))


# --- config files: limits on size, nesting and YAML aliases; a key given twice refused in every format ---

_BOMB = (
    "surrogate_dims: [[&a [1,1,1,1,1,1,1,1,1], "
    + ", ".join(f"&{b} [{', '.join(['*' + a] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi"))
    + "]]\n"
)


@pytest.mark.parametrize(
    "name, content, says",
    [
        ("bomb.yaml", _BOMB, "at most 100000 values"),
        ("self.yaml", "d: &a [*a]\n", "nested at most"),
        ("deep.json", '{"d": ' + "[" * 50_000 + "]" * 50_000 + "}", "nested at most"),
        ("deep.toml", "d = " + "[" * 50_000 + "]" * 50_000 + "\n", "nested at most"),
        ("dup.yaml", "d: 3\nd: 5\n", "given twice"),
        ("dup.json", '{"d": 3, "d": 5}', "given twice"),
        ("dup.toml", "d = 3\nd = 5\n", "TOML"),
        ("latin.toml", b'name = "caf\xe9"\n', "UTF-8"),
        ("big.json", '{"d": "' + "x" * (1 << 20) + '"}', "at most 1048576 bytes"),
    ],
)
def test_hostile_config_files_are_one_clear_error_quickly(tmp_path, name, content, says):
    import time

    from iclab.config import read_config_file

    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    start = time.monotonic()
    with pytest.raises(ConfigError, match=says) as exc:
        read_config_file(path)
    assert time.monotonic() - start < 10 and len(str(exc.value)) < 400


def test_yaml_aliases_and_merge_keys_that_stay_small_still_load(tmp_path):
    from iclab.config import read_config_file

    path = tmp_path / "ok.yaml"
    path.write_text("base: &b {}\nd: 3\nx: &a [1, 2]\ny: *a\n")
    with pytest.raises(ConfigError, match="flat table"):  # a nested table is still refused, as before
        read_config_file(path)
    path.write_text("d: 3\nx: &a [1, 2]\ny: *a\n")
    assert read_config_file(path) == {"d": 3, "x": [1, 2], "y": [1, 2]}


def test_short_repr_of_an_alias_bomb_is_bounded():
    from iclab.errors import short_repr

    value: list = [1] * 9
    for _ in range(9):
        value = [value] * 9  # 9**10 elements if expanded
    assert len(short_repr(value)) <= 130
    assert short_repr("x" * 100_000).endswith("(100000 characters)")
    assert short_repr([1, 2]) == "[1, 2]" and short_repr("ab") == "'ab'"


def test_a_set_value_nested_past_the_stack_is_a_config_error():
    from iclab.config._values import coerce_value

    with pytest.raises(ConfigError, match="d="):
        coerce_value("d", "[" * 50_000, tuple[int, ...])


def test_a_closed_pipe_ends_the_command_quietly_with_141():
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "iclab", "show", "temperature"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc.stdout.close()  # the reader is gone before the first write
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141 and b"Traceback" not in err and not err.strip()


# --- lm-eval: arguments checked before a model loads; one line under lm-eval's own command line ---


@pytest.mark.parametrize("tau", [-1, "-1", "0", "nan", "inf", 0.0])
def test_lm_eval_tau_that_is_not_positive_is_refused_before_loading(tau):
    from iclab.hf._lm_eval import IclabHFLM, parse_tau

    with pytest.raises(ConfigError, match="tau"):
        parse_tau(tau)
    with pytest.raises(ConfigError, match="tau"):
        IclabHFLM(pretrained="/no/such/folder", tau=tau)  # tau first: nothing is loaded


@pytest.mark.parametrize("pretrained", ["/no/such/folder", "./missing", "a/b/c", "~/nope-iclab-x"])
def test_lm_eval_pretrained_that_is_a_missing_folder_is_a_config_error(pretrained):
    from iclab.hf._lm_eval import IclabHFLM

    with pytest.raises(ConfigError, match="pretrained"):
        IclabHFLM(pretrained=pretrained, device="cpu")


def test_lm_eval_cuda_without_cuda_falls_back_to_the_cpu_with_a_note(monkeypatch, capsys):
    from iclab.hf._lm_eval import _on_a_device_here

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert _on_a_device_here({"batch_size": 8})["device"] == "cpu"  # lm-eval's default device is cuda
    assert _on_a_device_here({"device": "cuda:0"})["device"] == "cpu"
    assert capsys.readouterr().err.count("running on cpu") == 2
    assert _on_a_device_here({"device": "cpu"}) == {"device": "cpu"} and not capsys.readouterr().err


def test_lm_evals_own_command_line_says_a_bad_tau_in_one_line():
    import os
    import subprocess
    import sys
    from pathlib import Path

    lm_eval = Path(sys.executable).parent / "lm_eval"
    args = ["--model", "iclab-hf", "--model_args", "pretrained=smollm2,tau=-1", "--tasks", "arc_easy"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    proc = subprocess.run([str(lm_eval), *args], capture_output=True, text=True, timeout=300, env=env)
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error: ")]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and len(errors) == 1 and "tau=-1" in errors[0]


# --- other files users hand in: prompts (JSONL) and lm-eval tau files ---


@pytest.mark.parametrize(
    "content, says",
    [
        ('{"prompt": ' + "[" * 50_000 + "]" * 50_000 + "}\n", "nested too deep"),
        ('{"prompt": "a", "prompt": "b"}\n', "given twice"),
    ],
)
def test_a_hostile_prompts_line_is_one_config_error(tmp_path, content, says):
    from iclab.cli._hf import read_prompts

    path = tmp_path / "p.jsonl"
    path.write_text(content)
    with pytest.raises(ConfigError, match=says):
        read_prompts(path)


def test_a_tau_file_nested_past_the_parsers_stack_is_one_config_error(tmp_path):
    from iclab.hf._lm_eval import parse_tau

    path = tmp_path / "tau.json"
    path.write_text("[" * 50_000 + "]" * 50_000)
    with pytest.raises(ConfigError, match="tau"):
        parse_tau(str(path))
    path.write_text('{"layer_tau": [1.0], "layer_tau": [2.0]}')
    with pytest.raises(ConfigError, match="given twice"):
        parse_tau(str(path))


def test_running_out_of_memory_is_one_error_line(monkeypatch, capsys):
    import iclab.cli._runs
    from iclab.cli import main

    def exhausted(path):
        raise MemoryError

    monkeypatch.setattr(iclab.cli._runs, "read_config_file", exhausted)
    capsys.readouterr()
    rc = main(["run", "temperature", "--config", "x.yaml"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: out of memory")
