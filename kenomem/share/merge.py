"""The three-way merge of a memory file or a buffer day: pure functions on texts.

Git hands kenomem's merge driver (`driver.py`) three versions of a file: the common
ancestor (base), ours and theirs. What two machines do to the same memory is mostly
kenomem's own bookkeeping, which merges by rule, key by key:

- a key only one side changed takes that side's value;
- counters (`access_count`, `reinforced`, `usage_count`) add both sides' increments over
  the base (with no base, the larger count);
- `last_accessed` takes the later time;
- `status`: a change wins over `active`; two different changes: `superseded` over
  `archived` over `proposed` (so `superseded_by` follows the side that superseded);
- `tags`: both sides' additions and removals (a three-way union);
- `importance`: the higher value; `pinned`: pinned wins.

Any other key both sides set to different values (a title, a scope, a key of the human's
own), or a body both sides changed differently, is a real disagreement: ours stays as it
is, and theirs is written beside it as a new memory (a new id, `merge_of: <the id>`, the
tag `merge-review`) that supersedes nothing. Nothing is lost and no conflict marker ever
enters a memory file; `kenomem list --tag merge-review` shows what waits for a look.

The merged file is one side's text with only the lines of the keys that changed
rewritten (`files/fmedit.py`), so a human's bytes stay as they were where the sides
differ only in kenomem's keys. A side that cannot be parsed is never guessed at: ours is
kept and theirs becomes a review copy.

Buffer days merge as the union of their entries, in time order, each once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from kenomem.errors import FrontmatterError
from kenomem.files import fm, fmedit
from kenomem.files.paths import BUFFER_DIR

if TYPE_CHECKING:
    from kenomem.files.buffer import Entry

# `files/buffer.py` (and the secret patterns it imports) is loaded only for a buffer day:
# git starts the driver once per file, and a memory file does not need it.

REVIEW_TAG = "merge-review"
MERGE_OF = "merge_of"
COUNTERS = ("access_count", "reinforced", "usage_count")
LATEST = ("last_accessed",)
# A status change wins over "active"; between two changes, the first in this list.
STATUS_ORDER = ("superseded", "archived", "proposed", "active")
# Keys kenomem changes on its own (a touch, a supersede, a reinforcement): a side that
# changed only these holds nothing of a human's to keep byte for byte.
AUTO_KEYS = frozenset(
    (*COUNTERS, *LATEST, "status", "superseded_by", "importance", "pinned", "tags")
)
_MISSING: Any = object()


class Copy(NamedTuple):
    """A file to write beside the merged one: theirs, kept as a new memory for review."""

    folder: str  # vault-relative folder
    stem: str  # the file name without `.md`; the writer adds a suffix if it is taken
    text: str


class Merged(NamedTuple):
    text: str
    copies: tuple[Copy, ...] = ()
    notes: tuple[str, ...] = ()


def merge(
    path: str,
    base: str | None,
    ours: str,
    theirs: str,
    *,
    now: datetime,
    new_id: Callable[[], str],
) -> Merged:
    """The merge of the file at vault-relative `path` (a buffer day or a memory file).

    `base` is None when the file has no common ancestor (both sides added it)."""
    if path.startswith(f"{BUFFER_DIR}/"):
        return merge_day(path, base, ours, theirs, now=now, new_id=new_id)
    return merge_memory(path, base, ours, theirs, now=now, new_id=new_id)


# -- memory files ------------------------------------------------------------------------


class _Side(NamedTuple):
    text: str
    meta: dict[str, Any]
    body: str


def _read(path: str, text: str) -> _Side:
    parts = fm.split(text, path)
    meta = fm.parse(parts.fm_text, path=path, first_line=parts.first_line)
    body = text[parts.body_start :] if parts.has_frontmatter else text
    return _Side(text, meta, body)


def merge_memory(
    path: str,
    base: str | None,
    ours: str,
    theirs: str,
    *,
    now: datetime,
    new_id: Callable[[], str],
) -> Merged:
    # Two equal sides are still merged: both may have counted the same increments.
    if base is not None and theirs == base:
        return Merged(ours)
    if base is not None and ours == base:
        return Merged(theirs)
    try:
        o, t = _read(path, ours), _read(path, theirs)
        b = _read(path, base) if base is not None else None
    except FrontmatterError as exc:
        return _unparsed(path, ours, theirs, now=now, new_id=new_id, why=exc.message)
    b_meta = b.meta if b is not None else {}
    merged: dict[str, Any] = {}
    disputed: list[str] = []
    for key in dict.fromkeys([*o.meta, *t.meta]):
        value, agreed = _merge_key(
            key, b_meta.get(key, _MISSING), o.meta.get(key, _MISSING), t.meta.get(key, _MISSING)
        )
        merged[key] = value
        if not agreed:
            disputed.append(key)
    b_body = b.body if b is not None else None
    if o.body == t.body or t.body == b_body:
        body, body_disputed = o.body, False
    elif o.body == b_body:
        body, body_disputed = t.body, False
    else:
        body, body_disputed = o.body, True
    carrier = t if _human_changed(t, b) and not _human_changed(o, b) else o
    try:
        text = _apply(path, carrier, merged, body)
    except FrontmatterError as exc:  # a value the careful editor would not splice
        return _unparsed(path, ours, theirs, now=now, new_id=new_id, why=exc.message)
    if not (disputed or body_disputed):
        return Merged(text)
    why = "both sides changed the text" if body_disputed else f"both sides changed {disputed}"
    copy = _review_copy(path, theirs, t.meta, now=now, new_id=new_id)
    return Merged(text, (copy,), (f"{path}: {why}: theirs kept as a new memory for review",))


def _merge_key(key: str, b: Any, o: Any, t: Any) -> tuple[Any, bool]:
    """(merged value, whether the sides agree by a rule); `_MISSING` for no key."""
    if key in COUNTERS:  # both sides counting up the same number is two increments
        ints = [_count(v) for v in (b, o, t)]
        if ints[0] is not None and ints[1] is not None and ints[2] is not None:
            return max(0, ints[1] + ints[2] - ints[0]), True
    if o == t:
        return o, True
    if o == b:
        return t, True
    if t == b:
        return o, True
    if key in COUNTERS:
        ints = [_count(v) for v in (o, t)]
        return max(ints[0] or 0, ints[1] or 0), True  # no base to count from: the larger
    if key in LATEST:
        o_time, t_time = fm.parse_time(o), fm.parse_time(t)
        if o_time is not None and t_time is not None:
            return (o if o_time >= t_time else t), True
        if o_time is not None or t_time is not None:
            return (o if o_time is not None else t), True
    if key == "status":
        rank = {s: i for i, s in enumerate(STATUS_ORDER)}
        return min((o, t), key=lambda s: rank.get(str(s), len(rank))), True
    if key == "tags" and _is_list(o) and _is_list(t) and (b is _MISSING or _is_list(b)):
        return _union(b if b is not _MISSING else [], o, t), True
    if key == "importance":
        ints = [_count(v) for v in (o, t)]
        if ints[0] is not None and ints[1] is not None:
            return max(ints[0], ints[1]), True
    if key == "pinned":
        return True, True
    if key == "superseded_by":
        return o if o is not _MISSING else t, True  # follows the status rule's winner
    return o, False


def _count(value: Any) -> int | None:
    text = str(value).strip() if value is not _MISSING and value is not None else ""
    return int(text) if text.isascii() and text.isdigit() else None


def _is_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _union(base: list[str], ours: list[str], theirs: list[str]) -> list[str]:
    """Ours' order, then theirs' new items; an item either side removed is gone."""
    kept = [v for v in ours if v in theirs or v not in base]
    return kept + [v for v in theirs if v not in base and v not in kept]


def _human_changed(side: _Side, base: _Side | None) -> bool:
    if base is None:
        return True
    if side.body != base.body:
        return True
    keys = set(side.meta) | set(base.meta)
    return any(
        side.meta.get(k, _MISSING) != base.meta.get(k, _MISSING) for k in keys if k not in AUTO_KEYS
    )


def _apply(path: str, carrier: _Side, merged: dict[str, Any], body: str) -> str:
    """The carrier's text with the merged values set and the merged body; only the lines
    of the keys whose value differs are touched."""
    updates = {
        key: _emittable(key, value)
        for key, value in merged.items()
        if value is not _MISSING and not _same(carrier.meta.get(key, _MISSING), value)
    }
    text = carrier.text
    if body != carrier.body:
        text = text[: len(text) - len(carrier.body)] + body
    if updates:
        text = fmedit.set_keys(text, updates, path=path)
    return text


def _same(a: Any, b: Any) -> bool:
    if a == b:
        return True
    scalar = (str, int)
    return isinstance(a, scalar) and isinstance(b, scalar) and str(a) == str(b)


def _emittable(key: str, value: Any) -> Any:
    """The value as `fmedit` should write it: the scalars YAML would read as the same
    string (a count, a time, a boolean) written plainly, not quoted."""
    if not isinstance(value, str):
        return value
    if value.isascii() and value.isdigit() and str(int(value)) == value:
        return int(value)
    if value in ("true", "false"):
        return value == "true"
    when = fm.parse_time(value)
    if when is not None and fm.format_time(when) == value:
        return when
    return value


def _review_copy(
    path: str, text: str, meta: dict[str, Any], *, now: datetime, new_id: Callable[[], str]
) -> Copy:
    """Theirs as a new memory: a new id, flagged for review, superseding nothing."""
    tags = meta.get("tags")
    tags = [str(t) for t in tags] if isinstance(tags, list) else []
    updates: dict[str, Any] = {
        "id": new_id(),
        MERGE_OF: str(meta.get("id") or path),
        "tags": [*tags, REVIEW_TAG] if REVIEW_TAG not in tags else tags,
    }
    for key in ("supersedes", "superseded_by"):
        if meta.get(key):
            updates[key] = None
    for key in COUNTERS:
        if key in meta:
            updates[key] = 0
    try:
        copy = fmedit.set_keys(text, updates, path=path)
    except FrontmatterError:
        return _wrapped_copy(path, text, now=now, new_id=new_id)
    folder, _, name = path.rpartition("/")
    return Copy(folder, f"{name.removesuffix('.md')}-merged", copy)


def _wrapped_copy(path: str, text: str, *, now: datetime, new_id: Callable[[], str]) -> Copy:
    """A text that cannot be read as a memory, kept whole under a frontmatter of its own
    (in `semantic/`: a buffer day's folder holds only days)."""
    folder, _, name = path.rpartition("/")
    if not folder or folder.split("/")[0] == BUFFER_DIR:
        folder = "semantic"
    head = fm.emit(
        {
            "id": new_id(),
            "type": "semantic",
            "title": f"Merged copy of {path}",
            "tags": [REVIEW_TAG],
            "created": now,
            "source": "merge",
            MERGE_OF: path,
        }
    )
    return Copy(folder, f"{name.removesuffix('.md')}-merged", head + "\n" + text)


def _unparsed(
    path: str, ours: str, theirs: str, *, now: datetime, new_id: Callable[[], str], why: str
) -> Merged:
    copy = _wrapped_copy(path, theirs, now=now, new_id=new_id)
    note = f"{path}: not merged by rule ({why}): ours kept, theirs written for review"
    return Merged(ours, (copy,), (note,))


# -- buffer days -------------------------------------------------------------------------


def _key(entry: Entry) -> tuple[Any, ...]:
    return (entry.at, entry.who, entry.session, entry.channel, entry.text)


def merge_day(
    path: str,
    base: str | None,
    ours: str,
    theirs: str,
    *,
    now: datetime,
    new_id: Callable[[], str],
) -> Merged:
    """The union of both sides' entries in time order, each once (an entry one side
    removed, the other kept as it was, stays removed). `consolidated` takes the later
    time; the consolidated entries are the longest run, from the start, of entries one
    side had consolidated (an entry may be consolidated twice, never skipped)."""
    from collections import Counter

    from kenomem.files import buffer

    if ours == theirs or (base is not None and theirs == base):
        return Merged(ours)
    if base is not None and ours == base:
        return Merged(theirs)
    try:
        o, t = buffer.parse_day(path, ours), buffer.parse_day(path, theirs)
        b = buffer.parse_day(path, base) if base is not None else None
    except (FrontmatterError, ValueError) as exc:
        return _unparsed(path, ours, theirs, now=now, new_id=new_id, why=str(exc))
    counts = [Counter(_key(e) for e in day.entries) for day in (o, t)]
    b_counts = Counter(_key(e) for e in b.entries) if b is not None else Counter()
    done = {_key(e) for day in (o, t) for e in day.entries[: day.done]}
    first: dict[tuple[Any, ...], Entry] = {}
    for entry in [*o.entries, *t.entries]:
        first.setdefault(_key(entry), entry)
    entries: list[Entry] = []
    for key, entry in first.items():
        low, high = min(counts[0][key], counts[1][key]), max(counts[0][key], counts[1][key])
        entries += [entry] * (low if low < b_counts[key] else high)
    entries.sort(key=lambda e: e.at)  # stable: ours first at the same second
    merged_done = 0
    while merged_done < len(entries) and _key(entries[merged_done]) in done:
        merged_done += 1
    times = [d.consolidated for d in (o, t) if d.consolidated is not None]
    head: dict[str, Any] = {}
    if times and (max(times) != o.consolidated or merged_done != o.done):
        head = {"consolidated": max(times), buffer.DONE_KEY: merged_done}
    if not head and [_key(e) for e in entries] == [_key(e) for e in o.entries]:
        return Merged(ours)
    parts = fm.split(ours, path)
    body = ours[parts.body_start :]
    text = ours[: parts.body_start] + body[: _first_heading(body)]
    text += "".join(buffer.format_entry(e) for e in entries)
    if head and parts.has_frontmatter:
        try:
            text = fmedit.set_keys(text, head, path=path)
        except FrontmatterError as exc:
            return _unparsed(path, ours, theirs, now=now, new_id=new_id, why=exc.message)
    return Merged(text)


_HEADING = re.compile(r"^## \d\d:\d\d(?::\d\d)? ")  # as files/buffer.py reads one


def _first_heading(body: str) -> int:
    """Where the first entry heading of a day's body starts (its blank line before it
    included), or the end."""
    at = 0
    for line in body.split("\n"):
        if _HEADING.match(line.removesuffix("\r")):
            return max(0, at - 1) if body[max(0, at - 1) : at] == "\n" else at
        at += len(line) + 1
    return len(body.rstrip("\n")) + (1 if body.endswith("\n") else 0)
