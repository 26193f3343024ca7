"""``iclab show NAME [--preset P] [--format text|toml|yaml|json]``: every config field of an experiment.

``text`` lists each field with its type, its value in the preset (and in the other presets where they differ),
what the field's own validation allows, and its meaning (the ``Fields:`` section of the config's docstring).
``toml``, ``yaml`` and ``json`` print the preset's values as a file for ``iclab run NAME --config FILE``.
"""

from __future__ import annotations

import json
import math

import typer

from iclab.cli import app
from iclab.config import FieldInfo, check_choice, describe_fields

__all__ = ["show", "FORMATS", "set_syntax"]

FORMATS = ("text", "toml", "yaml", "json")


def set_syntax(value: object) -> str:
    """``value`` as ``--set field=...`` takes it: lists comma-separated, None as ``none``."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return ",".join(set_syntax(v) for v in value)
    return str(value)


def _field_text(field: FieldInfo, others: dict[str, object]) -> str:
    differ = ", ".join(f"{p}: {set_syntax(v)}" for p, v in others.items() if v != field.value)
    lines = [f"{field.name}  {field.type} = {set_syntax(field.value)}" + (f"   [{differ}]" if differ else "")]
    if field.doc:
        lines.append(f"    {field.doc}")
    lines.append(f"    allowed: {field.allowed}")
    return "\n".join(lines)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and not math.isfinite(value):
        return ("-" if value < 0 else "") + ("nan" if math.isnan(value) else "inf")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _as_file(fields: list[FieldInfo], fmt: str, header: str) -> str:
    """The preset's values as a TOML/YAML file with each field's meaning as a comment, or as JSON."""
    if fmt == "json":
        return json.dumps({f.name: f.value for f in fields}, indent=2, ensure_ascii=False)
    lines = [f"# {header}"]
    for f in fields:
        lines.append(f"# {f.doc} Allowed: {f.allowed}." if f.doc else f"# allowed: {f.allowed}")
        if fmt == "yaml":
            lines.append(f"{f.name}: {json.dumps(f.value, ensure_ascii=False)}")  # JSON is valid YAML
        elif f.value is None:
            lines.append(f"# {f.name} = (none: TOML has no null; leaving it out keeps none)")
        else:
            lines.append(f"{f.name} = {_toml_value(f.value)}")
    return "\n".join(lines)


@app.command("show")
def show(
    experiment: str = typer.Argument(..., help="experiment name (see `iclab list`)"),
    preset: str = typer.Option(
        "quick", "--preset", help="whose values to show: quick, full or paper (the presets the experiment has)"
    ),
    fmt: str = typer.Option(
        "text",
        "--format",
        help="text: every field with type, value, allowed values and "
        "meaning | toml, yaml, json: the values as a file for `iclab run NAME --config FILE`",
    ),
) -> None:
    """Every config field of an experiment: type, value in the preset, allowed values and meaning."""
    from iclab.experiments import get_experiment

    check_choice("--format", fmt, FORMATS)
    exp = get_experiment(experiment)
    config = exp.config(preset)
    fields = describe_fields(config)
    if fmt != "text":
        typer.echo(_as_file(fields, fmt, f"iclab run {exp.name} --preset {preset} --config FILE"))
        return
    others = {p: c for p, c in exp.presets.items() if p != preset}
    typer.echo(
        f"{exp.name}: {exp.title}\nconfig {type(config).__name__}, preset {preset} (presets: "
        f"{', '.join(exp.presets)}); change a field with --set FIELD=VALUE or --config FILE\n"
    )
    for field in fields:
        typer.echo(_field_text(field, {p: getattr(c, field.name) for p, c in others.items()}) + "\n")
