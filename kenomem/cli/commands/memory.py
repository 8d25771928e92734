"""The everyday commands, declared for Typer: init, remember, recall, show, list,
forget, edit, reindex, stats and mcp. Options, help and examples; no logic.

Each parameter is named as the field of the request the operation takes (`RecallRequest`
for recall...) or as the keyword of the `api.Vault` method it calls; the presentation
flags (--vault, --json, --debug, -q, -v, --explain) are the command line's own. Each
command hands its parameters, unchanged, to the handlers (`options.run`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from kenomem.cli.commands.options import (
    Debug,
    Json,
    MemoryId,
    Quiet,
    Scopes,
    Since,
    Tags,
    Types,
    Until,
    Vault,
    Verbose,
    run,
)
from kenomem.cli.complete import complete_ids, complete_tags, complete_types
from kenomem.cli.kit import MOMENT, STDIN, WORDS

commands = typer.Typer()


@commands.command()
def init(
    path: Annotated[
        str | None,
        typer.Argument(
            help="Where to create the vault (default: $KENOMEM_VAULT, else ~/kenomem).",
            show_default=False,
        ),
    ] = None,
    git: Annotated[
        bool,
        typer.Option(
            "--git",
            help="Also make it a git repository with kenomem's merge driver, for kenomem sync.",
        ),
    ] = False,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Create a vault from the template; existing files are never overwritten.

    Example: kenomem init ~/notes/memory
    """
    run("init", locals())


@commands.command()
def remember(
    text: Annotated[str, typer.Argument(help="What to remember; '-' reads stdin."), STDIN],
    type: Annotated[
        str | None,
        typer.Option(
            "--type",
            "-t",
            help="semantic, episodic, procedural or working (else classified from the text).",
            show_default=False,
            autocompletion=complete_types,
        ),
    ] = None,
    tags: Annotated[
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
    pinned: Annotated[bool, typer.Option("--pin", help="Never let this memory fade.")] = False,
    supersedes: Annotated[
        str | None,
        typer.Option(
            "--supersedes",
            help="The id of a memory this one replaces (kept as superseded).",
            show_default=False,
            autocompletion=complete_ids,
        ),
    ] = None,
    no_supersede: Annotated[
        bool,
        typer.Option(
            "--no-supersede",
            help="Keep active a fact this gives a new value for (by default it is superseded).",
        ),
    ] = False,
    when: Annotated[
        str | None,
        typer.Option(
            "--when",
            help="When it happened (2026-02-14, 2026-02-14T10:30, yesterday, 3d): an episode "
            "of that day (default: the date the text states, else now).",
            show_default=False,
        ),
        MOMENT,
    ] = None,
    trigger: Annotated[
        str | None,
        typer.Option(
            "--trigger",
            help="Words a message must hold for this to apply ('n8n + 401'): an active "
            "procedural pattern.",
            show_default=False,
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
    run("remember", locals())


@commands.command()
def recall(
    query: Annotated[list[str], typer.Argument(help="What to look for."), WORDS],
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
    types: Types = [],  # noqa: B006
    tags: Tags = [],  # noqa: B006
    scopes: Scopes = [],  # noqa: B006
    since: Since = None,
    until: Until = None,
    archive: Annotated[
        bool, typer.Option("--archive", help="Search archived and superseded memories too.")
    ] = False,
    no_touch: Annotated[
        bool, typer.Option("--no-touch", help="Do not update last_accessed and access_count.")
    ] = False,
    no_semantic: Annotated[
        bool,
        typer.Option(
            "--no-semantic", help="By keywords alone, even with an embeddings provider set."
        ),
    ] = False,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Show the parts of each result's score: recency, importance, relevance "
            "(bm25, spread, lifts) and use.",
        ),
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
    w_use: Annotated[
        float | None,
        typer.Option(
            "--w-use",
            min=0,
            help="Weight of use, log(1 + access_count), for this call.",
            show_default=False,
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
        MOMENT,
    ] = None,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Find memories, ranked by recency + importance + relevance.

    A time named in the query ("last week", "in May 2023") keeps the memories of then; a
    time alone ("what did we talk about yesterday") gives what happened then, most
    important first. Entries logged and not yet consolidated are found too (--type buffer
    for them alone).

    Example: kenomem recall deploy day --type semantic --explain
    """
    run("recall", locals())


@commands.command()
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
    run("show", locals())


@commands.command("list")
def list_(
    types: Types = [],  # noqa: B006
    tags: Tags = [],  # noqa: B006
    scopes: Scopes = [],  # noqa: B006
    statuses: Annotated[
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

    The date shown is the one --since and --until filter on: an episode's `when` (the
    day it happened), else when the memory was written.

    Example: kenomem list --type episodic --since 7d
    """
    run("list", locals())


@commands.command()
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
    run("forget", locals())


@commands.command()
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
    run("edit", locals())


@commands.command()
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
    run("reindex", locals())


@commands.command()
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
    run("stats", locals())


@commands.command()
def mcp(
    vault: Vault = None, debug: Debug = False, quiet: Quiet = False, verbose: Verbose = False
) -> None:
    """Serve the vault to agents over the Model Context Protocol (stdio).

    An MCP client (Claude Desktop, Claude Code) starts it; stdout is the protocol, logs: stderr.

    Example: claude mcp add kenomem -- kenomem mcp --vault ~/kenomem
    """
    run("mcp", locals())
