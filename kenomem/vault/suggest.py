"""What to suggest when an id matches no memory: the closest ids, and the memories whose
file name (the slug of the title) holds what was typed ("did you mean ...?")."""

from __future__ import annotations

import difflib
import shlex
from pathlib import PurePosixPath

from kenomem.errors import MemoryNotFound


def closest(wanted: str, ids: dict[str, str], n: int = 3) -> list[str]:
    """Up to `n` ids (with the slug of their file) nearest to `wanted`, best first.

    `ids` maps id -> vault-relative path. An id is compared whole, without `mem_`, and by
    its last part (`7f3a`); the slug by the words typed (`postgres` finds
    `semantic/the-production-database-is-postgresql.md`).
    """
    text = wanted.strip().lower()
    if not text:
        return []
    scored: list[tuple[float, str]] = []
    words = text.replace("_", "-").replace(" ", "-")
    for mem_id, path in ids.items():
        slug = PurePosixPath(path).stem.lower()
        short = mem_id[4:] if mem_id.startswith("mem_") else mem_id
        keys = [mem_id.lower(), short.lower(), short.rsplit("_", 1)[-1].lower()]
        score = max(difflib.SequenceMatcher(None, text, key).ratio() for key in keys)
        if len(words) >= 3 and words in slug:
            score = max(score, 0.9)
        else:
            score = max(score, 0.8 * _best_part(words, slug))
        if score >= 0.6:
            scored.append((score, mem_id))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    near = [mem_id for score, mem_id in scored[:n] if score >= scored[0][0] - 0.05]
    return [f"{mem_id} ({_short(PurePosixPath(ids[mem_id]).stem)})" for mem_id in near]


def _short(slug: str, width: int = 40) -> str:
    return slug if len(slug) <= width else slug[: width - 1].rstrip("-") + "…"


def _best_part(text: str, slug: str) -> float:
    """How closely `text` matches a run of the slug's words as long as itself."""
    parts = slug.split("-")
    size = text.count("-") + 1
    best = 0.0
    for i in range(len(parts)):
        piece = "-".join(parts[i : i + size])
        best = max(best, difflib.SequenceMatcher(None, text, piece).ratio())
    return best


def not_found(wanted: str, ids: dict[str, str]) -> MemoryNotFound:
    """The error for an id that matches nothing, with the closest memories in it."""
    near = closest(wanted, ids)
    if near:
        return MemoryNotFound(
            f"no memory matches {wanted!r}; did you mean {', '.join(near)}?",
            hint="give an id or any unique start of one; kenomem list shows them",
        )
    return MemoryNotFound(
        f"no memory matches {wanted!r}",
        hint=f"find it with: kenomem recall {shlex.quote(wanted)}  (or see: kenomem list)",
    )
