"""The foundation: `foundation.md`, core values and long-term goals, always in context."""

from __future__ import annotations

import re
from pathlib import Path

from kenomem.errors import FrontmatterError
from kenomem.files import fm
from kenomem.files.paths import FOUNDATION, read_text_inside

_ITEM = re.compile(r"#|[-*+] |\d+[.)] ")


def read_foundation(root: Path) -> str:
    """Its text without the frontmatter ("" when there is no file). Raises `UnsafePath`
    when it is a symlink out of the vault: that is not read."""
    try:
        text = read_text_inside(root, FOUNDATION)
    except FileNotFoundError:
        return ""
    try:
        return text[fm.split(text, FOUNDATION).body_start :].strip()
    except FrontmatterError:
        return text.strip()  # a broken header is still the person's words


def blocks(text: str) -> list[str]:
    """Paragraphs, headings and list items: the places where a cut is not mid-sentence."""
    out: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        starts_item = bool(_ITEM.match(stripped))
        if not stripped or (starts_item and current):
            if current:
                out.append("\n".join(current))
                current = []
            if not stripped:
                continue
        current.append(line.rstrip())
    if current:
        out.append("\n".join(current))
    return out
