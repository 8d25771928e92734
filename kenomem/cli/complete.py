"""Candidates for shell completion: memory types, and from the vault memory ids (with
their titles) and tags. Best effort: anything that goes wrong (no vault yet, a locked
index) gives none.

The `complete_*` functions are the Typer app's completion callbacks: Typer passes the
parsing context as `ctx` (its `params` hold --vault when it came first) and the word
being completed as `incomplete`.
"""

from __future__ import annotations

from typing import Any

MAX = 50


def complete_types(incomplete: str) -> list[str]:
    from kenomem.files.paths import MEMORY_TYPES

    return [t for t in MEMORY_TYPES if t.startswith(incomplete)]


def complete_tags(ctx: Any, incomplete: str) -> list[str]:
    return tags(ctx.params.get("vault"), incomplete)


def complete_ids(ctx: Any, incomplete: str) -> list[tuple[str, str]]:
    return memory_ids(ctx.params.get("vault"), incomplete)


def _docs(vault_flag: str | None) -> list[Any]:
    from kenomem.errors import KenomemError
    from kenomem.files.paths import resolve_vault
    from kenomem.index import Filters
    from kenomem.vault.core import CoreVault

    try:
        vault = CoreVault.open(resolve_vault(vault_flag))
        vault.sync()
        return [hit.doc for hit in vault.browse(Filters(statuses=()), "created", True, None).hits]
    except (KenomemError, OSError):
        return []


def memory_ids(vault_flag: str | None, incomplete: str) -> list[tuple[str, str]]:
    """(id, title) of the memories whose id starts with `incomplete`, newest first. Typed
    without `mem_` (which any id may leave out), the ids come without it too."""
    found = []
    for doc in _docs(vault_flag):
        short = doc.id.removeprefix("mem_")
        if doc.id.startswith(incomplete):
            found.append((doc.id, doc.title))
        elif short != doc.id and short.startswith(incomplete):
            found.append((short, doc.title))
        if len(found) == MAX:
            break
    return found


def tags(vault_flag: str | None, incomplete: str) -> list[str]:
    """The tags in use that start with `incomplete`, most used first."""
    counts: dict[str, int] = {}
    for doc in _docs(vault_flag):
        for tag in doc.tags:
            if tag.startswith(incomplete):
                counts[tag] = counts.get(tag, 0) + 1
    return sorted(counts, key=lambda tag: (-counts[tag], tag))[:MAX]
