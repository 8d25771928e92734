"""The memory: one markdown file, its frontmatter normalised into a typed record.

A file written by hand with partial or no frontmatter is still a memory: its type comes
from its folder, its title from its first heading or file name, and every other field
from the defaults below.
"""

# No `from __future__ import annotations`: its records are made at every cold start
# (docs/architecture.md, fast start).

import os
import re
from datetime import UTC, datetime
from typing import Any, NamedTuple

from kenomem.errors import UsageError
from kenomem.files import fm
from kenomem.files.paths import ARCHIVE_DIR, MEMORY_TYPES

STATUSES = ("active", "archived", "superseded", "proposed")

# Keys kenomem writes, in the order a new file lists them (SPEC 2.1).
CORE_KEYS = (
    "id",
    "type",
    "title",
    "tags",
    "scope",
    "created",
    "last_accessed",
    "access_count",
    "reinforced",
    "importance",
    "pinned",
    "source",
    "status",
    "supersedes",
)
TYPE_KEYS = {
    "episodic": ("when", "participants", "channel", "emotion"),
    "procedural": ("trigger", "confidence", "usage_count", "learned_from"),
    "working": ("session",),
    "semantic": (),
}

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_TEXT = 100_000  # characters of one memory's text, at every door
DERIVED_PREFIX = "note_"


class Memory(NamedTuple):
    id: str
    type: str
    title: str
    body: str
    path: str  # relative to the vault, forward slashes
    tags: tuple[str, ...] = ()
    scope: str = "global"
    created: datetime = EPOCH
    last_accessed: datetime | None = None
    access_count: int = 0
    reinforced: int = 0
    importance: int = 5
    pinned: bool = False
    source: str = "file"
    status: str = "active"
    supersedes: str | None = None
    superseded_by: str | None = None
    session: str | None = None
    when: datetime | None = None
    has_frontmatter: bool = True
    has_id: bool = True  # False when the id was derived because the file has none
    extra: dict[str, Any] = {}  # noqa: RUF012 - read-only: never mutated

    @property
    def accessed(self) -> datetime:
        return self.last_accessed or self.created

    @property
    def archived(self) -> bool:
        return self.status in ("archived", "superseded")


def new_id(now: datetime) -> str:
    stamp = now.astimezone(UTC).strftime("%Y%m%d_%H%M%S")
    return f"mem_{stamp}_{os.urandom(2).hex()}"


def derived_id(relpath: str) -> str:
    """A stable id for a hand-made file without one, taken from where it was first seen."""
    import hashlib

    return DERIVED_PREFIX + hashlib.blake2b(relpath.encode(), digest_size=5).hexdigest()


def check_type(value: str) -> str:
    """`value` if it names a memory type; else the one error every door gives."""
    if value not in MEMORY_TYPES:
        raise UsageError(f"unknown type {value!r} (one of: {', '.join(MEMORY_TYPES)})")
    return value


def type_from_path(relpath: str) -> tuple[str | None, bool]:
    """(type named by the folder, whether the file is in the archive)."""
    parts = relpath.split("/")
    archived = parts[0] == ARCHIVE_DIR
    if archived:
        parts = parts[1:]
    if len(parts) > 1 and parts[0] in MEMORY_TYPES:
        return parts[0], archived
    return None, archived


def from_text(
    relpath: str, text: str, *, mtime: float, fallback_id: str, default_importance: int = 5
) -> Memory:
    """Normalise a file's text into a Memory. Raises FrontmatterError on broken YAML."""
    parts = fm.split(text, relpath)
    meta = fm.parse(parts.fm_text, path=relpath, first_line=parts.first_line)
    body = text[parts.body_start :] if parts.has_frontmatter else text.lstrip("\ufeff")
    folder_type, in_archive = type_from_path(relpath)
    declared_type = _str(meta.get("type"))
    mem_type = folder_type or (declared_type if declared_type in MEMORY_TYPES else "semantic")
    status = _str(meta.get("status")) or "active"
    if status not in STATUSES:
        status = "active"
    if in_archive and status not in ("archived", "superseded"):
        status = "archived"
    file_time = datetime.fromtimestamp(mtime, UTC).replace(microsecond=0)
    created = fm.parse_time(meta.get("created")) or file_time
    mem_id = _str(meta.get("id"))
    # Only the keys read into fields of their own; the others of the type (participants,
    # trigger, learned_from, ...) stay in `extra` for whoever needs them.
    known = set(CORE_KEYS) | {"superseded_by", "when", "session"}
    return Memory(
        id=mem_id or fallback_id,
        type=mem_type,
        title=_str(meta.get("title")) or title_from_body(body) or title_from_path(relpath),
        body=body,
        path=relpath,
        tags=_tags(meta.get("tags")),
        scope=_str(meta.get("scope")) or "global",
        created=created,
        last_accessed=fm.parse_time(meta.get("last_accessed")),
        access_count=_int(meta.get("access_count"), 0, 0, None),
        reinforced=_int(meta.get("reinforced"), 0, 0, None),
        importance=_int(meta.get("importance"), default_importance, 1, 10),
        pinned=_bool(meta.get("pinned")),
        source=_str(meta.get("source")) or ("file" if not mem_id else "cli"),
        status=status,
        supersedes=_str(meta.get("supersedes")) or None,
        superseded_by=_str(meta.get("superseded_by")) or None,
        session=_str(meta.get("session")) or None,
        when=fm.parse_time(meta.get("when")),
        has_frontmatter=parts.has_frontmatter,
        has_id=bool(mem_id),
        extra={k: v for k, v in meta.items() if k not in known},
    )


def to_frontmatter(mem: Memory) -> dict[str, Any]:
    """The keys of a new file, in SPEC order, type-specific ones last."""
    values: dict[str, Any] = {
        "id": mem.id,
        "type": mem.type,
        "title": mem.title,
        "tags": list(mem.tags),
        "scope": mem.scope,
        "created": mem.created,
        "last_accessed": mem.last_accessed or mem.created,
        "access_count": mem.access_count,
        "reinforced": mem.reinforced,
        "importance": mem.importance,
        "pinned": mem.pinned,
        "source": mem.source,
        "status": mem.status,
        "supersedes": mem.supersedes,
    }
    if mem.superseded_by:
        values["superseded_by"] = mem.superseded_by
    if mem.type == "episodic":
        values["when"] = mem.when or mem.created
    if mem.session:
        values["session"] = mem.session
    values.update(mem.extra)
    return values


def render(mem: Memory) -> str:
    body = mem.body if mem.body.endswith("\n") else mem.body + "\n"
    return fm.emit(to_frontmatter(mem)) + "\n" + body


_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def title_from_body(body: str) -> str:
    m = _HEADING.search(body[:4096])
    return m.group(1).strip() if m else ""


def title_from_path(relpath: str) -> str:
    stem = relpath.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.endswith(".md") else stem
    return stem.replace("-", " ").replace("_", " ").strip() or stem


def title_from_text(text: str, max_len: int = 60) -> str:
    """A title for a remembered text: its first line or sentence, cut at a word."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    first = re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0].strip().rstrip(".").rstrip()
    if len(first) <= max_len:
        return first
    cut = first[:max_len] if first[max_len] == " " else first[:max_len].rsplit(" ", 1)[0]
    return (cut or first[:max_len]).rstrip(",;:") + "…"


def pattern_title(trigger: str, response: str | None = None) -> str:
    """A procedural pattern's title, as the sleep cycle and `remember --trigger` write it:
    "When n8n and 401", then the start of its response after a colon when given."""
    head = f"When {trigger.replace(' + ', ' and ')}"
    return head if response is None else f"{head}: {title_from_text(response, 50)}"


def fact_value(value: str) -> str:
    """A fact's value as compared: lower case, single spaces, no leading "the"."""
    return " ".join(str(value).lower().replace("the ", "").split())


# The text of a memory whose meaning is embedded (embed/): its title and the start of its
# body. Models read 512 tokens at most; what is past them would be cut by the model.
MEANING_CHARS = 2000


def meaning_text(title: str, body: str) -> str:
    """What a memory is embedded as: "Title. Body" on one line (a title that only starts
    the body once more is not said twice). Line breaks carry no meaning for a sentence
    model, and some tokenizers glue the words on either side of one: measured on
    bench/data/paraphrase.json with e5-small, "title\\nbody" found 0.79 of the targets in
    the top 5 where "title. body" found 0.85."""
    title, body = " ".join(title.split()), " ".join(body.split())
    if not body or body == title:
        text = title
    elif not title or body.startswith(title):
        text = body
    else:
        text = f"{title}{'' if title.endswith(('.', '!', '?', ':', ';')) else '.'} {body}"
    return text[:MEANING_CHARS]


def meaning_key(title: str, body: str) -> str:
    """A short key of `meaning_text`: an edit changes it, a touch or a move does not."""
    return text_digest(meaning_text(title, body))


def text_digest(text: str) -> str:
    import hashlib

    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


def fact_key(meta: dict[str, Any]) -> str:
    """The fact a memory states, from its `subject` and `attribute` (and `value` when
    the attribute is `many`-valued): what a new value would replace (see facts.py)."""
    subject, attribute = meta.get("subject"), meta.get("attribute")
    if not subject or not attribute:
        return ""
    key = f"{str(subject).strip().lower()}|{str(attribute).strip().lower()}"
    if str(meta.get("many", "")).lower() == "true":
        key += "|" + fact_value(str(meta.get("value", "")))
    return key


def _str(value: Any) -> str:
    if value is None or isinstance(value, dict | list):
        return ""
    return str(value).strip()


def _int(value: Any, default: int, low: int, high: int | None) -> int:
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        return default
    if number < low:
        return low
    return min(number, high) if high is not None else number


def _bool(value: Any) -> bool:
    return str(value).strip().lower() in ("true", "yes", "on", "1")


def _tags(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else str(value).split(",")
    tags = []
    for item in items:
        if isinstance(item, dict | list) or item is None:
            continue
        tag = str(item).strip().lstrip("#").strip()
        if tag and tag not in tags:
            tags.append(tag)
    return tuple(tags)
