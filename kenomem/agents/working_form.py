"""The structured form of a working memory: task, context, pending steps, notes.

Pure text in, text out. An agent may write its scratchpad as labelled lines
(`Task: ...`, `Pending:` then `- step` lines), as markdown sections (`## Task`), or as a
JSON object with those keys; all three are stored in one readable layout
(`format_fields`), which `parse_fields` reads back to the same fields. Anything else is
free text and is stored as written.

The JSON object may be the design's working memory: `{"session": ..., "task": ...,
"context": [...], "pending": [...], "notes": ..., "updated": ...}`. A list given for a
text field becomes `- ` lines. `session` must name the session being written (the caller
chooses the file, never the text). `updated` is read and ignored: when the scratchpad was
last written is the time kenomem writes it, which its staleness is measured from.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kenomem.errors import InvalidInput

FIELDS = ("task", "context", "pending", "notes")
# Keys of the design's JSON form that are not fields: checked, never stored.
CHECKED = ("session", "updated")
# Other names people and models use for the same sections.
_ALIASES = {"note": "notes", "pending steps": "pending", "next steps": "pending", "todo": "pending"}
_NAMES = "|".join(sorted((*FIELDS, *_ALIASES), key=len, reverse=True))
# `## Task`, `## Task:` (a heading needs no colon) or `Task: text`, `**Task:** text`.
_HEADING = re.compile(rf"^\s*#{{1,6}}\s+({_NAMES})\s*:?\s*$", re.IGNORECASE)
_LABEL = re.compile(rf"^\s*(?:\*\*)?({_NAMES})(?:\*\*)?\s*:(?:\*\*)?\s*(.*)$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")

Fields = dict[str, Any]  # task, context, notes: str; pending: list[str]


def parse(text: str, session: str | None = None) -> Fields:
    """The fields of a structured scratchpad, or {} when `text` is free text.

    A JSON object must use only the four keys, `session` (which must be `session`) and
    `updated` (ignored); anything else that opens with `{` and closes with `}` but is
    not JSON is refused rather than stored as a surprise.
    """
    if looks_like_json(text):
        return _from_json(text.strip(), session)
    return parse_fields(text)


def looks_like_json(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith("{") and stripped.endswith("}")


def parse_fields(text: str) -> Fields:
    """Labelled lines or sections; {} unless the text starts with a section."""
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        name, inline = _section(line)
        if name is not None:
            current = name
            lines = sections.setdefault(name, [])
            if inline:
                lines.append(inline)
            continue
        if current is None:
            if line.strip():
                return {}  # prose before any section: free text
            continue
        sections[current].append(line)
    if not sections:
        return {}
    fields: Fields = {}
    for name, lines in sections.items():
        if name == "pending":
            fields[name] = _items(lines)
        else:
            value = _block(lines)
            if value:
                fields[name] = value
    return _ordered(fields)


def format_fields(fields: Fields) -> str:
    """The stored layout: one `## Section` per field, pending steps as a list."""
    parts = []
    for name in FIELDS:
        value = fields.get(name)
        if not value:
            continue
        content = "\n".join(f"- {i}" for i in value) if name == "pending" else str(value)
        parts.append(f"## {name.capitalize()}\n\n{content}\n")
    return "\n".join(parts)


def _section(line: str) -> tuple[str | None, str]:
    m = _HEADING.match(line)
    if m:
        return _canonical(m.group(1)), ""
    m = _LABEL.match(line)
    if m:
        return _canonical(m.group(1)), m.group(2).strip()
    return None, ""


def _canonical(name: str) -> str:
    name = " ".join(name.lower().split())
    return _ALIASES.get(name, name)


def _block(lines: list[str]) -> str:
    """A text field: its lines as written, without the blank lines around them."""
    text = "\n".join(line.rstrip() for line in lines).strip("\n")
    # Indentation common to every line (from a nested layout) is not part of the text.
    indents = [len(x) - len(x.lstrip()) for x in text.splitlines() if x.strip()]
    cut = min(indents, default=0)
    return "\n".join(x[cut:] for x in text.splitlines()).strip()


def _items(lines: list[str]) -> list[str]:
    """Pending steps: each bullet or numbered line is one; an indented line without a
    bullet continues the step above it; any other line is a step of its own."""
    items: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        m = _BULLET.match(line)
        if m:
            if m.group(1).strip():
                items.append(m.group(1).strip())
        elif items and line[:1].isspace():
            items[-1] += " " + line.strip()
        else:
            items.append(line.strip())
    return items


def _from_json(text: str, session: str | None = None) -> Fields:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(
            f"the working memory looks like JSON but is not valid JSON: {exc}",
            hint='give an object like {"task": "...", "pending": ["..."]}, or plain text',
        ) from exc
    fields: Fields = {}
    for key, value in data.items():
        name = _canonical(str(key))
        if name in CHECKED:
            _check_key(name, value, session)
            continue
        if name not in FIELDS:
            known = ", ".join(FIELDS + CHECKED)
            raise InvalidInput(f"unknown key {key!r} in the working memory (known: {known})")
        if name == "pending":
            fields[name] = _pending_value(value)
        elif isinstance(value, list):
            items = _list_value(key, value)
            if items:
                fields[name] = "\n".join(f"- {item}" for item in items)
        elif value is not None:
            if not isinstance(value, str | int | float):
                raise InvalidInput(f"{key!r} must be text or a list of lines")
            if str(value).strip():
                fields[name] = str(value).strip()
    return _ordered(fields)


def _check_key(name: str, value: Any, session: str | None) -> None:
    """`session` must be the session written (when one is given to compare with);
    `updated`, a time as text or a number, is not kept."""
    if name == "session":
        if not isinstance(value, str):
            raise InvalidInput("'session' must be text: the id of the session written")
        if session is not None and value != session:
            raise InvalidInput(
                f"the working memory is for session {value!r}, but it is written to "
                f"session {session!r}",
                hint="name the same session in the JSON as the one written to, or leave "
                "'session' out of the JSON",
            )
    elif value is not None and not isinstance(value, str | int | float):
        raise InvalidInput("'updated' must be a time (text or a number); it is not kept")


def _list_value(key: str, value: list[Any]) -> list[str]:
    """The lines of a text field given as a list: each item on one line."""
    if not all(isinstance(v, str | int | float) for v in value):
        raise InvalidInput(f"{key!r} must be text or a list of lines")
    return [" ".join(str(v).split()) for v in value if str(v).strip()]


def _pending_value(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return _items(value.splitlines())
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return [" ".join(str(v).split()) for v in value if str(v).strip()]
    raise InvalidInput("'pending' must be a list of steps (or text, one step a line)")


def _ordered(fields: Fields) -> Fields:
    return {name: fields[name] for name in FIELDS if fields.get(name)}
