"""`extract`: store what an LLM's reply marks to remember, and give back the reply without
the marks.

Tags, each on its own or inside text:
- `<memory>...</memory>`: a fact, semantic and global;
- `<chat-memory>...</chat-memory>`: an episode of this conversation (needs `--session`),
  scoped to that chat: only its `context` and `recall` show it;
- `<working-memory>...</working-memory>`: replaces the session's working memory.
An opening tag may carry `importance="7"`, `tags="a, b"` and `title="..."`.

Each memory is stored by `remember`: a fact it gives a new value for is superseded when
that is sure (unless `supersede` is false: `--no-supersede`), else named; words that ask
for it to be kept ("remember this", "never forget", "Always ...") pin it.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import NamedTuple

from kenomem.capture.log import LogRequest
from kenomem.capture.log import log as log_entry
from kenomem.capture.remember import Near, RememberRequest, Replaced, remember
from kenomem.errors import KenomemError
from kenomem.files.paths import check_label
from kenomem.files.textcheck import check_fields
from kenomem.vault.core import CoreVault

TAGS = {"memory": "semantic", "chat-memory": "episodic", "working-memory": "working"}
_OPEN = re.compile(r"<(memory|chat-memory|working-memory)((?:\s+[\w-]+\s*=\s*\"[^\"]*\")*)\s*>")
_CLOSE = re.compile(r"</(memory|chat-memory|working-memory)\s*>")
_ATTR = re.compile(r"([\w-]+)\s*=\s*\"([^\"]*)\"")
_CLOSES_UP = " \t.,;:!?)]}"  # after a removed tag, what the blank before it goes with


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
    superseded: list[Replaced] = []  # noqa: RUF012 - read-only
    may_contradict: list[Near] = []  # noqa: RUF012 - read-only
    pinned_by: str | None = None  # the words that asked for it to be kept


class ExtractRequest(NamedTuple):
    reply: str = ""  # the LLM's reply (the command line reads it from stdin)
    session: str | None = None  # the conversation: needed for <chat-memory>, <working-memory>
    log: bool = False  # also log the exchange to today's buffer
    who: str = "assistant"  # who wrote the reply, in the log
    user_message: str | None = None  # the message the reply answers, logged first
    user: str = "user"  # who wrote that message, in the log
    supersede: bool = True  # false: a fact a memory gives a new value for stays active


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
        if inner is not None and (end is None or inner.start() < end.start()):
            group_end = _group_end(reply, opening.end())
            if group_end is not None:  # the tags inside are part of it: none is stored
                problems.append(f"{where}: <{tag}> holds another tag; left in the text")
                pos = group_end
                continue
            problems.append(f"{where}: <{tag}> is never closed; left in the text")
        elif end is None or end.group(1) != tag:
            problems.append(f"{where}: <{tag}> is never closed; left in the text")
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


def _group_end(reply: str, pos: int) -> int | None:
    """Where a tag opened just before `pos` is closed, counting the tags opened inside it;
    None if it never is."""
    depth = 1
    while depth:
        opening = _OPEN.search(reply, pos)
        closing = _CLOSE.search(reply, pos)
        if closing is None:
            return None
        if opening is not None and opening.start() < closing.start():
            depth, pos = depth + 1, opening.end()
        else:
            depth, pos = depth - 1, closing.end()
    return pos


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
        before, after = out[line_start:start], out[end:line_end]
        if not before.strip() and not after.strip():
            start, end = line_start, min(line_end + 1, len(out))
        elif not before.strip():  # first on its line: no blank left to start it
            start, end = line_start + len(before), end + len(after) - len(after.lstrip(" \t"))
        elif not after or after[0] in _CLOSES_UP:  # no blank left before what follows
            start -= len(before) - len(before.rstrip(" \t"))
        out = out[:start] + out[end:]
    return re.sub(r"\n{3,}", "\n\n", out).strip("\n") + ("\n" if reply.endswith("\n") else "")


def extract(
    vault: CoreVault, request: ExtractRequest, *, now: datetime | None = None
) -> ExtractResult:
    reply, session = request.reply, request.session
    if session is not None:  # refused before anything is stored, tags or none
        check_fields({"session id": session})
        check_label(session, "session id")
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
            asked = _request(block, kind, session, now)._replace(supersede=request.supersede)
            result = remember(vault, asked)
        except KenomemError as exc:
            problems.append(f"<{block.tag}> not stored: {exc.message}")
            continue
        stored.append(
            Stored(
                block.tag,
                result.id,
                result.path,
                result.type,
                result.action,
                result.superseded,
                result.may_contradict,
                result.pinned_by,
            )
        )
    text = strip(reply, blocks)
    logged = []
    if request.log:
        said_by = ((request.user_message or "", request.user), (text, request.who))
        for said, speaker in said_by:
            if not said.strip():
                continue
            try:
                logged.append(log_entry(vault, LogRequest(said, speaker, session, at=now)).path)
            except KenomemError as exc:
                problems.append(f"not logged: {exc.message}")
    return ExtractResult(text, stored, problems, list(dict.fromkeys(logged)))


def _request(block: Block, kind: str, session: str | None, now: datetime | None) -> RememberRequest:
    attrs = block.attrs
    importance = attrs.get("importance", "").strip()
    return RememberRequest(
        text=block.content,
        type=kind,
        tags=tuple(t.strip() for t in attrs.get("tags", "").split(",") if t.strip()),
        importance=int(importance) if importance.isdigit() else None,
        # What the chat marked as its own stays in that chat, whatever its type.
        scope=session if block.tag == "chat-memory" else None,
        session=session if kind != "semantic" else None,
        title=attrs.get("title") or None,
        source="extract",
        now=now,
    )
