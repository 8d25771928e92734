"""The short-term buffer: `buffer/YYYY-MM-DD.md`, the raw log of each day (SPEC 2.2).

A day file is a frontmatter (`date`, `consolidated`: null or a time, `consolidated_entries`:
how many of its entries, in file order, the sleep cycle has consolidated) and one section
per entry:

    ## 14:30:05 Adrian @chat:telegram-123 #telegram
    The text, as logged.

The heading holds the time, who spoke, then `@session` and `#channel` when given; in
those two, `%` and white space are percent-encoded (`chat%201`), so they read back as
logged. A line of the text that would read as such a heading, or that already starts
with backslashes before one, gets one more backslash, which reading takes off. Entries are
only ever appended (under the vault lock, in one write each), so a logger never rewrites
what was logged before and concurrent loggers never lose an entry.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote

from kenomem.errors import FrontmatterError
from kenomem.files import beneath, fm
from kenomem.files.paths import BUFFER_DIR, outside, read_text_inside

_HEADING = re.compile(r"^## (\d\d:\d\d(?::\d\d)?) (.*)$")
_ESCAPED = re.compile(r"^\\+## \d\d:\d\d")  # escaped on the way in: one backslash more
_TAIL = re.compile(r"^(.*?)((?: [@#]\S+)*)$")


class Entry(NamedTuple):
    at: datetime  # UTC
    who: str
    session: str
    channel: str
    text: str
    position: int = 0  # in the day file, for stable references


class Day(NamedTuple):
    date: date
    path: str  # vault-relative
    consolidated: datetime | None
    entries: list[Entry]
    done: int = 0  # how many of the entries, in file order, are consolidated

    @property
    def pending(self) -> list[Entry]:
        """The entries not consolidated yet: those logged after the day was consolidated
        early (`consolidate --include-today`), or all of them."""
        return self.entries[self.done :]

    @property
    def due(self) -> bool:
        """Whether the day is still to be consolidated: never done, or entries were
        logged after it was (consolidated early)."""
        return self.consolidated is None or bool(self.pending)

    def unconsolidated(self) -> Day:
        """The day with only its pending entries (each keeps its position)."""
        return self._replace(entries=self.pending)


def day_path(day: date) -> str:
    return f"{BUFFER_DIR}/{day.isoformat()}.md"


def format_entry(entry: Entry) -> str:
    clock = entry.at.astimezone(UTC).strftime("%H:%M:%S")
    tail = "".join(
        f" {mark}{_encode(value)}"
        for mark, value in (("@", entry.session), ("#", entry.channel))
        if value
    )
    who = entry.who.replace(" @", " ").replace(" #", " ") or "-"
    lines = [
        "\\" + line if _HEADING.match(line) or _ESCAPED.match(line) else line
        for line in entry.text.strip("\n").split("\n")
    ]
    return f"\n## {clock} {who}{tail}\n" + "\n".join(lines) + "\n"


def _encode(value: str) -> str:
    """A heading field on one token: `%` and white space percent-encoded."""
    return "".join(
        "".join(f"%{b:02X}" for b in ch.encode("utf-8")) if ch == "%" or ch.isspace() else ch
        for ch in value
    )


def _decode(value: str) -> str:
    # Older files wrote fields as they were (spaces as `_`): without `%` they read as is.
    return unquote(value) if "%" in value else value


def parse_day(path: str, text: str) -> Day:
    """A day file's entries, in file order. Raises FrontmatterError on a broken header."""
    parts = fm.split(text, path)
    meta = fm.parse(parts.fm_text, path=path, first_line=parts.first_line)
    day = _day_of(path, meta.get("date"))
    entries: list[Entry] = []
    current: tuple[str, str] | None = None
    body: list[str] = []

    def close() -> None:
        if current is not None:
            entries.append(_entry(day, current[0], current[1], body, len(entries)))

    # Lines end at "\n" alone (a CRLF file's "\r" goes too): not at U+2028 and the other
    # breaks `str.splitlines` knows, which an entry's text may hold.
    for line in text[parts.body_start :].split("\n"):
        line = line.removesuffix("\r")
        m = _HEADING.match(line)
        if m:
            close()
            current, body = (m.group(1), m.group(2)), []
        elif current is not None:
            body.append(line[1:] if _ESCAPED.match(line) else line)
    close()
    consolidated = fm.parse_time(meta.get("consolidated"))
    done = _done(consolidated, meta.get(DONE_KEY), entries)
    return Day(day, path, consolidated, entries, done)


DONE_KEY = "consolidated_entries"


def _done(consolidated: datetime | None, count: object, entries: list[Entry]) -> int:
    """How many entries are consolidated: none before the day is; then the count the
    cycle recorded; a day marked without one (older vaults) counts the entries up to the
    first one logged after it was marked."""
    if consolidated is None:
        return 0
    text = str(count).strip() if count is not None else ""
    if text.isascii() and text.isdigit():
        return min(int(text), len(entries))
    return next((i for i, e in enumerate(entries) if e.at > consolidated), len(entries))


def date_of(path: str) -> date:
    """The date a buffer file is named for."""
    return date.fromisoformat(path.rsplit("/", 1)[-1].removesuffix(".md"))


def _day_of(path: str, declared: object) -> date:
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    for candidate in (str(declared or ""), stem):
        try:
            return date.fromisoformat(candidate.strip())
        except ValueError:
            continue
    raise FrontmatterError("a buffer day is named YYYY-MM-DD.md", path=path)


def _entry(day: date, clock: str, head: str, body: list[str], index: int) -> Entry:
    who, tail = _TAIL.match(head).groups()  # type: ignore[union-attr]
    session = channel = ""
    for token in tail.split():
        if token.startswith("@") and not session:
            session = _decode(token[1:])
        elif token.startswith("#") and not channel:
            channel = _decode(token[1:])
    hour, minute, *second = (int(x) for x in clock.split(":"))
    at = datetime(
        day.year, day.month, day.day, hour, minute, second[0] if second else 0, tzinfo=UTC
    )
    who = who.strip()
    return Entry(
        at, "" if who == "-" else who, session, channel, "\n".join(body).strip("\n"), index
    )


def append(root: Path, rel: str, data: bytes, *, fsync: bool = True) -> None:
    """Append entries to the buffer day `rel`, made with its header if it is new. One
    write, in append mode: never over what is there, and all or nothing (a write cut
    short by a full disk is taken back). Never through a symlink, nor into a `buffer/`
    that leads out of the vault (`UnsafePath`): the day is opened in `buffer/` held by
    descriptor (`beneath.folder`). The caller holds the lock."""
    from kenomem.files.atomic import append_bytes, create_bytes
    from kenomem.files.store import temp_dir

    folder, name = beneath.split(rel)
    full = root / rel
    with beneath.folder(root, folder, create=True) as where:
        try:
            append_bytes(full, data, fsync=fsync, folder=where)
        except FileNotFoundError:
            head = fm.emit({"date": date_of(rel), "consolidated": None}).encode("utf-8")
            with temp_dir(root) as temp:
                create_bytes(full, head + data, fsync=fsync, temp_dir=temp, folder=where)
        except OSError:
            if beneath.is_link(where, name):
                raise beneath.link_error(rel) from None
            raise


def days(root: Path) -> list[str]:
    """The vault-relative paths of every buffer day, oldest first; none that leads out of
    the vault (a `buffer/` or a day that is a symlink to elsewhere)."""
    return sorted(rel for rel, _entry in _day_entries(root))


def day_stats(root: Path) -> dict[str, tuple[int, int]]:
    """Every buffer day of `days`, with its size and mtime (ns), oldest first."""
    stats = {}
    for rel, entry in sorted(_day_entries(root), key=lambda found: found[0]):
        try:
            st = entry.stat()
        except OSError:
            continue  # gone meanwhile
        stats[rel] = (st.st_size, st.st_mtime_ns)
    return stats


def _day_entries(root: Path) -> list[tuple[str, os.DirEntry[str]]]:
    if outside(root, BUFFER_DIR):
        return []
    try:
        entries = os.scandir(root / BUFFER_DIR)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    with entries:
        for entry in entries:
            name = entry.name
            if not name.endswith(".md") or name.startswith("."):
                continue
            try:
                date.fromisoformat(name[:-3])
            except ValueError:
                continue
            rel = f"{BUFFER_DIR}/{name}"
            if not (entry.is_symlink() and outside(root, rel)):
                found.append((rel, entry))
    return found


def read_day(root: Path, rel: str) -> Day:
    """A buffer day, read only if it stays inside the vault (else `UnsafePath`)."""
    return parse_day(rel, read_text_inside(root, rel))


def read_day_if_any(root: Path, rel: str) -> Day | None:
    """`read_day`, or None when the day has no file yet."""
    try:
        return read_day(root, rel)
    except FileNotFoundError:
        return None


def mark_consolidated(
    root: Path, rel: str, when: datetime, entries: int, *, fsync: bool = True
) -> None:
    """Set `consolidated:` and `consolidated_entries:` (the first `entries` entries are
    done) in the day's frontmatter; the entries stay byte for byte."""
    from kenomem.files.store import update_keys

    update_keys(root, rel, {"consolidated": when, DONE_KEY: entries}, fsync=fsync)


def redacted(day: Day) -> tuple[Day, list[str]]:
    """The day with each likely secret in its entries replaced by a marker, and a warning
    naming each entry that held one. `log` refuses secrets, but a person may write a day
    file by hand: what the sleep cycle copies into memory comes from here."""
    # Its patterns are compiled on import (a third of what a recall's own modules cost
    # to import): only the sleep cycle needs them, not a recall that lists the buffer.
    from kenomem.files.secrets import find_secrets, redact

    entries = []
    warnings = []
    for entry in day.entries:
        fields = (entry.text, entry.who, entry.session, entry.channel)
        kinds = sorted({f.kind for f in find_secrets("\n".join(fields))})
        if kinds:
            text, who, session, channel = (redact(field) for field in fields)
            entry = entry._replace(text=text, who=who, session=session, channel=channel)
            warnings.append(
                f"{day.path}#{entry.at:%H:%M:%S} looks like it holds a secret "
                f"({', '.join(kinds)}): it was consolidated without it; remove it from "
                "the buffer file"
            )
        entries.append(entry)
    return day._replace(entries=entries), warnings
