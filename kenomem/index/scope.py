"""Which memories a chat sees: its own and the global ones (SPEC 3.2, `scope`).

A memory's `scope` is `global` (also when it has none) or the id of the chat or session
it belongs to. Every path that filters by scope (recall, list, context, the MCP tools)
asks this module which stored values let a memory through, so the rule lives here alone
and applies to any memory with a `scope` field, whatever wrote it.

Memories written before a chat's scope was its bare id carry `session:<id>` (episodes
from `extract`, working memories): that spelling counts as the same chat.
"""

from __future__ import annotations

from collections.abc import Iterable

GLOBAL = "global"
_OLD_PREFIX = "session:"


def owner(scope: str) -> str:
    """The chat a stored `scope` value names (`session:X` is X), or `global`."""
    scope = scope.strip()
    if not scope:
        return GLOBAL
    if scope.startswith(_OLD_PREFIX) and len(scope) > len(_OLD_PREFIX):
        return scope[len(_OLD_PREFIX) :]
    return scope


def visible(chats: Iterable[str]) -> tuple[str, ...]:
    """The stored `scope` values that these chats see: each chat's own memories (in
    either spelling) and the global ones. No chats: no filter, every memory (`()`)."""
    seen: dict[str, None] = {}
    for chat in chats:
        name = owner(chat)
        seen[name] = None
        if name != GLOBAL:
            seen[_OLD_PREFIX + name] = None
    if not seen:
        return ()
    seen[GLOBAL] = None
    return tuple(seen)


def of_session(session: str | None) -> tuple[str, ...]:
    """What an agent working in `session` sees: that chat's memories and the global ones;
    without a session, the global ones alone. Never `()`: an agent's path always filters."""
    return visible((session,)) if session else (GLOBAL,)


def sees(scope: str, allowed: tuple[str, ...]) -> bool:
    """Whether a memory of this `scope` passes a filter of `allowed` values (from
    `visible` or `of_session`; `()` lets everything through)."""
    if not allowed:
        return True
    name = owner(scope)
    return name in allowed or (name != GLOBAL and _OLD_PREFIX + name in allowed)


def spellings(scope: str) -> tuple[str, ...]:
    """The stored values that mean the same scope as `scope`: one chat's own memories
    (not the global ones), or the global ones alone."""
    name = owner(scope)
    return (GLOBAL,) if name == GLOBAL else (name, _OLD_PREFIX + name)
