"""Handlers of the everyday commands: init, remember, recall, show, list, forget, edit,
reindex, stats and mcp. Each calls one method of the Python API, with the request built
from its parameters (`handlers.run`), and hands the result to the renderer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kenomem.cli.kit import confirmed, opened
from kenomem.cli.output import Output
from kenomem.files.paths import require_vault, resolve_vault

if TYPE_CHECKING:  # each handler imports what it runs when it is called
    from kenomem.api import Vault
    from kenomem.capture.remember import RememberRequest
    from kenomem.forget.archive import ForgetRequest
    from kenomem.recall.search import RecallRequest
    from kenomem.vault.views import ListRequest


def init(out: Output, *, path: str | None = None, git: bool = False) -> None:
    from kenomem.api import Vault
    from kenomem.cli.render import memory as render

    render.init(out, Vault.init(path, git=git))


def remember(out: Output, *, request: RememberRequest, vault: str | None = None) -> None:
    from kenomem.cli.render import memory as render

    with opened(out, vault) as v:
        render.remember(out, v.remember(request))


def recall(
    out: Output, *, request: RecallRequest, explain: bool = False, vault: str | None = None
) -> None:
    from kenomem.cli.render import memory as render

    with opened(out, vault) as v:
        result = v.recall(request)
        archived = 0
        if not result.results and not request.archive:
            archived = archived_matches(v, request)
        render.recall(out, result, explain, archived)


def archived_matches(v: Vault, request: RecallRequest) -> int:
    """How many archived or superseded memories the same recall finds with --archive:
    asked only when it found nothing, by words alone (no provider asked twice), touching
    nothing."""
    warned = len(v.warnings)
    found = v.recall(request._replace(archive=True, touch=False, semantic=False))
    del v.warnings[warned:]  # the first recall said them already
    return sum(1 for item in found.results if item.status in ("archived", "superseded"))


def show(out: Output, *, id: str, vault: str | None = None) -> None:
    from kenomem.cli.render import memory as render

    with opened(out, vault) as v:
        render.show(out, v.show(id))


def list_(out: Output, *, request: ListRequest, vault: str | None = None) -> None:
    from kenomem.cli.render import memory as render

    with opened(out, vault) as v:
        render.list_(out, v.list(request))


def forget(
    out: Output, *, request: ForgetRequest, yes: bool = False, vault: str | None = None
) -> None:
    from kenomem.cli.render import memory as render

    with opened(out, vault) as v, v.one_scan():  # the question and the act: one scan
        if request.delete and not yes:
            found, path = v.resolve(request.id)
            confirmed(out, f"delete {found} ({path}) for good?", yes)
        render.forget(out, v.forget(request))


def edit(out: Output, *, id: str, vault: str | None = None) -> None:
    from kenomem.cli.render import memory as render

    with opened(out, vault) as v:
        render.edit(out, v.edit(id))


def reindex(out: Output, *, vault: str | None = None) -> None:
    from kenomem.cli.render import memory as render

    with opened(out, vault) as v:
        files = v.count_files() if out.shows_progress else None
        with out.phases() as phase:
            result = v.reindex(phase("indexing", files), lambda n: phase("embedding", n))
        render.reindex(out, result)


def stats(out: Output, *, vault: str | None = None) -> None:
    from kenomem.cli.render import memory as render

    with opened(out, vault) as v:
        render.stats(out, v.stats())


def mcp(out: Output, *, vault: str | None = None) -> None:
    require_vault(resolve_vault(vault))  # before the SDK's import, which takes a while
    # The MCP SDK is imported here only: every other command starts without it.
    from kenomem.mcp_server import serve

    serve(vault)
