"""Fuzz the command line: for generated bad values of every config field of every experiment and of every flag,
``iclab`` exits 2 with one ``error:`` line naming the field or flag, prints no traceback, finishes within
``BOUND`` seconds and leaves every file in its working folder byte-identical (tests/fuzz_harness.py).

Runs in-process (``iclab.cli.main``); the run folder is never reached: creating it raises ``Accepted``, so a bad
value that slips past every check fails the test at once instead of starting a sweep.
"""

from __future__ import annotations

import math
import types
import typing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_harness import Accepted, classify_cli

pytestmark = pytest.mark.filterwarnings("ignore")

_FUZZ = settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A working folder with a user's notes and a finished run of another experiment in it."""
    from iclab.runs import _execute

    def refuse(path):
        """Make the folder as iclab would (a path that cannot be made fails here, as it does for real); if that
        works, undo it and stop: the input got past every check."""
        path = Path(path).absolute()
        missing = [p for p in (path, *path.parents) if not p.exists()]
        _execute.RunFolder.make(path)
        for p in missing:  # deepest first
            p.rmdir()
        raise Accepted(str(path))

    monkeypatch.setattr(_execute, "folder_lock", refuse)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "report.md").write_text("my own notes")
    (tmp_path / "a_file").write_text("not a folder")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _experiments():
    from iclab.experiments import all_experiments

    return [e for e in all_experiments() if not e.name.startswith(("fx_", "bench_"))]


def _fields():
    """``(experiment, field, type)`` for every config field of every experiment."""
    return [(e.name, name, hint) for e in _experiments() for name, hint in typing.get_type_hints(e.config_cls).items()]


def _not_a_number(text: str) -> bool:
    try:
        return not math.isfinite(float(text))
    except ValueError:
        return True


_JUNK = st.sampled_from(["abc", "", " ", "1,,", "[1", "[[1]]", "{}", "--", "0x1g", "é", "x" * 3000, "\t"])
_NON_FINITE = st.sampled_from(["nan", "NaN", "inf", "-inf", "1e999", "-1e999", "+inf"])
_WORDS = st.text(st.characters(categories=("Ll", "Lu")), min_size=1, max_size=12).map(lambda s: "zz" + s)


def _bad_scalar(hint) -> st.SearchStrategy[str]:
    """Text that no field of this type accepts."""
    if hint is bool:
        return _JUNK.filter(bool) | st.sampled_from(["maybe", "2", "-1", "nan", "tru"])
    if hint is int:
        return (
            _JUNK
            | _NON_FINITE
            | st.sampled_from(["1.5", "1e3", "true"])
            | st.integers(max_value=-1).map(str)
            | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f != int(f)).map(repr)
        )
    if hint is float:
        return (_JUNK | _NON_FINITE | _WORDS).filter(_not_a_number)
    return _JUNK | _WORDS | st.sampled_from(["/nonexistent/iclab", "cuda:99", "none/such/model"])  # str


def _bad_value(hint) -> st.SearchStrategy[str]:
    """Text that the field of type ``hint`` must refuse."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)][0]
        return _bad_scalar(inner).filter(lambda t: t.strip().lower() not in ("none", "null"))
    if origin in (tuple, list):
        elem = args[0] if args else str
        one_bad = _bad_scalar(elem).filter(lambda t: "," not in t and t.strip() and not t.startswith("["))
        return one_bad | st.tuples(one_bad, one_bad).map(",".join) | st.sampled_from(["[1", "[[1, 2]]", "{}"])
    return _bad_scalar(hint)


_FIELD = st.sampled_from(sorted(_fields(), key=lambda f: (f[0], f[1])))


@_FUZZ
@given(field=_FIELD, data=st.data())
def test_every_bad_config_value_is_one_clear_error(workdir, field, data):
    experiment, name, hint = field
    value = data.draw(_bad_value(hint), label="value")
    outcome, err = classify_cli(
        ["run", experiment, "--executor", "serial", "--set", f"{name}={value}"], workdir, names=(name,)
    )
    assert outcome == "clear", (experiment, name, value[:80], outcome, err[-2000:])


_NAMES = st.sampled_from(
    ["temperature", "ood", "dispersion", "multihead", "categorical", "temperature-llm", "temperature-gpt2-regression"]
)
_RUN_FLAGS = st.one_of(
    st.tuples(st.just("--seed"), (_JUNK | st.integers(max_value=-1).map(str) | _NON_FINITE), st.just("seed")),
    st.tuples(st.just("--workers"), st.integers(max_value=0).map(str) | _JUNK, st.just("workers")),
    st.tuples(st.just("--executor"), _WORDS | _JUNK, st.just("executor")),
    st.tuples(st.just("--cell-timeout"), st.floats(max_value=0).map(repr) | _JUNK | _NON_FINITE, st.just("timeout")),
    st.tuples(st.just("--preset"), _WORDS | _JUNK, st.just("preset")),
    st.tuples(
        st.just("--set"),
        st.sampled_from(["novalue", "=1", " =2", "zzunknown=1", "seed"]),
        st.just(("--set", "zzunknown")),
    ),
    st.tuples(
        st.just("--out"),
        st.sampled_from(["", " ", "notes", "a_file", "a_file/sub", "/proc/iclab", "x" * 300]),
        st.just(""),
    ),
)


@_FUZZ
@given(experiment=_NAMES, flag=_RUN_FLAGS)
def test_every_bad_run_flag_is_one_clear_error(workdir, experiment, flag):
    option, value, needle = flag
    needles = needle if isinstance(needle, tuple) else (needle,) if needle else ()
    outcome, err = classify_cli(
        ["run", experiment, "--executor", "serial", option, value]
        if option != "--executor"
        else ["run", experiment, option, value],
        workdir,
        names=needles,
    )
    assert outcome == "clear", (experiment, option, value[:80], outcome, err[-2000:])


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["run", "temperature", "--executor", "serial", "--address", "127.0.0.1:6379"], "--address"),
        (["run", "temperature", "--executor", "local", "--address", "10.0.0.1:6379"], "--address"),
        (["run", "temperature", "--executor", "ray", "--address", "garbage"], "--address"),
        (["run", "temperature", "--executor", "ray", "--address", "127.0.0.1:1"], "cannot reach a Ray cluster"),
        (["run", "temperature", "--quick", "--full"], "at most one"),
        (["reproduce", "--only", "nosuch"], "experiment"),
        (["reproduce", "--root", ""], "--root"),
        (["reproduce", "--executor", "serial", "--cell-timeout", "-1"], "timeout"),
        (["report", "nosuch"], "nosuch"),
        (["report", "a_file"], "a_file"),
        (["report", "notes"], "not an iclab run folder"),
        (["export", "nosuch"], "nosuch"),
        (["export", "notes"], "not an iclab run folder"),
        (["export", "notes", "--format", "xlsx"], "--format"),
        (["list", "--bogus"], "--bogus"),
    ],
)
def test_flags_that_need_a_context_are_one_clear_error(workdir, argv, needle):
    outcome, err = classify_cli(argv, workdir, names=(needle,))
    assert outcome == "clear", (argv, outcome, err[-2000:])


_THEORY_INT = st.sampled_from(["--d", "--l", "--m", "--seed"])
_THEORY_FLOAT = st.sampled_from(
    ["--cov-scale", "--task-scale", "--sigma", "--train-sigma", "--mean-shift", "--task-mean"]
)


@_FUZZ
@given(
    flag=st.one_of(
        st.tuples(_THEORY_INT, _JUNK | _NON_FINITE | st.integers(max_value=-1).map(str) | st.just("1.5")),
        st.tuples(st.just("--d"), st.integers(min_value=10**4, max_value=2**80).map(str)),
        st.tuples(st.just("--m"), st.integers(min_value=10**7, max_value=2**80).map(str)),
        st.tuples(
            _THEORY_FLOAT,
            _JUNK
            | _NON_FINITE
            | st.floats(max_value=-1e-300, allow_infinity=False).map(repr)
            | st.sampled_from(["1e308", "1e200", "1e-320", "5e-324", "1e31"]),
        ),
    )
)
def test_every_bad_theory_flag_is_one_clear_error(workdir, flag):
    option, value = flag
    outcome, err = classify_cli(["theory", "tau-opt", f"{option}={value}"], workdir, names=(option,))
    assert outcome == "clear", (option, value[:80], outcome, err[-2000:])


_NUMERIC = st.sampled_from(
    sorted(
        [
            f
            for f in _fields()
            if f[2] in (int, float)
            or typing.get_origin(f[2]) in (tuple, list)
            and typing.get_args(f[2])[:1] in ((int,), (float,))
        ],
        key=lambda f: (f[0], f[1]),
    )
)


@_FUZZ
@given(field=_NUMERIC, value=st.sampled_from(["1000000000", "1000000000000000000", str(2**70), "1e300"]))
def test_huge_values_are_refused_or_accepted_quickly_never_a_hang_or_traceback(workdir, field, value):
    """A huge value may be a valid setting (``log_every=10**9``); what it may never do is hang the command or end
    in a traceback. Values that cannot fit are refused by the experiment's budget (naming the field)."""
    experiment, name, hint = field
    if (hint is int or typing.get_args(hint)[:1] == (int,)) and "e" in value:
        value = str(10**300)
    outcome, err = classify_cli(
        ["run", experiment, "--executor", "serial", "--set", f"{name}={value}"], workdir, may_run=True
    )
    assert outcome in ("clear", "valid"), (experiment, name, value[:40], outcome, err[-2000:])


@pytest.mark.parametrize(
    "argv, needle",
    [  # the cases issue 15 lists, each once
        (["run", "temperature", "--set", "n_test=1000000000"], "n_test"),
        (["run", "temperature", "--set", "n_tau=100000000"], "n_tau"),
        (["run", "temperature", "--set", "n_tau=1e8"], "n_tau"),
        (["run", "temperature", "--set", "l_values=100000000"], "l_values"),
        (["run", "temperature", "--set", "d=1000000000"], "d="),
        (["run", "categorical", "--set", "parts="], "parts"),
        (["run", "temperature-llm", "--set", "model=/missing"], "model"),
        (["run", "temperature-llm", "--set", "device=cuda:99"], "device"),
        (["run", "multihead", "--set", "device=cuda:99"], "device"),
        (["run", "ood", "--set", "thetas_deg=nan"], "thetas_deg"),
        (["run", "temperature", "--out", ""], "--out"),
        (["run", "temperature", "--out", "notes"], "not an iclab run folder"),
        (["theory", "tau-opt", "--sigma", "1e-320"], "--sigma"),
        (["theory", "tau-opt", "--d", "100000"], "--d"),
        (["theory", "tau-opt", "--d", str(2**70)], "--d"),
        (["theory", "tau-opt", "--m", "1000000000"], "--m"),
        (["theory", "tau-opt", "--cov-scale", "1e308"], "--cov-scale"),
        (["theory", "tau-opt", "--mean-shift", "1e200"], "--mean-shift"),
    ],
)
def test_the_cases_of_issue_15(workdir, argv, needle):
    outcome, err = classify_cli(argv, workdir, names=(needle,))
    assert outcome == "clear", (argv, outcome, err[-2000:])


# --- Issue 24: list fields with empty elements; long and empty prompts (hf probe / hf tau) -----------------------


def _list_fields():
    """``(experiment, field, may be empty)`` for every list-valued config field of every experiment."""
    out = []
    for experiment, name, hint in _fields():
        if any(typing.get_origin(h) in (tuple, list) for h in (hint, *typing.get_args(hint))):
            cls = next(e.config_cls for e in _experiments() if e.name == experiment)
            out.append((experiment, name, name in getattr(cls, "MAY_BE_EMPTY", ())))
    return out


@pytest.mark.parametrize("value", ["", "1,,2", "1,", ",1", " , ", "a,,b"])
@pytest.mark.parametrize("field", _list_fields(), ids=lambda f: f"{f[0]}.{f[1]}")
def test_list_fields_refuse_empty_lists_and_empty_elements(workdir, field, value):
    """One rule (iclab.config): an empty element is refused, never dropped (``l_values=10,,20`` was stored as
    [10, 20]); an empty list only where the config says what it means (``noise_sigmas=`` dropped Fig. 2a)."""
    experiment, name, may_be_empty = field
    may_run = value == "" and may_be_empty
    outcome, err = classify_cli(
        ["run", experiment, "--executor", "serial", "--set", f"{name}={value}"], workdir, names=(name,), may_run=may_run
    )
    assert outcome == ("valid" if may_run else "clear"), (experiment, name, value, outcome, err[-2000:])


@pytest.fixture
def quiet_load(monkeypatch, folder_without_tokenizer):
    """The hf commands print the model's source line before they load it; keep it (and the loading bars) out of
    the error line the harness reads. (MiniLM was loaded once already, so no case pays the first import.)"""
    import contextlib
    import io

    from iclab.cli import _hf

    load = _hf._load

    def quiet(*args, **kwargs):
        with contextlib.redirect_stderr(io.StringIO()):
            return load(*args, **kwargs)

    monkeypatch.setattr(_hf, "_load", quiet)


@pytest.fixture(scope="module")
def folder_without_tokenizer(tmp_path_factory):
    """MiniLM's weights and config saved without its tokenizer files."""
    from iclab.hf import load_model

    folder = tmp_path_factory.mktemp("no_tokenizer")
    load_model("minilm")[0].save_pretrained(folder)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize(
    "command, files, needle",
    [
        ("probe", {"p.txt": "word " * 200_000}, "more than 512 tokens"),  # 1 MB: a traceback from the forward before
        ("probe", {"p.txt": "a cat sat\n" + "word " * 511}, "at most 512 tokens"),  # 513 tokens with [CLS]/[SEP]
        ("probe", {"p.jsonl": '{"prompt": "   "}\n'}, "--prompts"),
        ("probe", {"p.txt": "\\n\\n\n"}, "only newlines"),
        ("probe", {"p.txt": "\n \n"}, "at least one prompt"),
        ("tau", {"p.txt": "a cat sat", "s.txt": "word " * 600}, "--shifted"),
        ("tau", {"p.txt": "word " * 600, "s.txt": "a cat sat"}, "--prompts"),
    ],
)
def test_long_and_empty_prompts_are_one_clear_error(workdir, quiet_load, command, files, needle):
    for name, text in files.items():
        (workdir / name).write_text(text)
    argv = ["hf", command, "--model", "minilm", "--prompts", str(workdir / next(iter(files)))]
    if command == "tau":
        argv += ["--shifted", str(workdir / "s.txt")]
    outcome, err = classify_cli(argv, workdir, names=(needle,))
    assert outcome == "clear", (command, needle, outcome, err[-2000:])


@pytest.mark.slow
@pytest.mark.parametrize("command", ["probe", "tau"])
def test_a_model_folder_without_tokenizer_files_is_one_clear_error(
    workdir, quiet_load, folder_without_tokenizer, command
):
    """Before: the error named ``key_start`` ("the shortest prompt has 0 tokens"), not the missing tokenizer."""
    (workdir / "p.txt").write_text("a cat sat\n")
    argv = ["hf", command, "--model", str(folder_without_tokenizer), "--prompts", str(workdir / "p.txt")]
    if command == "tau":
        argv += ["--shifted", str(workdir / "p.txt")]
    outcome, err = classify_cli(argv, workdir, names=("no tokenizer files",))
    assert outcome == "clear", (command, outcome, err[-2000:])
