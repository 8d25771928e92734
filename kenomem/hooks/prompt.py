"""What a prompt brings back, for the agent to read before it answers: the patterns whose
trigger the prompt holds, then the memories recall finds for it (the project's and the
global ones, no buffer entry: the session's own turns are in the agent's context
already), within `hooks.prompt_budget` tokens, whole lines only. Nothing is counted as
recalled: a prompt's block is a glance, not a use, and costs no write.

It runs on every prompt, so it reads little and searches once. The patterns are looked
for among the procedural memories of the recall's candidates, the first
`PATTERN_CANDIDATES` of them (a pattern's title names its trigger: "When docker and port
...", so the prompt's words find it), and only those files are read for their trigger,
where `kenomem patterns MESSAGE` reads every pattern (a second search of the index, for
the patterns alone, cost as much as the recall: 42 ms at 10,000 memories). The
search reads the prompt's first `QUERY_CHARS` characters: a pasted file makes a long
prompt whose start says what it is about, and a query of thousands of words would cost
the agent its time on every prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenomem.agents.procedural import PatternView
    from kenomem.index import Doc
    from kenomem.vault.core import CoreVault

QUERY_CHARS = 1000
PATTERN_CANDIDATES = 20
LINE_CHARS = 300  # of one memory's line


def prompt_block(vault: CoreVault, prompt: str, scope: str) -> str:
    """The block for `prompt` in the project `scope`; "" when nothing is found."""
    from datetime import UTC, datetime

    from kenomem.agents.tokens import counter
    from kenomem.recall import today
    from kenomem.recall.search import RecallRequest, finish, ranked_search

    settings = vault.settings
    budget = settings.hooks.prompt_budget
    if budget <= 0:
        return ""
    query = prompt[:QUERY_CHARS]
    lines: list[str] = []
    shown: set[str] = set()
    limit = settings.hooks.prompt_memories
    now = datetime.now(UTC)
    wanted = max(limit, 1) + PATTERN_CANDIDATES
    request = RecallRequest(query, limit=wanted, scopes=(scope,), touch=False)
    search = ranked_search(vault, request, now)  # it brings the index up to date
    procedures = [r.doc for r in search.ranked if r.doc.type == "procedural"]
    for pattern in _triggered(vault, query, procedures[:PATTERN_CANDIDATES]):
        lines.append(_line(f"When {pattern.trigger}: {pattern.text or pattern.title}"))
        shown.add(pattern.id)
    if limit > 0:
        ranked = [r for r in search.ranked if r.doc.type != today.TYPE and r.doc.id not in shown]
        memories = finish(vault, ranked[:limit], search.terms, now, False)
        floor = settings.context.min_relevance * max((r.relevance for r in memories), default=0)
        for item in memories:
            if item.relevance >= floor:
                lines.append(_line(_said(item.title, item.snippet), item.id))
    if not lines:
        return ""
    count, _name = counter(settings.context.tokenizer)
    head = "From memory (kenomem), for this prompt:"
    used = count(head)
    kept: list[str] = []
    for line in lines:
        cost = count(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return "\n".join([head, *kept]) if kept else ""


def _triggered(vault: CoreVault, query: str, docs: list[Doc]) -> list[PatternView]:
    """The active patterns among `docs` whose trigger `query` holds, most confident
    first."""
    from kenomem.agents.procedural import views_of
    from kenomem.agents.triggers import matches, trigger_terms

    if not docs:
        return []
    analyse = vault.engine.analyze
    words = list(analyse(query))
    chosen = [
        view
        for view in views_of(vault, docs)
        if matches(trigger_terms(view.trigger, analyse), words)
    ]
    chosen.sort(key=lambda v: (-(v.confidence or 0.0), -v.importance))
    return chosen


def _line(text: str, id: str = "") -> str:
    flat = " ".join(text.split())
    if len(flat) > LINE_CHARS:
        flat = flat[:LINE_CHARS].rsplit(" ", 1)[0] + " …"
    return f"- {flat}" + (f" [{id}]" if id else "")


def _said(title: str, snippet: str) -> str:
    """A memory's title and snippet, the title left out when the snippet begins with it."""
    flat = " ".join(snippet.split())
    if not title or flat.lower().startswith(title.lower().rstrip(".… ")):
        return flat or title
    return f"{title}: {flat}"
