"""Where agents live, declared for Typer: `install` and `uninstall` (kenomem's hooks and
MCP server in Claude Code's or Codex's settings). Options, help and examples; no logic.
"""

from __future__ import annotations

from typing import Annotated

import typer

from kenomem.cli.commands.options import Debug, Json, Quiet, Vault, Verbose, run

commands = typer.Typer()

Agent = Annotated[
    str,
    typer.Argument(metavar="AGENT", help="The agent: claude-code or codex.", show_default=False),
]
Project = Annotated[
    bool,
    typer.Option(
        "--project",
        help="In the project of the folder you stand in (the nearest folder holding .git, "
        "else this one): Claude Code's .claude/settings.local.json and .mcp.json, Codex's "
        ".codex/config.toml.",
    ),
]
User = Annotated[
    bool,
    typer.Option(
        "--user",
        help="For every project (the default): Claude Code's ~/.claude/settings.json, "
        "Codex's ~/.codex/config.toml.",
    ),
]
DryRun = Annotated[
    bool, typer.Option("--dry-run", help="Show the change as a diff; write nothing.")
]


@commands.command()
def install(
    agent: Agent,
    project: Project = False,
    user: User = False,
    dry_run: DryRun = False,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Wire kenomem into an agent, merged with its settings: hooks and the MCP server.

    claude-code: `kenomem hook` on SessionStart, UserPromptSubmit, Stop, PreCompact and
    SessionEnd; the MCP server in the project's .mcp.json (--project), or the `claude mcp
    add` line to run (--user). codex: `kenomem hook codex notify` as its notify program,
    and [mcp_servers.kenomem]. Other settings are kept, a backup is written beside each
    file changed, and running it again changes nothing. A vault named (--vault,
    $KENOMEM_VAULT) is written into the commands; otherwise they find theirs where the
    agent runs them.

    Example: kenomem install claude-code --dry-run && kenomem install claude-code
    """
    run("install", locals())


@commands.command()
def uninstall(
    agent: Agent,
    project: Project = False,
    user: User = False,
    dry_run: DryRun = False,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Take out of an agent's settings exactly what `kenomem install` put in.

    kenomem's hooks and MCP server are known by their command; every other entry stays,
    and a list or file only kenomem's entries filled goes with them. A backup is written
    beside each file changed.

    Example: kenomem uninstall claude-code --dry-run
    """
    run("uninstall", locals())
