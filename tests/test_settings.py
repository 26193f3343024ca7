"""Every ``ICLAB_*`` environment setting is parsed in one place, :mod:`iclab.settings` (issue 42): a bad value is one
ConfigError naming the variable, the CLI prints it as one line and exits 2 (on main at 14f4820,
``ICLAB_MEMORY_LIMIT_GB=abc iclab run temperature --quick --dry-run`` ended in a ValueError traceback), an unset or
empty one is its default, no other module reads one, and the docs list them all with type and range."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import iclab
from iclab.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
BAD = {
    "ICLAB_MEMORY_LIMIT_GB": ["abc", "0", "-2", "nan", "inf"],
    "ICLAB_CELL_SECONDS_LIMIT": ["1e999", "-1", "ten"],
    "ICLAB_RAY_CONNECT_TIMEOUT": ["0", "x"],
    "ICLAB_EXPERIMENT_MODULES": ["a,,b", "not a module", "1abc"],
    "ICLAB_CACHE": ["   "],
    "ICLAB_CHROMIUM": ["\t "],
}
GOOD = {
    "ICLAB_MEMORY_LIMIT_GB": ("2.5", 2.5),
    "ICLAB_CELL_SECONDS_LIMIT": ("60", 60.0),
    "ICLAB_RAY_CONNECT_TIMEOUT": ("0.5", 0.5),
    "ICLAB_EXPERIMENT_MODULES": ("pkg.mod, other", ("pkg.mod", "other")),
    "ICLAB_CACHE": ("/tmp/x", "/tmp/x"),
    "ICLAB_CHROMIUM": ("chromium", "chromium"),
}


def test_every_setting_has_its_cases():
    from iclab.settings import SETTINGS

    assert set(SETTINGS) == set(BAD) == set(GOOD)


@pytest.mark.parametrize("name, text", [(n, t) for n, texts in BAD.items() for t in texts])
def test_a_bad_value_is_one_config_error_naming_the_variable(monkeypatch, name, text):
    from iclab.settings import SETTINGS, setting

    monkeypatch.setenv(name, text)
    with pytest.raises(ConfigError) as info:
        setting(name)
    assert info.value.field == name and SETTINGS[name].allowed in str(info.value)


@pytest.mark.parametrize("name", sorted(GOOD))
def test_a_good_value_is_parsed_and_an_empty_one_is_the_default(monkeypatch, name):
    from iclab.settings import SETTINGS, setting

    monkeypatch.setenv(name, GOOD[name][0])
    assert setting(name) == GOOD[name][1]
    monkeypatch.setenv(name, "")
    assert setting(name) == SETTINGS[name].default


def test_the_limits_read_the_settings_when_used(monkeypatch):
    from iclab.budget import memory_limit, seconds_limit

    monkeypatch.setenv("ICLAB_MEMORY_LIMIT_GB", "3")
    monkeypatch.setenv("ICLAB_CELL_SECONDS_LIMIT", "7")
    assert (memory_limit(), seconds_limit()) == (3e9, 7.0)
    monkeypatch.setenv("ICLAB_MEMORY_LIMIT_GB", "three")
    with pytest.raises(ConfigError, match="ICLAB_MEMORY_LIMIT_GB"):
        memory_limit()


@pytest.mark.parametrize("name, text", [("ICLAB_MEMORY_LIMIT_GB", "abc"), ("ICLAB_CELL_SECONDS_LIMIT", "-5")])
def test_the_cli_prints_one_line_and_exits_2(tmp_path, name, text):
    env = dict(os.environ, **{name: text}, HF_HUB_OFFLINE="1")
    env["PYTHONPATH"] = str(Path(iclab.__file__).parents[1])  # the iclab under test
    done = subprocess.run(
        [sys.executable, "-m", "iclab", "run", "temperature", "--quick", "--dry-run", "--out", str(tmp_path / "r")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: invalid {name}={text!r}") and "Traceback" not in done.stderr
    assert not (tmp_path / "r").exists()


def test_no_other_module_reads_an_iclab_variable():
    """Only ``settings.py`` reads ``os.environ``/``os.getenv`` for an ``ICLAB_*`` name (forwarding one to a worker's
    environment is not reading it)."""
    read = re.compile(r"""(environ(\.get)?\s*[\[(]|getenv\s*\()\s*["']ICLAB_""")
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in (ROOT / "src" / "iclab").rglob("*.py")
        if p.name != "settings.py"
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if read.search(line)
    ]
    assert not found, found


def test_the_docs_list_every_setting_with_its_type_and_range():
    from iclab.settings import settings_table

    page = (ROOT / "docs" / "howto" / "configs-and-tracking.md").read_text()
    block = page.split("<!-- iclab:settings -->\n")[1].split("\n<!-- /iclab:settings -->")[0]
    assert block == settings_table()
