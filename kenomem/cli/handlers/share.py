"""The handler of `sync`: the vault's git repository, committed, pulled, merged, pushed
(`share/sync.py`), its result handed to the renderer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kenomem.cli.output import Output
from kenomem.files.paths import require_vault, resolve_vault

if TYPE_CHECKING:
    from kenomem.share.sync import SyncRequest


def sync(out: Output, *, request: SyncRequest, vault: str | None = None) -> None:
    from kenomem.cli.render import share as render
    from kenomem.share.sync import sync as run_sync

    root = require_vault(resolve_vault(vault))
    result = run_sync(root, request)
    for note in result.notes if not result.dry_run else []:
        out.warn(note)
    render.sync(out, result)
