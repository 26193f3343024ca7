"""Every code block of docs/howto/add-experiment.md runs: the ``python`` blocks in order in one namespace, in a
temporary folder; the ``bash`` blocks command by command through the CLI in a subprocess (``python -m iclab``,
offline), in a temporary folder holding a copy of ``examples/plugin-onestep-gd`` so the page's paths resolve and
every run folder is written there, never into the repository; ``pip install ./examples/plugin-onestep-gd`` is the
plugin installed by pip into a folder of its own (``tests/test_plugins.py``'s fixture), put on ``PYTHONPATH`` for
the commands after it, never into the project's environment; the ``toml`` block is parsed and compared with the
plugin's ``pyproject.toml``. A block a test cannot run is marked in the page (``<!-- not run: reason -->`` just
before it) and listed in :data:`NOT_RUN`; a block neither run nor marked fails."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from test_plugins import site  # noqa: F401 - the fixture: the plugin installed by pip into a folder of its own

ROOT = Path(__file__).resolve().parents[1]
HOWTO = ROOT / "docs" / "howto" / "add-experiment.md"
PLUGIN = ROOT / "examples" / "plugin-onestep-gd"
RUN = ("python", "bash", "toml")
#: the blocks marked "not run" in the page: (language, first line), each with its reason in the page
NOT_RUN = [("python", "from iclab.experiments import Experiment, register")]
_FENCE = re.compile(
    r"(?:^<!-- not run: (?P<why>[^\n]+?) -->\n)?^```(?P<lang>[\w-]*)\n(?P<code>.*?)^```[ \t]*$", re.M | re.S
)
_PIP = ["pip", "install", "./examples/plugin-onestep-gd"]


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    line: int  # of the opening fence, 1-based
    why: str  # "" when the block is run

    @property
    def first(self) -> str:
        return next((line for line in self.code.splitlines() if line.strip()), "")


def _blocks(lang: str | None = None, text: str | None = None) -> list[Block]:
    """The fenced blocks of the page (or of ``text``), of language ``lang`` (None: all), in order."""
    text = HOWTO.read_text() if text is None else text
    blocks = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start("lang")) + 1
        blocks.append(Block(m.group("lang"), m.group("code"), line, m.group("why") or ""))
    return [b for b in blocks if lang is None or b.lang == lang]


def _commands(block: Block) -> list[tuple[dict, list[str], str]]:
    """``(environment assignments, argv, the comment after it)`` for each command line of a bash block."""
    out = []
    for line in block.code.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        words = shlex.split(line, comments=True)
        env = {}
        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        comment = line.split("#", 1)[1].strip() if "#" in line else ""
        out.append((env, words, comment))
    return out


def _unrunnable(blocks: list[Block]) -> list[str]:
    """The blocks neither run (a language of :data:`RUN`) nor marked "not run"."""
    return [f"line {b.line}: ```{b.lang}" for b in blocks if not b.why and b.lang not in RUN]


def test_every_block_is_run_or_marked_not_run():
    blocks = _blocks()
    assert len(blocks) >= 5 and {b.lang for b in blocks} == set(RUN), [(b.lang, b.line) for b in blocks]
    assert [(b.lang, b.first) for b in blocks if b.why] == NOT_RUN, "marked blocks differ from NOT_RUN"
    unrunnable = _unrunnable(blocks)
    assert not unrunnable, f"blocks neither run nor marked '<!-- not run: reason -->': {unrunnable}"
    for block in _blocks("bash"):  # every command is one the bash test runs: iclab, or the plugin's pip install
        for env, argv, _ in _commands(block):
            assert argv[:1] == ["iclab"] or argv == _PIP, f"line {block.line}: cannot run {argv}"
            assert set(env) <= {"PYTHONPATH", "ICLAB_EXPERIMENT_MODULES"}, env


def test_a_block_neither_run_nor_marked_is_found():
    page = (
        "Text.\n\n```sh\nmake docs\n```\n\n<!-- not run: needs a GPU -->\n```text\nout\n```\n\n```python\nx = 1\n```\n"
    )
    blocks = _blocks(text=page)
    assert [(b.lang, b.why, b.code) for b in blocks] == [
        ("sh", "", "make docs\n"),
        ("text", "needs a GPU", "out\n"),
        ("python", "", "x = 1\n"),
    ]
    assert _unrunnable(blocks) == ["line 3: ```sh"]


def test_the_marked_block_is_quoted_from_the_plugin():
    (block,) = [b for b in _blocks() if b.why]
    compile(block.code, f"{HOWTO}:{block.line}", "exec")
    assert block.code.strip() in (PLUGIN / "iclab_onestep_gd" / "__init__.py").read_text()


def test_the_toml_block_is_the_plugins_entry_point():
    (block,) = _blocks("toml")
    shown = tomllib.loads(block.code)["project"]["entry-points"]["iclab.experiments"]
    pyproject = tomllib.loads((PLUGIN / "pyproject.toml").read_text())
    assert shown == pyproject["project"]["entry-points"]["iclab.experiments"] == {"onestep-gd": "iclab_onestep_gd"}


def _plugin_claims() -> list:
    sys.path.insert(0, str(PLUGIN))
    try:
        from iclab_onestep_gd.claims import claims

        return claims(None)
    finally:
        sys.path.remove(str(PLUGIN))
        for name in [m for m in sys.modules if m.startswith("iclab_onestep_gd")]:
            del sys.modules[name]


def test_the_python_blocks_run_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "howto_add_experiment"}
    for block in _blocks("python"):
        if not block.why:
            exec(compile(block.code, f"{HOWTO}:{block.line}", "exec"), namespace)  # noqa: S102 - the page's code
    assert not any(tmp_path.iterdir())  # the blocks write nothing
    # "These are the plugin's two claims": the page's records state what the plugin's do, with the same test text
    same = [(r.id, r.kind, r.quantity, r.test) for r in namespace["claims"](None)]
    assert same == [(r.id, r.kind, r.quantity, r.test) for r in _plugin_claims()]


def _cli(argv: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "iclab", *argv], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_the_bash_blocks_run_through_the_cli(site, tmp_path):  # noqa: F811 - the fixture imported above
    work = tmp_path / "work"
    shutil.copytree(PLUGIN, work / "examples" / PLUGIN.name, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    base = dict(os.environ, HF_HUB_OFFLINE="1")
    base.pop("ICLAB_EXPERIMENT_MODULES", None)
    paths = [str(ROOT / "src")] + [p for p in base.get("PYTHONPATH", "").split(os.pathsep) if p]
    ran = []
    for block in _blocks("bash"):
        for env, argv, comment in _commands(block):
            if argv == _PIP:  # pip install into a folder of its own (the fixture), on PYTHONPATH from here on
                assert (work / argv[2]).resolve() == (work / "examples" / PLUGIN.name).resolve()
                paths.insert(0, str(site))
                continue
            extra = env.pop("PYTHONPATH", "")
            run_paths = [str((work / p).resolve()) for p in extra.split(os.pathsep) if p] + paths
            args = argv[1:]
            if args[:1] == ["run"] and "--out" not in args:  # the default run folder, under the temporary folder
                args += ["--out", str(work / "runs" / f"{args[1]}-quick")]
            out = _cli(args, {**base, **env, "PYTHONPATH": os.pathsep.join(run_paths)}, work)
            assert out.returncode == 0, f"{shlex.join(argv)}\n{out.stderr}"
            for origin in re.findall(r"\[[^\]]+\]", comment):  # what the page says the command prints
                assert origin in out.stdout, f"{shlex.join(argv)}: {origin} not in\n{out.stdout}"
            ran.append(args[0])
    assert ran == ["list", "list", "run"]
    summary = json.loads((work / "runs" / "onestep-gd-quick" / "summary.json").read_text())
    assert summary["cells"]["done"] == 5 and not summary["errors"]
    verdicts = {c["id"]: c["verdict"] for c in summary["comparisons"]}
    assert verdicts == {"gd-step-beats-zero": "agrees", "gd-step-matches-ols": "disagrees"}  # the false one disagrees
