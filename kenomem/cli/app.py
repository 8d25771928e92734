"""The Typer app: the families of commands declared in `cli/commands/`, under the options
of the app itself (--version, and the flags that may come before the command).

The entry point parses most calls without importing Typer (`cli/argspec.py`); this app
is used for `--help`, completion, and every call the fast path does not recognise, so
usage errors always come from here. The man page, the completions and argspec.json are
generated from it (`cli/introspect.py`, `scripts/`).

Its help reads as a command line's usually does (`Usage: kenomem remember [OPTIONS]
TEXT`, `--limit INTEGER`, a flag with no value shown), not in Typer's own notation
(`{text}`, `<int>`, `<bool>`): every command is a `Command` and every group a `Group`,
whose parameters name their values with `value_name`.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from kenomem.cli.commands import agents, install, intro, memory, serve, share, upkeep
from kenomem.cli.commands.options import GIVEN_BEFORE, Quiet, Verbose

# How a value of each type is named in the help, as Click names them.
VALUE_NAMES = {str: "TEXT", int: "INTEGER", float: "FLOAT", bool: "BOOLEAN"}


def value_name(param: TyperArgument | TyperOption) -> str:
    """The name of a parameter's value in the help: its own metavar, else its choices
    (`[read|write]`), else its type's (`TEXT`, `INTEGER`; a list's item type)."""
    if param.metavar is not None:
        return param.metavar
    described = param.type_descriptor
    if described.is_choice and described.choices:
        return "[" + "|".join(str(c) for c in described.choices) + "]"
    annotation = described.annotation
    if getattr(annotation, "__origin__", None) is list:
        annotation = annotation.__args__[0]
    return VALUE_NAMES.get(annotation, param.bare_type().upper())


class Argument(TyperArgument):
    def display_type(self, ctx: Any) -> str:
        return value_name(self)

    def _usage_display_name(self) -> str:
        name = self.metavar or (self.name or "").upper()
        if self.nargs != 1:
            name += "..."
        return name if self.required else f"[{name}]"


class Option(TyperOption):
    def display_type_rich(self, ctx: Any) -> str | None:
        if self.is_flag or self.count:
            return None  # a flag takes no value
        return value_name(self)


def _usual(params: list[Any]) -> list[Any]:
    """`params`, each one of Typer's made an `Argument` or an `Option` (a subclass that
    only changes how the help names its value)."""
    for param in params:
        if type(param) is TyperArgument:
            param.__class__ = Argument
        elif type(param) is TyperOption:
            param.__class__ = Option
    return params


class Command(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _usual(super().get_params(ctx))


class Group(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _usual(super().get_params(ctx))


app = typer.Typer(
    name="kenomem",
    cls=Group,
    help="A long-term memory for LLM agents and the people they work for, kept as markdown."
    '\n\nExample: kenomem remember "Prefers short answers" && kenomem recall answer style',
    no_args_is_help=True,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from kenomem.cli.handlers import version

        typer.echo(version())
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """kenomem: remember and recall, from a vault of markdown files.

    Example: kenomem remember "Prefers short answers" && kenomem recall "answer style"
    """
    GIVEN_BEFORE.update(quiet=quiet, verbose=verbose)


# In the order `kenomem --help` lists them.
for family in (memory, serve, agents, install, intro, upkeep, share):
    app.add_typer(family.commands)
for group in (agents.working_app, upkeep.model_app, serve.token_app):
    app.add_typer(group, cls=Group)


def _usual_commands(typer_app: typer.Typer) -> None:
    """Every command declared under `typer_app` made a `Command`."""
    for info in typer_app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = Command
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _usual_commands(group.typer_instance)


_usual_commands(app)
