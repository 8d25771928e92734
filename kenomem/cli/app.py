"""The command line, declared for Typer: options, help and examples; no logic.

Each command passes its parameters, unchanged, to `commands.run`. The entry point
parses most calls without importing Typer (see `argspec.py`); this module is used for
`--help`, completion, and every call the fast path does not recognise, so usage errors
always come from here.
"""

from __future__ import annotations

from typing import Annotated

import typer

from kenomem.cli import handlers as commands
from kenomem.cli.complete import complete_ids, complete_tags, complete_types
from kenomem.files.paths import MEMORY_TYPES

app = typer.Typer(
    name="kenomem",
    help="A long-term memory for LLM agents and the people they work for, kept as markdown."
    '\n\nExample: kenomem remember "Prefers short answers" && kenomem recall answer style',
    no_args_is_help=True,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


Vault = Annotated[
    str | None,
    typer.Option(
        "--vault",
        help="The vault folder (default: $KENOMEM_VAULT, else ~/kenomem).",
        show_default=False,
    ),
]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
Debug = Annotated[bool, typer.Option("--debug", help="Show the traceback of an error.")]
Quiet = Annotated[
    bool,
    typer.Option("--quiet", "-q", help="Only errors on stderr: no messages, warnings or progress."),
]
Verbose = Annotated[
    bool,
    typer.Option(
        "--verbose",
        "-v",
        help="More on stderr: the vault, its index engine, what was rescanned, the time taken.",
    ),
]
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
        help="Only memories of this scope (global, a chat id); repeatable.",
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
]
Until = Annotated[
    str | None,
    typer.Option(
        "--until",
        help="Only memories up to this time (a date includes that day).",
        show_default=False,
    ),
]
MemoryId = Annotated[
    str,
    typer.Argument(help="A memory id, or any unique start of one.", autocompletion=complete_ids),
]


# The options given before the command (`kenomem --quiet recall ...`), set by `main`
# on every call and merged into the command's own by `_run`.
GLOBAL_FLAGS = {"quiet": False, "verbose": False}


def _run(command: str, params: dict[str, object]) -> None:
    params = {**params, **{k: bool(params.get(k)) or v for k, v in GLOBAL_FLAGS.items()}}
    code = commands.run(command, params)
    if code:
        raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        typer.echo(commands.version())
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
    GLOBAL_FLAGS.update(quiet=quiet, verbose=verbose)


@app.command()
def init(
    path: Annotated[
        str | None,
        typer.Argument(
            help="Where to create the vault (default: $KENOMEM_VAULT, else ~/kenomem).",
            show_default=False,
        ),
    ] = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Create a vault from the template; existing files are never overwritten.

    Example: kenomem init ~/notes/memory
    """
    _run("init", locals())


@app.command()
def remember(
    text: Annotated[str, typer.Argument(help="What to remember; '-' reads stdin.")],
    type_: Annotated[
        str | None,
        typer.Option(
            "--type",
            "-t",
            help="semantic, episodic, procedural or working (else classified from the text).",
            show_default=False,
            autocompletion=complete_types,
        ),
    ] = None,
    tag: Annotated[
        list[str],
        typer.Option(
            "--tag", help="A tag; repeatable.", show_default=False, autocompletion=complete_tags
        ),
    ] = [],  # noqa: B006
    importance: Annotated[
        int | None,
        typer.Option(
            "--importance",
            "-i",
            min=1,
            max=10,
            help="1 (trivial) to 10 (crucial); default 5.",
            show_default=False,
        ),
    ] = None,
    scope: Annotated[
        str | None,
        typer.Option("--scope", help="global (default) or a chat id.", show_default=False),
    ] = None,
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            help="The session this belongs to (needed for working memory).",
            show_default=False,
        ),
    ] = None,
    title: Annotated[
        str | None,
        typer.Option("--title", help="A title (default: the first sentence).", show_default=False),
    ] = None,
    pin: Annotated[bool, typer.Option("--pin", help="Never let this memory fade.")] = False,
    supersedes: Annotated[
        str | None,
        typer.Option(
            "--supersedes",
            help="The id of a memory this one replaces (kept as superseded).",
            show_default=False,
            autocompletion=complete_ids,
        ),
    ] = None,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Store a memory; a fact already known reinforces the existing one.

    Example: kenomem remember "Deploys go out on Tuesdays" --tag work --importance 7
    """
    _run("remember", locals())


@app.command()
def recall(
    query: Annotated[list[str], typer.Argument(help="What to look for.")],
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            "-n",
            min=1,
            help="How many results (default 10, or recall.limit).",
            show_default=False,
        ),
    ] = None,
    type_: Types = [],  # noqa: B006
    tag: Tags = [],  # noqa: B006
    scope: Scopes = [],  # noqa: B006
    since: Since = None,
    until: Until = None,
    archive: Annotated[
        bool, typer.Option("--archive", help="Search archived and superseded memories too.")
    ] = False,
    no_touch: Annotated[
        bool, typer.Option("--no-touch", help="Do not update last_accessed and access_count.")
    ] = False,
    explain: Annotated[
        bool,
        typer.Option("--explain", help="Show recency, importance and relevance of each result."),
    ] = False,
    w_recency: Annotated[
        float | None,
        typer.Option(
            "--w-recency", min=0, help="Weight of recency for this call.", show_default=False
        ),
    ] = None,
    w_importance: Annotated[
        float | None,
        typer.Option(
            "--w-importance", min=0, help="Weight of importance for this call.", show_default=False
        ),
    ] = None,
    w_relevance: Annotated[
        float | None,
        typer.Option(
            "--w-relevance", min=0, help="Weight of relevance for this call.", show_default=False
        ),
    ] = None,
    now: Annotated[
        str | None,
        typer.Option(
            "--now",
            help="The moment to recall from (2023-05-08, 2023-05-08T14:00): recency and "
            "times in the query ('last week') count from it. Default: now.",
            show_default=False,
        ),
    ] = None,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Find memories, ranked by recency + importance + relevance.

    A time named in the query ("last week", "in May 2023") lifts the memories of then.

    Example: kenomem recall deploy day --type semantic --explain
    """
    _run("recall", locals())


@app.command()
def show(
    id: MemoryId,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Print one memory.

    Example: kenomem show mem_20260214
    """
    _run("show", locals())


@app.command("list")
def list_(
    type_: Types = [],  # noqa: B006
    tag: Tags = [],  # noqa: B006
    scope: Scopes = [],  # noqa: B006
    status: Annotated[
        list[str],
        typer.Option(
            "--status",
            help="active, archived, superseded or proposed; repeatable (default: active).",
            show_default=False,
        ),
    ] = [],  # noqa: B006
    archive: Annotated[
        bool, typer.Option("--archive", help="Include archived and superseded memories.")
    ] = False,
    since: Since = None,
    until: Until = None,
    sort: Annotated[
        str, typer.Option("--sort", help="created, last_accessed, importance or title.")
    ] = "created",
    asc: Annotated[bool, typer.Option("--asc", help="Oldest (or lowest) first.")] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many to show.")] = 50,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """List memories, newest first, with filters.

    Example: kenomem list --type episodic --since 7d
    """
    _run("list", locals())


@app.command()
def forget(
    id: MemoryId,
    delete: Annotated[
        bool, typer.Option("--delete", help="Delete the file instead of archiving it.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before deleting.")] = False,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Move a memory to the archive (or delete it with --delete).

    Example: kenomem forget mem_20260214_1030
    """
    _run("forget", locals())


@app.command()
def edit(
    id: MemoryId,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Open a memory in $VISUAL or $EDITOR, then reindex it.

    Example: EDITOR=nano kenomem edit mem_20260214
    """
    _run("edit", locals())


@app.command()
def reindex(
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Rebuild the index from the files (the index is derived and disposable).

    Example: kenomem reindex
    """
    _run("reindex", locals())


@app.command()
def stats(
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Counts of memories by type and status, and the index's size.

    Example: kenomem stats --json
    """
    _run("stats", locals())


@app.command()
def mcp(
    vault: Vault = None, debug: Debug = False, quiet: Quiet = False, verbose: Verbose = False
) -> None:
    """Serve the vault to agents over the Model Context Protocol (stdio).

    An MCP client (Claude Desktop, Claude Code) starts it; stdout is the protocol, logs: stderr.

    Example: claude mcp add kenomem -- kenomem mcp --vault ~/kenomem
    """
    _run("mcp", locals())


# The vault's upkeep (the sleep cycle, the watcher, the doctor) and what an agent uses
# while it works (working memory, patterns) are declared beside this file; importing
# them registers those commands on `app`.
from kenomem.cli import app_agents, app_intro, app_upkeep  # noqa: E402, F401
