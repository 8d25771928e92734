"""Handlers of `serve` and `token create|list|revoke`: each calls one function of
`kenomem.serve` and hands the result to the renderer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kenomem.cli.output import Output
from kenomem.files.paths import require_vault, resolve_vault

if TYPE_CHECKING:
    from kenomem.serve.plan import ServeRequest


def serve(out: Output, *, request: ServeRequest, vault: str | None = None) -> None:
    from kenomem.serve import run

    run(vault, request)


def token_create(out: Output, *, name: str, scope: str = "read", vault: str | None = None) -> None:
    from kenomem.cli.render import serve as render
    from kenomem.serve import tokens

    render.token_create(out, tokens.create(require_vault(resolve_vault(vault)), name, scope))


def token_list(out: Output, *, vault: str | None = None) -> None:
    from kenomem.cli.render import serve as render
    from kenomem.serve import tokens

    render.token_list(out, tokens.listed(require_vault(resolve_vault(vault))))


def token_revoke(out: Output, *, name: str, vault: str | None = None) -> None:
    from kenomem.cli.render import serve as render
    from kenomem.serve import tokens

    render.token_revoke(out, tokens.revoke(require_vault(resolve_vault(vault)), name))
