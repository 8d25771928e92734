"""`recall`: find memories by BM25F, rank them by recency + importance + relevance, and
strengthen what is returned (SPEC 3).

What recall shows comes from the index's stored fields; only the few files it returns
are read, for their snippet and to touch `last_accessed` and `access_count`.
"""

# No `from __future__ import annotations`: its records are made at every cold start
# (docs/architecture.md, fast start).

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import NamedTuple

from kenomem.config import Settings
from kenomem.errors import UsageError
from kenomem.files import store
from kenomem.files.fm import from_epoch
from kenomem.files.memory import STATUSES, check_type
from kenomem.files.plural import counted
from kenomem.index import Boosts, Doc, Filters, Hit, SearchResult, scope
from kenomem.recall import asof, expansion, fusion, scoring, spread, today
from kenomem.recall.confidence import confidence, rarities, share, signals
from kenomem.recall.rerank import (
    in_span,
    named_people,
    neighbour_lifts,
    proximity_lifts,
    span_recency,
)
from kenomem.recall.scoring import Weights
from kenomem.recall.temporal import Asked, TimeCue, asked, time_cue
from kenomem.recall.touch import touch_all
from kenomem.vault.core import CoreVault


class RecallRequest(NamedTuple):
    query: str
    limit: int | None = None
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()  # these chats' memories and the global ones (index.scope)
    since: datetime | None = None
    until: datetime | None = None
    archive: bool = False
    touch: bool | None = None
    w_recency: float | None = None
    w_importance: float | None = None
    w_relevance: float | None = None
    now: datetime | None = None
    semantic: bool | None = None  # by meaning too (None: recall.semantic, if a provider)
    w_use: float | None = None


class RecallItem(NamedTuple):
    id: str
    type: str
    title: str
    path: str
    score: float
    recency: float
    importance: float
    relevance: float
    tags: list[str]
    created: datetime
    last_accessed: datetime
    snippet: str
    status: str = "active"
    access_count: int = 0
    bm25: float = 0.0
    semantic: float | None = None  # the cosine with the query; None: not searched by meaning
    session: str | None = None  # a buffer entry's (today.py), or a memory's if it has one
    day: str | None = None  # a buffer entry's day, time logged and speaker; None for memories
    time: str | None = None
    who: str | None = None
    use: float = 0.0  # log(1 + access_count): what the use weight multiplies
    spread: float = 0.0  # what the concept graph added to its search score (spread.py) ...
    via: str | None = None  # ... through this concept ("tag x", "name bailey", "link y")
    lifts: dict[str, float] = {}  # noqa: RUF012 - read-only; relevance added: neighbour, time, person


class Period(NamedTuple):
    """The span of time a query named, as recall understood it."""

    since: datetime
    until: datetime
    said: str  # the words that named it
    alone: bool  # the time was the whole question: what happened then, by importance
    kept: bool  # the results are held to it (not when the time is a point of reference,
    # "before 8 May", or when nothing of then matched: then it only lifts)

    def described(self) -> dict[str, object]:
        """As `--json` and MCP give it: `from` and `to` (both included), the words that
        named it, whether it was the whole question, whether results were held to it."""
        return {
            "from": self.since,
            "to": self.until,
            "said": self.said,
            "alone": self.alone,
            "filtered": self.kept,
        }


class RecallResult(NamedTuple):
    query: str
    results: list[RecallItem]
    terms: list[str]
    weights: Weights
    candidates: int
    warnings: list[str] = []  # noqa: RUF012 - read-only
    time: TimeCue | None = None  # the span of time the query named
    confidence: str = "none"  # how sure the match is (confidence.py)
    period: Period | None = None  # ... and how it was used
    cut: int = 0  # results left out as unrelated: fewer than the limit may be returned


def recall(vault: CoreVault, request: RecallRequest) -> RecallResult:
    now = request.now or datetime.now(UTC)
    search = ranked_search(vault, request, now)
    touch = vault.settings.recall.touch if request.touch is None else request.touch
    items = finish(vault, search.ranked, search.terms, now, touch)
    return RecallResult(
        request.query,
        items,
        list(search.terms),
        search.weights,
        search.total,
        search.warnings,
        search.cue,
        search.confidence,
        search.period,
        search.cut,
    )


def ranked_search(vault: CoreVault, request: RecallRequest, now: datetime) -> "RankedSearch":
    """The candidates of a recall, scored and cut to the limit; nothing read or touched."""
    settings = vault.settings.recall
    limit = request.limit if request.limit is not None else settings.limit
    if limit < 1:
        raise UsageError("--limit must be at least 1")
    weights = Weights(
        recency=_weight(request.w_recency, settings.w_recency, "recency"),
        importance=_weight(request.w_importance, settings.w_importance, "importance"),
        relevance=_weight(request.w_relevance, settings.w_relevance, "relevance"),
        use=_weight(request.w_use, settings.w_use, "use"),
    )
    for mem_type in request.types:
        if mem_type != today.TYPE:
            check_type(mem_type)
    if not request.query.strip():
        raise UsageError("the query is empty")
    filters = Filters(
        types=request.types,
        statuses=STATUSES if request.archive else ("active",),
        tags=request.tags,
        scopes=scope.visible(request.scopes),
        since=request.since.timestamp() if request.since else None,
        until=request.until.timestamp() if request.until else None,
    )
    boosts = Boosts(settings.title_boost, settings.tags_boost, settings.body_boost)
    candidates = max(settings.candidates, limit)

    cue = time_cue(request.query, now)
    # A query naming a time: what it asks besides the time. Nothing else that narrows it
    # ("what did we talk about yesterday"): what happened then, the time alone.
    parts: Asked | None = None if cue is None else asked(request.query, cue)
    alone = parts is not None and not parts.reference and not vault.engine.analyze(parts.hard)
    text = request.query if parts is None else parts.soft if alone else parts.topic
    inside = filters
    if cue is not None:
        inside = filters._replace(
            since=max(filters.since or 0.0, cue.since.timestamp()),
            until=min(filters.until or float("inf"), cue.until.timestamp()),
        )

    notes: list[str] = []  # what went wrong on the way, for the warnings
    spreads: dict[str, tuple[float, str]] = {}  # what the concept graph added, and through what

    def search() -> SearchResult:
        spreads.clear()
        if alone:
            return _in_period(vault, text, inside, boosts, candidates)
        found = vault.search(text, filters, boosts, candidates)
        found = _with_feedback(vault, found, filters, boosts, candidates)
        found = _merged(
            vault, found, llm_words, settings.expand_weight, filters, boosts, candidates
        )
        found = _with_spread(vault, found, filters, candidates, spreads)
        if cue is None or not (settings.time_boost > 0 or settings.time_filter):
            return found
        # The named span may hold memories the plain search ranked too low to bring.
        more = vault.search(text, inside, boosts, candidates)
        seen = {hit.doc.id for hit in found.hits}
        hits = found.hits + [hit for hit in more.hits if hit.doc.id not in seen]
        return SearchResult(hits, found.terms, found.total + len(hits) - len(found.hits))

    use_meaning = settings.semantic if request.semantic is None else request.semantic
    use_meaning = use_meaning and not alone
    if use_meaning and vault.meaning is not None:
        vault.meaning.ask_ahead(text)
    # Search while the files are scanned; only if something changed, search again.
    pending = vault.begin_sync()
    llm_words = [] if alone else _llm_words(vault, text, notes.append)
    found = search()
    if pending.finish().stale:
        found = search()
    semantic = None
    if use_meaning and vault.meaning is not None:
        semantic, found = _with_meaning(
            vault, text, found, filters, max(settings.semantic_candidates, limit), notes
        )
    if request.now is not None:  # a memory made after that moment was not there yet
        found = asof.made_by(vault, found, now)
    if alone:
        found = _with_buffer(vault, found, inside, now, PERIOD_CANDIDATES, every=True)
    else:
        found = _with_buffer(vault, found, filters, now, candidates)
    period = None
    if cue is not None and parts is not None:
        kept = alone
        if settings.time_filter and not alone and not parts.reference:
            # With a topic, the time filters: only what happened then, unless nothing did.
            # (Off by default, the time lifts: a memory's time is when it was told, and
            # what it tells may have happened at another; see docs/recall.md.)
            within = [hit for hit in found.hits if in_span(hit.doc, cue)]
            if within:
                found, kept = found._replace(hits=within, total=len(within)), True
            elif found.hits:
                notes.append(f"nothing from {cue.said!r} matches: results from any time")
        period = Period(cue.since, cue.until, cue.said, alone, kept)
    warnings = list(dict.fromkeys(notes))
    if not found.terms and not semantic and not alone:
        warnings.append("the query has only common words; nothing to search for")
    lifting = cue if alone or settings.time_boost > 0 else None  # time_boost 0: no lift
    ranked, cut = rank(vault, found, weights, now, limit, lifting, text, semantic, spreads, alone)
    typical = semantic.typical if semantic is not None else None
    if alone:  # what happened then, whatever its words: as sure as the time was read
        sure = "high" if ranked else "none"
    else:
        sure = confidence(signals(ranked, found.terms, *signal_sources(vault), typical))
    return RankedSearch(ranked, found.terms, weights, found.total, warnings, cue, sure, period, cut)


# A time alone ("what happened last week"): the memories of then brought by importance, at
# most this many, and as many buffer entries, before they are ranked and cut to the limit.
PERIOD_CANDIDATES = 200


def _in_period(
    vault: CoreVault, soft: str, inside: Filters, boosts: Boosts, candidates: int
) -> SearchResult:
    """The memories of a span, most important first; those holding the question's soft
    words ("decide") scored by them, the others 0."""
    found = vault.browse(inside, sort="importance", reverse=True, limit=PERIOD_CANDIDATES)
    hits = [Hit(hit.doc, 0.0) for hit in found.hits]
    if not soft:
        return SearchResult(hits, (), len(hits))
    scored = vault.search(soft, inside, boosts, candidates)
    return expansion.merge(scored, SearchResult(hits, ()), 0.0)


def signal_sources(
    vault: CoreVault,
) -> tuple[
    Callable[[str], list[str]],
    Callable[[Doc], str],
    Callable[[set[str]], tuple[dict[str, int], int]],
]:
    """What `confidence.signals` reads: the analyser, a result's text, the frequencies."""

    def text(doc: Doc) -> str:
        return body_of(vault, doc) or doc.preview

    return vault.engine.analyze, text, lambda held: vault.doc_frequencies(held, "body")


def body_of(vault: CoreVault, doc: Doc) -> str | None:
    """A result's text: a buffer entry's own, a memory's from its file (None when the
    file cannot be read)."""
    return doc.body if doc.type == today.TYPE else store.read_body(vault.root, doc.path)


def _with_buffer(
    vault: CoreVault,
    found: SearchResult,
    filters: Filters,
    now: datetime,
    limit: int,
    every: bool = False,
) -> SearchResult:
    """The hits, and the buffer entries not yet consolidated that match (today.py); with
    `every`, all those the filters let through (a time alone), matching or not."""
    more = today.candidates(vault, found.terms, filters, now, limit, every)
    return found._replace(hits=found.hits + more, total=found.total + len(more))


# Memories without a vector that one recall embeds before it searches; past these it says
# how many are left (`reindex` or a running watcher makes them all).
FILL_PER_RECALL = 64


class Meaning(NamedTuple):
    """What the vector search found: the cosine of each memory it brings, and the median
    cosine of the query with every memory (below it, a memory is no nearer than most),
    taken over enough memories to say what most are (`calibrated`)."""

    cosine: dict[str, float]
    typical: float
    calibrated: bool = True


# Below this many memories with a vector, the median cosine says little of what an
# unrelated memory scores: nothing is left out as unrelated (there are few to return).
CALIBRATION = 20


def _with_meaning(
    vault: CoreVault,
    query: str,
    found: SearchResult,
    filters: Filters,
    candidates: int,
    notes: list[str],
) -> tuple[Meaning | None, SearchResult]:
    """The cosine of the memories nearest the query in meaning (those the filters let
    through), and the keyword hits with the ones they lacked added (score 0). A provider
    that fails costs a warning and leaves the keyword hits alone (None)."""
    from kenomem.embed.provider import EmbeddingsUnavailable

    meaning = vault.meaning
    assert meaning is not None
    try:
        vault.meaning_ready()
        filled = meaning.fill(vault.meaning_texts, lambda: vault.lock, limit=FILL_PER_RECALL)
        if filled.left:
            notes.append(
                f"{counted(filled.left, 'memory')} {'has' if filled.left == 1 else 'have'} "
                "no vector yet, so recall by meaning misses them: `kenomem reindex` (or a "
                "running `kenomem watch`) makes them"
            )
        words = [hit.doc.id for hit in found.hits]
        near, typical, of_words = meaning.search(query, candidates * 4, words)
    except EmbeddingsUnavailable as exc:
        notes.append(f"recall by meaning is off for this call ({exc}): by keywords alone")
        return None, found
    notes.extend(meaning.warnings)
    meaning.warnings.clear()
    if not near:
        return None, found
    cosine = dict(near)
    kept = _nearest_allowed(vault, near, filters, candidates)
    # The keyword hits' cosines too, near or not: each candidate is judged on both.
    calibrated = len(near) >= min(CALIBRATION, candidates * 4)
    semantic = Meaning(
        {**of_words, **{h.doc.id: cosine[h.doc.id] for h in kept}}, typical, calibrated
    )
    seen = {hit.doc.id for hit in found.hits}
    more = [Hit(hit.doc, 0.0) for hit in kept if hit.doc.id not in seen]
    return semantic, SearchResult(found.hits + more, found.terms, found.total + len(more))


def _nearest_allowed(
    vault: CoreVault, near: list[tuple[str, float]], filters: Filters, wanted: int
) -> list[Hit]:
    """The `wanted` nearest memories the filters let through, nearest first. They are
    looked up in the index a slice at a time, nearest first, so a recall without filters
    reads about `wanted` documents rather than every one the vector search brought."""
    kept: list[Hit] = []
    start = 0
    while start < len(near) and len(kept) < wanted:
        # The first slice: what is wanted, and a margin for those the filters drop.
        step = wanted + wanted // 4 if start == 0 else max(wanted - len(kept), 1) * 2
        ids = tuple(mem_id for mem_id, _ in near[start : start + step])
        start += step
        order = {mem_id: i for i, mem_id in enumerate(ids)}
        found = vault.browse(filters._replace(ids=ids), None, False, None).hits
        found.sort(key=lambda hit: order[hit.doc.id])
        kept.extend(found[: wanted - len(kept)])
    return kept


def _with_feedback(
    vault: CoreVault, found: SearchResult, filters: Filters, boosts: Boosts, candidates: int
) -> SearchResult:
    """A short query's hits, merged with those of the words its best hits share."""
    rs = vault.settings.recall
    if rs.feedback_words <= 0 or not found.terms or len(found.terms) > rs.feedback_max_terms:
        return found
    words = expansion.feedback_words(
        found.terms,
        found.hits,
        vault.engine.analyze,
        vault.doc_frequencies,
        docs=rs.feedback_docs,
        words=rs.feedback_words,
    )
    return _merged(vault, found, words, rs.feedback_weight, filters, boosts, candidates)


def _merged(
    vault: CoreVault,
    found: SearchResult,
    words: list[str],
    weight: float,
    filters: Filters,
    boosts: Boosts,
    candidates: int,
) -> SearchResult:
    """`found`, merged at `weight` with the hits of a search for `words` (if any)."""
    if not words:
        return found
    more = vault.search(" ".join(words), filters, boosts, candidates)
    return expansion.merge(found, more, weight)


def _llm_words(vault: CoreVault, query: str, warn: Callable[[str], None]) -> list[str]:
    """The words the language model adds to the query, when asked for (query_llm.py)."""
    command = expansion_command(vault.settings)
    if not command or not vault.engine.analyze(query):
        return []
    from kenomem.recall import query_llm

    timeout = vault.settings.recall.expand_timeout_seconds
    return query_llm.expansion_words(command, query, vault.state_dir, timeout, warn)


def expansion_command(settings: Settings) -> str:
    """The LLM command a recall (or a context with a query) runs to expand the query;
    "" when it runs none."""
    rs = settings.recall
    return (rs.expand_command or settings.consolidate.llm_command) if rs.llm_expand else ""


def _with_spread(
    vault: CoreVault,
    found: SearchResult,
    filters: Filters,
    candidates: int,
    spreads: dict[str, tuple[float, str]],
) -> SearchResult:
    """The hits, and the memories linked to the best of them, lifted along the links;
    what each gained, and through which concept, noted in `spreads`."""
    rs = vault.settings.recall
    if rs.spread_share <= 0 or rs.spread_from <= 0 or not found.hits:
        return found
    top = found.hits[: rs.spread_from]
    best = top[0].score
    sources = [(hit.doc.concepts, hit.score / best) for hit in top if best > 0]
    wanted = {concept for held, _ in sources for concept in held}
    if not wanted:
        return found
    frequency, total = vault.doc_frequencies(wanted, "concepts")
    passed = spread.spread(sources, frequency, total)
    if not passed:
        return found
    reached = vault.related(passed, filters, candidates)
    lifted, gains = spread.lift(found, reached, passed, rs.spread_share, (h.doc.id for h in top))
    spreads.update(gains)
    return lifted


def _weight(given: float | None, default: float, name: str) -> float:
    value = default if given is None else given
    if not 0 <= value < float("inf"):  # also refuses nan
        raise UsageError(f"the {name} weight must be a finite number, 0 or more")
    return value


class Ranked(NamedTuple):
    doc: Doc
    terms: scoring.Terms
    bm25: float  # the keyword search's score, without what the concept graph added
    access_count: int
    last_accessed: float
    semantic: float | None = None
    spread: float = 0.0  # what the concept graph added to the search score ...
    via: str = ""  # ... through this concept (spread.label)
    lifts: dict[str, float] = {}  # noqa: RUF012 - read-only; relevance added by rerank
    in_period: bool = False  # brought by a time alone: what happened then
    near: bool = False  # nearer the query in meaning than the vault's memories are (fusion.near)

    @property
    def matched(self) -> bool:
        """Whether the query brought it: its words, a link from a memory they found, or
        the time it named alone (not the meaning alone, nor a neighbour)."""
        return self.bm25 > 0 or self.spread > 0 or self.in_period

    @property
    def related(self) -> bool:
        """Related enough to the query to be given: brought by it (`matched`) or near it
        in meaning. Recall returns nothing else, and `context` uses the same test."""
        return self.matched or self.near


class RankedSearch(NamedTuple):
    ranked: list[Ranked]
    terms: tuple[str, ...]
    weights: Weights
    total: int
    warnings: list[str]
    cue: TimeCue | None = None
    confidence: str = "none"  # how sure the match is (confidence.py)
    period: Period | None = None
    cut: int = 0  # results left out as unrelated (`Ranked.related`)


def rank(
    vault: CoreVault,
    found: SearchResult,
    weights: Weights,
    now: datetime,
    limit: int,
    cue: TimeCue | None = None,
    query: str = "",
    semantic: Meaning | None = None,
    spreads: dict[str, tuple[float, str]] | None = None,
    alone: bool = False,
) -> tuple[list[Ranked], int]:
    """Score the candidates (pure but for reading the state's access overlay). With
    `semantic`, relevance fuses the keyword and the meaning rankings. `spreads`: what the
    concept graph added to each hit's score, and through what. `alone`: the candidates
    are what happened in the span a time alone named: each is relevant, those holding the
    query's words more (1 + their relevance, made relative), ordered by importance, then
    the newest first. With meaning, a candidate not `related` is left out: (the ranked
    candidates, how many of the first `limit` were left out so)."""
    spreads = spreads or {}
    settings = vault.settings
    now_ts = now.timestamp()
    stale_after = settings.memory.working_stale_days * scoring.DAY
    state = vault.state
    hits = [
        hit
        for hit in found.hits
        if not (hit.doc.type == "working" and now_ts - hit.doc.updated > stale_after)
    ]
    rels = scoring.relevance([hit.score for hit in hits])
    if alone:
        rels = [1.0 + rel for rel in rels]
    rs = settings.recall
    bar = rs.semantic_near  # how near a memory meaning alone brings must be (fusion.near)
    if semantic is not None:
        cosines = [semantic.cosine.get(hit.doc.id) for hit in hits]
        floor = max(rs.semantic_floor, semantic.typical)
        held = held_shares(vault, [hit.doc for hit in hits], rels, found.terms)
        if rs.coverage > 0:  # a keyword hit counts as much as it holds of the query
            rels = fusion.covered(rels, held, rs.coverage)
        best = max(held, default=0.0)
        rels = fusion.fuse(rels, cosines, rs.fusion, rs.semantic_weight, rs.rrf_k, floor, best)
        bar = fusion.near_bar(rs.semantic_near, best)
    lifts = neighbour_lifts(
        [hit.doc for hit in hits], rels, rs.neighbour_minutes * 60, rs.neighbour_share
    )
    named = named_people(query, [hit.doc for hit in hits]) if rs.person_boost > 0 else frozenset()
    window = rs.proximity_chars if rs.proximity_boost > 0 else 0
    near = proximity_lifts([hit.doc for hit in hits], found.terms, window)
    added = [
        _lifts(
            neighbour=lift,
            near=rs.proximity_boost * closeness,
            time=rs.time_boost if in_span(hit.doc, cue) and not alone else 0.0,
            person=rs.person_boost if named.intersection(hit.doc.people) else 0.0,
        )
        for hit, lift, closeness in zip(hits, lifts, near, strict=True)
    ]
    raised = [bare + sum(more.values()) for bare, more in zip(rels, added, strict=True)]
    top = max(raised, default=0.0)
    ranked = []
    for hit, lifted, more in zip(hits, raised, added, strict=True):
        doc = hit.doc
        rel = lifted / top if top > 0 else 0.0  # back in [0, 1]
        accessed, count = state.accessed(doc.path, doc.last_accessed, doc.access_count)
        terms = scoring.combine(
            weights,
            scoring.recency(
                max(accessed, doc.created), now_ts, settings.recall.half_life_days, doc.pinned
            )
            if cue is None
            else span_recency(doc, cue, settings.recall.half_life_days),
            scoring.importance(doc.importance, doc.reinforced),
            rel,
            scoring.use(count),
        )
        cos = semantic.cosine.get(doc.id) if semantic is not None else None
        gain, via = spreads.get(doc.id, (0.0, ""))
        gain = min(gain, hit.score)
        relative = {k: v / top for k, v in more.items()} if top > 0 else {}
        close = (
            semantic is not None
            and cos is not None
            and (not semantic.calibrated or fusion.near(cos, semantic.typical, bar))
        )
        ranked.append(
            Ranked(
                doc,
                terms,
                hit.score - gain,
                count,
                accessed,
                cos,
                gain,
                via,
                relative,
                alone,
                close,
            )
        )
    if alone:
        ranked.sort(key=lambda r: (-r.terms.score, -r.doc.time, r.doc.id))
    else:
        ranked.sort(key=lambda r: (-r.terms.score, -r.bm25, r.doc.id))
    if semantic is None or rs.semantic_near <= 0:
        return ranked[:limit], 0
    # Nothing unrelated: what the vector search alone brought, no nearer than the vault's
    # memories are to the query, is left out; `cut` says how many of the first `limit`.
    cut = sum(1 for r in ranked[:limit] if not r.related)
    return [r for r in ranked if r.related][:limit], cut


def held_shares(
    vault: CoreVault, docs: Sequence[Doc], rels: Sequence[float], terms: Sequence[str]
) -> list[float]:
    """How much of the query each keyword hit holds: the rarity-weighted share of the
    query's terms (confidence.share) in its title and preview. A hit whose match lies
    past its preview is known to hold one term at least: the least weighted one's share.
    0 for a candidate the keywords did not bring (`rels[i]` 0)."""
    wanted = set(terms)
    if not wanted:
        return [0.0] * len(docs)
    weight = rarities(wanted, lambda held: vault.doc_frequencies(held, "body"))
    least = share({min(weight, key=lambda t: weight[t])}, weight)
    analyze = vault.engine.analyze
    out = []
    for doc, rel in zip(docs, rels, strict=True):
        if rel <= 0:
            out.append(0.0)
            continue
        held = wanted.intersection(analyze(f"{doc.title}\n{doc.preview}"))
        out.append(max(least, share(held, weight)))
    return out


def _lifts(**lifts: float) -> dict[str, float]:
    """The relevance a candidate gained besides its match, by what gave it (none of 0)."""
    return {name: value for name, value in lifts.items() if value > 0}


def finish(
    vault: CoreVault, ranked: list[Ranked], terms: tuple[str, ...], now: datetime, touch: bool
) -> list[RecallItem]:
    """Read each result's file for its snippet and, when touching, strengthen it."""
    if not ranked:
        return []
    items = []
    lock = vault.lock if touch else None
    if lock is not None:
        lock.acquire()
    try:
        touched = [False] * len(ranked)
        files = [i for i, r in enumerate(ranked) if r.doc.type != today.TYPE]
        if touch:  # a buffer entry is no file of its own: never touched
            marks = touch_all(
                vault, [(ranked[i].doc, ranked[i].access_count + 1) for i in files], now
            )
            for i, was in zip(files, marks, strict=True):
                touched[i] = was
        for r, done in zip(ranked, touched, strict=True):
            doc = r.doc
            entry = doc.type == today.TYPE
            body = body_of(vault, doc)
            count, accessed = r.access_count, r.last_accessed
            if done:
                count, accessed = count + 1, now.timestamp()
            items.append(
                RecallItem(
                    id=doc.id,
                    type=doc.type,
                    title=doc.title,
                    path=doc.path,
                    score=round(r.terms.score, 4),
                    recency=round(r.terms.recency, 4),
                    importance=round(r.terms.importance, 4),
                    relevance=round(r.terms.relevance, 4),
                    tags=list(doc.tags),
                    created=from_epoch(doc.created),
                    last_accessed=from_epoch(accessed),
                    snippet=snippet(vault, body, terms) if body is not None else doc.preview,
                    status=doc.status,
                    access_count=count,
                    bm25=round(r.bm25, 4),
                    semantic=None if r.semantic is None else round(r.semantic, 4),
                    session=doc.session or None,
                    day=f"{from_epoch(doc.time):%Y-%m-%d}" if entry else None,
                    time=f"{from_epoch(doc.time):%H:%M:%S}" if entry else None,
                    who=(doc.people[0] if doc.people else "") if entry else None,
                    use=round(r.terms.use, 4),
                    spread=round(r.spread, 4),
                    via=r.via or None,
                    lifts={k: round(v, 4) for k, v in r.lifts.items()},
                )
            )
    finally:
        if lock is not None:
            lock.release()
    return items


# A sentence ends at . ! or ? followed by a space, or at a line end ("db1.internal" is one).
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=\S))+[.!?]*")
_SNIPPET_SCAN = 20_000  # characters of a long body searched for the best sentence


def snippet(vault: CoreVault, body: str, terms: tuple[str, ...], width: int = 160) -> str:
    """The sentence of `body` that holds the most query terms, cut to `width`.

    The body is analysed once, like the index analyses it, so "deploying" in the text
    counts for the term "deploy".
    """
    text = body[:_SNIPPET_SCAN]
    wanted = set(terms)
    starts = sorted(start for _, start in vault.engine.term_offsets(text, wanted))
    best, best_hits = "", 0
    for m in _SENTENCE.finditer(text):
        sentence = " ".join(m.group(0).split()).lstrip("#-*> ").strip()
        if not sentence:
            continue
        hits = bisect_left(starts, m.end()) - bisect_left(starts, m.start())
        if not best or hits > best_hits:
            best, best_hits = sentence, hits
    if len(best) > width:
        best = best[: width - 1].rsplit(" ", 1)[0] + "…"
    return best
