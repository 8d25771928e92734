"""What `kenomem import` reads: JSON or JSONL, told apart by content, flattened into records.

A record is a dialog turn (a message) or a memory, with where it was found (the line of a
JSONL file, the item's number in file order) and the conversation around it. Accepted:

- messages or turns, alone, in a list or one per JSONL line: a text (`content`, `text`,
  `message`), optionally who said it (`speaker`, `role`, `who`, `author`, `sender`,
  `from`, `name`), when (`timestamp`, `time`, `date`, `created_at`), the conversation
  (`session`, `conversation`, `thread`, ...), `id`, `tags`, `channel`, `title`,
  `importance`, a photo's caption or attachments' text;
- a conversation: an object holding its messages (`messages`, `turns`, `chat_messages`,
  `dialog`, or a `conversation` list) with its id and date beside them, or sessions by
  name (`session_1: [...]` with `session_1_date_time`), as LoCoMo writes them;
- memories, as `kenomem show --json` or `list --json` print them: a `type` (semantic,
  episodic, procedural, working) and a `body`, `text` or `preview`; `{"memories": [...]}`.

Nothing here touches the vault; `importer` turns the records into files.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any, NamedTuple

from kenomem.errors import InvalidInput
from kenomem.files.fm import parse_time
from kenomem.files.paths import MEMORY_TYPES

SPEAKER_KEYS = ("speaker", "who", "author", "sender", "from", "name", "role")
TEXT_KEYS = ("content", "text", "message")
MEMORY_TEXT_KEYS = ("body", "text", "preview")
TIME_KEYS = ("timestamp", "time", "date", "created_at", "date_time", "datetime", "created")
CONVERSATION_KEYS = ("session", "conversation", "conversation_id", "thread", "thread_id")
TURN_ID_KEYS = ("id", "message_id", "dia_id", "uuid")
HOLDER_ID_KEYS = ("session", "conversation_id", "thread", "thread_id", "sample_id", "id", "uuid")
MESSAGE_LISTS = ("messages", "turns", "chat_messages", "dialog", "dialogue", "conversation")
CAPTION_KEYS = ("blip_caption", "caption", "image_caption", "alt_text")
DATE_SUFFIXES = ("_date_time", "_datetime", "_date", "_time")
_TIME_FORMATS = (
    "%I:%M %p on %d %B, %Y",  # LoCoMo: "1:56 pm on 8 May, 2023"
    "%I:%M %p on %d %b, %Y",
    "%Y-%m-%d %H:%M:%S",
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d %H:%M",
    "%d %B %Y",
    "%B %d, %Y",
    "%d %B, %Y",
)
_NUMBERED = re.compile(r"^(.*?)(\d+)$")


class Where(NamedTuple):
    item: int  # the record's number in file order, from 1
    line: int | None  # its line in a JSONL file
    file: str = ""  # the file it is in, when a folder is imported

    def __str__(self) -> str:
        place = f"line {self.line}" if self.line is not None else f"item {self.item}"
        return f"{self.file}, {place}" if self.file else place


class Context(NamedTuple):
    conversation: str = ""  # the id of the conversation the record belongs to
    session: str = ""  # a named session inside it (`session_3`)
    date: Any = None  # the session's or conversation's date, as written
    position: int = 0  # the turn's place in its session, from 0


class Record(NamedTuple):
    kind: str  # "turn" | "memory" | "transcript" (an agent's turn: `transcripts`) | "invalid"
    where: Where
    data: dict[str, Any]
    context: Context = Context()
    reason: str = ""  # why it is invalid


class Parsed(NamedTuple):
    format: str  # "json" | "jsonl", or an agent's format (`transcripts.FORMATS`)
    records: list[Record]


def parse(text: str, *, typed: bool = False) -> Parsed:
    """Every record of a JSON or JSONL text, in file order. `typed`: a record with a text
    and no speaker is a memory (`--type` was given), else a turn.

    A JSONL line that is not JSON is an invalid record; a text that is neither is an error.
    """
    body = text.lstrip("\ufeff").strip()
    if not body:
        raise InvalidInput("nothing to import: the input is empty")
    walker = _Walker(typed)
    try:
        document = json.loads(body)
    except json.JSONDecodeError as whole:
        lines: list[tuple[int, Any, str]] = []  # (line, value, why it is not JSON)
        for number, line in enumerate(text.lstrip("\ufeff").splitlines(), 1):
            if not line.strip():
                continue
            try:
                lines.append((number, json.loads(line), ""))
            except json.JSONDecodeError as exc:
                lines.append((number, None, f"not JSON ({exc.msg}, column {exc.colno})"))
        if all(why for _, _, why in lines):
            raise InvalidInput(
                f"neither JSON nor JSONL: {whole.msg} at line {whole.lineno}, column {whole.colno}"
            ) from None
        for number, value, why in lines:
            if why:
                walker.invalid(number, why)
            else:
                walker.walk(value, Context(), number)
        return Parsed("jsonl", walker.records)
    walker.walk(document, Context(), None)
    return Parsed("json", walker.records)


class _Walker:
    def __init__(self, typed: bool) -> None:
        self.typed = typed
        self.records: list[Record] = []

    def _where(self, line: int | None) -> Where:
        return Where(len(self.records) + 1, line)

    def invalid(self, line: int | None, reason: str) -> None:
        self.records.append(Record("invalid", self._where(line), {}, reason=reason))

    def walk(self, value: Any, ctx: Context, line: int | None) -> None:
        if isinstance(value, list):
            for position, item in enumerate(value):
                self.walk(item, ctx._replace(position=position), line)
            return
        if not isinstance(value, dict):
            self.invalid(line, f"not an object but {type(value).__name__}")
            return
        kind = self.kind_of(value)
        if kind:
            self.records.append(Record(kind, self._where(line), value, ctx))
            return
        if isinstance(value.get("memories"), list):
            self.walk(value["memories"], ctx, line)
            return
        holder = self.holder(value, ctx)
        for key in MESSAGE_LISTS:
            inner = value.get(key)
            if isinstance(inner, list):
                self.walk(inner, holder, line)
                return
            if isinstance(inner, dict) and key == "conversation":
                self.walk_sessions(inner, holder, line)
                return
        if not self.walk_sessions(value, holder, line):
            self.invalid(line, "neither a message, a memory nor a conversation")

    def kind_of(self, value: dict[str, Any]) -> str:
        has_speaker = any(_text(value.get(k)) for k in SPEAKER_KEYS)
        if value.get("type") in MEMORY_TYPES and any(k in value for k in MEMORY_TEXT_KEYS):
            return "memory"
        if not has_speaker and ("body" in value or (self.typed and "text" in value)):
            return "memory"
        if any(k in value and not isinstance(value[k], list | dict) for k in TEXT_KEYS):
            return "turn"
        if any(isinstance(value.get(k), list) for k in ("content", "text")) and not any(
            k in value for k in MESSAGE_LISTS if k != "content"
        ):
            return "turn"  # OpenAI content parts, Telegram text entities
        return ""

    def holder(self, value: dict[str, Any], ctx: Context) -> Context:
        """The context a conversation object gives the messages inside it."""
        conversation = next(
            (_text(value[k]) for k in HOLDER_ID_KEYS if _scalar(value.get(k))), ""
        ) or next((_text(value[k]) for k in ("title", "name") if _scalar(value.get(k))), "")
        date = next((value[k] for k in TIME_KEYS if _scalar(value.get(k))), None)
        return Context(conversation or ctx.conversation, ctx.session, date or ctx.date)

    def walk_sessions(self, value: dict[str, Any], ctx: Context, line: int | None) -> bool:
        """`{"session_1": [turns], "session_1_date_time": "..."}`: sessions by name."""
        names = [
            k
            for k, v in value.items()
            if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)
        ]
        if not names:
            return False
        for name in sorted(names, key=lambda k: _natural(k, names)):
            date = next(
                (value[name + s] for s in DATE_SUFFIXES if _scalar(value.get(name + s))), None
            )
            self.walk(value[name], Context(ctx.conversation, name, date or ctx.date), line)
        return True


def _natural(key: str, names: list[str]) -> tuple[str, int, int]:
    """session_2 before session_10; otherwise the order of the file."""
    m = _NUMBERED.match(key)
    return (m.group(1), int(m.group(2)), 0) if m else (key, 0, names.index(key))


def _scalar(value: Any) -> bool:
    return value is not None and not isinstance(value, dict | list) and str(value).strip() != ""


def _text(value: Any) -> str:
    """A field as text: strings, numbers, and the text parts of lists and objects."""
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, str | int | float):
        return str(value).strip()
    if isinstance(value, list):
        return "".join(_text(part) if not isinstance(part, str) else part for part in value)
    if isinstance(value, dict):
        for key in ("text", "parts", "name", "role", "content"):
            found = _text(value.get(key))
            if found:
                return found
    return ""


def text_of(value: Any) -> str:
    """A message's text: a string, OpenAI content parts, or Telegram text entities."""
    if isinstance(value, list):
        parts = [p if isinstance(p, str) else _text(p) for p in value]
        glue = "\n" if all(isinstance(p, dict) for p in value) else ""
        return glue.join(p for p in parts if p).strip()
    return _text(value)


def speaker_of(data: dict[str, Any]) -> str:
    for key in SPEAKER_KEYS:
        who = _text(data.get(key))
        if who:
            return who
    return ""


def time_of(value: Any) -> datetime | None:
    """A time as exports write it: ISO 8601, epoch seconds or milliseconds, or a few
    spelled-out forms ("1:56 pm on 8 May, 2023"). Raises ValueError when it is none."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ValueError(f"cannot read the time {value!r}")
    if isinstance(value, int | float) or (isinstance(value, str) and _is_number(value)):
        seconds = float(value)
        if seconds > 1e11:  # milliseconds
            seconds /= 1000
        return datetime.fromtimestamp(seconds, UTC).replace(microsecond=0)
    text = str(value).strip()
    found = parse_time(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    if found is not None:
        return found.replace(microsecond=0)
    for form in _TIME_FORMATS:
        try:
            return datetime.strptime(text, form).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ValueError(f"cannot read the time {text[:40]!r}")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
