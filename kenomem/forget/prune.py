"""`prune`: forgetting without losing (SPEC 6). Run from cron after `consolidate`.

`plan_prune` decides, from the index's records and the settings alone (a pure function),
what to retire; `apply_prune` carries it out. Nothing is deleted unless asked: a retired
memory is moved to `archive/` with `status: archived`, where `recall --archive` finds it
and `restore` brings it back.

The rules, each a setting under `[prune]`:
- a session's working memory older than `memory.working_stale_days` goes to the archive;
- old episodes of the same month, topic and scope are summarised into one memory of that
  scope listing them (`summarizes: [ids]`) once older than `summarize_after_days`; the
  originals go to the archive and recall finds the summary in their place. The topic is
  the first tag; untagged episodes are grouped by meaning with an embeddings provider,
  else by the rare words they share (`_by_words`), and what no group takes is "misc";
- an episode older than `archive_after_days` whose retention (below) is under
  `retention_threshold` is archived;
- a fact (semantic memory) not recalled, reinforced or edited for `fact_days` is archived
  (`faded`): its last use is the latest of its making, its last access (recall, context,
  a reinforcement), its `updated` key and its file's modification time;
- with `--superseded`, superseded memories are archived (the newest link of a chain is
  active, so it stays);
- past `max_active` active memories, the least valuable episodes and facts are archived
  first: those of lowest retention, the value recall weighs too (importance, recency of
  use, use); each says why (`detail`).
Never retired: pinned memories, memories of importance `keep_importance` or more,
memories reinforced `keep_reinforced` times or more, procedural memories, summaries, and
the foundation (not a memory file).

    retention = 0.4 * recency + 0.3 * importance + 0.15 * reinforcement + 0.15 * access

recency halves every `half_life_days` since the last access; importance is the 1-10
field mapped to 0-1; reinforcement and access grow with the log of their counts.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from collections import Counter, defaultdict
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, NamedTuple

from kenomem.config import PruneSettings, Settings
from kenomem.files import store
from kenomem.files.atomic import fsync_dir, write_bytes
from kenomem.files.beneath import private
from kenomem.files.memory import Memory
from kenomem.files.paths import ARCHIVE_DIR, read_private, remove_private, require_marker
from kenomem.files.plural import counted
from kenomem.forget.archive import archive_file, delete_file, finish_archiving
from kenomem.index import Doc, Filters, Progress
from kenomem.vault.core import CoreVault

DAY = 86400.0
PENDING = "prune-pending.json"  # under .kenomem/: the retirements of a prune under way


class Retire(NamedTuple):
    id: str
    path: str
    type: str
    title: str
    why: str  # stale-working | summarized | low-retention | faded | superseded | over-max
    retention: float
    detail: str = ""  # why, said for a person ("not used for 400 days; importance 5")


class Summary(NamedTuple):
    id: str
    title: str
    members: tuple[str, ...]  # ids, oldest first
    memory: Memory


class PrunePlan(NamedTuple):
    retire: list[Retire]
    summaries: list[Summary]
    active: int  # active memories before
    kept: int  # active memories after
    over_max: int = 0  # still over prune.max_active: all that is left is kept by a rule


class PruneRequest(NamedTuple):
    dry_run: bool = False  # plan, change nothing
    delete: bool = False  # delete what is retired instead of archiving it
    superseded: bool = False  # also archive superseded memories (the newest link stays)
    now: datetime | None = None  # the moment to prune as of (ages count to it); None: now


class PruneResult(NamedTuple):
    plan: PrunePlan
    dry_run: bool
    deleted: bool
    archived: int
    summarized: int
    resumed: int  # retired for an interrupted prune (a dry run: still to retire)
    trash_emptied: int  # trash folders of old resets removed (see reset.trash_days)
    seconds: float


def retention(doc: Doc, access: tuple[float, int], now: float, settings: PruneSettings) -> float:
    last, count = access
    age = max(0.0, now - max(last, doc.created)) / DAY
    recency = 0.5 ** (age / settings.half_life_days) if settings.half_life_days > 0 else 1.0
    importance = (doc.importance - 1) / 9
    reinforcement = min(1.0, math.log2(1 + doc.reinforced) / 3)
    accessed = min(1.0, math.log2(1 + max(0, count)) / 4)
    return round(0.4 * recency + 0.3 * importance + 0.15 * reinforcement + 0.15 * accessed, 4)


def protected(doc: Doc, settings: PruneSettings) -> bool:
    return (
        doc.pinned
        or doc.importance >= settings.keep_importance
        or doc.reinforced >= settings.keep_reinforced
    )


def last_use(doc: Doc, access: tuple[float, int], edited: float = 0.0) -> float:
    """When a memory was last made, recalled, reinforced or edited (epoch seconds): its
    `created`, its last access (recall's overlay or the file's), its `updated` key, and
    `edited`, its file's modification time when known."""
    return max(doc.created, doc.last_accessed, access[0], doc.updated, edited)


def fading(
    docs: list[Doc],
    access: Mapping[str, tuple[float, int]],
    settings: PruneSettings,
    now: datetime,
    edited: Mapping[str, float] | None = None,
) -> list[Doc]:
    """The active facts not used for `fact_days` and kept by no rule (a pinned, important
    or reinforced fact, a summary, are kept). `edited` brings what the files' times say;
    without it, the index's keys alone."""
    if settings.fact_days <= 0:
        return []
    edited = edited or {}
    cutoff = now.timestamp() - settings.fact_days * DAY
    return [
        d
        for d in docs
        if d.type == "semantic"
        and d.status == "active"
        and not d.path.startswith(ARCHIVE_DIR)
        and not protected(d, settings)
        and "summary" not in d.tags
        and last_use(d, access.get(d.id, (d.last_accessed, d.access_count)), edited.get(d.id, 0.0))
        < cutoff
    ]


def _days(seconds: float) -> str:
    return counted(max(0, int(seconds // DAY)), "day")


def plan_prune(
    docs: list[Doc],
    access: dict[str, tuple[float, int]],
    settings: Settings,
    now: datetime,
    *,
    superseded: bool = False,
    vectors: Mapping[str, Any] | None = None,
    edited: Mapping[str, float] | None = None,
) -> PrunePlan:
    """What to retire and what to summarise (pure: the docs come from the index, the
    vectors, when recall by meaning is on, from the vector store, and `edited`, the
    modification times of the facts that may fade, from their files)."""
    rules = settings.prune
    now_ts = now.timestamp()
    active = [d for d in docs if d.status == "active" and not d.path.startswith(ARCHIVE_DIR)]
    score = {
        d.id: retention(d, access.get(d.id, (d.last_accessed, d.access_count)), now_ts, rules)
        for d in docs
    }
    retire: dict[str, Retire] = {}

    def out(doc: Doc, why: str, detail: str = "") -> None:
        entry = Retire(doc.id, doc.path, doc.type, doc.title, why, score[doc.id], detail)
        retire.setdefault(doc.id, entry)

    def used(doc: Doc) -> float:
        seen = access.get(doc.id, (doc.last_accessed, doc.access_count))
        return last_use(doc, seen, (edited or {}).get(doc.id, 0.0))

    stale = settings.memory.working_stale_days * DAY
    for doc in active:
        if doc.type == "working" and now_ts - doc.updated > stale and not doc.pinned:
            out(doc, "stale-working", f"not updated for {_days(now_ts - doc.updated)}")
    last_access = {d.id: max(access.get(d.id, (d.last_accessed, 0))[0], d.created) for d in active}
    taken = {d.id for d in docs if d.status != "active" or d.path.startswith(ARCHIVE_DIR)}
    summaries = _summaries(active, last_access, taken, rules, now, retire, vectors or {})
    by_id = {d.id: d for d in active}
    for summary in summaries:
        for member in summary.members:
            out(by_id[member], "summarized", f"in {summary.title}")
    for doc in active:
        old = now_ts - doc.time > rules.archive_after_days * DAY
        if (
            doc.type == "episodic"
            and old
            and not protected(doc, rules)
            and score[doc.id] < rules.retention_threshold
        ):
            said = f"retention {score[doc.id]:.2f} under {rules.retention_threshold:g}"
            out(doc, "low-retention", f"{said}, {_days(now_ts - doc.time)} old")
    for doc in fading(active, access, rules, now, edited):
        idle = _days(now_ts - used(doc))
        out(doc, "faded", f"not recalled, reinforced or edited for {idle}")
    if superseded:
        for doc in docs:
            if doc.status == "superseded" and not doc.path.startswith(ARCHIVE_DIR):
                out(doc, "superseded", "a newer memory replaced it")
    remaining = [d for d in active if d.id not in retire]
    over = len(remaining) + len(summaries) - rules.max_active
    if over > 0:
        # The least valuable first: the lowest retention (importance, recency of use, use
        # and reinforcement), the oldest of equal retention. Summaries stand for what is
        # already archived: the bound does not take them.
        candidates = sorted(
            (
                d
                for d in remaining
                if d.type in ("episodic", "semantic")
                and not protected(d, rules)
                and "summary" not in d.tags
            ),
            key=lambda d: (score[d.id], d.time, d.id),
        )
        for doc in candidates[:over]:
            count = access.get(doc.id, (doc.last_accessed, doc.access_count))[1]
            out(
                doc,
                "over-max",
                f"{rules.max_active} active at most; among the least valuable: retention "
                f"{score[doc.id]:.2f} (importance {doc.importance}, last used "
                f"{_days(now_ts - used(doc))} ago, recalled {counted(max(0, count), 'time')})",
            )
        over -= min(over, len(candidates))
    kept = len(active) - sum(1 for r in retire.values() if r.why != "superseded") + len(summaries)
    ordered = sorted(retire.values(), key=lambda r: r.path)
    return PrunePlan(ordered, summaries, len(active), kept, max(0, over))


def _summaries(
    active: list[Doc],
    last_access: dict[str, float],
    taken: set[str],
    rules: PruneSettings,
    now: datetime,
    retire: dict[str, Retire],
    vectors: Mapping[str, Any],
) -> list[Summary]:
    """Groups of old episodes (same month, same first tag, same scope: a chat's episodes
    are summarised apart, scoped to it, so no summary shows one chat another's words)
    worth one summary each. The untagged ones of a month are grouped by what they are
    about: by meaning first, with their vectors (`_by_meaning`), then by the rare words
    they share (`_by_words`); what no group takes stays together as "misc".

    An episode recalled or restored within `summarize_after_days` is left as it is. A
    summary id held by a memory no longer active (a summary forgotten, say) is not
    reused: the group gets a new one, so its originals never leave recall without one.
    """
    cutoff = now.timestamp() - rules.summarize_after_days * DAY
    groups: dict[tuple[str, str, str], list[Doc]] = defaultdict(list)  # month, topic, scope
    for doc in active:
        if (
            doc.type != "episodic"
            or doc.time > cutoff
            or last_access[doc.id] > cutoff
            or doc.id in retire
            or "summary" in doc.tags
            or protected(doc, rules)
        ):
            continue
        month = datetime.fromtimestamp(doc.time, UTC).strftime("%Y-%m")
        groups[(month, doc.tags[0] if doc.tags else "misc", doc.scope)].append(doc)
    tags = {topic for _, topic, _ in groups if topic != "misc"}
    for (month, topic, scope), members in list(groups.items()):
        if topic != "misc":
            continue
        rest = members
        del groups[(month, topic, scope)]
        if vectors:
            clusters, rest = _by_meaning(members, vectors, rules)
            for cluster in clusters:
                groups[(month, _topic_of(cluster, vectors), scope)].extend(cluster)
        named, rest = _by_words(rest, rules)
        for name, cluster in named:
            groups[(month, name, scope)].extend(cluster)
        if rest:
            groups[(month, topic, scope)].extend(rest)
    summaries = []
    for (month, topic, scope), members in sorted(groups.items()):
        if len(members) < rules.summarize_min_group:
            continue
        members.sort(key=lambda d: (d.time, d.id))
        for part in _split(members, max(rules.summarize_max_group, rules.summarize_min_group)):
            tag = topic if topic in tags else ""  # a group found by meaning has no tag
            whole = part == members
            summaries.append(_summary(month, topic, tag, part, now, taken, whole, scope))
    return summaries


def _by_meaning(
    members: list[Doc], vectors: Mapping[str, Any], rules: PruneSettings
) -> tuple[list[list[Doc]], list[Doc]]:
    """The episodes grouped by what they are about: each joins the first group whose
    centre is near enough (past `cluster_similarity` of the way from the month's median
    cosine to 1), else starts one. Groups of at least `summarize_min_group` are kept;
    the others' episodes, and those without a vector, are the rest."""
    import numpy as np

    have = [d for d in members if d.id in vectors]
    rest = [d for d in members if d.id not in vectors]
    if len(have) < 2 * rules.summarize_min_group:
        return [], members
    matrix = np.stack([np.asarray(vectors[d.id], dtype=np.float32) for d in have])
    pairs = matrix @ matrix.T
    typical = float(np.median(pairs[np.triu_indices(len(have), 1)]))
    near = typical + (1.0 - typical) * rules.cluster_similarity
    groups: list[list[int]] = []
    centres: list[Any] = []
    for i in range(len(have)):
        best, where = -2.0, -1
        for g, centre in enumerate(centres):
            score = float(matrix[i] @ centre) / max(float(np.linalg.norm(centre)), 1e-9)
            if score > best:
                best, where = score, g
        if where >= 0 and best >= near:
            groups[where].append(i)
            centres[where] = centres[where] + matrix[i]
        else:
            groups.append([i])
            centres.append(matrix[i].copy())
    clusters = []
    for group in groups:
        if len(group) >= rules.summarize_min_group:
            clusters.append([have[i] for i in group])
        else:
            rest.extend(have[i] for i in group)
    return clusters, rest


# Words too common to say what an episode is about (with those of under three letters).
_COMMON = frozenset(
    """about after again all also and any are back been before being both but came can
    come could did does doing done down each even ever every for from get gets getting got
    had has have having her here hers him his how into its just last like made make many
    more most much must new next not now off once one only other our out over own really
    said same saw say see she should some still such than that the their them then there
    these they thing things this those through today told too took two under until very
    want was way week went were what when where which while who why will with would yes
    yet you your day days night morning evening afternoon tonight tomorrow yesterday""".split()
)
_TERM = re.compile(r"[^\W\d_][\w'’-]*")
# An episode joins the group whose rare words weigh this share of its own, or more.
WORDS_NEAR = 1 / 3


def _terms(doc: Doc, surfaces: dict[str, str]) -> frozenset[str]:
    """An episode's words, lower-cased, a plural's final s dropped, the common ones left
    out; `surfaces` learns how each was first written."""
    found = set()
    for m in _TERM.finditer(f"{doc.title} {doc.body or doc.preview}"):
        word = m.group().lower().rstrip("'’-").removesuffix("'s").removesuffix("’s")
        if len(word) < 3 or word in _COMMON:
            continue
        term = word[:-1] if len(word) > 4 and word.endswith("s") and word[-2] != "s" else word
        surfaces.setdefault(term, word)
        found.add(term)
    return frozenset(found)


def _by_words(
    members: list[Doc], rules: PruneSettings
) -> tuple[list[tuple[str, list[Doc]]], list[Doc]]:
    """The episodes grouped by the rare words they share: a word is rare when two of
    them or more hold it, and at most half (more, and it says nothing of a topic). In
    time order, each episode joins the group whose rare words weigh most against its own
    (each word by its inverse frequency and the share of the group holding it), if that
    is WORDS_NEAR or more, else starts one. Groups of at least `summarize_min_group` are
    named by their two most held words; the others' episodes, and those without a rare
    word, are the rest."""
    if len(members) < 2 * rules.summarize_min_group:
        return [], members  # not enough for two groups: one as it is
    surfaces: dict[str, str] = {}
    terms = {d.id: _terms(d, surfaces) for d in members}
    n = len(members)
    held = Counter(t for ts in terms.values() for t in ts)
    idf = {t: math.log(n / k) for t, k in held.items() if 2 <= k <= max(2, n // 2)}
    groups: list[tuple[list[Doc], Counter[str]]] = []
    rest: list[Doc] = []
    for doc in sorted(members, key=lambda d: (d.time, d.id)):
        mine = [t for t in sorted(terms[doc.id]) if t in idf]
        weight = sum(idf[t] for t in mine)
        if not mine or weight <= 0:
            rest.append(doc)
            continue
        best, where = 0.0, -1
        for g, (docs, counts) in enumerate(groups):
            near = sum(idf[t] * counts[t] for t in mine) / (len(docs) * weight)
            if near > best:
                best, where = near, g
        if where >= 0 and best >= WORDS_NEAR:
            groups[where][0].append(doc)
            groups[where][1].update(mine)
        else:
            groups.append(([doc], Counter(mine)))
    named = []
    for docs, counts in groups:
        if len(docs) < rules.summarize_min_group:
            rest.extend(docs)
            continue
        top = sorted(counts, key=lambda t: (-counts[t], -idf[t], t))[:2]
        named.append((" and ".join(surfaces[t] for t in top), docs))
    return named, rest


def _topic_of(cluster: list[Doc], vectors: Mapping[str, Any]) -> str:
    """A name for a group found by meaning: the first words of the title of the episode
    nearest its centre."""
    import numpy as np

    matrix = np.stack([np.asarray(vectors[d.id], dtype=np.float32) for d in cluster])
    centre = matrix.sum(axis=0)
    middle = cluster[int(np.argmax(matrix @ centre))]
    words = middle.title.split()
    return " ".join(words[:6]) + ("…" if len(words) > 6 else "")


def _split(members: list[Doc], most: int) -> list[list[Doc]]:
    """A busy month in runs of consecutive episodes, as even as can be, none over `most`:
    a summary is read whole, so it stays short."""
    parts = -(-len(members) // most)
    size, extra = divmod(len(members), parts)
    out, start = [], 0
    for n in range(parts):
        end = start + size + (1 if n < extra else 0)
        out.append(members[start:end])
        start = end
    return out


def _summary(
    month: str,
    topic: str,
    tag: str,
    members: list[Doc],
    now: datetime,
    taken: set[str],
    whole: bool,
    scope: str = "global",
) -> Summary:
    ids = tuple(d.id for d in members)
    first = datetime.fromtimestamp(members[0].time, UTC)
    for salt in range(1000):
        key = "|".join(ids) + (f"#{salt}" if salt else "")
        digest = hashlib.blake2b(key.encode(), digest_size=3).hexdigest()
        if f"mem_{first:%Y%m%d}_000000_{digest}" not in taken:
            break
    last = datetime.fromtimestamp(members[-1].time, UTC)
    label = datetime.strptime(month, "%Y-%m").strftime("%B %Y")
    if not whole:  # one of several runs of the month: say which days
        label = (
            f"{first.day}-{last.day} {label}" if first.day != last.day else f"{first.day} {label}"
        )
    lines = [
        f"{counted(len(members), 'episode')} about {topic} in {label}, summarised; the originals "
        "are in the archive (recall --archive).",
        "",
    ]
    for doc in members:
        when = datetime.fromtimestamp(doc.time, UTC).strftime("%d %b")
        lines.append(f"- {when}: {_gist(doc)}")
    mem = Memory(
        id=f"mem_{first:%Y%m%d}_000000_{digest}",
        type="episodic",
        title=f"Summary: {topic}, {label}" + (f" (chat {scope})" if scope != "global" else ""),
        body="\n".join(lines) + "\n",
        path="",
        tags=("summary", tag) if tag else ("summary",),
        scope=scope,
        # Written now and about then: its recency starts afresh, so the summary is not
        # archived by the next prune for being as old as what it replaces.
        created=now.replace(microsecond=0),
        last_accessed=now.replace(microsecond=0),
        importance=max(d.importance for d in members),
        source="prune",
        when=last,
        extra={"summarizes": list(ids)},
    )
    return Summary(mem.id, mem.title, ids, mem)


def _gist(doc: Doc) -> str:
    """The title and the opening of the text, without saying the same words twice (a
    title is often the text's first words)."""
    title, text = doc.title.strip(), doc.preview.strip()
    if not text or text == title:
        return title
    if text.startswith(title.rstrip("….").rstrip()):
        return text
    return f"{title}. {text}"


def apply_prune(
    vault: CoreVault,
    plan: PrunePlan,
    *,
    delete: bool = False,
    now: datetime | None = None,
    progress: Progress | None = None,
) -> tuple[int, int]:
    """(archived or deleted, summaries written).

    Summaries first (their ids follow from their members, so a rerun finds them written),
    then the list of what to retire is saved under `.kenomem/`, then the moves, then one
    index batch. A kill at any point leaves each memory where it was or in the archive,
    and the next prune finishes the saved list before it plans anew.
    """
    moment = (now or datetime.now(UTC)).replace(microsecond=0)
    with vault.lock:
        summarized = _write_summaries(vault, plan.summaries)
        retire = [[r.id, r.why] for r in plan.retire]
        entry = {"delete": delete, "at": moment.isoformat(), "retire": retire}
        with private(vault.state_dir) as state:  # never written through a link
            data = json.dumps(entry).encode()
            write_bytes(state.path / PENDING, data, fsync=vault.settings.write.fsync, folder=state)
        retired = _retire(vault, retire, delete=delete, moment=moment, progress=progress)
        remove_private(vault.state_dir, PENDING)
    return retired, summarized


def interrupted(vault: CoreVault) -> dict[str, Any] | None:
    """What a prune that was killed had still to do, if one was."""
    try:
        entry = json.loads(read_private(vault.state_dir, PENDING))
        datetime.fromisoformat(entry["at"])
        return {"delete": bool(entry["delete"]), "at": entry["at"], "retire": entry["retire"]}
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError):
        return None  # not ours to read (edited by hand): planning anew covers it


def finish_interrupted(vault: CoreVault) -> int:
    """Carry out the rest of a prune that was killed; how many memories it retired."""
    with vault.lock:
        entry = interrupted(vault)
        if entry is not None:
            moment = datetime.fromisoformat(entry["at"])
            retired = _retire(vault, entry["retire"], delete=entry["delete"], moment=moment)
        remove_private(vault.state_dir, PENDING)
    return retired if entry is not None else 0


def _write_summaries(vault: CoreVault, summaries: list[Summary]) -> int:
    existing = set(vault.engine.lookup([s.id for s in summaries]))
    written = []
    for summary in summaries:
        if summary.id not in existing:
            done = store.create(vault.root, summary.memory, fsync=vault.settings.write.fsync)
            written.append((summary.memory, done))
    vault.index_new_many(written)
    return len(written)


def _retire(
    vault: CoreVault,
    retire: list[list[str]],
    *,
    delete: bool,
    moment: datetime,
    progress: Progress | None = None,
) -> int:
    ids = vault.ids()
    moved: list[str] = []
    count = 0
    for n, (mem_id, why) in enumerate(retire, 1):
        path = ids.get(mem_id)
        note = {"archived_at": moment, "archived_why": why}
        if path is None:
            continue  # gone already
        if not delete and path.startswith(ARCHIVE_DIR + "/"):
            # Moved by an earlier run, killed perhaps before it wrote the status.
            if finish_archiving(vault, mem_id, path, note):
                moved.append(path)
            continue
        if delete:
            delete_file(vault, path)
            moved.append(path)
        else:
            moved += [path, archive_file(vault, mem_id, path, note)]
        count += 1
        if progress is not None:
            progress(n)
    if vault.settings.write.fsync:
        for folder in sorted({(vault.root / p).parent for p in moved}):
            fsync_dir(folder)
    vault.refresh(moved)
    return count


def _edited(vault: CoreVault, docs: list[Doc]) -> dict[str, float]:
    """When each file was last modified (an edit by hand writes no key): asked of the
    few facts that may fade only; a file that cannot be read is left to the keys."""
    times = {}
    for doc in docs:
        try:
            times[doc.id] = os.lstat(vault.root / doc.path).st_mtime
        except (OSError, ValueError):
            continue
    return times


def _episode_vectors(vault: CoreVault, docs: list[Doc]) -> dict[str, Any]:
    """The vectors the store has of the untagged episodes (none without a provider)."""
    meaning = vault.meaning
    if meaning is None:
        return {}
    wanted = [d.id for d in docs if d.type == "episodic" and not d.tags]
    try:
        return meaning.store().vectors(wanted)
    except (OSError, ValueError):
        return {}


def prune(
    vault: CoreVault,
    request: PruneRequest,
    *,
    now: datetime | None = None,
    progress: Progress | None = None,
) -> PruneResult:
    require_marker(vault.root, "prune")  # it moves and removes files: only in a vault
    dry_run, delete = request.dry_run, request.delete
    started = time.perf_counter()
    now = now or request.now or datetime.now(UTC)
    vault.sync()
    if dry_run:
        entry = interrupted(vault)
        resumed = len(entry["retire"]) if entry else 0
    else:
        resumed = finish_interrupted(vault)
    docs = vault.browse(Filters(statuses=()), "created", False, None).hits
    state = vault.state
    access = {
        h.doc.id: state.accessed(h.doc.path, h.doc.last_accessed, h.doc.access_count) for h in docs
    }
    plan = plan_prune(
        [h.doc for h in docs],
        access,
        vault.settings,
        now,
        superseded=request.superseded,
        vectors=_episode_vectors(vault, [h.doc for h in docs]),
        edited=_edited(vault, fading([h.doc for h in docs], access, vault.settings.prune, now)),
    )
    archived = summarized = emptied = 0
    if not dry_run:
        from kenomem.forget.reset import empty_old_trash

        archived, summarized = apply_prune(vault, plan, delete=delete, now=now, progress=progress)
        emptied = empty_old_trash(vault)
    seconds = round(time.perf_counter() - started, 3)
    return PruneResult(plan, dry_run, delete, archived, summarized, resumed, emptied, seconds)
