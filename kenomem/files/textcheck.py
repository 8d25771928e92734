"""What text may be stored: the one check every way in calls for every field it stores.

Control characters are refused, not stripped. A NUL byte makes the file binary, and
every later command skips it, so the memory is lost; an escape sequence (ESC) rewrites
the terminal of whoever reads the memory later; the others are debris of binary data.
Refusing says so at once and loses nothing silently: the caller still has the text.
Tabs and line breaks (`\\n`, and `\\r\\n`) are text; a lone `\\r` is not, since it reads
as a line break to some readers and as nothing to others. A lone surrogate (from a
JSON `\\ud800`) cannot be written as UTF-8 at all.

`check_fields` runs this and `secrets.check` over the fields of one request, so a door
names each field once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from kenomem.errors import InvalidInput

# C0 controls but tab and line feed, DEL, C1 controls, a CR not ending a line, surrogates.
# Compiled on first use: `paths` imports this module on every command's path.
_BAD_RX = "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]|\r(?!\n)"
_bad: re.Pattern[str] | None = None
_NAMES = {
    "\x00": "a NUL byte",
    "\x1b": "an escape character",
    "\r": "a carriage return that does not end a line",
    "\x7f": "a DEL character",
}

# A field's value: one text, several (tags), or none.
Value = str | Iterable[str] | None


def check_text(value: str, field: str) -> str:
    """`value`, or InvalidInput naming the field, the character and where it is."""
    global _bad
    if _bad is None:
        _bad = re.compile(_BAD_RX)
    m = _bad.search(value)
    if m is None:
        return value
    ch = m.group(0)
    name = _NAMES.get(ch) or (
        "an unpaired surrogate" if "\ud800" <= ch <= "\udfff" else "a control character"
    )
    line = value.count("\n", 0, m.start()) + 1
    column = m.start() - (value.rfind("\n", 0, m.start()) + 1) + 1
    where = f"line {line}, column {column}" if "\n" in value else f"position {m.start() + 1}"
    raise InvalidInput(
        f"the {field} holds {name} ({ascii(ch)[1:-1]}) at {where}: control characters "
        "cannot be stored in a memory",
        hint="remove it (binary data or terminal escape codes); tabs and line breaks are fine",
    )


def check_fields(fields: Mapping[str, Value], *, then: str = "nothing was written") -> None:
    """Every field of one request: no control character, then no likely secret. `then`
    ends the message of a refused secret (what became of the request)."""
    from kenomem.files import secrets  # its patterns are compiled on import: only writers need them

    for field, value in fields.items():
        for text in texts(value):
            check_text(text, field)
    secrets.check(fields, then=then)


def texts(value: Value) -> Iterable[str]:
    """The texts of one field's value."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return value
