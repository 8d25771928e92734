"""The buffer as recall candidates: what was logged and not yet consolidated (SPEC 3.2).

An entry is a candidate while the sleep cycle has not consumed it (`buffer.Day.pending`,
the cycle's own rule: the entries after the `consolidated_entries` it counted, so a day
consolidated with `--include-today`, or one an import appended to, keeps taking entries);
what it consumed is in the index as episodes, and would count twice. A day wholly
consumed is noted and not read again while its stat stays the same (`CONSUMED`).

Each candidate is a `Doc` of type `buffer`, so recall ranks it like a memory:

- relevance: BM25 over the pending entries (k1 1.2, b 0.75, as the index scores a body),
  with the analysis of the index and each term's rarity counted over the index and the
  entries together, so an entry's score stands beside a memory's; by keywords alone:
  embedding every entry at each recall would cost more than the search;
- importance: `memory.default_importance`, what a memory remembered without one gets;
- recency: from the time it was logged;
- scope: its session (`global` without one, as a memory without a scope reads), so a
  filter by scope treats it as it treats memories.

Nothing is written: an entry is not a file of its own, so recall does not touch it.
"""

from __future__ import annotations

import marshal
import math
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import date, datetime
from typing import TYPE_CHECKING, NamedTuple

from kenomem.errors import KenomemError, UnsafePath
from kenomem.files.paths import BUFFER_DIR, read_private, read_text_inside, write_private
from kenomem.files.scan import RACY_NS
from kenomem.index import Doc, Filters, Hit, scope
from kenomem.vault.core import CoreVault

if TYPE_CHECKING:  # the buffer's module is imported only when a day is there to read
    from kenomem.files import buffer

TYPE = "buffer"
K1 = 1.2
B = 0.75
TITLE_CHARS = 80


class Pending(NamedTuple):
    """One entry the sleep cycle has not consumed, with the day it was logged in."""

    day: date
    path: str  # the buffer file, vault-relative
    entry: buffer.Entry


def wanted(filters: Filters) -> bool:
    """Whether entries can pass at all: not when other types or any tag are asked for."""
    return (not filters.types or TYPE in filters.types) and not filters.tags


def entry_id(day: date, entry: buffer.Entry) -> str:
    """Stable: the day, the time logged and the place in the day file (append only)."""
    return f"buf_{day:%Y%m%d}_{entry.at:%H%M%S}_{entry.position}"


def pending(vault: CoreVault, now: datetime) -> list[Pending]:
    """The entries logged until `now` that no consolidation has consumed, oldest first.
    A day that cannot be read costs a warning. A day found wholly consumed is noted with
    its size and mtime (`CONSUMED`), and not read again while they stay as they were: a
    vault with years of consolidated days reads none of them."""
    if not _any_day(vault):
        return []
    from kenomem.files import buffer

    stats = buffer.day_stats(vault.root)
    consumed = _consumed(vault)
    still: dict[str, tuple[int, int]] = {}
    found = []
    for rel, st in stats.items():
        if consumed.get(rel) == st:
            still[rel] = st
            continue
        day = buffer.date_of(rel)
        if day > now.date():
            continue
        try:
            parsed = buffer.parse_day(rel, read_text_inside(vault.root, rel))
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError, ValueError, KenomemError, UnsafePath) as exc:
            vault.warnings.append(f"skipped {rel}: {exc}")
            continue
        if parsed.consolidated is not None and not parsed.pending:
            if time.time_ns() - st[1] >= RACY_NS:  # its stat would show a change to come
                still[rel] = st
            continue
        for entry in parsed.pending:
            if entry.at > now:
                continue
            if entry.text.strip():
                found.append(Pending(day, rel, entry))
    if still != consumed:
        _note_consumed(vault, still)
    return found


def _any_day(vault: CoreVault) -> bool:
    """Whether `buffer/` may hold a day: a vault that keeps no buffer pays one listing."""
    try:
        with os.scandir(vault.root / BUFFER_DIR) as entries:
            return any(e.name.endswith(".md") and e.name[0] != "." for e in entries)
    except OSError:
        return False


# Under `.kenomem/`: the buffer days found wholly consumed, with the size and mtime they
# had, so that `pending` passes over them unread (derived: a lost one is made again).
CONSUMED = "consumed-days.bin"


def _consumed(vault: CoreVault) -> dict[str, tuple[int, int]]:
    try:
        data = marshal.loads(read_private(vault.state_dir, CONSUMED))
    except (OSError, EOFError, ValueError, TypeError, UnsafePath):
        return {}
    return data if isinstance(data, dict) else {}


def _note_consumed(vault: CoreVault, consumed: dict[str, tuple[int, int]]) -> None:
    if not vault.state_dir.is_dir():
        return
    try:
        write_private(vault.state_dir, CONSUMED, marshal.dumps(consumed), fsync=False)
    except (OSError, UnsafePath):
        pass  # only a cache: the days are read again next time


def as_doc(item: Pending, importance: int) -> Doc:
    entry = item.entry
    text = entry.text.strip()
    flat = " ".join(text.split())
    title = flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    at = entry.at.timestamp()
    return Doc(
        id=entry_id(item.day, entry),
        path=item.path,
        type=TYPE,
        status="active",
        scope=entry.session or "global",
        title=title,
        tags=(),
        body=text,
        created=at,
        time=at,
        last_accessed=at,
        updated=at,
        access_count=0,
        reinforced=0,
        importance=importance,
        pinned=False,
        session=entry.session,
        preview=flat[:300],
        people=(entry.who,) if entry.who else (),
    )


def passes(doc: Doc, filters: Filters) -> bool:
    if not scope.sees(doc.scope, filters.scopes):
        return False
    if filters.since is not None and doc.time < filters.since:
        return False
    return filters.until is None or doc.time <= filters.until


def bm25(
    docs: list[Doc],
    terms: Iterable[str],
    occurrences: Callable[[str, set[str]], Iterable[tuple[str, int]]],
    index_frequency: Callable[[set[str]], tuple[dict[str, int], int]],
) -> list[float]:
    """The BM25 score of each doc's body for the query terms. `occurrences(text, wanted)`
    gives where the wanted terms stand in a text (the index's analysis); a body's length
    is its count of words (split at white space). A term's rarity counts the index's
    memories and these docs together: `log(N / (df + 1)) + 1`, as Whoosh's."""
    wanted_terms = set(terms)
    if not docs or not wanted_terms:
        return [0.0] * len(docs)
    heads = {_head(term) for term in wanted_terms}
    counts = [
        Counter(term for term, _ in occurrences(doc.body, wanted_terms))
        if any(head in doc.body.lower() for head in heads)
        else Counter()
        for doc in docs
    ]
    lengths = [len(doc.body.split()) for doc in docs]
    average = max(1.0, sum(lengths) / len(lengths))
    held = Counter(term for c in counts for term in c)
    if not held:
        return [0.0] * len(docs)
    indexed, total = index_frequency(set(held))
    n = total + len(docs)
    idf = {t: max(0.0, math.log(n / (indexed.get(t, 0) + held[t] + 1))) + 1 for t in held}
    scores = []
    for c, length in zip(counts, lengths, strict=True):
        norm = K1 * ((1 - B) + B * length / average)
        scores.append(sum(idf[t] * c[t] * (K1 + 1) / (c[t] + norm) for t in c))
    return scores


def _head(term: str) -> str:
    """What a word that stems to `term` holds for sure: the stemmer rewrites only the end
    of a word, and never more than the stem's last two letters ("happi" from "happy",
    "dai" from "day"). A text without it is not analysed: most entries hold no query
    word, and analysing every entry would cost more than the rest of the recall."""
    return term[: len(term) - 2] if len(term) >= 5 else term[: max(1, len(term) - 1)]


def candidates(
    vault: CoreVault,
    terms: tuple[str, ...],
    filters: Filters,
    now: datetime,
    limit: int,
    every: bool = False,
) -> list[Hit]:
    """The pending entries that match the query terms and pass the filters, best first,
    at most `limit`. `every`: those that match none too (scored 0, the newest first), as
    a time alone asks for ("what did we talk about this morning")."""
    if not wanted(filters) or not (terms or every):
        return []
    importance = vault.settings.memory.default_importance
    docs = [d for d in (as_doc(p, importance) for p in pending(vault, now)) if passes(d, filters)]
    scores = bm25(
        docs, terms, vault.engine.term_offsets, lambda held: vault.doc_frequencies(held, "body")
    )
    hits = [Hit(doc, score) for doc, score in zip(docs, scores, strict=True) if score > 0 or every]
    hits.sort(key=lambda hit: (-hit.score, -hit.doc.time, hit.doc.id))
    return hits[:limit]
