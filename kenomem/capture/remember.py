"""`remember`: store a memory, or strengthen the one that already says the same thing.

- the type is classified from the text when not given (see `classify`);
- control characters and likely secrets, in any field, are refused before anything is
  written (`textcheck.check_fields`);
- a text whose stemmed words mostly match an active memory of the same type reinforces it
  (`reinforced += 1`) instead of writing a duplicate; with an embeddings provider, so does
  one that says the same in other words, and the memories it may contradict are named
  (`likeness.judge`), with the hint to supersede them;
- `supersedes` keeps the old memory with `status: superseded` and links both ways;
- a text that gives a new value for what an active fact of its scope states ("Deploys go
  out on Wednesdays" against "Deploys go out on Tuesdays"; `embed.conflict`, found by
  `vault.conflicts`) supersedes that fact when the words leave no doubt, unless
  `supersede` is false (`--no-supersede`). When they do not (or only the meaning says
  so), the fact is named with the command that supersedes it and recorded on the new
  memory (`contradicts: [id]`), so that a context never gives both
  (`vault.conflicts.keep_newer`);
- words that ask for the memory to be kept ("remember this", "never forget", a standing
  rule: "Always run the tests before pushing"; `pin.pin_phrase`) pin it, and raise an
  importance not given to `pin.PINNED_IMPORTANCE`;
- an episode happened `when` it is told (`--when`), else on the day its text states
  ("met Priya on 2026-02-10", "yesterday": `files.dates.stated_moment`), else now; it is
  filed under the month of that day (`episodic/YYYY-MM`);
- a `trigger` ("n8n + 401") makes the memory an active procedural pattern, which applies
  to every message that holds each of its terms (`agents/triggers.py`), as the patterns
  the sleep cycle proposes do once approved.
"""

import shlex
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, NamedTuple

from kenomem.capture.classify import classify
from kenomem.capture.pin import PINNED_IMPORTANCE, pin_phrase
from kenomem.embed.conflict import apart, conflict
from kenomem.embed.likeness import judge
from kenomem.errors import InvalidInput, UsageError
from kenomem.files import store
from kenomem.files.dates import stated_moment
from kenomem.files.memory import (
    MAX_TEXT,
    Memory,
    check_type,
    meaning_key,
    meaning_text,
    new_id,
    pattern_title,
    text_digest,
    title_from_text,
)
from kenomem.files.paths import check_label, check_tag
from kenomem.files.textcheck import check_fields
from kenomem.index import Doc, Filters
from kenomem.index.scope import owner, spellings
from kenomem.vault.conflicts import CONTRADICTS, Conflicting, conflicting, judged
from kenomem.vault.core import CoreVault


class RememberRequest(NamedTuple):
    text: str
    type: str | None = None
    tags: tuple[str, ...] = ()
    importance: int | None = None
    scope: str | None = None
    session: str | None = None
    title: str | None = None
    pinned: bool = False
    supersedes: str | None = None
    source: str = "cli"
    now: datetime | None = None
    when: datetime | None = None  # when an episode happened (default: the day its text states)
    trigger: str | None = None  # "word + word": a procedural pattern, active
    supersede: bool = True  # a fact it surely gives a new value for (false: kept active)


class Near(NamedTuple):
    """An active memory the new one may contradict: near in meaning (`cosine`), or
    giving a value the words could not tell apart from an addition (`why`), or one it
    was sure of when `--no-supersede` kept it. `command` supersedes it."""

    id: str
    title: str
    cosine: float | None = None
    why: str = ""
    command: str = ""


class Replaced(NamedTuple):
    """An active memory the new one superseded."""

    id: str
    title: str
    why: str = ""  # the two values ("'Tuesdays' then 'Wednesdays'"); "" when asked


class RememberResult(NamedTuple):
    id: str
    path: str
    type: str
    action: str  # created | reinforced | superseded | updated
    title: str
    classified: bool  # the type was chosen from the text
    reinforced: int = 0
    supersedes: str | None = None
    may_contradict: list[Near] = []  # noqa: RUF012 - read-only
    when: datetime | None = None  # an episode's: when it happened
    trigger: str | None = None  # a pattern's, as written
    superseded: list[Replaced] = []  # noqa: RUF012 - read-only
    pinned: bool = False
    pinned_by: str | None = None  # the words that asked for it to be kept


def remember(vault: CoreVault, request: RememberRequest) -> RememberResult:
    """Store the memory (or reinforce the one that says it already). With an embeddings
    provider, the text is embedded first, outside the lock (a slow provider holds up no
    other writer), and the vectors still wanted are made after the write. A provider that
    fails (down, past its deadline, answering garbage) costs one warning and the
    comparison by meaning, and is not asked again: the memory is written, and its vector
    made later (by the next recall, `watch` or `reindex`)."""
    text = request.text.strip()
    _validate(request, text)  # before anything is sent to a provider
    if request.trigger is not None:
        request = request._replace(trigger=check_trigger(request.trigger, vault.engine.analyze))
    phrase = _pinned_by(request, text)
    if phrase is not None:
        importance = max(vault.settings.memory.default_importance, PINNED_IMPORTANCE)
        request = request._replace(pinned=True, importance=request.importance or importance)
    embedded, failed = _embedded(vault, request, text)
    result = _remember(vault, request, text, embedded)
    if not failed:
        vault.embed_wanted(EMBED_AFTER_WRITE)
    if result.type == "working":
        return result
    return result._replace(pinned=request.pinned or result.pinned, pinned_by=phrase)


def _pinned_by(request: RememberRequest, text: str) -> str | None:
    """The words that ask for the memory to be kept, when they pin it: not a working
    memory (a session's scratchpad), nor a pattern with a trigger (pinned, it would
    apply to every message)."""
    if request.type == "working" or request.trigger is not None:
        return None
    return pin_phrase(text)


# Vectors a remember makes after its write: its own, and a few left wanting by others.
EMBED_AFTER_WRITE = 8
# Memories nearest in meaning that a new one is compared with.
NEAR_CANDIDATES = 10


class Embedded(NamedTuple):
    text: str  # what was embedded (memory.meaning_text)
    vector: Any
    near: list[tuple[str, float]]  # (id, cosine) of the nearest memories


def _embedded(
    vault: CoreVault, request: RememberRequest, text: str
) -> tuple[Embedded | None, bool]:
    """The text embedded and its nearest memories (None when it is not compared by
    meaning), and whether the provider failed (then with a warning)."""
    meaning = vault.meaning
    if meaning is None or request.supersedes or request.type == "working":
        return None, False
    from kenomem.embed.provider import EmbeddingsUnavailable

    title = (request.title or title_from_text(text)).strip() or "memory"
    said = meaning_text(title, text)
    try:
        vector = meaning.embedder.documents([said])[0]
        near, _typical, _ = meaning.store().nearest(vector, NEAR_CANDIDATES)
    except EmbeddingsUnavailable as exc:
        vault.warnings.append(
            f"not compared by meaning with what is known ({exc}); its vector is made later"
        )
        return None, True
    return Embedded(said, vector, near), False


def _remember(
    vault: CoreVault, request: RememberRequest, text: str, embedded: Embedded | None
) -> RememberResult:
    now = (request.now or datetime.now(UTC)).replace(microsecond=0)
    mem_type = _type_of(request, text)
    with vault.lock:
        # The search for a memory that already says this runs while the files are
        # scanned, and again only if the scan found changes.
        pending = vault.begin_sync()
        check = not request.supersedes and mem_type != "working"
        home = _scope_of(request, mem_type)

        def same_one(path: str) -> bool:
            return _same_one(vault.load(path), request, text, now)

        same = _already_known(vault, text, mem_type, home, same_one) if check else None
        if pending.finish().stale and check:
            same = _already_known(vault, text, mem_type, home, same_one)
        if request.supersedes:
            return _supersede(vault, request, text, mem_type, now)
        if mem_type == "working":
            return _working(vault, request, text, now)
        contradicted: list[Near] = []
        if same is None and embedded is not None:
            same, contradicted = _by_meaning(vault, embedded, mem_type, home, same_one)
        if same is not None:
            return _reinforce(vault, same, request, now)
        found = _conflicts(vault, request, text, mem_type, home, contradicted)
        sure = [c for c in found if c.level == "sure"]
        if sure and request.supersede:
            replaced = sure[0]
            result = _supersede(
                vault, request._replace(supersedes=replaced.id), text, mem_type, now
            )
            rest = [c for c in found if c.id != replaced.id]
            return result._replace(
                superseded=[Replaced(replaced.id, replaced.title, replaced.why)],
                may_contradict=_named(request, text, rest, contradicted),
            )
        mem = _new_memory(vault, request, text, mem_type, now)
        if found and request.supersede:
            mem = mem._replace(extra={**mem.extra, CONTRADICTS: [c.id for c in found]})
        written = store.create(vault.root, mem, fsync=vault.settings.write.fsync)
        vault.index_new(mem, written.path, (written.size, written.mtime_ns), written.digest)
        if embedded is not None and vault.meaning is not None:
            key = meaning_key(mem.title, mem.body)
            if text_digest(embedded.text) == key:  # its vector, made already
                vault.keep_vectors([(mem.id, key, embedded.vector)])
        return RememberResult(
            mem.id,
            written.path,
            mem_type,
            "created",
            mem.title,
            _classified(request),
            may_contradict=_named(request, text, found, contradicted),
            when=mem.when,
            trigger=_trigger_of(mem),
            pinned=mem.pinned,
        )


def _conflicts(
    vault: CoreVault,
    request: RememberRequest,
    text: str,
    mem_type: str,
    home: str,
    by_meaning: list[Near],
) -> list[Conflicting]:
    """The active facts the text gives a new value for (`vault.conflicts`), sure ones
    first, and the memories meaning alone says it may contradict (`likeness.judge`)
    unless the words set them apart (`conflict.apart`), judged by words too; a sure one
    is always a memory of the same scope. A pattern with a trigger, and a
    working memory, replace no fact."""
    if request.trigger is not None:
        return []
    # A preference is compared with the preferences too ("Always answer in French").
    types = ("semantic", "procedural") if mem_type == "procedural" else ("semantic",)
    found = conflicting(vault, text, home, types=types)
    known = {c.id for c in found}
    docs = vault.lookup([n.id for n in by_meaning if n.id not in known])
    for near in by_meaning:
        doc = docs.get(near.id)
        if doc is None or near.id in known:
            continue
        body = store.read_body(vault.root, doc.path)
        if apart((body or "").strip() or doc.title, text) is not None:
            continue  # near in meaning, but the words say it adds ("My brother ...")
        verdict = judged(vault, doc, text)
        if verdict is None or doc.type not in types or not _same_scope(doc, home):
            verdict = Conflicting(doc.id, doc.path, doc.title, "unsure", "near in meaning")
        found.append(verdict)
        known.add(near.id)
    return sorted(found, key=lambda c: c.level != "sure")[:MAX_CONTRADICTED]


def _named(
    request: RememberRequest, text: str, found: list[Conflicting], by_meaning: list[Near]
) -> list[Near]:
    """The memories the new one may contradict, as the result names them, each with the
    command that supersedes it (`remember` the same text again with `--supersedes`: the
    memory just written takes the link, no second one is made)."""
    cosines = {n.id: n.cosine for n in by_meaning}
    scope = f" --scope {shlex.quote(request.scope)}" if request.scope else ""
    return [
        Near(
            c.id,
            c.title,
            cosines.get(c.id),
            c.why,
            f"kenomem remember {shlex.quote(text)} --supersedes {c.id}{scope}",
        )
        for c in found
    ]


def _type_of(request: RememberRequest, text: str) -> str:
    """The type given; else procedural for a trigger, episodic for a `when`; else the
    text's (`classify`)."""
    if request.type is not None:
        return request.type
    if request.trigger is not None:
        return "procedural"
    if request.when is not None:
        return "episodic"
    return classify(text)


def _same_one(existing: Memory, request: RememberRequest, text: str, now: datetime) -> bool:
    """Whether a memory that says the same is the same memory: the same response to
    another trigger is another pattern, and the same event dated another day another
    episode ("Standup with the platform team" --when Monday, then --when Tuesday; an
    episode given no day is the one it repeats, as before)."""
    if request.trigger is not None and _trigger_of(existing) != request.trigger:
        return False
    stated = request.when or stated_moment(text, now)
    if existing.type == "episodic" and stated is not None:
        return (existing.when or existing.created).date() == stated.astimezone(UTC).date()
    return True


def _classified(request: RememberRequest) -> bool:
    """Whether the type was chosen from the text (not given, nor implied by a trigger or
    a `when`)."""
    return request.type is None and request.trigger is None and request.when is None


def _trigger_of(mem: Memory) -> str | None:
    trigger = mem.extra.get("trigger")
    return trigger if isinstance(trigger, str) and trigger else None


# A trigger is one line, as a label is, of at most this many characters.
MAX_TRIGGER = 128


def check_trigger(trigger: str, analyse: Callable[[str], Iterable[str]]) -> str:
    """The trigger as it is stored, "word + word" in lower case, or `InvalidInput`: it
    must hold at least one term, no empty one, and no term of stop words only (which no
    message could be matched on: `agents/triggers.py` analyses both sides alike)."""
    check_fields({"trigger": trigger})
    if not trigger.strip():
        raise InvalidInput("the trigger is empty: give words a message must hold, as 'n8n + 401'")
    check_label(trigger.strip(), "trigger", max_len=MAX_TRIGGER)
    terms = [" ".join(part.split()).lower() for part in trigger.split("+")]
    for term in terms:
        if not term:
            raise InvalidInput(
                f"the trigger {trigger!r} has an empty term: join words with ' + ', as 'n8n + 401'"
            )
        if not any(True for _ in analyse(term)):
            raise InvalidInput(
                f"the trigger term {term!r} has no word a message could be matched on "
                "(only stop words or punctuation)"
            )
    return " + ".join(dict.fromkeys(terms))


def _by_meaning(
    vault: CoreVault,
    embedded: Embedded,
    mem_type: str,
    home: str,
    same_one: Callable[[str], bool],
) -> tuple[tuple[str, str] | None, list[Near]]:
    """(id, path) of an active memory of this type that says the same in other words, if
    any; and the active memories of this type, and facts, the new text may contradict
    (`likeness.judge`)."""
    settings = vault.settings.remember
    # Below `related_cosine` a memory is "different" whatever its text (`judge`).
    near = [(i, cosine) for i, cosine in embedded.near if cosine >= settings.related_cosine]
    docs = vault.lookup([mem_id for mem_id, _ in near])
    same = None
    contradicted = []
    for mem_id, cosine in near:
        doc = docs.get(mem_id)
        # A fact can be contradicted by any new memory ("moved to Madrid" is an event);
        # only a memory of the same type is reinforced.
        if doc is None or doc.status != "active" or doc.type not in (mem_type, "semantic"):
            continue
        body = store.read_body(vault.root, doc.path)
        if body is None:
            continue
        verdict = judge(
            meaning_text(doc.title, body),
            embedded.text,
            cosine,
            settings.paraphrase_cosine,
            settings.related_cosine,
        )
        if (
            verdict == "same"
            and conflict(body, embedded.text) is None
            and same is None
            and doc.type == mem_type
            and _same_scope(doc, home)
            and same_one(doc.path)
        ):
            same = (doc.id, doc.path)
        elif verdict == "contradicts":
            contradicted.append(Near(doc.id, doc.title, round(cosine, 4)))
    return same, contradicted[:MAX_CONTRADICTED]


MAX_CONTRADICTED = 3


def _validate(request: RememberRequest, text: str) -> None:
    if len(text) > MAX_TEXT:
        raise InvalidInput(f"the text is longer than {MAX_TEXT:,} characters; store it as a file")
    check_fields(
        {
            "text": request.text,
            "title": request.title,
            "tag": request.tags,
            "scope": request.scope,
            "session id": request.session,
        }
    )
    if not text:
        raise InvalidInput("nothing to remember: the text is empty")
    if request.title is not None and not request.title.strip():
        raise InvalidInput("the title is empty: give one with words in it, or none")
    if request.type is not None:
        check_type(request.type)
    if request.when is not None and request.type not in (None, "episodic"):
        raise UsageError(
            f"--when dates an event: a {request.type} memory has none (leave out --type, "
            "or give --type episodic)"
        )
    if request.trigger is not None and request.type not in (None, "procedural"):
        raise UsageError(
            f"--trigger makes a procedural pattern, not a {request.type} memory (leave out "
            "--type, or give --type procedural)"
        )
    if request.trigger is not None and request.when is not None:
        raise UsageError("--trigger and --when do not go together: a pattern has no date")
    if request.importance is not None and not 1 <= request.importance <= 10:
        raise UsageError("importance must be between 1 and 10")
    if request.type == "working" and not request.session:
        raise InvalidInput("a working memory belongs to a session: give --session")
    if request.session is not None:
        check_label(request.session, "session id")
    if request.scope is not None:
        check_label(request.scope, "scope")
    for tag in request.tags:
        check_tag(tag)


def _new_memory(
    vault: CoreVault, request: RememberRequest, text: str, mem_type: str, now: datetime
) -> Memory:
    """The memory `request` makes, with a fresh id; an importance it does not give is
    the vault's `[memory] default_importance`."""
    mem_id = new_id(now)
    while vault.engine.lookup([mem_id]):  # two memories in the same second: 1 in 65,536
        mem_id = new_id(now)
    title = (request.title or title_from_text(text)).strip() or "memory"
    if request.trigger is not None and not request.title:
        title = pattern_title(request.trigger, text)  # as the sleep cycle titles patterns
    return Memory(
        id=mem_id,
        type=mem_type,
        title=title,
        body=text + "\n",
        path="",
        tags=tuple(dict.fromkeys(t.strip() for t in request.tags if t.strip())),
        scope=_scope_of(request, mem_type),
        created=now,
        last_accessed=now,
        importance=request.importance or vault.settings.memory.default_importance,
        pinned=request.pinned,
        source=request.source,
        session=request.session,
        when=_when(request, text, now) if mem_type == "episodic" else None,
        extra=(
            {"trigger": request.trigger, "confidence": 1.0, "usage_count": 0}
            if request.trigger is not None and mem_type == "procedural"
            else {}
        ),
    )


def _when(request: RememberRequest, text: str, now: datetime) -> datetime:
    """When an episode happened: as told, else the day its text states, else now."""
    if request.when is not None:
        return request.when.astimezone(UTC).replace(microsecond=0)
    return stated_moment(text, now) or now


def _scope_of(request: RememberRequest, mem_type: str) -> str:
    """The scope the memory is written with: the one asked for, else a working memory's
    session, else global."""
    if request.scope:
        return request.scope
    return f"session:{request.session}" if mem_type == "working" else "global"


def _same_scope(doc: Doc, home: str) -> bool:
    return owner(doc.scope) == owner(home)


def similarity(a: list[str], b: list[str]) -> float:
    """Jaccard overlap of two texts' stemmed words."""
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def _already_known(
    vault: CoreVault, text: str, mem_type: str, home: str, same_one: Callable[[str], bool]
) -> tuple[str, str] | None:
    """(id, path) of an active memory of this type and scope that says the same thing, if
    any, and is the same memory (`same_one`: of the same day, with the same trigger): a
    chat's memory does not absorb what another chat, or everyone, should see."""
    threshold = vault.settings.remember.reinforce_similarity
    filters = Filters(types=(mem_type,), scopes=spellings(home))
    found = vault.near(text, filters, threshold, limit=20)
    words = list(found.terms)
    if not words:
        return None
    engine = vault.engine
    for hit in found.hits:
        body = store.read_body(vault.root, hit.doc.path)
        if body is None:
            continue
        if (
            " ".join(body.split()) == " ".join(text.split())
            or (
                similarity(words, engine.analyze(body)) >= threshold
                and conflict(body, text) is None  # "is not public" is not "is public"
            )
        ) and same_one(hit.doc.path):
            return hit.doc.id, hit.doc.path
    return None


def _reinforce(
    vault: CoreVault, same: tuple[str, str], request: RememberRequest, now: datetime
) -> RememberResult:
    mem_id, path = same
    existing = vault.load(path)
    updates: dict[str, object] = {
        "reinforced": existing.reinforced + 1,
        "last_accessed": now,
    }
    if request.importance is not None and request.importance > existing.importance:
        updates["importance"] = request.importance
    new_tags = [t for t in request.tags if t not in existing.tags]
    if new_tags:
        updates["tags"] = [*existing.tags, *new_tags]
    if request.pinned and not existing.pinned:
        updates["pinned"] = True
    _update(vault, path, updates)
    vault.refresh([path])
    return RememberResult(
        mem_id,
        path,
        existing.type,
        "reinforced",
        existing.title,
        _classified(request),
        reinforced=existing.reinforced + 1,
        when=existing.when,
        trigger=_trigger_of(existing),
    )


def _supersede(
    vault: CoreVault, request: RememberRequest, text: str, mem_type: str, now: datetime
) -> RememberResult:
    assert request.supersedes is not None
    old_id, old_path = vault.resolve_id(request.supersedes)
    old = vault.load(old_path)
    twin = _written_already(vault, text, _scope_of(request, mem_type), old_id)
    if twin is not None:
        return _link(vault, twin, old, old_path, old_id, request)
    if _classified(request):
        mem_type = old.type  # a replacement is the same kind of memory
    mem = _new_memory(vault, request, text, mem_type, now)
    mem = mem._replace(
        supersedes=old_id,
        tags=mem.tags or old.tags,
        importance=request.importance or old.importance,
    )
    # The new memory first: a crash in between leaves both, never neither.
    written = store.create(vault.root, mem, fsync=vault.settings.write.fsync)
    try:
        _update(vault, old_path, _superseded_by(mem.id, old, old_id))
    except OSError:
        # The old one cannot be marked (a full disk): the new one goes again, so that
        # the command fails having changed nothing, and running it again does it all.
        (vault.root / written.path).unlink(missing_ok=True)
        raise
    vault.refresh([written.path, old_path])
    return _superseding(mem._replace(path=written.path, type=mem_type), old_id, old, request)


def _written_already(vault: CoreVault, text: str, home: str, old_id: str) -> Memory | None:
    """The active memory of this scope that holds exactly `text` (the one a `remember`
    wrote before naming what it may contradict), if any."""
    flat = " ".join(text.split())
    found = vault.near(text, Filters(scopes=spellings(home)), 1.0, limit=10)
    for hit in found.hits:
        if hit.doc.id == old_id or owner(hit.doc.scope) != owner(home):
            continue
        body = store.read_body(vault.root, hit.doc.path)
        if body is not None and " ".join(body.split()) == flat:
            return vault.load(hit.doc.path)
    return None


def _link(
    vault: CoreVault,
    new: Memory,
    old: Memory,
    old_path: str,
    old_id: str,
    request: RememberRequest,
) -> RememberResult:
    """`new`, written already, supersedes `old`: the running of the command a
    `remember` named (`kenomem remember TEXT --supersedes ID`) makes no second memory."""
    # Its `contradicts` may still name the old one: superseded, it is in no context.
    _update(vault, new.path, {"supersedes": old_id})
    _update(vault, old_path, _superseded_by(new.id, old, old_id))
    vault.refresh([new.path, old_path])
    return _superseding(new, old_id, old, request)


def _update(vault: CoreVault, path: str, keys: dict[str, object]) -> None:
    """Change kenomem's own `keys` in the memory at `path`, if the file is still as the
    vault's state saw it (the lock is held)."""
    store.update_keys(
        vault.root, path, keys, expect=vault.state.stats[path], fsync=vault.settings.write.fsync
    )


def _superseded_by(new_id: str, old: Memory, old_id: str) -> dict[str, object]:
    """The keys that mark `old` superseded by `new_id`; its id is written into a file that
    had none, as the link must survive the old file being moved."""
    link: dict[str, object] = {"status": "superseded", "superseded_by": new_id}
    if not old.has_id:
        link["id"] = old_id
    return link


def _superseding(new: Memory, old_id: str, old: Memory, request: RememberRequest) -> RememberResult:
    """The result of `new` (written, at its path) superseding `old`."""
    return RememberResult(
        new.id,
        new.path,
        new.type,
        "superseded",
        new.title,
        _classified(request),
        supersedes=old_id,
        when=new.when,
        trigger=_trigger_of(new),
        superseded=[Replaced(old_id, old.title)],
        pinned=new.pinned,
    )


def _working(
    vault: CoreVault, request: RememberRequest, text: str, now: datetime
) -> RememberResult:
    """A session has one working memory: writing it again replaces its text."""
    assert request.session is not None
    fresh = _new_memory(vault, request, text, "working", now)
    path = f"{store.folder_for(fresh)}/{store.file_name_for(fresh)}.md"
    record = vault.record(path)
    if record is not None and record.id:
        old = vault.load(path)
        mem = fresh._replace(id=old.id)
        store.replace_body(
            vault.root,
            path,
            fresh.body,
            {"title": fresh.title, "updated": now, "last_accessed": now},
            expect=(record.size, record.mtime_ns),
            fsync=vault.settings.write.fsync,
        )
        action = "updated"
    else:
        mem = fresh._replace(extra={"updated": now})
        path = store.create(vault.root, mem, fsync=vault.settings.write.fsync).path
        action = "created"
    vault.refresh([path])
    return RememberResult(mem.id, path, "working", action, mem.title, _classified(request))
