"""Fuzz the hostile families of issue 40 (tests/fuzz_harness.py counts every case):

* **config files** in TOML, YAML and JSON with hostile structure (an alias bomb, nesting 50 000 deep, a key given
  twice, bytes that are not UTF-8, a 2 MiB file, binary junk, a nested table, a self-referencing alias, a list of
  300 000 numbers) as ``iclab run NAME --config FILE``, each in a child process under a 3 GiB address-space limit, so
  that a bomb fails the test (MemoryError counted as a traceback) instead of the machine;
* **every --out** (``export`` in both formats, ``hf probe``, ``hf tau``, ``calibrate``) pointed at a user's file or
  a folder: one clear error naming ``--force`` or the folder, and nothing touched;
* **empty and degenerate tensors** through every public tensor function of :mod:`iclab.attention` and the
  ``iclab.hf`` helpers: one ConfigError, or the right (empty, zero or NaN) result;
* **corrupt model caches** (a cut, empty or junk ``model.safetensors``, a junk ``config.json``): ``iclab models
  list`` says "damaged", and loading the model is one clear error.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import fixtures_experiments  # noqa: F401 - registers fx_sweep in this process
from fixtures_experiments import fixture_env
from fuzz_harness import COUNTS, classify_api, classify_cli, count_result
from iclab.errors import IclabError

pytestmark = pytest.mark.filterwarnings("ignore")

MEMORY_LIMIT = 3 << 30  # bytes of address space for the child that parses hostile configs (iclab + torch: ~0.7 GiB)

_BOMB = (
    "d: [[&a [1,1,1,1,1,1,1,1,1], "
    + ", ".join(f"&{b} [{', '.join(['*' + a] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi"))
    + "]]\n"
)


def _config_files() -> dict[str, bytes]:
    """``{file name: bytes}``: hostile structure in every format."""
    deep = 50_000
    files = {
        "bomb.yaml": _BOMB.encode(),
        "self.yaml": b"d: &a [*a]\n",
        "deep.yaml": b"d: " + b"[" * deep + b"]" * deep + b"\n",
        "deep.json": b'{"d": ' + b"[" * deep + b"]" * deep + b"}",
        "deep.toml": b"d = " + b"[" * deep + b"]" * deep + b"\n",
        "dup.yaml": b"d: 3\nd: 5\n",
        "dup.json": b'{"d": 3, "d": 5}',
        "dup.toml": b"d = 3\nd = 5\n",
        "long.json": b'{"d": [' + b",".join([b"1"] * 300_000) + b"]}",
        "long.yaml": b"d: [" + b",".join([b"1"] * 300_000) + b"]\n",
        "long.toml": b"d = [" + b",".join([b"1"] * 300_000) + b"]\n",
    }
    for suffix in ("yaml", "json", "toml"):
        files[f"latin.{suffix}"] = "d = 'café'\n".encode("latin-1")
        files[f"huge.{suffix}"] = b"#" * (2 << 20)
        files[f"junk.{suffix}"] = bytes(range(256)) * 8
    files["nested.yaml"], files["nested.json"] = b"a:\n  b: 1\n", b'{"a": {"b": 1}}'
    files["nested.toml"] = b"[a]\nb = 1\n"
    return files


_CHILD = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from fuzz_harness import Accepted, classify_cli
from iclab.runs import _execute
def refuse(path):
    raise Accepted(str(path))
_execute.folder_lock = refuse
root = Path(sys.argv[1])
out = []
for name in sorted(p.name for p in (root / "cfg").iterdir()):
    outcome, err = classify_cli(["run", "temperature", "--config", str(root / "cfg" / name)], root / "cfg",
                                names=("--config", "d=", "'d'"))
    out.append([name, outcome, err[-300:]])
print(json.dumps(out))
"""


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def test_hostile_config_files_in_every_format_are_clear_under_a_memory_limit(tmp_path):
    (tmp_path / "cfg").mkdir()
    for name, content in _config_files().items():
        (tmp_path / "cfg" / name).write_bytes(content)
    tests = str(Path(__file__).parent)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path), tests],
        env=fixture_env(),
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=_limit_memory,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    for _name, outcome, _ in results:
        COUNTS["cases"] += 1
        COUNTS[outcome] += 1
    assert len(results) == len(_config_files())
    assert [r for r in results if r[1] != "clear"] == []


# --- every --out ---


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    from iclab.experiments import run_experiment

    with pytest.MonkeyPatch.context() as mp:  # the variable must not outlive the fixture: later subprocesses
        mp.setenv("ICLAB_EXPERIMENT_MODULES", fixture_env()["ICLAB_EXPERIMENT_MODULES"])  # lack the tests folder
        out = tmp_path_factory.mktemp("finished") / "r"
        run_experiment("fx_sweep", overrides={"n_cells": 4}, out=out, executor="serial", progress=False)
    return out


_USER_FILES = {
    "notes": b"my own notes\n",
    "binary": bytes(range(256)),
    "empty": b"",
    "csv": b"layer,head\n1,2\n",
    "keyed": b"_key,a\nmine,1\n",
    "json": b'{"layer_tau": 1}',
}


def _out_commands(finished: Path, prompts: Path, target: Path) -> dict[str, list[str]]:
    probe = ["hf", "probe", "--model", "minilm", "--prompts", str(prompts)]
    tau = ["hf", "tau", "--model", "minilm", "--prompts", str(prompts), "--shifted", str(prompts)]
    return {
        "export-csv": ["export", str(finished), "--out", str(target.with_suffix(".csv"))],
        "export-parquet": [
            "export",
            str(finished),
            "--format",
            "parquet",
            "--out",
            str(target.with_suffix(".parquet")),
        ],
        "probe": [*probe, "--out", str(target.with_suffix(".csv"))],
        "tau": [*tau, "--out", str(target.with_suffix(".json"))],
        "calibrate": ["calibrate", str(finished), "--draws", "100", "--out", str(target.with_suffix(".csv"))],
    }


@pytest.mark.parametrize("command", ["export-csv", "export-parquet", "probe", "tau", "calibrate"])
def test_every_out_refuses_a_users_file_and_a_folder(finished, tmp_path, monkeypatch, command):
    monkeypatch.setenv("ICLAB_EXPERIMENT_MODULES", fixture_env()["ICLAB_EXPERIMENT_MODULES"])
    work = tmp_path / "work"
    work.mkdir()
    prompts = tmp_path / "p.txt"
    prompts.write_text("paris is the capital of france\n")
    for kind, content in _USER_FILES.items():
        argv = _out_commands(finished, prompts, work / f"user_{kind}")[command]
        Path(argv[-1]).write_bytes(content)
        outcome, err = classify_cli(argv, work, names=("--force",))
        assert outcome == "clear", (command, kind, outcome, err[-1000:])
        Path(argv[-1]).unlink()
    (work / "folder.csv").mkdir()
    (work / "folder.json").mkdir()
    (work / "folder.parquet").mkdir()
    argv = _out_commands(finished, prompts, work / "folder")[command]
    outcome, err = classify_cli(argv, work, names=("folder",))
    assert outcome == "clear", (command, "folder", outcome, err[-1000:])


# --- empty and degenerate tensors ---


def _attention_cases() -> list[tuple[str, object, str]]:
    """``(name, call, expect)``: expect "error" (one IclabError) or a check of the result."""
    import iclab.attention as A

    z = torch.zeros
    cases: list[tuple[str, object, str]] = []
    for name in A.normaliser_names():
        cases += [
            (f"{name} (2, 0)", lambda n=name: A.normalise(n, z(2, 0)), "empty"),
            (f"{name} (0, 3)", lambda n=name: A.normalise(n, z(0, 3)), "empty"),
            (f"{name} (0, 0)", lambda n=name: A.normalise(n, z(0, 0)), "empty"),
            (f"{name} meta", lambda n=name: A.normalise(n, z(2, 3, device="meta")), "error"),
            (f"{name} int", lambda n=name: A.normalise(n, torch.ones(2, 3, dtype=torch.long)), "error"),
            (f"{name} 0-d", lambda n=name: A.normalise(n, torch.tensor(1.0)), "error"),
            (f"{name} list", lambda n=name: A.normalise(n, [[1.0, 2.0]]), "error"),
            (f"{name} mask shape", lambda n=name: A.normalise(n, z(2, 3), torch.ones(4, dtype=torch.bool)), "error"),
        ]
    for name in ("softmax", "approx_softmax", "adaptive_softmax", "ssmax"):
        cases += [
            (f"{name} tau (4,)", lambda n=name: A.normalise(n, z(2, 3, 5), tau=torch.ones(4)), "error"),
            (f"{name} tau (3,1,1)", lambda n=name: A.normalise(n, z(2, 3, 5), tau=torch.ones(3, 1, 1)), "error"),
            (f"{name} tau complex", lambda n=name: A.normalise(n, z(2, 3), tau=1j), "error"),
        ]
    q, k = torch.randn(1, 1, 2, 4), torch.randn(1, 1, 3, 4)
    shapes = [((1, 1, 0, 4), (1, 1, 3, 4)), ((1, 1, 2, 4), (1, 1, 0, 4)), ((0, 1, 2, 4), (0, 1, 3, 4))]
    for sq, sk in shapes + [((1, 1, 0, 4), (1, 1, 0, 4))]:
        cases.append(
            (f"adaptive_attention {sq} {sk}", lambda a=sq, b=sk: A.adaptive_attention(z(a), z(b), z(b)), "zeros")
        )
    for label, kw in [("scale nan", {"scale": float("nan")}), ("scale 0", {"scale": 0.0}), ("chunk 0", {"chunk": 0})]:
        cases.append((f"adaptive_attention {label}", lambda kw=kw: A.adaptive_attention(q, k, k, **kw), "error"))
    cases += [
        ("adaptive_attention fp16/fp32", lambda: A.adaptive_attention(q.half(), k, k), "error"),
        ("adaptive_attention meta", lambda: A.adaptive_attention(q.to("meta"), k.to("meta"), k.to("meta")), "error"),
        ("adaptive_attention d=0", lambda: A.adaptive_attention(q[..., :0], k[..., :0], k), "error"),
        ("adaptive_attention ndarray", lambda: A.adaptive_attention(q.numpy(), k, k), "error"),
        ("logit_spread (2, 0)", lambda: A.logit_spread(z(2, 0)), "nan"),
        ("max_coefficient (2, 0)", lambda: A.max_coefficient(z(2, 0)), "nan"),
        ("attention_entropy (2, 0)", lambda: A.attention_entropy(z(2, 0)), "zeros"),
        ("dispersion_summary (2, 0)", lambda: A.dispersion_summary(z(2, 0))["delta"], "nan"),
        ("logit_spread meta", lambda: A.logit_spread(z(2, 3, device="meta")), "error"),
        ("logit_spread 0-d", lambda: A.logit_spread(torch.tensor(1.0)), "error"),
        ("attention_entropy list", lambda: A.attention_entropy([0.5, 0.5]), "error"),
    ]
    return cases


def _result_ok(value, expect: str) -> bool:
    if expect == "empty":
        return isinstance(value, torch.Tensor) and value.numel() == 0
    if expect == "zeros":
        return isinstance(value, torch.Tensor) and bool((value == 0).all())
    return isinstance(value, torch.Tensor) and value.numel() > 0 and bool(torch.isnan(value).all())  # "nan"


@pytest.mark.parametrize("case", _attention_cases(), ids=lambda c: c[0])
def test_empty_and_degenerate_tensors_through_iclab_attention(case):
    name, call, expect = case
    if expect == "error":
        outcome, text = classify_api(call, (IclabError,))
        assert outcome == "clear", (name, outcome, text)
        return
    try:
        value = call()
    except BaseException as exc:  # noqa: BLE001 - any escape is a failure of this case
        count_result(False)
        raise AssertionError((name, type(exc).__name__, str(exc)[:300])) from None
    ok = _result_ok(value, expect)
    count_result(ok)
    assert ok, (name, value)


def _hf_cases(model) -> list[tuple[str, object]]:
    import numpy as np

    import iclab.hf as h

    ids = torch.tensor([[1, 2, 3]])
    cases = [
        (f"set_temperature tau={t!r}", lambda t=t: h.set_temperature(model, t))
        for t in (0.0, -1.0, float("nan"), float("inf"), 1e308, 1e-45, 1j, "hot", True, [1.0, 2.0], [[1.0], [1.0, 2.0]])
    ]
    cases += [
        ("set_temperature complex array", lambda: h.set_temperature(model, np.ones(3, dtype=complex))),
        ("set_temperature meta", lambda: h.set_temperature(model, torch.ones(3, 5, device="meta"))),
        ("set_temperature coeffs=()", lambda: h.set_temperature(model, "adaptive", coeffs=())),
        ("set_temperature threshold nan", lambda: h.set_temperature(model, "adaptive", threshold=float("nan"))),
        ("set_temperature not a model", lambda: h.set_temperature(torch.nn.Linear(2, 2), 0.5)),
        ("best_tau_index empty", lambda: h.best_tau_index([], [])),
        ("best_tau_index lengths", lambda: h.best_tau_index([1.0, 2.0], [0.5])),
    ]
    for fn in (h.logit_spreads, h.attention_extremes):
        for label, x in [
            ("(1, 0)", torch.zeros(1, 0, dtype=torch.long)),
            ("(0, 3)", torch.zeros(0, 3, dtype=torch.long)),
            ("float", ids.float()),
            ("meta", ids.to("meta")),
            ("id -1", -ids),
            ("id 10**6", ids * 10**6),
            ("list", [[1, 2, 3]]),
        ]:
            cases.append((f"{fn.__name__} {label}", lambda f=fn, x=x: f(model, x, True)))
    return cases


def test_empty_and_degenerate_inputs_through_the_iclab_hf_helpers():
    from _hf_helpers import tiny_models

    model = tiny_models(dtype=torch.float32)["gpt2"]
    bad = []
    for name, call in _hf_cases(model):
        outcome, text = classify_api(call, (IclabError,))
        if outcome != "clear":
            bad.append((name, outcome, text[:200]))
    assert bad == []


# --- corrupt model caches ---


def _cache_damages() -> dict[str, dict[str, bytes]]:
    from safetensors.torch import save

    good = save({"w": torch.zeros(32, 32)})
    return {
        "empty weights": {"model.safetensors": b"", "config.json": b"{}"},
        "cut weights": {"model.safetensors": good[: len(good) // 2], "config.json": b"{}"},
        "junk weights": {"model.safetensors": bytes(range(256)) * 4, "config.json": b"{}"},
        "junk config": {"model.safetensors": good, "config.json": b"\xff\xfe{not json"},
    }


@pytest.mark.parametrize("damage", sorted(_cache_damages()))
def test_a_corrupt_model_cache_is_said_and_refused(tmp_path, monkeypatch, capsys, damage):
    from iclab.cli import main

    folder = tmp_path / "cache" / "smollm2-135m-instruct-fp32"
    folder.mkdir(parents=True)
    for name, content in _cache_damages()[damage].items():
        (folder / name).write_bytes(content)
    monkeypatch.setenv("ICLAB_CACHE", str(tmp_path / "cache"))
    capsys.readouterr()
    listed = main(["models", "list"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("smollm2"))
    said = "damaged" in line or damage == "junk config"  # the header of the weights is what is read
    count_result(listed and said)
    assert listed and said, line
    prompts = tmp_path / "p.txt"
    prompts.write_text("hello world\n")
    outcome, err = classify_cli(["hf", "probe", "--model", "smollm2", "--prompts", str(prompts)], tmp_path / "cache")
    assert outcome == "clear", (damage, outcome, err[-1000:])
