"""Working memory: one scratchpad per session, `working/<session>.md`.

It is written through `remember` (type working), which keeps one file per session and
replaces its text on each write; it is cleared by archiving it (`forget`), so an old
scratchpad can still be found with `recall --archive`. A scratchpad not written for
`memory.working_stale_days` is stale: shown as such, left out of `context`, and archived
by `prune`, which measures its age the same way (the `updated` key, see `sync.to_doc`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, NamedTuple

from kenomem.agents import working_form
from kenomem.errors import InvalidInput
from kenomem.files.fm import from_epoch
from kenomem.files.memory import title_from_text
from kenomem.files.paths import check_label, label_filename, outside
from kenomem.files.textcheck import check_text
from kenomem.vault.core import CoreVault

DAY = 86400.0


class WorkingView(NamedTuple):
    id: str
    session: str
    path: str
    title: str
    text: str  # the body as stored
    fields: dict[str, Any]  # task, context, pending (list), notes; {} for free text
    created: datetime
    updated: datetime  # the last write: what staleness is measured from
    age_seconds: float
    stale: bool
    stale_days: float
    pinned: bool = False


class WorkingSetResult(NamedTuple):
    id: str
    session: str
    path: str
    action: str  # created | updated
    structured: bool
    fields: dict[str, Any]


class WorkingClearResult(NamedTuple):
    session: str
    cleared: bool  # whether there was one to archive
    id: str | None = None
    path: str | None = None  # where it went in the archive
    old_path: str | None = None


def working_path(session: str) -> str:
    """Where a session's scratchpad lives (as `remember` names it)."""
    check_label(session, "session id")
    return f"working/{label_filename(session)}.md"


def show_working(vault: CoreVault, session: str, now: datetime | None = None) -> WorkingView | None:
    """The session's working memory, stale or not; None when it has none."""
    from kenomem.index.sync import to_doc

    path = working_path(session)
    moment = now or datetime.now(UTC)
    vault.sync()  # a scratchpad edited or deleted by hand is seen as it is now
    if outside(vault.root, path) or not (vault.root / path).is_file():
        return None  # a symlink out of the vault is not read (the sync warned of it)
    mem = vault.load(path)
    if mem.archived:
        return None
    # `to_doc` is how the index (and so prune) reads a memory's last write.
    updated = to_doc(mem, "").updated
    age = max(0.0, moment.timestamp() - updated)
    stale_days = vault.settings.memory.working_stale_days
    return WorkingView(
        id=mem.id,
        session=mem.session or session,
        path=path,
        title=mem.title,
        text=mem.body.strip("\n"),
        fields=working_form.parse_fields(mem.body),
        created=mem.created,
        updated=from_epoch(updated),
        age_seconds=round(age, 3),
        stale=not mem.pinned and age > stale_days * DAY,
        stale_days=stale_days,
        pinned=mem.pinned,
    )


def current_working(
    vault: CoreVault, session: str, now: datetime | None = None
) -> WorkingView | None:
    """The session's working memory if it is fresh enough to use (for `context`)."""
    view = show_working(vault, session, now)
    return None if view is None or view.stale else view


def set_working(
    vault: CoreVault,
    session: str,
    text: str,
    now: datetime | None = None,
    *,
    source: str = "cli",
) -> WorkingSetResult:
    """Write the session's scratchpad: free text as it is, a structured form (labelled
    lines, `## Task` sections or a JSON object, the design's included) in the normalised
    layout. A JSON `session` must be `session`: the file written is the caller's choice."""
    from kenomem.capture.remember import RememberRequest, remember

    check_label(session, "session id")
    check_text(text, "text")  # as given: the form below trims it
    fields = working_form.parse(text, session)
    if fields or working_form.looks_like_json(text):
        body = working_form.format_fields(fields)
        title = title_from_text(str(fields.get("task") or "")) or f"Working memory of {session}"
    else:
        body = text.strip()
        title = None  # the first sentence, as for any memory
    if not body.strip():
        raise InvalidInput(
            "the working memory is empty",
            hint=f"to remove it: kenomem working clear --session {session}",
        )
    moment = (now or datetime.now(UTC)).replace(microsecond=0)
    request = RememberRequest(
        text=body,
        type="working",
        session=session,
        title=title,
        source=source,
        now=moment,
    )
    result = remember(vault, request)
    return WorkingSetResult(result.id, session, result.path, result.action, bool(fields), fields)


def clear_working(vault: CoreVault, session: str) -> WorkingClearResult:
    """Move the session's scratchpad to the archive; nothing is deleted."""
    from kenomem.forget.archive import ForgetRequest, forget

    view = show_working(vault, session)
    if view is None:
        return WorkingClearResult(session, False)
    moved = forget(vault, ForgetRequest(view.id))
    return WorkingClearResult(session, True, moved.id, moved.path, moved.old_path)
