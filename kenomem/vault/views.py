"""Read-only looks at the vault: `show` one memory, `list` many, `stats` for all."""

from datetime import datetime
from typing import NamedTuple

from kenomem.errors import UsageError
from kenomem.files.fm import from_epoch
from kenomem.files.memory import STATUSES, Memory, check_type
from kenomem.files.paths import MEMORY_TYPES
from kenomem.index import Filters, scope
from kenomem.vault.core import CoreVault

SORT_KEYS = ("created", "last_accessed", "importance", "title")


class ShowResult(NamedTuple):
    memory: Memory


def show(vault: CoreVault, mem_id: str) -> ShowResult:
    vault.sync()
    _, path = vault.resolve_id(mem_id)
    return ShowResult(vault.load(path))


class ListRequest(NamedTuple):
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()  # these chats' memories and the global ones (index.scope)
    statuses: tuple[str, ...] | None = None  # None: the active ones (every one with archive)
    archive: bool = False  # archived and superseded memories too, when statuses is None
    since: datetime | None = None
    until: datetime | None = None
    sort: str = "created"
    asc: bool = False  # oldest (or lowest) first
    limit: int | None = 50


class ListItem(NamedTuple):
    id: str
    type: str
    title: str
    path: str
    tags: list[str]
    status: str
    importance: int
    created: datetime
    last_accessed: datetime
    preview: str
    # The time --since and --until filter on, when it is not `created`: the memory's
    # `when` (an episode's day). None: they filter on `created`.
    when: datetime | None = None


class ListResult(NamedTuple):
    memories: list[ListItem]
    total: int


def list_memories(vault: CoreVault, request: ListRequest) -> ListResult:
    for mem_type in request.types:
        check_type(mem_type)
    statuses = _statuses(request)
    for status in statuses:
        if status not in STATUSES:
            raise UsageError(f"unknown status {status!r} (one of: {', '.join(STATUSES)})")
    if request.sort not in SORT_KEYS:
        raise UsageError(f"cannot sort by {request.sort!r} (one of: {', '.join(SORT_KEYS)})")
    if request.limit is not None and request.limit < 1:
        raise UsageError("--limit must be at least 1")
    vault.sync()
    filters = Filters(
        types=request.types,
        statuses=statuses,
        tags=request.tags,
        scopes=scope.visible(request.scopes),
        since=request.since.timestamp() if request.since else None,
        until=request.until.timestamp() if request.until else None,
    )
    found = vault.browse(filters, request.sort, not request.asc, request.limit)
    items = []
    for hit in found.hits:
        doc = hit.doc
        accessed, _ = vault.state.accessed(doc.path, doc.last_accessed, doc.access_count)
        items.append(
            ListItem(
                id=doc.id,
                type=doc.type,
                title=doc.title,
                path=doc.path,
                tags=list(doc.tags),
                status=doc.status,
                importance=doc.importance,
                created=from_epoch(doc.created),
                last_accessed=from_epoch(accessed),
                preview=doc.preview,
                when=from_epoch(doc.time) if doc.time != doc.created else None,
            )
        )
    return ListResult(items, found.total)


def _statuses(request: ListRequest) -> tuple[str, ...]:
    if request.statuses is not None:
        return request.statuses
    return STATUSES if request.archive else ("active",)


class StatsResult(NamedTuple):
    vault: str
    engine: str
    memories: int
    by_type: dict[str, int]
    by_status: dict[str, int]
    files: int
    unreadable: dict[str, str]
    index_bytes: int
    pinned: int
    oldest: datetime | None
    newest: datetime | None


def stats(vault: CoreVault) -> StatsResult:
    vault.sync()
    hits = vault.browse(Filters(statuses=()), "created", False, None).hits
    by_type = dict.fromkeys(MEMORY_TYPES, 0)
    by_status = dict.fromkeys(STATUSES, 0)
    pinned = 0
    for hit in hits:
        by_type[hit.doc.type] = by_type.get(hit.doc.type, 0) + 1
        by_status[hit.doc.status] = by_status.get(hit.doc.status, 0) + 1
        pinned += hit.doc.pinned
    state = vault.state
    return StatsResult(
        vault=str(vault.root),
        engine=vault.engine.name,
        memories=len(hits),
        by_type=by_type,
        by_status=by_status,
        files=len(state),
        unreadable=dict(sorted((vault.last_sync.errors if vault.last_sync else {}).items())),
        index_bytes=vault.engine.size_bytes(),
        pinned=pinned,
        oldest=from_epoch(hits[0].doc.created) if hits else None,
        newest=from_epoch(hits[-1].doc.created) if hits else None,
    )
