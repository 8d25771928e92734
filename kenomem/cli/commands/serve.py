"""The vault served over HTTP, declared for Typer: `serve` (the MCP tools at `/mcp`) and
`token create|list|revoke` (who may use it). Options, help and examples; no logic.
Parameters are named as the fields of `ServeRequest` (`kenomem/serve/plan.py`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from kenomem.cli.commands.options import Debug, Json, Quiet, Vault, Verbose, run

commands = typer.Typer()

token_app = typer.Typer(
    name="token",
    help="The tokens that let a client use `kenomem serve`: create, list, revoke.\n\n"
    "Example: kenomem token create laptop --scope write",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

TokenName = Annotated[
    str,
    typer.Argument(
        help="The token's name: who holds it (letters, digits, '.', '_', '-').",
        show_default=False,
    ),
]


@commands.command()
def serve(
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="The address to listen on; another than this machine's needs a token.",
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="The port.")] = 8765,
    tls_cert: Annotated[
        str | None,
        typer.Option("--tls-cert", help="Serve HTTPS: the PEM certificate.", show_default=False),
    ] = None,
    tls_key: Annotated[
        str | None,
        typer.Option("--tls-key", help="The certificate's PEM private key.", show_default=False),
    ] = None,
    allow_host: Annotated[
        list[str],
        typer.Option(
            "--allow-host",
            help="A Host header to accept besides this machine's (the name clients or a "
            "reverse proxy use); repeatable.",
            show_default=False,
        ),
    ] = [],  # noqa: B006
    allow_origin: Annotated[
        list[str],
        typer.Option(
            "--allow-origin",
            help="A browser Origin to accept (https://app.example.com); repeatable.",
            show_default=False,
        ),
    ] = [],  # noqa: B006
    vault: Vault = None,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Serve the vault's MCP tools over HTTP at /mcp (streamable HTTP), and /health.

    Once the vault has tokens, every request needs one (Authorization: Bearer TOKEN).
    Example: kenomem serve --port 8765
    """
    run("serve", locals())


@token_app.command("create")
def token_create(
    name: TokenName,
    scope: Annotated[
        str,
        typer.Option(
            "--scope",
            metavar="[read|write]",
            help="read: the MCP tools that only read (recall, context, working_show, "
            "patterns) and the resources; write: every tool.",
        ),
    ] = "read",
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Make a token and print it, once: only its salted hash is kept.

    Example: kenomem token create laptop --scope write
    """
    run("token create", locals())


@token_app.command("list")
def token_list(
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """List the tokens: names, scopes, when made, when last used.

    Example: kenomem token list
    """
    run("token list", locals())


@token_app.command("revoke")
def token_revoke(
    name: TokenName,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Revoke a token: a running server refuses it from its next request.

    Example: kenomem token revoke laptop
    """
    run("token revoke", locals())
