"""Procedural memory in use: the patterns (trigger -> response) and which apply now.

`list_patterns` shows the active and proposed ones; `matching_patterns` gives the active
ones whose trigger a message holds (see `triggers`), plus the pinned ones, which apply
to every message. Applying a pattern is a use: its `usage_count` goes up by one and its
`last_accessed` is now, written into the file's frontmatter the way recall touches a
memory (only those two lines change, and a file edited since it was read is left alone).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, NamedTuple

from kenomem.agents import triggers
from kenomem.errors import FrontmatterError, UnsafePath
from kenomem.files import fm, store
from kenomem.files.atomic import DirtyFile
from kenomem.files.paths import read_inside, read_text_inside
from kenomem.files.scan import digest_of
from kenomem.index import Doc, Filters, scope
from kenomem.vault.core import CoreVault

STATUSES = ("active", "proposed")


class PatternView(NamedTuple):
    id: str
    path: str
    title: str
    status: str  # active | proposed
    trigger: str
    confidence: float | None
    usage_count: int
    pinned: bool
    importance: int
    text: str  # the response: what to do when the trigger matches
    learned_from: list[str]
    created: datetime
    last_accessed: datetime
    matched: str = ""  # trigger | pinned, when it was chosen for a message


class PatternsRequest(NamedTuple):
    message: str | None = None  # only the active patterns this message triggers
    touch: bool = True  # count the matches as used
    scopes: tuple[str, ...] = ()  # these chats' patterns and the global ones (index.scope)


class PatternsResult(NamedTuple):
    message: str | None
    patterns: list[PatternView]
    touched: bool  # whether the matches were counted as used


def list_patterns(
    vault: CoreVault, request: PatternsRequest, *, now: datetime | None = None
) -> PatternsResult:
    """Every active and proposed pattern; with a message, the active ones it triggers
    (each counted as a use unless `touch` is false). With `scopes`, only those chats'
    patterns and the global ones (`index.scope`)."""
    message, touch = request.message, request.touch
    visible = scope.visible(request.scopes)
    if message is None:
        found = _patterns(vault, visible)
        found.sort(key=lambda p: (p.status != "active", -p.usage_count, p.title.lower(), p.id))
        return PatternsResult(None, found, False)
    matched = matching_patterns(vault, message, now, touch, pinned=False, scopes=visible)
    return PatternsResult(message, matched, touch and bool(matched))


def matching_patterns(
    vault: CoreVault,
    message: str,
    now: datetime | None = None,
    touch: bool = True,
    *,
    pinned: bool = True,
    scopes: tuple[str, ...] = (),
    tags: tuple[str, ...] = (),
    until: datetime | None = None,
) -> list[PatternView]:
    """The active patterns whose trigger `message` holds, and (with `pinned`) the pinned
    active ones; most confident first. With `touch`, each counts as used. `scopes`: the
    stored scope values let through (`index.scope`; none: every pattern); `tags`: only
    patterns with all of them; `until`: only those made by then (`recall.asof`)."""
    candidates = [p for p in _patterns(vault, scopes, tags, until) if p.status == "active"]
    if not candidates:
        return []
    analyse = vault.engine.analyze
    words = list(analyse(message))
    chosen = []
    for p in candidates:
        if triggers.matches(triggers.trigger_terms(p.trigger, analyse), words):
            chosen.append(p._replace(matched="trigger"))
        elif pinned and p.pinned:
            chosen.append(p._replace(matched="pinned"))
    chosen.sort(key=lambda p: (-(p.confidence or 0.0), -p.usage_count, p.title.lower(), p.id))
    if touch and chosen:
        chosen = _touch(vault, chosen, (now or datetime.now(UTC)).replace(microsecond=0))
    return chosen


def _patterns(
    vault: CoreVault,
    scopes: tuple[str, ...] = (),
    tags: tuple[str, ...] = (),
    until: datetime | None = None,
) -> list[PatternView]:
    vault.sync()  # hand edits to a pattern's trigger count at once
    found = vault.browse(
        Filters(types=("procedural",), statuses=STATUSES, scopes=scopes, tags=tags)
    )
    if until is not None:
        from kenomem.recall.asof import made_by

        found = made_by(vault, found, until)
    docs = found.hits
    return views_of(vault, [hit.doc for hit in docs])


def views_of(vault: CoreVault, docs: list[Doc]) -> list[PatternView]:
    """These procedural memories as patterns, read from their files (one that cannot be
    read is left out, with a warning)."""
    views = []
    for doc in docs:
        meta_body = _read(vault, doc.path)
        if meta_body is not None:
            views.append(_view(doc, *meta_body))
    return views


def _read(vault: CoreVault, path: str) -> tuple[dict[str, Any], str] | None:
    try:
        text = read_text_inside(vault.root, path)
        parts = fm.split(text, path)
        meta = (
            fm.parse(parts.fm_text, path=path, first_line=parts.first_line)
            if parts.has_frontmatter
            else {}
        )
    except FileNotFoundError:
        return None  # gone since the sync: the next one drops it
    except (OSError, UnicodeDecodeError, FrontmatterError, UnsafePath) as exc:
        vault.warnings.append(f"skipped {path}: {exc}")
        return None
    return meta, text[parts.body_start :] if parts.has_frontmatter else text


def _view(doc: Doc, meta: dict[str, Any], body: str) -> PatternView:
    learned = meta.get("learned_from")
    return PatternView(
        id=doc.id,
        path=doc.path,
        title=doc.title,
        status=doc.status,
        trigger=_text(meta.get("trigger")),
        confidence=_number(meta.get("confidence")),
        usage_count=_count(meta.get("usage_count")),
        pinned=doc.pinned,
        importance=doc.importance,
        text=body.strip(),
        learned_from=[str(x) for x in learned] if isinstance(learned, list) else [],
        created=fm.from_epoch(doc.created),
        last_accessed=fm.from_epoch(doc.last_accessed),
    )


def _touch(vault: CoreVault, chosen: list[PatternView], now: datetime) -> list[PatternView]:
    done = []
    paths = []
    with vault.lock:
        for p in chosen:
            try:
                # Read again under the lock: another process may have counted a use since.
                data = read_inside(vault.root, p.path)
                parts = fm.split(data.decode("utf-8"), p.path)
                if not parts.has_frontmatter:
                    done.append(p)  # a plain note: no YAML is added to it for a count
                    continue
                meta = fm.parse(parts.fm_text, path=p.path, first_line=parts.first_line)
                count = _count(meta.get("usage_count")) + 1
                store.update_keys(
                    vault.root,
                    p.path,
                    {"usage_count": count, "last_accessed": now},
                    expect_digest=digest_of(data),
                    fsync=vault.settings.write.fsync,
                    sync_dir=False,  # losing a use count to a power cut is harmless
                )
            except (DirtyFile, FrontmatterError, UnsafePath, OSError, UnicodeDecodeError) as exc:
                vault.warnings.append(f"not counted as used: {exc}")
                done.append(p)
                continue
            paths.append(p.path)
            done.append(p._replace(usage_count=count, last_accessed=now))
        if paths:
            vault.refresh(paths)
    return done


def _text(value: Any) -> str:
    return "" if value is None or isinstance(value, dict | list) else str(value).strip()


def _number(value: Any) -> float | None:
    try:
        number = float(str(value).strip())
    except (TypeError, ValueError):
        return None
    return number if number == number else None  # not NaN


def _count(value: Any) -> int:
    try:
        return max(0, int(str(value).strip()))
    except (TypeError, ValueError):
        return 0
