"""What the Typer app declares, read from it: the table of `argspec.json` that the fast
parser and the handlers read at run time (`python scripts/gen_argspec.py` writes it),
each command's path and its parameters' types for the man page and the docs.

Imports Typer: used by the generators in `scripts/` and by the tests, never when a
command runs.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator
from typing import Any

from typer.main import get_command

from kenomem.cli.app import app
from kenomem.cli.kit import KINDS, Convert


def generate() -> dict[str, Any]:
    """The table of argspec.json: each command's parameters, as the app declares them."""
    group = get_command(app)
    return {
        path: [_describe(p, conversions(command).get(p.name, [])) for p in command.params]
        for path, command in commands(group)
    }


def commands(group: Any) -> Iterator[tuple[str, Any]]:
    """Each command of the Click group Typer makes, as (path, command), in the order
    declared: a sub-app's commands as "group sub" (`working show`)."""
    for name, command in group.commands.items():
        subs = getattr(command, "commands", None)
        if subs is None:
            yield name, command
            continue
        if command.params:  # options of the group itself: the fast path cannot place them
            raise TypeError(f"{name}: the fast path cannot parse a group's own options")
        for sub_name, sub in subs.items():
            yield f"{name} {sub_name}", sub


def declaration(command: Any) -> Any:
    """The function a command of the Click group was declared by (in `cli/commands/`)."""
    return getattr(command.callback, "__wrapped__", command.callback)


def conversions(command: Any) -> dict[str, list[str]]:
    """Parameter name -> the conversions declared on it (`cli/kit.py`), in order."""
    hints = typing.get_type_hints(declaration(command), include_extras=True)
    found = {}
    for name, hint in hints.items():
        marks = [m.how for m in getattr(hint, "__metadata__", ()) if isinstance(m, Convert)]
        unknown = set(marks) - set(KINDS)
        if unknown:
            raise TypeError(f"{name}: unknown conversions {unknown}")
        if marks:
            found[name] = marks
    return found


def base_type(param: Any) -> Any:
    """A Typer parameter's type, the item type for a list."""
    annotation = param.type_descriptor.annotation
    if getattr(annotation, "__origin__", None) is list:
        return annotation.__args__[0]
    return annotation


def _describe(param: Any, convert: list[str]) -> dict[str, Any]:
    annotation = param.type_descriptor.annotation
    multiple = bool(getattr(param, "multiple", False))
    nargs = param.nargs
    base = base_type(param)
    kind = {int: "int", float: "float", str: "str", bool: "bool"}.get(base)
    if kind is None:
        raise TypeError(f"{param.name}: the fast path cannot parse {annotation!r}")
    default = param.default
    if isinstance(default, tuple):
        default = list(default)
    if default is None and (multiple or nargs == -1):
        default = []
    return {
        "name": param.name,
        "kind": "argument" if param.param_type_name == "argument" else "option",
        "opts": [o for o in param.opts if o.startswith("-")],
        "secondary": list(getattr(param, "secondary_opts", []) or []),
        "type": kind,
        "flag": bool(getattr(param, "is_flag", False)),
        "multiple": multiple,
        "nargs": nargs,
        "min": getattr(param, "min", None),
        "max": getattr(param, "max", None),
        "default": default,
        "required": bool(param.required),
        "convert": convert,
    }


def render_spec(table: dict[str, Any]) -> str:
    return json.dumps(table, indent=1, sort_keys=True) + "\n"
