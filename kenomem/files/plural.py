"""Counts in words: `1 memory`, `3 memories`, for every message, of the core and of the
command line alike."""

from __future__ import annotations


def counted(n: float, noun: str, plural: str = "") -> str:
    """A count with its noun, plural unless the count is 1: `1 memory`, `3 memories`,
    `0 files`, `2 batches`; `plural` for a noun that does not follow those rules."""
    shown = f"{n:g}" if isinstance(n, float) else str(n)
    if n == 1:
        return f"{shown} {noun}"
    if plural:
        return f"{shown} {plural}"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return f"{shown} {noun[:-1]}ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return f"{shown} {noun}es"
    return f"{shown} {noun}s"
