"""The vault's upkeep, declared for Typer: the sleep cycle (`log`, `extract`,
`consolidate`, `approve`, `reject`), forgetting (`prune`, `restore`, `reset`), `doctor`,
`trust`, `watch` and `model show|pull` (recall by meaning's model). Options, help and examples; no
logic. Parameters are named as in
`commands/memory.py`: as the fields of the operation's request (`PruneRequest`...).
"""

from __future__ import annotations

from typing import Annotated

import typer

from kenomem.cli.commands.options import Debug, Json, MemoryId, Quiet, Vault, Verbose, run
from kenomem.cli.kit import MOMENT, STDIN

commands = typer.Typer()

model_app = typer.Typer(
    name="model",
    help="Recall by meaning's model: which one, where it is, fetching it.\n\n"
    "Example: kenomem model pull",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@commands.command()
def log(
    text: Annotated[str, typer.Argument(help="What happened or was said; '-' reads stdin."), STDIN],
    who: Annotated[
        str | None,
        typer.Option("--who", help="Who said it (a name, user, assistant).", show_default=False),
    ] = None,
    session: Annotated[
        str | None,
        typer.Option("--session", help="The conversation it belongs to.", show_default=False),
    ] = None,
    channel: Annotated[
        str | None,
        typer.Option(
            "--channel", help="Where it was said (telegram, email, cli...).", show_default=False
        ),
    ] = None,
    at: Annotated[
        str | None,
        typer.Option(
            "--at",
            help="When, to import history (2026-02-13T14:30; default: now).",
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
    """Append an entry to today's buffer (buffer/YYYY-MM-DD.md), for the sleep cycle.

    Example: kenomem log "Decided to ship on Friday" --who Adrian --session chat-42
    """
    run("log", locals())


@commands.command()
def extract(
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            help="The conversation (needed for <chat-memory> and <working-memory>).",
            show_default=False,
        ),
    ] = None,
    log: Annotated[
        bool, typer.Option("--log", help="Also log the exchange to today's buffer.")
    ] = False,
    who: Annotated[
        str, typer.Option("--who", help="Who wrote the reply, in the log.")
    ] = "assistant",
    user_message: Annotated[
        str | None,
        typer.Option(
            "--user-message",
            help="The message the reply answers, logged first with --log.",
            show_default=False,
        ),
    ] = None,
    no_supersede: Annotated[
        bool,
        typer.Option(
            "--no-supersede",
            help="Keep active a fact a tagged memory gives a new value for (by default it "
            "is superseded).",
        ),
    ] = False,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Store what an LLM's reply on stdin tags to remember; print the reply without tags.

    Tags: <memory>, <chat-memory>, <working-memory>. Example:
    llm "..." | kenomem extract --session chat-42 --log
    """
    run("extract", locals())


@commands.command()
def consolidate(
    include_today: Annotated[
        bool, typer.Option("--include-today", help="Also consolidate today, though it is not over.")
    ] = False,
    date: Annotated[
        str | None,
        typer.Option(
            "--date",
            help="Only this day (2026-02-13), even if it was consolidated.",
            show_default=False,
        ),
        MOMENT,
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Show what would be created, reinforced, superseded; write nothing."
        ),
    ] = False,
    llm: Annotated[
        str | None,
        typer.Option(
            "--llm",
            help="A command that reads the prompt on stdin and answers JSON "
            "(default: consolidate.llm_command; else heuristics).",
            show_default=False,
        ),
    ] = None,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """The sleep cycle: turn each past buffer day into episodes, facts and habits.

    Run it nightly from cron. Example: kenomem consolidate --dry-run
    """
    run("consolidate", locals())


@commands.command()
def approve(
    id: MemoryId,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Approve a procedural pattern the sleep cycle proposed: it becomes active.

    Example: kenomem approve mem_20260214
    """
    run("approve", locals())


@commands.command()
def reject(
    id: MemoryId,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Reject a proposed pattern: it goes to the archive and is not proposed again.

    Example: kenomem reject mem_20260214
    """
    run("reject", locals())


@commands.command()
def prune(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the plan as a table; change nothing.")
    ] = False,
    delete: Annotated[
        bool,
        typer.Option(
            "--delete", help="Delete what is retired instead of archiving it (asks first)."
        ),
    ] = False,
    superseded: Annotated[
        bool,
        typer.Option(
            "--superseded", help="Also archive superseded memories (the newest link stays)."
        ),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before deleting.")] = False,
    now: Annotated[
        str | None,
        typer.Option(
            "--now",
            help="The moment to prune as of (2027-05-08): every age counts to it. Default: now.",
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
    """Forget without losing: archive stale and faded memories, summarise old episodes.

    Run it from cron after consolidate. Example: kenomem prune --dry-run
    """
    run("prune", locals())


@commands.command()
def restore(
    id: MemoryId,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Bring an archived memory back, active again.

    Example: kenomem restore mem_20260214
    """
    run("restore", locals())


@commands.command()
def reset(
    memory: Annotated[
        bool,
        typer.Option(
            "--memory",
            help="Remove the buffer and episodic, working, procedural memories; "
            "keep semantic memory and the foundation.",
        ),
    ] = False,
    everything: Annotated[
        bool, typer.Option("--all", help="Remove every memory; keep kenomem.toml.")
    ] = False,
    undo: Annotated[
        bool, typer.Option("--undo", help="Bring back what the last reset removed.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask first.")] = False,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Start over, with a way back: what a reset removes waits in archive/.reset/.

    Example: kenomem reset --memory --yes && kenomem reset --undo
    """
    run("reset", locals())


@commands.command()
def doctor(
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="Repair what is safe: rebuild the index, clear what dead processes "
            "left, write missing ids.",
        ),
    ] = False,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Check the vault: unreadable files, duplicate ids, broken links, a stale index.

    Exits 1 while a problem is left, 0 when the vault is clean.

    Example: kenomem doctor --fix
    """
    run("doctor", locals())


@commands.command()
def trust(
    revoke: Annotated[
        bool,
        typer.Option("--revoke", help="Stop using them: forget what was accepted."),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Show what would be accepted, and whether it is."),
    ] = False,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Accept the commands and servers the vault's kenomem.toml names, as they are now.

    The keys that run a command or send memories elsewhere (an LLM command, an embeddings
    server, its key's variable, a model path) are used from kenomem.toml only once accepted
    here, since the file may come from a git remote or another user. Accepting keeps a hash
    of their values outside the vault; a later change of any of them is not used until
    accepted again. Review the file first.

    Example: kenomem trust --dry-run && kenomem trust
    """
    run("trust", locals())


@commands.command()
def watch(
    polling: Annotated[
        bool,
        typer.Option(
            "--polling", help="Poll the files instead of the system's change notifications."
        ),
    ] = False,
    serve: Annotated[
        bool,
        typer.Option(
            "--serve/--no-serve",
            help="Run recall, context, show and list for other commands from a process "
            "with kenomem already loaded (Linux; faster calls).",
        ),
    ] = True,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Keep the index in step with the files as they are edited, until stopped.

    While it runs, other commands skip their own scan of the files.

    Its command server, with kenomem loaded, runs recall, context, show and list (Linux).

    Stop it with Ctrl-C or SIGTERM. --verbose logs each batch of files reindexed.

    Example: kenomem watch -v
    """
    run("watch", locals())


@model_app.command("show")
def model_show(
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Show recall by meaning's model: its name, where it is, its size, whether it is here.

    Told from the disk, without loading the model. Example: kenomem model show
    """
    run("model show", locals())


@model_app.command("pull")
def model_pull(
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Fetch the fastembed model once, from Hugging Face, and check that it loads.

    Recall, remember and reindex never download: they read the model from disk.

    With provider "openai" or "none" there is nothing to fetch.

    Example: kenomem model pull
    """
    run("model pull", locals())
