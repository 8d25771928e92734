"""The facts a new statement gives a new value for, and the rule that keeps a context
from holding both sides of a conflict. Read-only.

- `conflicting`: the active facts (semantic memories) of one scope that a statement may
  replace, each judged by words (`embed.conflict`): found by a keyword search over the
  statement's words and the other ways of saying its relation ("moved to" finds "lives
  in"), so a vault of any size costs one search and a few small reads. `remember` and
  `extract` supersede a "sure" one and name an "unsure" one; the sleep cycle may ask the
  same of a fact it reads from the log.
- `keep_newer`: a memory may record the ones it contradicts (`contradicts: [id, ...]` in
  its frontmatter, written by `remember` when it was not sure enough to supersede them).
  Of two memories offered together where one names the other, only the newer is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from kenomem.embed.conflict import Level, conflict, relation_words
from kenomem.errors import FrontmatterError, UnsafePath
from kenomem.files import fm, store
from kenomem.files.paths import read_text_inside
from kenomem.index import Boosts, Doc, Filters
from kenomem.index.scope import spellings

if TYPE_CHECKING:
    from kenomem.vault.core import CoreVault

# The frontmatter key of the memories a memory contradicts, not superseded.
CONTRADICTS = "contradicts"
# Facts a statement is compared with: the best of one keyword search.
CANDIDATES = 20


class Conflicting(NamedTuple):
    id: str
    path: str
    title: str
    level: Level  # sure | unsure
    why: str  # the two values, as said


def conflicting(
    vault: CoreVault,
    text: str,
    scope: str,
    exclude: Iterable[str] = (),
    types: tuple[str, ...] = ("semantic",),
) -> list[Conflicting]:
    """The active memories of these types (facts, by default) and of `scope`'s owner (a
    chat's own, or the global ones) that `text` gives another value for, sure ones
    first, then in the search's order."""
    query = f"{text} {relation_words(text)}".strip()
    filters = Filters(types=types, scopes=spellings(scope))
    skip = set(exclude)
    found = []
    for hit in vault.search(query, filters, Boosts(), CANDIDATES).hits:
        if hit.doc.id in skip:
            continue
        verdict = judged(vault, hit.doc, text)
        if verdict is not None:
            found.append(verdict)
    return sorted(found, key=lambda c: c.level != "sure")


def judged(vault: CoreVault, doc: Doc, text: str) -> Conflicting | None:
    """`doc` as a fact `text` gives another value for, or None."""
    body = store.read_body(vault.root, doc.path)
    said = body.strip() if body and body.strip() else doc.title
    verdict = conflict(said, text)
    if verdict is None:
        return None
    return Conflicting(doc.id, doc.path, doc.title, verdict.level, verdict.why)


def contradicted_by(meta: dict[str, Any]) -> tuple[str, ...]:
    """The ids a memory's frontmatter says it contradicts (anything else ignored)."""
    value = meta.get(CONTRADICTS)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str) and v)


def _recorded(vault: CoreVault, doc: Doc) -> tuple[str, ...]:
    try:
        text = read_text_inside(vault.root, doc.path)
        parts = fm.split(text, doc.path)
        if not parts.has_frontmatter or CONTRADICTS not in parts.fm_text:
            return ()  # the common case: no YAML parsed
        return contradicted_by(fm.parse(parts.fm_text, path=doc.path))
    except (OSError, UnicodeDecodeError, FrontmatterError, UnsafePath):
        # an unreadable file records nothing here; recall and doctor report it
        return ()


def newer_wins(docs: Sequence[Doc], named: dict[str, tuple[str, ...]]) -> set[str]:
    """The ids to leave out of `docs` so that no two of them are the sides of a recorded
    conflict (`named`: id -> ids it contradicts): of each such pair, the older (of two
    made in the same second, the one named)."""
    present = {d.id: d for d in docs}
    dropped: set[str] = set()
    for doc in docs:
        for other_id in named.get(doc.id, ()):
            other = present.get(other_id)
            if other is None or other.id == doc.id:
                continue
            # the one that names the other was written after it, unless dated later
            dropped.add(doc.id if other.created > doc.created else other.id)
    return dropped


def keep_newer(vault: CoreVault, *groups: list[Doc]) -> list[list[Doc]]:
    """`groups` (lists of memories offered together, as a context's facts and recent
    days) without the older side of each recorded conflict among them all."""
    everything = [d for group in groups for d in group if d.type != "buffer"]
    named = {d.id: ids for d in everything if (ids := _recorded(vault, d))}
    if not named:
        return [list(group) for group in groups]
    dropped = newer_wins(everything, named)
    return [[d for d in group if d.id not in dropped] for group in groups]
