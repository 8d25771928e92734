"""The handler of `sync`: the vault's git repository committed, pulled, merged and
pushed, through the Python API (`Vault.sync`, over `share/sync.py`), its result handed
to the renderer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kenomem.cli.kit import opened
from kenomem.cli.output import Output

if TYPE_CHECKING:
    from kenomem.share.sync import SyncRequest


def sync(out: Output, *, request: SyncRequest, vault: str | None = None) -> None:
    from kenomem.cli.render import share as render

    with opened(out, vault) as v:
        result = v.sync(request)
        for note in result.notes if not result.dry_run else []:
            out.warn(note)
        render.sync(out, result)
