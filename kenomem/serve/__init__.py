"""`kenomem serve`: the MCP tools over streamable HTTP (`http.py`, which alone imports
the SDK), as decided from its options (`plan.py`), open only to the holders of the
vault's tokens (`tokens.py`) once any exist, and kept answering under abuse
(`guard.py`: deadlines, a bound on connections, a log of refusals that stays small)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenomem.serve.plan import ServeRequest


def run(vault_path: str | None, request: ServeRequest) -> None:
    """Check the request (the vault, the address against its tokens, the TLS files), then
    serve: a refused start never waits for the SDK's import."""
    from kenomem.files.paths import require_vault, resolve_vault
    from kenomem.serve.plan import check_tls, plan
    from kenomem.serve.tokens import TokenBook

    book = TokenBook(require_vault(resolve_vault(vault_path)))
    served = plan(request, book.any())
    if served.tls:
        check_tls(served.tls)
    from kenomem.serve import http

    http.serve(vault_path, served, book)
