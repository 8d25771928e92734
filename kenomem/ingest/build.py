"""`kenomem import`, continued: each record read from the file (see `import_forms`) made
into what it becomes, a `Memory` or a buffer `Entry`, checked whole; or the reason it is
skipped (empty, a likely secret) or invalid. Nothing here writes.

A turn's id ends with a hash of its conversation and its own id (or, without one, its
speaker, text and time, and how many identical turns came before it in the file), so
importing the same file again finds the same ids.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from kenomem.errors import KenomemError, SecretDetected
from kenomem.files.buffer import Entry
from kenomem.files.memory import (
    CORE_KEYS,
    MAX_TEXT,
    STATUSES,
    TYPE_KEYS,
    Memory,
    title_from_text,
)
from kenomem.files.paths import MEMORY_TYPES, check_label, check_tag
from kenomem.files.textcheck import check_fields, check_text
from kenomem.ingest.forms import (
    CAPTION_KEYS,
    CONVERSATION_KEYS,
    MEMORY_TEXT_KEYS,
    TEXT_KEYS,
    TIME_KEYS,
    TURN_ID_KEYS,
    Record,
    speaker_of,
    text_of,
    time_of,
)
from kenomem.ingest.transcripts import Turn, entry_of

TITLE_WORDS = 8
_SKIPPED = "not imported"
KEY_BYTES = 6  # of the hash that ends a generated id: 12 hex digits
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

# The time between two turns of a session whose turns carry no time of their own: about
# the pace of a written chat. It keeps the order, and it makes a memory's neighbours in
# time (recall's `neighbour_minutes`) its neighbours in the conversation.
TURN_GAP = timedelta(seconds=30)


class ImportRequest(NamedTuple):
    text: str
    name: str = "-"  # where the text came from, for the report
    target: str = "episodic"  # what turns become: episodic memories or buffer entries
    session: str | None = None  # the conversation id, instead of the file's
    type: str | None = None  # of memories that name none (else classified from the text)
    tags: tuple[str, ...] = ()
    dry_run: bool = False
    now: datetime | None = None


class Skip(Exception):
    """The record is fine but brings nothing: empty, or a likely secret."""


class Plan(NamedTuple):
    record: Record
    made: Memory | Entry | None
    action: str
    reason: str = ""
    id: str = ""
    path: str = ""


def first(data: dict[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = data.get(key)
        if value is not None and not isinstance(value, dict | list | bool):
            text = str(value).strip()
            if text:
                return text
    return ""


def _first_raw(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((data[k] for k in keys if data.get(k) not in (None, "")), None)


def _key(*parts: object) -> str:
    basis = json.dumps(parts, ensure_ascii=False, default=str)
    return hashlib.blake2b(basis.encode("utf-8"), digest_size=KEY_BYTES).hexdigest()


# -- records into memories or entries ---------------------------------------------------


class Builder:
    """Makes each record of one import into its plan; `default_importance` (the vault's
    `[memory]` setting) is the importance of a record that gives none."""

    def __init__(
        self, request: ImportRequest, now: datetime, total: int, default_importance: int
    ) -> None:
        self.request = request
        self.now = now
        self.total = total
        self.default_importance = default_importance
        self.seen: Counter[str] = Counter()  # identical turns: the 2nd one is another turn

    def plan(self, record: Record) -> Plan:
        if record.kind == "invalid":
            return Plan(record, None, "invalid", record.reason)
        try:
            if record.kind == "transcript":
                made = self.transcript(record)
            else:
                check_record(record.data)
                made = self.turn(record) if record.kind == "turn" else self.memory(record)
            check_made(made)
        except Skip as why:
            return Plan(record, None, "skipped", str(why))
        except SecretDetected as exc:
            return Plan(record, None, "skipped", exc.message)
        except (KenomemError, ValueError, TypeError) as exc:
            reason = exc.message if isinstance(exc, KenomemError) else str(exc)
            return Plan(record, None, "invalid", reason)
        return Plan(record, made, "", id=getattr(made, "id", ""))

    def _common(self, data: dict[str, Any], texts: list[str]) -> tuple[tuple[str, ...], int]:
        tags = _tags(data.get("tags"))
        for tag in self.request.tags:
            if tag not in tags:
                tags.append(tag)
        importance = data.get("importance")
        if importance is None or importance == "":
            level = self.default_importance
        else:
            try:
                level = int(str(importance).strip())
            except ValueError:
                level = 0
            if not 1 <= level <= 10:
                raise ValueError(f"importance {importance!r} is not a number from 1 to 10")
        if sum(len(t) for t in texts) > MAX_TEXT:
            raise ValueError(f"longer than {MAX_TEXT:,} characters")
        return tuple(tags), level

    def turn(self, record: Record) -> Memory | Entry:
        data, ctx = record.data, record.context
        text = text_of(_first_raw(data, TEXT_KEYS))
        extras = [f"[photo: {c}]" for c in (text_of(data.get(k)) for k in CAPTION_KEYS) if c]
        extras += [f"[attachment: {a}]" for a in _attachments(data.get("attachments"))]
        if not text and not extras:
            raise Skip("empty: no text")
        speaker = speaker_of(data)
        conversation = self.request.session or first(data, CONVERSATION_KEYS) or ctx.conversation
        session = "/".join(part for part in (conversation, ctx.session) if part)
        channel = first(data, ("channel",))
        for value, what in ((session, "session id"), (channel, "channel"), (speaker, "speaker")):
            if value:
                check_label(value, what)
        # The labels by the names the record gives them (`check_made` checks the rest).
        check_fields({"speaker": speaker, "session": session, "channel": channel}, then=_SKIPPED)
        title = first(data, ("title",))
        tags, importance = self._common(data, [text, *extras, title, speaker])
        own = time_of(_first_raw(data, TIME_KEYS))
        base = time_of(ctx.date)
        if own is not None:
            moment = own
        elif base is not None:  # the session's date, at a chat's pace from there
            moment = base + TURN_GAP * ctx.position
        else:
            moment = self.now - timedelta(seconds=self.total - record.where.item)
        source_id = first(data, TURN_ID_KEYS)
        if source_id:
            basis: tuple[object, ...] = (conversation, ctx.session, source_id)
        else:
            dated = moment.isoformat() if own or base else ""
            basis = (conversation, ctx.session, speaker, text, extras, dated)
        key = _key(*basis)
        self.seen[key] += 1
        if self.seen[key] > 1:
            key = _key(*basis, self.seen[key])
        if self.request.target == "buffer":
            # The entry's session is its chat, which the sleep cycle scopes its memories
            # to: the conversation, as an imported memory's scope, not one of its sessions.
            said = "\n\n".join(part for part in (text, *extras) if part)
            return Entry(moment, speaker, conversation, channel, said)
        body = f"{speaker}: {text}".rstrip() if speaker else text
        body = "\n\n".join(part for part in (body, *extras) if part) + "\n"
        extra: dict[str, Any] = {}
        if speaker:
            extra["participants"] = [speaker]
        if channel:
            extra["channel"] = channel
        if source_id:
            extra["source_id"] = source_id
        return Memory(
            id=f"mem_{moment:%Y%m%d_%H%M%S}_{key}",
            type="episodic",
            title=title or _title(text, speaker, extras),
            body=body,
            path="",
            tags=tags,
            scope=conversation or "global",
            created=moment,
            last_accessed=moment,
            importance=importance,
            source="import",
            session=session or None,
            when=moment,
            extra=extra,
        )

    def transcript(self, record: Record) -> Memory | Entry:
        """An agent's turn (`transcripts`): the buffer entry `entry_of` makes of it, or
        (target episodic) an episodic memory of that entry, whose id ends with a hash of
        the channel, the agent's session and the message's id, so a message imported
        again, from a file grown since or from another copy, is found there already."""
        turn: Turn = record.data["turn"]
        scope, channel = record.data["scope"], record.data["channel"]
        entry = entry_of(turn, scope, channel)
        if self.request.target == "buffer":
            return entry
        session = f"{scope}/{turn.session}" if turn.session != scope else scope
        try:
            check_label(session, "session id")
        except KenomemError:
            session = scope
        key = _key(channel, turn.session, turn.id)
        return Memory(
            id=f"mem_{entry.at:%Y%m%d_%H%M%S}_{key}",
            type="episodic",
            title=_title(entry.text, entry.who, []),
            body=f"{entry.who}: {entry.text}\n",
            path="",
            tags=self.request.tags,
            scope=scope,
            created=entry.at,
            last_accessed=entry.at,
            importance=self.default_importance,
            source="import",
            session=session,
            when=entry.at,
            extra={"participants": [entry.who], "channel": channel, "source_id": turn.id},
        )

    def memory(self, record: Record) -> Memory:
        data = record.data
        text = text_of(_first_raw(data, MEMORY_TEXT_KEYS)).strip("\n")
        if not text.strip():
            raise Skip("empty: no text")
        declared = data.get("type")
        if declared in MEMORY_TYPES:
            mem_type = str(declared)
        elif self.request.type:
            mem_type = self.request.type
        else:
            from kenomem.capture.classify import classify

            mem_type = classify(text)
        if mem_type == "working":
            raise ValueError("a working memory is a session's scratchpad: kenomem working set")
        title = first(data, ("title",)) or title_from_text(text) or "memory"
        tags, importance = self._common(data, [text, title])
        created = time_of(_first_raw(data, ("created", *TIME_KEYS))) or self.now
        when = time_of(data.get("when")) if mem_type == "episodic" else None
        session = self.request.session or first(data, ("session",)) or None
        scope = first(data, ("scope",)) or "global"
        for value, what in ((session, "session id"), (scope, "scope")):
            if value:
                check_label(value, what)
        given = first(data, ("id",))
        mem_id = given if given and _KEY.match(given) else ""
        mem_id = mem_id or f"mem_{created:%Y%m%d_%H%M%S}_{_key(mem_type, text, created)}"
        status = first(data, ("status",))
        return Memory(
            id=mem_id,
            type=mem_type,
            title=title,
            body=text + "\n",
            path="",
            tags=tags,
            scope=scope,
            created=created,
            last_accessed=time_of(data.get("last_accessed")) or created,
            access_count=max(0, int(data.get("access_count") or 0)),
            reinforced=max(0, int(data.get("reinforced") or 0)),
            importance=importance,
            pinned=data.get("pinned") is True or str(data.get("pinned")).lower() == "true",
            source=first(data, ("source",)) or "import",
            status=status if status in STATUSES else "active",
            supersedes=first(data, ("supersedes",)) or None,
            superseded_by=first(data, ("superseded_by",)) or None,
            session=session,
            when=when,
            extra=_extra(data, mem_type),
        )


def check_record(data: Any, where: str = "") -> None:
    """No control character in any value of the record, as written in the file (values
    are trimmed when read: a control character is refused, never trimmed away)."""
    if isinstance(data, str):
        check_text(data, where or "value")
    elif isinstance(data, dict):
        for key, value in data.items():
            check_record(value, f"{where}.{key}" if where else str(key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            check_record(value, f"{where}[{i}]")


def check_made(made: Memory | Entry) -> None:
    """Every text the record would write, checked as any door checks what it stores: a
    control character makes the record invalid, a likely secret has it skipped."""
    if isinstance(made, Entry):
        fields: dict[str, Any] = {
            "text": made.text,
            "speaker": made.who,
            "session": made.session,
            "channel": made.channel,
        }
    else:
        fields = {
            "text": made.body,
            "title": made.title,
            "tag": made.tags,
            "session": made.session,  # before the scope, which a turn takes from it
            "scope": made.scope,
            "id": made.id,
            "source": made.source,
            "supersedes": made.supersedes,
            "superseded_by": made.superseded_by,
            "key": list(made.extra),
        }
        for key, value in made.extra.items():
            fields[key if key not in fields else f"extra {key}"] = _scalars(value)
    check_fields(fields, then=_SKIPPED)


def _scalars(value: Any) -> list[str]:
    if isinstance(value, list):
        return [text for item in value for text in _scalars(item)]
    return [] if value is None else [str(value)]


def _title(text: str, speaker: str, extras: list[str]) -> str:
    words = text.split()
    if words:
        return " ".join(words[:TITLE_WORDS])
    what = "a photo" if extras and extras[0].startswith("[photo") else "an attachment"
    return f"{speaker or 'someone'} shared {what}"


def _tags(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    items = value if isinstance(value, list) else str(value).split(",")
    tags: list[str] = []
    for item in items:
        tag = check_tag(str(item).strip().lstrip("#").strip())
        if tag and tag not in tags:
            tags.append(tag)
    return tags


def _attachments(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    found = []
    for item in value:
        if isinstance(item, dict):
            text = first(item, ("text", "extracted_content", "caption", "title", "name"))
        else:
            text = str(item).strip() if item is not None else ""
        if text:
            found.append(text)
    return found


def _extra(data: dict[str, Any], mem_type: str) -> dict[str, Any]:
    """The keys a memory carries beyond kenomem's own: its type's keys, and `extra`."""
    known = {*CORE_KEYS, "superseded_by", "session", "when", "path", "body", "preview"}
    found = {k: data[k] for k in TYPE_KEYS[mem_type] if k in data and k not in known}
    if isinstance(data.get("extra"), dict):
        found.update(data["extra"])
    return {k: v for k, v in found.items() if k not in known and _KEY.match(k) and _plain(v)}


def _plain(value: Any) -> bool:
    if isinstance(value, list):
        return all(_plain(v) for v in value if not isinstance(v, list))
    return not isinstance(value, dict)
