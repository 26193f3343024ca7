"""iclab's τ inside lm-evaluation-harness (iclab.hf._lm_eval): the ``iclab-hf`` model on a local task shipped here
(tests/data/lm_eval: capital cities, multiple choice by loglikelihood), offline, on SmolLM2. τ = 1 gives stock
``--model hf``'s numbers exactly (the same fp32 weights, loaded by HFLM from iclab's cache folder); a per-layer τ
file gives exactly what stock HFLM gives under ``with_temperature``; ``iclab-lm-eval`` runs the task as a command."""

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

from iclab.errors import ConfigError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "tests" / "data" / "lm_eval"
TASK = "iclab_capitals"
LIMIT = 4  # documents (x 4 choices = 16 loglikelihood requests per evaluation)

pytestmark = pytest.mark.slow


def _loglikelihoods(samples: list[dict]) -> list[list[float]]:
    """Per document, the loglikelihood of each choice, in document order."""
    rows = sorted(samples, key=lambda s: s["doc_id"])
    return [[float(r[0]) for r in s["filtered_resps"]] for s in rows]


@pytest.fixture(scope="module")
def harness():
    """``evaluate(lm) -> (accuracy, loglikelihoods)`` on the shipped task, run from the repository root."""
    import lm_eval
    from lm_eval.tasks import TaskManager

    cwd = os.getcwd()
    os.chdir(ROOT)  # the task's data_files path is relative to the repository root
    manager = TaskManager(include_path=str(TASKS), include_defaults=False)

    def evaluate(lm):
        out = lm_eval.simple_evaluate(model=lm, tasks=[TASK], task_manager=manager, limit=LIMIT, log_samples=True)
        return out["results"][TASK]["acc,none"], _loglikelihoods(out["samples"][TASK])

    yield evaluate
    os.chdir(cwd)


@pytest.fixture(scope="module")
def stock(harness):
    """Stock ``--model hf`` on SmolLM2's fp32 folder in iclab's cache (written by load_model on first use)."""
    from lm_eval.models.huggingface import HFLM

    from iclab.hf import cache_dir, load_model

    load_model("smollm2")  # makes sure the converted folder exists
    lm = HFLM(pretrained=str(cache_dir() / "smollm2-135m-instruct-fp32"), device="cpu", dtype="float32", batch_size=8)
    acc, ll = harness(lm)
    return lm, acc, ll


def test_tau_one_gives_stock_hf_numbers_exactly(harness, stock):
    from iclab.hf import get_temperature
    from iclab.hf._lm_eval import IclabHFLM

    lm = IclabHFLM(pretrained="smollm2", tau=1.0, device="cpu", batch_size=8)
    assert get_temperature(lm.model) is not None  # the hook is installed, at τ = 1
    acc, ll = harness(lm)
    _, stock_acc, stock_ll = stock
    assert ll == stock_ll  # every loglikelihood, bit for bit
    assert acc == stock_acc


def test_per_layer_tau_file_matches_with_temperature(harness, stock, tmp_path):
    import numpy as np

    from iclab.hf import model_shape, with_temperature
    from iclab.hf._lm_eval import IclabHFLM

    stock_lm, _, stock_ll = stock
    L, _ = model_shape(stock_lm.model)
    layer_tau = np.linspace(0.5, 0.9, L).tolist()
    path = tmp_path / "tau.json"
    path.write_text(json.dumps({"layer_tau": layer_tau}))  # the shape `iclab hf tau --out` writes
    _, ll = harness(IclabHFLM(pretrained="smollm2", tau=str(path), device="cpu", batch_size=8))
    with with_temperature(stock_lm.model, layer_tau):
        _, reference = harness(stock_lm)
    assert ll == reference
    assert max(abs(a - b) for row, ref in zip(ll, stock_ll) for a, b in zip(row, ref)) > 1e-2  # τ changed them


def test_adaptive_and_float_tau_reach_the_model():
    from iclab.hf import AdaptiveTemperature, get_temperature
    from iclab.hf._lm_eval import IclabHFLM

    lm = IclabHFLM(pretrained="smollm2", tau="adaptive", device="cpu")
    assert isinstance(get_temperature(lm.model), AdaptiveTemperature)
    lm = IclabHFLM(pretrained="smollm2", tau="0.7", device="cpu")  # the CLI passes numbers it cannot parse as text
    assert float(get_temperature(lm.model).unique()) == pytest.approx(0.7)
    assert lm.get_model_info()["iclab_tau"] == 0.7


@pytest.mark.parametrize("tau", ["hot", "", True, "/no/such/tau.json"])
def test_bad_tau_is_one_config_error(tau):
    from iclab.hf._lm_eval import parse_tau

    with pytest.raises(ConfigError, match="tau"):
        parse_tau(tau)


def test_bad_tau_file_is_one_config_error(tmp_path):
    from iclab.hf._lm_eval import parse_tau

    (tmp_path / "a.json").write_text("{not json")
    (tmp_path / "b.json").write_text(json.dumps({"rho": [1.0]}))
    for name in ("a.json", "b.json"):
        with pytest.raises(ConfigError, match="tau"):
            parse_tau(str(tmp_path / name))
    (tmp_path / "c.json").write_text(json.dumps([0.5, 1.5]))
    assert parse_tau(str(tmp_path / "c.json")) == [0.5, 1.5]


def test_loader_only_arguments_refused_for_an_iclab_alias():
    from iclab.hf._lm_eval import IclabHFLM

    with pytest.raises(ConfigError, match="peft"):
        IclabHFLM(pretrained="smollm2", peft="/some/adapter")


COMMANDS = {
    # lm-eval's own console script: iclab-hf comes from the iclab_lm_eval.pth hook (_iclab_lm_eval_hook).
    "lm_eval": [str(Path(sys.executable).parent / "lm_eval")],
    "iclab-lm-eval": [sys.executable, "-c", "import sys; from iclab.hf._lm_eval import main; sys.exit(main())"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_line_runs_the_shipped_task_with_stock_numbers(stock, tmp_path, command):
    """``lm_eval --model iclab-hf ...`` and ``iclab-lm-eval --model iclab-hf ...`` as subprocesses, offline."""
    _, stock_acc, stock_ll = stock
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "ds")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    # one thread, as the stock numbers in this process (conftest): a GEMM split over more threads sums in another
    # order, and bit-for-bit equality would then depend on the machine's core count
    env["OMP_NUM_THREADS"] = "1"
    out = tmp_path / "out"
    cmd = COMMANDS[command]
    args = ["--model", "iclab-hf", "--model_args", "pretrained=smollm2,tau=1.0", "--tasks", TASK]
    args += [
        "--include_path",
        str(TASKS),
        "--limit",
        str(LIMIT),
        "--batch_size",
        "8",
        "--device",
        "cpu",
        "--log_samples",
    ]
    proc = subprocess.run(
        [*cmd, *args, "--output_path", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(next(out.rglob("results_*.json")).read_text())
    assert results["results"][TASK]["acc,none"] == stock_acc
    samples = [json.loads(line) for line in next(out.rglob(f"samples_{TASK}_*.jsonl")).read_text().splitlines()]
    assert _loglikelihoods(samples) == stock_ll


def test_command_line_bad_tau_is_one_line(capsys):
    from iclab.hf._lm_eval import main

    args = ["--model", "iclab-hf", "--model_args", "pretrained=smollm2,tau=hot", "--tasks", TASK]
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        code = main([*args, "--include_path", str(TASKS), "--limit", "1"])
    finally:
        os.chdir(cwd)
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: invalid tau='hot'") and "Traceback" not in "\n".join(err)


HOOK_CHECK = """
import sys
before = {"iclab": "iclab" in sys.modules, "lm_eval": "lm_eval" in sys.modules}
from lm_eval.api.registry import get_model
model = get_model("iclab-hf")
print(before["iclab"], before["lm_eval"], model.__module__ + ":" + model.__name__, get_model("hf").__name__)
"""


def test_the_startup_hook_registers_iclab_hf_beside_lm_evals_own_models():
    """The .pth hook imports nothing at start-up; lm-eval then finds iclab-hf, and still every one of its own."""
    assert (Path(sysconfig.get_paths()["purelib"]) / "iclab_lm_eval.pth").is_file()  # `make install` put it there
    proc = subprocess.run([sys.executable, "-c", HOOK_CHECK], capture_output=True, text=True, env={**os.environ})
    assert proc.stdout.split() == ["False", "False", "iclab.hf._lm_eval:IclabHFLM", "HFLM"], proc.stderr[-2000:]


def test_the_hook_registers_late_when_lm_eval_models_is_already_loaded():
    """Imported after ``lm_eval.models`` (no finder would ever fire), the hook registers at once."""
    code = "import sys; sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != 'LmEvalModelsFinder']\n"
    code += "sys.modules.pop('_iclab_lm_eval_hook', None); import lm_eval.models, _iclab_lm_eval_hook\n"
    code += "from lm_eval.api.registry import model_registry; print('iclab-hf' in model_registry)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ})
    assert proc.stdout.strip() == "True", proc.stderr[-2000:]


def test_importing_iclab_hf_does_not_import_lm_eval():
    code = "import sys, iclab, iclab.hf; print('lm_eval' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ})
    assert proc.stdout.strip() == "False", proc.stderr


def test_the_iclab_lm_eval_command_is_declared():
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["iclab-lm-eval"] == "iclab.hf._lm_eval:main"
