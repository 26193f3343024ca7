"""MkDocs hook: pages generated from the code, so they never drift from it.

``<!-- iclab:cli -->`` becomes the reference of every ``iclab`` command and option (read from the command tree
that ``iclab --help`` prints), and ``<!-- iclab:configs -->`` one table per experiment with every config field:
type, value in each preset, allowed values and meaning (what ``iclab show NAME`` prints).
"""

from __future__ import annotations

from typing import Any

import typer

CLI_MARK = "<!-- iclab:cli -->"
CONFIGS_MARK = "<!-- iclab:configs -->"


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


def configs_reference() -> str:
    from iclab.cli._show import set_syntax
    from iclab.config import describe_fields
    from iclab.experiments import all_experiments

    lines = []
    for exp in all_experiments():
        presets = list(exp.presets)
        lines += [
            f"## `{exp.name}`",
            "",
            f"{exp.title} (paper `{exp.paper}`, config `{exp.config_cls.__name__}`).",
            "",
            "| field | type | " + " | ".join(presets) + " | allowed | meaning |",
            "|---|---|" + "---|" * len(presets) + "---|---|",
        ]
        per_preset = {p: {f.name: f for f in describe_fields(c)} for p, c in exp.presets.items()}
        for field in per_preset[presets[0]].values():
            values = " | ".join(f"`{set_syntax(per_preset[p][field.name].value)}`" for p in presets)
            lines.append(
                f"| `{field.name}` | `{field.type}` | {values} | {_cell(field.allowed)} | {_cell(field.doc)} |"
            )
        lines.append("")
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs hook signature
    if CLI_MARK in markdown:
        markdown = markdown.replace(CLI_MARK, cli_reference())
    if CONFIGS_MARK in markdown:
        markdown = markdown.replace(CONFIGS_MARK, configs_reference())
    return markdown
