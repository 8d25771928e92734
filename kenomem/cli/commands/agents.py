"""What an agent uses while it works, declared for Typer: `context` (the block for a
system prompt), `working show|set|clear` (a session's scratchpad), `patterns` (procedural
memory) and `import` (chat histories and memories from files). Options, help and
examples; no logic. Parameters are named as in `commands/memory.py`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from kenomem.cli.commands.options import Debug, Json, Quiet, Vault, Verbose, run
from kenomem.cli.complete import complete_tags, complete_types
from kenomem.cli.kit import MOMENT, STDIN, WORDS

commands = typer.Typer()

working_app = typer.Typer(
    name="working",
    help="A session's scratchpad: task, context, pending steps, notes.\n\n"
    'Example: kenomem working set "Task: ship v2" --session s1',
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

Session = Annotated[
    str,
    typer.Option("--session", help="The session whose scratchpad this is.", show_default=False),
]


@commands.command()
def context(
    query: Annotated[
        list[str],
        typer.Argument(
            help="What the conversation is about: picks the facts, episodes and patterns.",
            show_default=False,
        ),
        WORDS,
    ] = [],  # noqa: B006
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            help="The session: its working memory, its own buffer entries, and only its "
            "chat's memories besides the global ones (without it: the global ones alone).",
            show_default=False,
        ),
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget",
            min=1,
            help="Tokens the block may take (default: context.budget, 2000).",
            show_default=False,
        ),
    ] = None,
    no_touch: Annotated[
        bool, typer.Option("--no-touch", help="Do not count what is shown as recalled.")
    ] = False,
    no_semantic: Annotated[
        bool,
        typer.Option(
            "--no-semantic", help="Pick memories by keywords alone, even with embeddings set."
        ),
    ] = False,
    tags: Annotated[
        list[str],
        typer.Option(
            "--tag",
            help="Only memories with this tag (an agent's own view); repeat to require "
            "several. The foundation, working memory and conversation stay.",
            show_default=False,
            autocompletion=complete_tags,
        ),
    ] = [],  # noqa: B006
    now: Annotated[
        str | None,
        typer.Option(
            "--now",
            help="The moment to build the block as of (2023-05-08, 2023-05-08T14:00): the "
            "conversation up to it, the recent days before it, nothing made after it. "
            "Default: now.",
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
    """Print the memory block for a system prompt, packed into a token budget.

    The fixed parts first, each with its share of the budget: the foundation, how to
    behave, the session's working memory and its latest turns (older ones summarised);
    then the patterns the query triggers, relevant facts and episodes. The last line
    says what did not fit. A text appears once. Another chat's memories never appear.
    Example: kenomem context "deploy the api" --session s1 --budget 1500
    """
    run("context", locals())


@working_app.command("show")
def working_show(
    session: Session,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Print the session's working memory, with its age; says STALE when it is old.

    Example: kenomem working show --session s1
    """
    run("working show", locals())


@working_app.command("set")
def working_set(
    session: Session,
    text: Annotated[
        str,
        typer.Argument(
            help="The scratchpad: free text, or 'Task:', 'Context:', 'Pending:' (then "
            "'- step' lines), 'Notes:' sections, or a JSON object (lists become '- ' lines; "
            "'session', if given, must be this one; 'updated' is ignored); '-' or none "
            "reads stdin.",
            show_default=False,
        ),
        STDIN,
    ] = "-",
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Write the session's working memory, replacing what it held.

    Example: printf 'Task: ship v2\\nPending:\\n- tag the release\\n' |
    kenomem working set --session s1
    """
    run("working set", locals())


@working_app.command("clear")
def working_clear(
    session: Session,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Move the session's working memory to the archive (recall --archive finds it).

    Example: kenomem working clear --session s1
    """
    run("working clear", locals())


@commands.command()
def patterns(
    message: Annotated[
        list[str],
        typer.Argument(
            help="Only the active patterns this message triggers ('-' reads stdin).",
            show_default=False,
        ),
        WORDS,
        STDIN,
    ] = [],  # noqa: B006
    no_touch: Annotated[
        bool, typer.Option("--no-touch", help="Do not count the matches as used.")
    ] = False,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """List procedural patterns (active and proposed), or those a message triggers.

    A trigger 'docker + port + in use' applies when every term is in the message.
    Example: kenomem patterns "the docker port is already in use"
    """
    run("patterns", locals())


@commands.command("import")
def import_(
    file: Annotated[
        str,
        typer.Argument(
            help="A JSON or JSONL file of messages, conversations or memories, an agent's "
            "transcript or export, or a folder of transcripts; '-' reads stdin."
        ),
    ],
    target: Annotated[
        str,
        typer.Option(
            "--as",
            help="What turns become: episodic (one memory each) or buffer (entries of "
            "their day's buffer, for the sleep cycle).",
        ),
    ] = "episodic",
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            help="The conversation id (default: the file's, else none).",
            show_default=False,
        ),
    ] = None,
    type: Annotated[
        str | None,
        typer.Option(
            "--type",
            "-t",
            help="The type of memories that name none, and of text-only records "
            "(default: classified from the text).",
            show_default=False,
            autocompletion=complete_types,
        ),
    ] = None,
    tags: Annotated[
        list[str],
        typer.Option(
            "--tag",
            help="Add this tag; repeatable.",
            show_default=False,
            autocompletion=complete_tags,
        ),
    ] = [],  # noqa: B006
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count what would be made; write nothing.")
    ] = False,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Load chat histories or memories from JSON or JSONL (told apart by content).

    Messages ({"role", "content", "timestamp"}...), conversations (LoCoMo's sessions too)
    and memories (as list/show --json print them); Claude Code and Codex sessions (a file,
    or a folder such as ~/.claude/projects), a ChatGPT or Claude.ai conversations.json.
    Importing again adds only what is new.
    Example: kenomem import ~/.claude/projects --as buffer
    """
    run("import", locals())


@commands.command()
def hook(
    agent: Annotated[
        str,
        typer.Argument(help="The agent that runs the hook: claude-code or codex."),
    ],
    event: Annotated[
        str | None,
        typer.Argument(
            help="Its event: SessionStart, UserPromptSubmit, Stop, SubagentStop, PreCompact, "
            "SessionEnd (claude-code; default: the payload's hook_event_name), or notify "
            "(codex).",
            show_default=False,
        ),
    ] = None,
    payload: Annotated[
        str | None,
        typer.Argument(
            help="The event's JSON, for an agent that gives it as an argument (Codex's "
            "notify); otherwise it is read from stdin.",
            show_default=False,
        ),
    ] = None,
    vault: Vault = None,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """What an agent runs on its events: the project's context block at the start of a
    session, the memories a prompt recalls, the new turns of its transcript logged.

    Always exits 0: a failure is one line on stderr and adds nothing. Set up by
    `kenomem install claude-code` (or codex); [hooks] in kenomem.toml turns each part off.
    Example: echo '{"cwd": "/src/app"}' | kenomem hook claude-code SessionStart
    """
    run("hook", locals())
