"""`extract`: store what an LLM's reply marks to remember, and give back the reply without
the marks.

Tags, each on its own or inside text:
- `<memory>...</memory>`: a fact, semantic and global;
- `<chat-memory>...</chat-memory>`: an episode of this conversation (needs `--session`);
- `<working-memory>...</working-memory>`: replaces the session's working memory.
An opening tag may carry `importance="7"`, `tags="a, b"` and `title="..."`.

A tag that is malformed (unclosed, a stray closing tag, one tag inside another) is left
in the text and reported; nothing of it is stored. A well-formed one that cannot be
stored (a secret, no session) is taken out of the text and reported.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import NamedTuple

from kenomem import buffer
from kenomem.errors import KenomemError
from kenomem.remember import RememberRequest, remember
from kenomem.vault import Vault

TAGS = {"memory": "semantic", "chat-memory": "episodic", "working-memory": "working"}
_OPEN = re.compile(r"<(memory|chat-memory|working-memory)((?:\s+[\w-]+\s*=\s*\"[^\"]*\")*)\s*>")
_CLOSE = re.compile(r"</(memory|chat-memory|working-memory)\s*>")
_ATTR = re.compile(r"([\w-]+)\s*=\s*\"([^\"]*)\"")


class Block(NamedTuple):
    tag: str
    attrs: dict[str, str]
    content: str
    start: int  # offsets of the whole tagged block in the reply
    end: int


class Stored(NamedTuple):
    tag: str
    id: str
    path: str
    type: str
    action: str


class ExtractResult(NamedTuple):
    text: str  # the reply without the tags
    stored: list[Stored]
    problems: list[str]
    logged: list[str]  # buffer days written to


def parse(reply: str) -> tuple[list[Block], list[str]]:
    """The well-formed tagged blocks of `reply`, and what is wrong with the others."""
    blocks: list[Block] = []
    problems: list[str] = []
    pos = 0
    while True:
        opening = _OPEN.search(reply, pos)
        closing = _CLOSE.search(reply, pos)
        if closing is not None and (opening is None or closing.start() < opening.start()):
            problems.append(
                f"line {_line(reply, closing.start())}: </{closing.group(1)}> "
                "closes nothing; left in the text"
            )
            pos = closing.end()
            continue
        if opening is None:
            return blocks, problems
        tag = opening.group(1)
        end = _CLOSE.search(reply, opening.end())
        inner = _OPEN.search(reply, opening.end())
        where = f"line {_line(reply, opening.start())}"
        if end is None or end.group(1) != tag:
            problems.append(f"{where}: <{tag}> is never closed; left in the text")
        elif inner is not None and inner.start() < end.start():
            problems.append(f"{where}: <{tag}> holds another tag; left in the text")
        else:
            content = reply[opening.end() : end.start()].strip()
            if content:
                attrs = dict(_ATTR.findall(opening.group(2)))
                blocks.append(Block(tag, attrs, content, opening.start(), end.end()))
            else:
                problems.append(f"{where}: <{tag}> is empty; removed")
                blocks.append(Block(tag, {}, "", opening.start(), end.end()))
            pos = end.end()
            continue
        pos = opening.end()


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def strip(reply: str, blocks: list[Block]) -> str:
    """The reply without the blocks; a block alone on its lines takes its lines with it."""
    out = reply
    for block in sorted(blocks, key=lambda b: -b.start):
        start, end = block.start, block.end
        line_start = out.rfind("\n", 0, start) + 1
        line_end = out.find("\n", end)
        line_end = len(out) if line_end < 0 else line_end
        if not out[line_start:start].strip() and not out[end:line_end].strip():
            start, end = line_start, min(line_end + 1, len(out))
        out = out[:start] + out[end:]
    return re.sub(r"\n{3,}", "\n\n", out).strip("\n") + ("\n" if reply.endswith("\n") else "")


def extract(
    vault: Vault,
    reply: str,
    *,
    session: str | None = None,
    log: bool = False,
    who: str = "assistant",
    user_message: str | None = None,
    user: str = "user",
    now: datetime | None = None,
) -> ExtractResult:
    blocks, problems = parse(reply)
    stored: list[Stored] = []
    for block in blocks:
        if not block.content:
            continue
        kind = TAGS[block.tag]
        if kind != "semantic" and not session:
            problems.append(f"<{block.tag}> needs --session; not stored")
            continue
        try:
            result = remember(vault, _request(block, kind, session, now))
        except KenomemError as exc:
            problems.append(f"<{block.tag}> not stored: {exc.message}")
            continue
        stored.append(Stored(block.tag, result.id, result.path, result.type, result.action))
    text = strip(reply, blocks)
    logged = []
    if log:
        if user_message and user_message.strip():
            logged.append(
                buffer.log(vault, user_message, who=user, session=session or "", at=now).path
            )
        if text.strip():
            logged.append(buffer.log(vault, text, who=who, session=session or "", at=now).path)
    return ExtractResult(text, stored, problems, list(dict.fromkeys(logged)))


def _request(block: Block, kind: str, session: str | None, now: datetime | None) -> RememberRequest:
    attrs = block.attrs
    importance = attrs.get("importance", "").strip()
    return RememberRequest(
        text=block.content,
        type=kind,
        tags=tuple(t.strip() for t in attrs.get("tags", "").split(",") if t.strip()),
        importance=int(importance) if importance.isdigit() else None,
        scope=f"session:{session}" if kind == "episodic" else None,
        session=session if kind != "semantic" else None,
        title=attrs.get("title") or None,
        source="extract",
        now=now,
    )
