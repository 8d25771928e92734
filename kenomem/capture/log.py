"""`log`: append one entry to today's buffer day (or the day of `at`), for the sleep cycle.

The day file's format, and reading and appending it, are `files/buffer.py`'s; this is
the operation: the checks on what is logged, under the vault lock.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

from kenomem.errors import InvalidInput
from kenomem.files.buffer import Entry, append, day_path, format_entry
from kenomem.files.paths import check_label
from kenomem.files.textcheck import check_fields
from kenomem.vault.core import CoreVault


class LogRequest(NamedTuple):
    text: str
    who: str | None = None  # who said it (a name, user, assistant)
    session: str | None = None  # the conversation it belongs to
    channel: str | None = None  # where it was said (telegram, email, cli...)
    at: datetime | None = None  # when (default: now), to import history


class LogResult(NamedTuple):
    path: str
    at: datetime
    who: str
    session: str
    channel: str


def log(vault: CoreVault, request: LogRequest) -> LogResult:
    """Append one entry to its day's buffer file (created on the day's first entry)."""
    text, at = request.text, request.at
    who, session, channel = request.who or "", request.session or "", request.channel or ""
    check_fields(
        {"text": text, "who": who, "session id": session, "channel": channel},
        then="nothing was logged",
    )
    if not text.strip():
        raise InvalidInput("nothing to log: the text is empty")
    for value, what in ((who, "who"), (session, "session id"), (channel, "channel")):
        if value:
            check_label(value, what)
    moment = (at or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    entry = Entry(moment, who, session, channel, text)
    rel = day_path(moment.date())
    with vault.lock:
        append(
            vault.root, rel, format_entry(entry).encode("utf-8"), fsync=vault.settings.write.fsync
        )
    return LogResult(rel, moment, who, session, channel)
