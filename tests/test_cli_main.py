"""The CLI entry point: usage errors and iclab errors are one clear message with exit status 2, no traceback."""

import pytest

from iclab.cli import main


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["run", "temperature", "--seed", "abc"], "Invalid value for '--seed'"),
        (["run", "no-such-experiment"], "expected one of temperature"),
        (["run", "temperature", "--set", "no_such_key=1"], "unknown key 'no_such_key'"),
        (["run", "temperature", "--executor", "gpu"], "--executor"),
        (["run"], "Missing argument"),
    ],
)
def test_bad_input_is_one_clear_error(argv, expected, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert expected in err
    assert "Traceback" not in err


def test_list_names_every_paper(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("temperature", "multihead", "ood", "dispersion", "categorical", "temperature-llm"):
        assert name in out
