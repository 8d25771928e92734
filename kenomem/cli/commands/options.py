"""What the command declarations share: the options every command takes (from
`cli/flags.py`), those several commands take (types, tags, times...), and `run`, by
which each command hands its parameters, unchanged, to the handlers.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from kenomem.cli import handlers
from kenomem.cli.complete import complete_ids, complete_tags, complete_types
from kenomem.cli.flags import FLAGS
from kenomem.cli.kit import END_OF_DAY, MOMENT
from kenomem.files.paths import MEMORY_TYPES


def _flag(name: str, **more: Any) -> Any:
    options, help = FLAGS[name]
    return typer.Option(*options, help=help, **more)


Vault = Annotated[str | None, _flag("vault", show_default=False)]
Json = Annotated[bool, _flag("json")]
Debug = Annotated[bool, _flag("debug")]
Quiet = Annotated[bool, _flag("quiet")]
Verbose = Annotated[bool, _flag("verbose")]

Types = Annotated[
    list[str],
    typer.Option(
        "--type",
        "-t",
        help=f"Only this type ({', '.join(MEMORY_TYPES)}); repeatable.",
        show_default=False,
        autocompletion=complete_types,
    ),
]
Tags = Annotated[
    list[str],
    typer.Option(
        "--tag",
        help="Only memories with this tag; repeat to require several.",
        show_default=False,
        autocompletion=complete_tags,
    ),
]
Scopes = Annotated[
    list[str],
    typer.Option(
        "--scope",
        help="Only what this chat sees: its memories and the global ones (global: the "
        "global ones alone); repeatable. Without it, every scope.",
        show_default=False,
    ),
]
Since = Annotated[
    str | None,
    typer.Option(
        "--since",
        help="Only memories from this time on: 2026-02-14, yesterday, 7d, 2w.",
        show_default=False,
    ),
    MOMENT,
]
Until = Annotated[
    str | None,
    typer.Option(
        "--until",
        help="Only memories up to this time (a date includes that day).",
        show_default=False,
    ),
    END_OF_DAY,
]
MemoryId = Annotated[
    str,
    typer.Argument(help="A memory id, or any unique start of one.", autocompletion=complete_ids),
]

# The flags given before the command (`kenomem --quiet recall ...`): set by the app's
# callback on every call, and counted by `run` as the command's own.
GIVEN_BEFORE = {"quiet": False, "verbose": False}


def run(command: str, params: dict[str, object]) -> None:
    """Run `command` with the parameters Typer parsed; exit with its code."""
    params = {**params, **{k: bool(params.get(k)) or v for k, v in GIVEN_BEFORE.items()}}
    code = handlers.run(command, params)
    if code:
        raise typer.Exit(code)
