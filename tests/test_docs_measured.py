"""The performance numbers in the docs are generated from the records of measured runs, never typed:
``docs/gen_measured.py`` writes every block ``<!-- measured:begin NAME -->`` from ``docs/measured/*.json``
(``docs/measured_records.py``). The committed blocks must equal what it writes now, a hand-edited number is out of
date, and a record that lacks a field or holds a NaN is one error naming the file and the field."""

import json
import math
import shutil
import sys
from pathlib import Path

import pytest

from iclab.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import gen_measured  # noqa: E402
import measured_records  # noqa: E402
import run_all  # noqa: E402

REGENERATE = "run `python docs/gen_reference.py` (make docs-gen) and commit the result"


def _copy_docs(dest: Path) -> Path:
    for name in gen_measured.PLACES:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, dest / name)
    return dest


def _record(tmp_path: Path, **change) -> Path:
    """A copy of the committed ``bench_hf_long`` record with ``change`` applied (``None`` deletes a field)."""
    record = json.loads((measured_records.FOLDER / "bench_hf_long.json").read_text())
    for dotted, value in change.items():
        *parents, key = dotted.split("__")
        at = record
        for p in parents:
            at = at[p]
        if value is None:
            del at[key]
        else:
            at[key] = value
    path = tmp_path / "bench_hf_long.json"
    path.write_text(json.dumps(record))  # json writes NaN as NaN, as a careless writer would
    return path


def test_committed_docs_equal_the_generated_blocks():
    assert gen_measured.stale(gen_measured.blocks()) == [], REGENERATE


def test_every_block_is_placed_and_every_marker_is_generated():
    generated = gen_measured.blocks()
    assert set().union(*map(set, generated.values())) == set(gen_measured.TEXTS)
    for name in ["README.md", "docs/howto/ray.md", "docs/howto/gpu.md", "docs/calibration.md"]:
        assert sorted(gen_measured.marked((ROOT / name).read_text())) == sorted(generated[name]), name


def test_a_hand_edited_number_is_out_of_date_and_regenerated(tmp_path):
    generated = gen_measured.blocks()
    root = _copy_docs(tmp_path)
    readme = root / "README.md"
    text = readme.read_text()
    block = generated["README.md"]["sweep-engine"]
    assert " ms per cell for the local pool" in block
    typed = block.replace(" ms per cell for the local pool", "1 ms per cell for the local pool", 1)
    readme.write_text(text.replace(block, typed, 1))
    assert gen_measured.stale(generated, root) == ["README.md"]
    assert gen_measured.write(generated, root) == ["README.md"]
    assert readme.read_text() == text and gen_measured.stale(generated, root) == []


def test_each_block_names_its_record_commit_date_machine_and_load():
    records = measured_records.load_all()
    for name, (record, _) in gen_measured.TEXTS.items():
        rec = records[record]
        text = gen_measured.blocks()[next(f for f, b in gen_measured.PLACES.items() if name in b)][name]
        assert f"`docs/measured/{record}.json`" in text and rec["commit"][:7] in text and rec["date"][:10] in text
        assert rec["machine"]["cpu"] in text and "load average" in text, name


@pytest.mark.parametrize(
    "change, field",
    [
        ({"commit": None}, "'commit' is missing"),
        ({"machine__load_end": None}, "'machine.load_end' is missing"),
        ({"numbers__lengths__1024__adaptive_cpu_ratio": math.nan}, "'numbers.lengths.1024.adaptive_cpu_ratio'"),
        ({"machine__load_start": [math.inf, 1.0, 1.0]}, "'machine.load_start.0' is not a finite number"),
    ],
    ids=["missing", "missing-machine-field", "nan", "infinite-load"],
)
def test_a_bad_record_is_one_error_naming_the_file_and_the_field(tmp_path, change, field):
    path = _record(tmp_path, **change)
    with pytest.raises(ConfigError) as err:
        measured_records.load(path)
    message = str(err.value)
    assert message.startswith(f"{path}: field ") and field in message and "\n" not in message


def test_a_missing_record_is_one_error_naming_it(tmp_path):
    for path in measured_records.FOLDER.glob("*.json"):
        if path.stem != "bench_hf":
            shutil.copy(path, tmp_path / path.name)
    with pytest.raises(ConfigError, match=r"bench_hf\.json.*a record for block 'hf-overhead'"):
        gen_measured.blocks(tmp_path)


def test_the_make_run_record_reads_the_runs_folder_and_the_log(tmp_path):
    runs = tmp_path / "runs"
    for i, (name, wall) in enumerate([("temperature", 16.2), ("ood", 80.1)]):
        (runs / f"{name}-quick").mkdir(parents=True)
        summary = {
            "experiment": name,
            "wall_seconds": wall,
            "cell_seconds": 2 * wall,
            "cells": {"done": 7, "failed": 0},
        }
        config = {"git_revision": "a" * 40, "created": f"2026-12-02T11:2{i}:00+0000"}
        (runs / f"{name}-quick" / "summary.json").write_text(json.dumps(summary))
        (runs / f"{name}-quick" / "config.json").write_text(json.dumps(config))
    log = tmp_path / "make.log"
    lines = ["0.0 test -x .venv/bin/python", "290.5 .venv/bin/iclab reproduce --quick", "291.0 == temperature (quick)",
             "320.0 == ood (quick)", "400.5 report: runs/report/index.html", "401.0 \tCommand being timed: \"make run\"",
             "401.0 \tUser time (seconds): 500.5", "401.0 \tSystem time (seconds): 20.25"]  # fmt: skip
    log.write_text("\n".join(f"{line:>9s}" for line in lines) + "\n")
    record = measured_records.make_run_record(runs, log)
    path = measured_records.write(record, tmp_path / "out")
    assert measured_records.load(path) == record and record["commit"] == "a" * 40
    assert record["date"] == "2026-12-02T11:20:00Z" and record["machine"]["load_start"] is None
    n = record["numbers"]
    assert n["experiments"]["ood"] == {"wall_s": 80.1, "cell_s": 160.2, "cells": 7, "failed": 0}
    assert (n["install_s"], n["reproduce_s"], n["make_run_cpu_s"]) == (290.5, 110.5, 520.75)
    assert n["experiments_s"] == {"temperature": 29.0, "ood": 80.5}
    assert any("summary.json" in s for s in record["sources"].values())
    assert "load average not recorded" in gen_measured.provenance(record)


def test_the_make_run_record_refuses_a_folder_without_runs(tmp_path):
    with pytest.raises(ConfigError, match="RUNS_DIR"):
        measured_records.make_run_record(tmp_path)


def test_a_smoke_run_never_records(tmp_path, capsys):
    assert run_all.main(["--smoke", "--record", str(tmp_path), "no_such_benchmark"]) == 2
    assert "not with --smoke" in capsys.readouterr().out and not list(tmp_path.iterdir())


def test_gen_reference_check_covers_the_measured_blocks(monkeypatch, capsys):
    """``python docs/gen_reference.py --check`` (make docs-gen's check) fails on a measured block out of date."""
    import gen_reference

    monkeypatch.setattr(gen_reference, "blocks", dict)  # no verdict blocks: only the measured ones are checked
    generated = gen_measured.blocks()
    generated["docs/howto/gpu.md"]["hf-overhead"] += " typed"
    monkeypatch.setattr(gen_reference.gen_measured, "blocks", lambda: generated)
    assert gen_reference.main(["--check"]) == 1
    assert capsys.readouterr().out.strip() == "out of date: docs/howto/gpu.md (run `python docs/gen_reference.py`)"
