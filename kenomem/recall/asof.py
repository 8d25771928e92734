"""Recall as of a past moment (`recall --now T`): what was made after T was not there.

A memory was made after T when its `created` key says so. A file without that key (a
note written by hand) takes its modification time as `created`, which is the time of
its last edit, not of its making: such a file is kept. Only the few candidates whose
`created` is after T have their frontmatter read, to tell the two apart.
"""

from __future__ import annotations

from datetime import datetime

from kenomem.errors import FrontmatterError, UnsafePath
from kenomem.files import fm
from kenomem.files.paths import read_text_inside
from kenomem.index import Hit, SearchResult
from kenomem.vault.core import CoreVault


def made_by(vault: CoreVault, found: SearchResult, now: datetime) -> SearchResult:
    """The hits without the memories whose `created` is after `now`."""
    moment = now.timestamp()
    kept = [hit for hit in found.hits if hit.doc.created <= moment or not _said(vault, hit)]
    if len(kept) == len(found.hits):
        return found
    return found._replace(hits=kept, total=found.total - (len(found.hits) - len(kept)))


def _said(vault: CoreVault, hit: Hit) -> bool:
    """Whether the memory's file writes its `created` (else it is the file's time)."""
    try:
        text = read_text_inside(vault.root, hit.doc.path)
        parts = fm.split(text, hit.doc.path)
        meta = fm.parse(parts.fm_text, path=hit.doc.path, first_line=parts.first_line)
    except (OSError, UnicodeDecodeError, FrontmatterError, UnsafePath):
        return False
    return fm.parse_time(meta.get("created")) is not None
