"""Options of ``iclab`` itself and of ``iclab run``: --version, help text on every option, -v/-q through logging,
--no-progress, --config FILE (TOML/YAML/JSON) beside --set, and ``iclab show`` listing every config field."""

import dataclasses
import logging

import click
import pytest
import typer

import fixtures_experiments  # noqa: F401 - registers fx_sweep in this process
from fixtures_experiments import fixture_env
from iclab import __version__
from iclab.cli import _load_subcommands, app, main
from iclab.config import field_docs, read_config_file
from iclab.errors import ConfigError
from iclab.experiments import all_experiments, get_experiment


@pytest.fixture(autouse=True)
def _fixture_experiments(monkeypatch):
    monkeypatch.setenv("ICLAB_EXPERIMENT_MODULES", fixture_env()["ICLAB_EXPERIMENT_MODULES"])


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"iclab {__version__}"


def _commands(command, path=("iclab",)):
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, path + (name,))


def test_every_option_and_argument_has_help():
    _load_subcommands()
    missing = [
        f"{' '.join(path)} {p.opts[0] if p.opts else p.name}"
        for path, cmd in _commands(typer.main.get_command(app))
        for p in cmd.params
        if not getattr(p, "help", None) and p.name != "help"
    ]
    assert not missing, "options without help text: " + ", ".join(missing)


def _run(tmp_path, *extra, cells=3):
    return main(
        [*extra, "run", "fx_sweep", "--executor", "serial", "--out", str(tmp_path / "run"), "--set", f"n_cells={cells}"]
    )


def test_verbose_logs_what_the_run_does_and_quiet_prints_no_progress(tmp_path, capsys):
    assert _run(tmp_path, "-v") == 0
    err = capsys.readouterr().err
    assert "fx_sweep: preset quick, config hash" in err and "3 cells" in err and "fx_sweep [serial]" in err
    assert _run(tmp_path, "-q", cells=4) == 2  # another config in the same folder: the error still shows
    captured = capsys.readouterr()
    assert captured.err.startswith("error: run folder") and "fx_sweep [serial]" not in captured.err
    assert logging.getLogger("iclab").level == logging.ERROR


def test_no_progress_draws_no_bar_but_keeps_the_result_line(tmp_path, capsys):
    assert _run(tmp_path, "--no-progress") == 0
    captured = capsys.readouterr()
    assert "3 cells done" in captured.out and "fx_sweep [serial]" not in captured.err


@pytest.mark.parametrize(
    "name, text",
    [
        ("c.toml", "n_cells = 2\nn_samples = 50\nfail_cells = [1]\n"),
        ("c.yaml", "n_cells: 2\nn_samples: 50\nfail_cells: [1]\n"),
        ("c.json", '{"n_cells": 2, "n_samples": 50, "fail_cells": [1]}'),
    ],
)
def test_config_file_in_each_format_and_set_wins(tmp_path, capsys, name, text):
    path = tmp_path / name
    path.write_text(text)
    assert read_config_file(path) == {"n_cells": 2, "n_samples": 50, "fail_cells": [1]}
    out = tmp_path / "run"
    assert (
        main(
            [
                "--no-progress",
                "run",
                "fx_sweep",
                "--executor",
                "serial",
                "--out",
                str(out),
                "--config",
                str(path),
                "--set",
                "fail_cells=",
                "--set",
                "n_cells=3",
            ]
        )
        == 0
    )
    assert "3 cells done, 0 failed" in capsys.readouterr().out
    cfg = get_experiment("fx_sweep").config("quick", {**read_config_file(path), "fail_cells": "", "n_cells": "3"})
    assert (cfg.n_cells, cfg.n_samples, cfg.fail_cells) == (3, 50, ())


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("c.ini", "n_cells = 2", "a .toml, .yaml, .yml or .json file"),
        ("c.toml", "n_cells = ", "valid TOML"),
        ("c.yaml", "n_cells: [1", "valid YAML"),
        ("c.json", "{'n_cells': 2}", "valid JSON"),
        ("c.toml", "[table]\nn_cells = 2", "one flat table of config fields"),
        ("c.yaml", "- 1\n- 2", "one flat table of config fields"),
    ],
)
def test_bad_config_files_are_one_clear_error(tmp_path, capsys, name, text, expected):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError, match="--config"):
        read_config_file(path)
    assert main(["run", "fx_sweep", "--out", str(tmp_path / "run"), "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err and not (tmp_path / "run").exists()


def test_config_file_with_an_unknown_field_names_it(tmp_path, capsys):
    path = tmp_path / "c.toml"
    path.write_text("n_celz = 2\n")
    assert main(["run", "fx_sweep", "--out", str(tmp_path / "run"), "--config", str(path)]) == 2
    assert "n_celz" in capsys.readouterr().err
    assert main(["run", "fx_sweep", "--config", str(tmp_path / "missing.toml")]) == 2
    assert "an existing file" in capsys.readouterr().err


def test_show_lists_every_field_with_type_value_allowed_and_meaning(capsys):
    assert main(["show", "temperature"]) == 0
    out = capsys.readouterr().out
    exp = get_experiment("temperature")
    docs = field_docs(exp.config_cls)
    for field in dataclasses.fields(exp.config_cls):
        assert f"\n{field.name}  " in out, field.name
        assert docs.get(field.name), f"{field.name} has no line in the Fields: section of its docstring"
    assert "l_values  tuple[int, ...] = 10,20,40,80" in out and "allowed: integers >= 2" in out
    assert "centring  str = global" in out and "allowed: one of 'global', 'prompt'" in out
    assert main(["show", "temperature", "--preset", "nope"]) == 2
    assert "expected one of quick" in capsys.readouterr().err


def test_every_registered_config_documents_every_field():
    undocumented = [
        f"{e.name}.{f.name}"
        for e in all_experiments()
        if not e.name.startswith("fx_")
        for f in dataclasses.fields(e.config_cls)
        if not field_docs(e.config_cls).get(f.name)
    ]
    assert not undocumented, "config fields without a line in their class's Fields: docstring: " + ", ".join(
        undocumented
    )


@pytest.mark.parametrize("fmt", ["toml", "yaml", "json"])
def test_show_writes_a_config_file_that_run_reads_back_unchanged(tmp_path, capsys, fmt):
    assert main(["show", "temperature", "--preset", "full", "--format", fmt]) == 0
    path = tmp_path / f"full.{fmt}"
    path.write_text(capsys.readouterr().out)
    exp = get_experiment("temperature")
    assert exp.config("quick", read_config_file(path)) == exp.presets["full"]


def test_help_of_run_points_to_show(capsys):
    assert main(["run", "--help"]) == 0
    out = click.unstyle(capsys.readouterr().out)
    assert "iclab show NAME" in " ".join(out.split())


def test_dry_run_prints_cells_and_folder_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "fx_sweep", "--dry-run", "--out", str(out), "--set", "n_cells=5"]) == 0
    said = capsys.readouterr().out
    assert "5 cells on the local executor" in said and f"run folder {out}: new" in said and not out.exists()
    assert _run(tmp_path, "--no-progress", cells=5) == 0
    capsys.readouterr()
    assert main(["run", "fx_sweep", "--dry-run", "--out", str(out), "--set", "n_cells=5"]) == 0
    assert "holds this config: finished cells are read back" in capsys.readouterr().out
    assert main(["run", "fx_sweep", "--dry-run", "--out", str(out), "--set", "n_cells=6"]) == 2  # as the run
    assert "holds results of another run" in capsys.readouterr().err
    assert main(["run", "fx_sweep", "--dry-run", "--out", str(out), "--set", "n_cells=6", "--force"]) == 0
    assert (
        "holds another run's results (or an unreadable config.json): --force discards them" in capsys.readouterr().out
    )
    assert main(["run", "fx_sweep", "--dry-run", "--set", "n_cells=0"]) == 2  # the config is still checked
    assert "n_cells" in capsys.readouterr().err
