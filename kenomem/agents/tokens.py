"""Counting tokens for `context`'s budget.

The default is an estimate: one token per four characters, rounded up. It is the usual
rule of thumb for English text with the tokenizers of current models (OpenAI's
cl100k/o200k, Anthropic's); code and other languages cost more tokens per character, so
leave some room. With `context.tokenizer = "tiktoken:<encoding>"` and tiktoken installed,
the real count is used instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable

CHARS_PER_TOKEN = 4

Counter = Callable[[str], int]


def estimate(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def counter(spec: str, warn: Callable[[str], None] | None = None) -> tuple[Counter, str]:
    """The counter named by the setting, and its name; the estimate when it cannot load."""
    kind, _, encoding = spec.partition(":")
    if kind in ("", "estimate"):
        return estimate, "estimate"
    if kind == "tiktoken":
        try:
            import tiktoken
        except ImportError:
            if warn:
                warn("context.tokenizer: tiktoken is not installed; tokens are estimated")
            return estimate, "estimate"
        try:
            enc = tiktoken.get_encoding(encoding or "cl100k_base")
        except (KeyError, ValueError) as exc:
            if warn:
                warn(f"context.tokenizer: {exc}; tokens are estimated")
            return estimate, "estimate"
        return (lambda text: len(enc.encode(text, disallowed_special=()))), spec
    if warn:
        warn(f"context.tokenizer: unknown tokenizer {spec!r}; tokens are estimated")
    return estimate, "estimate"
