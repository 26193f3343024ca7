"""MkDocs hook: pages generated from the code, so they never drift from it.

``<!-- iclab:cli -->`` becomes the reference of every ``iclab`` command and option (read from the command tree
that ``iclab --help`` prints), and ``<!-- iclab:configs -->`` one table per experiment with every config field:
type, value in each preset, allowed values and meaning (what ``iclab show NAME`` prints; :func:`config_table`), an
experiment that is not iclab's own saying where it comes from. Every experiment of an installed plugin (entry-point
group ``iclab.experiments``) gets a page, ``plugins/NAME.md``, in a "Plugins" section of the nav right after
"Papers" (:func:`plugin_page`). With no plugin installed there is no such section, and the site is as before.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import typer
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

CLI_MARK = "<!-- iclab:cli -->"
CONFIGS_MARK = "<!-- iclab:configs -->"
PLUGINS = "Plugins"  # the nav section of the plugins' pages, right after PAPERS
PAPERS = "Papers"
PLUGIN_FOLDER = "plugins"
PLUGIN_ORIGIN = "plugin "  # how experiment_origin() begins for an entry point of the group iclab.experiments


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def _option_row(param: Any) -> str:
    """One table row of a click parameter (typer vendors click, so parameters are told apart by their kind)."""
    is_option = getattr(param, "param_type_name", "") == "option"
    names = ", ".join(f"`{o}`" for o in param.opts + param.secondary_opts) if is_option else f"`{param.name.upper()}`"
    default = "" if param.required or param.default in (None, False, (), []) else f"`{param.default}`"
    return f"| {names} | {_cell(getattr(param, 'help', '') or '')} | {default} |"


def _command_section(path: list[str], command: Any) -> list[str]:
    lines = [f"## `{' '.join(path)}`", "", _cell(command.help or "").strip(), ""]
    params = [p for p in command.params if p.name != "help"]
    if params:
        lines += ["| option | meaning | default |", "|---|---|---|", *map(_option_row, params), ""]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        lines += _command_section(path + [name], sub)
    return lines


def cli_reference() -> str:
    from iclab.cli import _load_subcommands, app

    _load_subcommands()
    return "\n".join(_command_section(["iclab"], typer.main.get_command(app)))


def config_table(exp: Any) -> str:
    """The table of every config field of ``exp``: type, value in each preset, allowed values and meaning."""
    from iclab.cli._show import set_syntax
    from iclab.config import describe_fields

    presets = list(exp.presets)
    lines = [
        "| field | type | " + " | ".join(presets) + " | allowed | meaning |",
        "|---|---|" + "---|" * len(presets) + "---|---|",
    ]
    per_preset = {p: {f.name: f for f in describe_fields(c)} for p, c in exp.presets.items()}
    for field in per_preset[presets[0]].values():
        values = " | ".join(f"`{set_syntax(per_preset[p][field.name].value)}`" for p in presets)
        lines.append(f"| `{field.name}` | `{field.type}` | {values} | {_cell(field.allowed)} | {_cell(field.doc)} |")
    return "\n".join(lines)


def _origin_note(exp: Any) -> str:
    """Where an experiment that is not iclab's own comes from, for the configs page ("" for iclab's own)."""
    from iclab.experiments import experiment_origin

    origin = experiment_origin(exp.name)
    if origin == "iclab":
        return ""
    page = f": [its page]({PLUGIN_FOLDER}/{exp.name}.md)" if origin.startswith(PLUGIN_ORIGIN) else ""
    return f", from `{origin}`{page}"


def configs_reference() -> str:
    from iclab.experiments import all_experiments

    lines = []
    for exp in all_experiments():
        about = f"{exp.title} (paper `{exp.paper}`, config `{exp.config_cls.__name__}`{_origin_note(exp)})."
        lines += [f"## `{exp.name}`", "", about, "", config_table(exp), ""]
    return "\n".join(lines)


def plugin_experiments() -> list[Any]:
    """The experiments of installed plugins, in ``iclab list`` order (not those of ``ICLAB_EXPERIMENT_MODULES``)."""
    from iclab.experiments import all_experiments, experiment_origin

    return [e for e in all_experiments() if experiment_origin(e.name).startswith(PLUGIN_ORIGIN)]


def _package(exp: Any) -> str:
    """The package ``exp`` is laid out in: that of its cell function (``Experiment.in_package`` names it
    ``"PACKAGE.cells:cells"``)."""
    module = getattr(exp.cells, "target", "").partition(":")[0] or getattr(exp.cells, "__module__", "")
    return module.rpartition(".")[0] or module


def _module_doc(module: str) -> str:
    """The docstring of ``module``; "" where it has none or does not exist (a plugin without ``notes.py``)."""
    try:
        return inspect.getdoc(importlib.import_module(module)) or ""
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise  # a module the plugin imports is missing: its own error says which
        return ""


def _claims_table(exp: Any, preset: str) -> str:
    records = exp.claims(exp.config(preset))
    rows = [f"| `{r.id}` | {_cell(r.kind)} | {_cell(r.claim)} | {_cell(r.source)} | {_cell(r.test)} |" for r in records]
    return "\n".join(["| id | kind | claim | source | test |", "|---|---|---|---|---|", *rows])


def plugin_page(exp: Any) -> str:
    """The page of one plugin experiment: where it comes from (as ``iclab list`` says it), its package's docstring,
    its claim, its notes module's docstring, the claim records of its ``paper`` preset (else ``full``) and its
    config table."""
    from iclab.experiments import experiment_origin

    package = _package(exp)
    notes = _module_doc(f"{package}.notes")
    preset = "paper" if "paper" in exp.presets else "full"
    parts = [
        f"# {exp.title}",
        f"`{exp.name}` (paper `{exp.paper}`) is not part of iclab: `iclab list` shows where it comes from, "
        f"`[{experiment_origin(exp.name)}]`. Run it with `iclab run {exp.name} --quick`.",
        _module_doc(package),
        f"## What it tests\n\n{exp.claim}",
        f"## Notes\n\n{notes}" if notes else "",
        f"## Claims of the `{preset}` preset\n\n{_claims_table(exp, preset)}",
        f"## Config\n\nWhat `iclab show {exp.name}` prints; change a field with `--set FIELD=VALUE`.\n\n"
        + config_table(exp),
    ]
    return "\n\n".join(p for p in parts if p) + "\n"


def on_config(config):
    """Put the plugins' pages (if any) in the nav, in a section right after "Papers"."""
    pages = [{exp.title: f"{PLUGIN_FOLDER}/{exp.name}.md"} for exp in plugin_experiments()]
    if pages:
        nav = config["nav"]
        at = next((i for i, item in enumerate(nav) if isinstance(item, dict) and PAPERS in item), None)
        if at is None:
            raise PluginError(f"mkdocs.yml: the nav has no {PAPERS!r} section to put the {PLUGINS!r} section after")
        nav.insert(at + 1, {PLUGINS: pages})
    return config


def on_files(files, config):
    for exp in plugin_experiments():
        files.append(File.generated(config, f"{PLUGIN_FOLDER}/{exp.name}.md", content=plugin_page(exp)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs hook signature
    if CLI_MARK in markdown:
        markdown = markdown.replace(CLI_MARK, cli_reference())
    if CONFIGS_MARK in markdown:
        markdown = markdown.replace(CONFIGS_MARK, configs_reference())
    return markdown
