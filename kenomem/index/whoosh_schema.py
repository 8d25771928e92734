"""Whoosh's schema for kenomem's documents, the analyser of its text fields, and the
mapping between a Doc and the fields stored for it."""

from __future__ import annotations

from typing import Any

from kenomem.index.analysis import title_adds
from kenomem.index.engine import Doc

_ANALYZER: Any = None


def analyzer() -> Any:
    """The text fields' analyser. Taken from here, not from the index's schema: that one
    is unpickled from the table of contents at each access, which a commit may remove."""
    global _ANALYZER
    if _ANALYZER is None:
        from whoosh.analysis import StemmingAnalyzer

        from kenomem.index.analysis import STOP_WORDS

        _ANALYZER = StemmingAnalyzer(stoplist=STOP_WORDS)
    return _ANALYZER


def schema() -> Any:
    from whoosh.fields import ID, KEYWORD, NUMERIC, STORED, TEXT, Schema

    text = analyzer()
    return Schema(
        id=ID(stored=True, unique=True),
        path=ID(stored=True),
        type=ID(stored=True),
        status=ID(stored=True),
        scope=ID(stored=True),
        session=ID(stored=True),
        title=TEXT(analyzer=text, stored=True, sortable=True),
        # What is searched as the title: empty when the title only repeats the body.
        titletext=TEXT(analyzer=text),
        tags=KEYWORD(stored=True, commas=True, lowercase=True),
        tagtext=TEXT(analyzer=text),
        body=TEXT(analyzer=text),
        created=NUMERIC(float, stored=True, sortable=True),
        time=NUMERIC(float, stored=True, sortable=True),
        last_accessed=NUMERIC(float, stored=True, sortable=True),
        updated=STORED,
        access_count=STORED,
        reinforced=STORED,
        importance=NUMERIC(int, stored=True, sortable=True),
        pinned=STORED,
        preview=STORED,
        digest=STORED,
        textkey=STORED,
        factkey=ID(stored=True),
        people=STORED,
        concepts=KEYWORD(stored=True, commas=True),
    )


def stored_fields(doc: Doc) -> dict[str, Any]:
    return {
        "id": doc.id,
        "path": doc.path,
        "type": doc.type,
        "status": doc.status,
        "scope": doc.scope,
        "session": doc.session,
        "title": doc.title,
        "titletext": doc.title if title_adds(doc.title, doc.body) else "",
        "tags": ",".join(doc.tags),
        "tagtext": " ".join(doc.tags).replace("-", " ").replace("_", " "),
        "body": doc.body,
        "created": doc.created,
        "time": doc.time,
        "last_accessed": doc.last_accessed,
        "updated": doc.updated,
        "access_count": doc.access_count,
        "reinforced": doc.reinforced,
        "importance": doc.importance,
        "pinned": doc.pinned,
        "preview": doc.preview,
        "digest": doc.digest,
        "textkey": doc.textkey,
        "factkey": doc.factkey,
        "people": list(doc.people),
        "concepts": ",".join(doc.concepts),
    }


def doc_of(stored: dict[str, Any]) -> Doc:
    tags = stored.get("tags") or ""
    return Doc(
        id=stored["id"],
        path=stored.get("path", ""),
        type=stored.get("type", ""),
        status=stored.get("status", "active"),
        scope=stored.get("scope", "global"),
        session=stored.get("session", ""),
        title=stored.get("title", ""),
        tags=tuple(t for t in tags.split(",") if t),
        body="",
        created=float(stored.get("created", 0.0)),
        time=float(stored.get("time", 0.0)),
        last_accessed=float(stored.get("last_accessed", 0.0)),
        updated=float(stored.get("updated", 0.0)),
        access_count=int(stored.get("access_count", 0)),
        reinforced=int(stored.get("reinforced", 0)),
        importance=int(stored.get("importance", 5)),
        pinned=bool(stored.get("pinned", False)),
        preview=stored.get("preview", ""),
        digest=stored.get("digest", ""),
        textkey=stored.get("textkey", ""),
        factkey=stored.get("factkey", ""),
        people=tuple(stored.get("people") or ()),
        concepts=tuple(c for c in (stored.get("concepts") or "").split(",") if c),
    )
