"""Parse the command line without importing Typer, from a table generated from the Typer app.

Typer and its Click core cost about 40 ms of every cold start, more than everything else
kenomem does in a `recall` at 10k memories. `argspec.json` lists each command's options
exactly as the Typer app declares them (regenerate with `python -m kenomem.cli.argspec`; a
test fails when it drifts). `fast_parse` handles well-formed calls with that table and
returns None for anything else (`--help`, a bad value, an unknown option, a missing
argument), which then goes to Typer, so every usage error and help text still comes
from Typer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SPEC_FILE = Path(__file__).with_name("argspec.json")

_SPEC: dict[str, Any] | None = None


def load_spec() -> dict[str, Any]:
    global _SPEC
    if _SPEC is None:
        try:
            _SPEC = json.loads(SPEC_FILE.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            _SPEC = {}
    return _SPEC


# The options the app itself takes before a command (`kenomem --quiet recall x`), which
# `cli._run` merges into the command's own; a test checks them against the Typer app.
GLOBAL_FLAGS = {"--quiet": "quiet", "-q": "quiet", "--verbose": "verbose", "-v": "verbose"}


def fast_parse(args: list[str]) -> tuple[str, dict[str, Any]] | None:
    """(command, parameters) for a call Typer would accept as is, else None."""
    given = [GLOBAL_FLAGS[a] for a in args[: _globals_end(args)]]
    parsed = _parse_command(args[len(given) :])
    if parsed is None or not given:
        return parsed
    command, params = parsed
    for name in given:
        if name not in params:
            return None
        params[name] = True
    return command, params


def _globals_end(args: list[str]) -> int:
    n = 0
    while n < len(args) and args[n] in GLOBAL_FLAGS:
        n += 1
    return n


def _parse_command(args: list[str]) -> tuple[str, dict[str, Any]] | None:
    if not args:
        return None
    table = load_spec()
    command, start = args[0], 1
    # A sub-app's commands are listed as "group sub" (`working show`): two words of argv.
    spec = table.get(command) if " " not in command else None
    if spec is None and len(args) > 1 and " " not in args[1]:
        command, start = f"{args[0]} {args[1]}", 2
        spec = table.get(command)
    if spec is None:
        return None
    params: dict[str, Any] = {}
    by_opt: dict[str, tuple[dict[str, Any], bool]] = {}
    arguments = []
    for p in spec:
        params[p["name"]] = (
            list(p["default"]) if p["multiple"] or p["nargs"] == -1 else p["default"]
        )
        if p["kind"] == "argument":
            arguments.append(p)
        for opt in p["opts"]:
            by_opt[opt] = (p, True)
        for opt in p["secondary"]:
            by_opt[opt] = (p, False)
    given: set[str] = set()
    positional = False
    i = start
    while i < len(args):
        token = args[i]
        i += 1
        if not positional and token == "--":
            positional = True
            continue
        if not positional and token.startswith("-") and token != "-":
            name, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
            found = by_opt.get(name)
            if found is None:
                return None  # --help, unknown or bundled options: Typer decides
            p, primary = found
            if p["flag"]:
                if eq:
                    return None
                params[p["name"]] = primary
            else:
                if eq:
                    raw = inline
                elif i < len(args):
                    raw = args[i]
                    i += 1
                else:
                    return None
                value = _convert(p, raw)
                if value is _INVALID:
                    return None
                if p["multiple"]:
                    params[p["name"]].append(value)
                else:
                    params[p["name"]] = value
            given.add(p["name"])
            continue
        if not arguments:
            return None
        p = arguments[0]
        value = _convert(p, token)
        if value is _INVALID:
            return None
        if p["nargs"] == -1:
            params[p["name"]].append(value)
        else:
            params[p["name"]] = value
            arguments.pop(0)
        given.add(p["name"])
    for p in spec:
        if p["required"] and p["name"] not in given:
            return None
    return command, params


_INVALID = object()


_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _convert(p: dict[str, Any], raw: str) -> Any:
    kind = p["type"]
    if kind == "str":
        return raw
    # Only plain ASCII numbers: anything else (nan, inf, other scripts' digits) is left
    # to Typer, whose answer then stands.
    if not (_INT if kind == "int" else _FLOAT).fullmatch(raw):
        return _INVALID
    value: Any = int(raw) if kind == "int" else float(raw)
    if value != value or value in (float("inf"), float("-inf")):
        return _INVALID
    if (p["min"] is not None and value < p["min"]) or (p["max"] is not None and value > p["max"]):
        return _INVALID
    return value


# -- generating the table from the Typer app -------------------------------------------


def generate() -> dict[str, Any]:
    """The table, read from the Typer app (imports Typer)."""
    from typer.main import get_command

    from kenomem.cli.app import app

    group = get_command(app)
    return {path: [_describe(p) for p in command.params] for path, command in commands(group)}


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


def base_type(param: Any) -> Any:
    """A Typer parameter's type, the item type for a list."""
    annotation = param.type_descriptor.annotation
    if getattr(annotation, "__origin__", None) is list:
        return annotation.__args__[0]
    return annotation


def _describe(param: Any) -> dict[str, Any]:
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
    }


def render_spec(table: dict[str, Any]) -> str:
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    SPEC_FILE.write_text(render_spec(generate()), encoding="utf-8")
    print(f"wrote {SPEC_FILE}")
