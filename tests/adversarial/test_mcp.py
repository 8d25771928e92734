"""Hostile arguments from an MCP client: every tool and resource, driven in-process.

The server object is the one `kenomem mcp` serves (`build_server`), called as the SDK calls
it, so the argument schemas run too. Promises (docs/security.md): a call ends in a result or
a tool/resource error the model can read, never an "unexpected" failure; a refused call
writes nothing; a control character or a secret in any argument is refused or never stored;
an accepted memory reads back as it was given; nothing outside the vault is read or written.
(`tests/test_mcp.py` drives the real server over stdio.)
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

pytest.importorskip("mcp")

from mcp.server.mcpserver.exceptions import ResourceError, ToolError

from kenomem.api import Vault
from kenomem.mcp_server import build_server
from tests.adversarial.hostile import (
    DOORS,
    LABEL_SECRETS,
    SECRETS,
    Secret,
    clean_label,
    clean_text,
    fresh_vault,
    hostile_label,
    hostile_text,
    refused_control,
    secret_found,
    strings_in,
    tree,
)

texts = st.one_of(clean_text(), hostile_text())
labels = st.one_of(clean_label(), hostile_label())
maybe = st.none


def call(run: Callable[[], Awaitable[Any]]) -> tuple[Any, str | None]:
    """(the result, None) or (None, the error's text) of one call to the server."""

    async def main() -> Any:
        return await run()

    try:
        return anyio.run(main), None
    except (ToolError, ResourceError) as exc:
        message = str(exc)
        assert "unexpected" not in message, message
        assert "Traceback" not in message, message
        return None, message


class Server:
    def __init__(self, base: Path) -> None:
        self.root = fresh_vault(base)
        self.api = Vault(self.root, source="mcp")
        self.server = build_server(self.api)

    def tool(self, name: str, args: dict[str, Any]) -> tuple[Any, str | None]:
        return call(lambda: self.server.call_tool(name, args))

    def resource(self, uri: str) -> tuple[Any, str | None]:
        return call(lambda: self.server.read_resource(uri))


@st.composite
def remember_args(draw: st.DrawFn) -> dict[str, Any]:
    args: dict[str, Any] = {"text": draw(texts)}
    optional = {
        "type": st.sampled_from(["semantic", "episodic", "procedural", "working", "bogus", ""]),
        "tags": st.lists(labels, max_size=3),
        "importance": st.integers(-5, 15),
        "scope": labels,
        "session": labels,
        "title": texts,
        "pinned": st.booleans(),
        "supersedes": labels,
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            args[key] = draw(strategy)
    return args


@DOORS
@given(args=remember_args())
@example(args={"text": "a \x00 b"})
@example(args={"text": "plain", "tags": ["x\x1by"]})
def test_remember_refuses_or_keeps_what_the_model_sent(
    tmp_path: Path, args: dict[str, Any]
) -> None:
    s = Server(tmp_path / "vaults")
    outside = tree(tmp_path / "outside")
    before = tree(s.root)
    result, error = s.tool("remember", args)
    if any(refused_control(v) for v in strings_in(args)):
        assert error is not None, f"a control character was accepted: {args!r}"
    if error is not None:
        assert tree(s.root) == before
    else:
        made = result.structured_content
        shown = s.api.show(made["id"]).memory
        text = args["text"].replace("\r\n", "\n").strip()
        assert shown.body.replace("\r\n", "\n").strip() == text or made["action"] != "created"
        if "tags" in args and made["action"] == "created":
            assert list(shown.tags) == list(
                dict.fromkeys(t.strip() for t in args["tags"] if t.strip())
            )
        assert (s.root / made["path"]).resolve().is_relative_to(s.root.resolve())
    assert tree(tmp_path / "outside") == outside


@DOORS
@given(
    text=texts,
    session=maybe() | labels,
    who=maybe() | labels,
    channel=maybe() | labels,
)
@example(text="a \x00 b", session=None, who=None, channel=None)
def test_log_refuses_or_appends_what_the_model_sent(
    tmp_path: Path, text: str, session: str | None, who: str | None, channel: str | None
) -> None:
    s = Server(tmp_path / "vaults")
    args = {"text": text, "session": session, "who": who, "channel": channel}
    args = {k: v for k, v in args.items() if v is not None}
    before = tree(s.root)
    _result, error = s.tool("log", args)
    if any(refused_control(v) for v in strings_in(args)):
        assert error is not None, f"a control character was accepted: {args!r}"
    if error is not None:
        assert tree(s.root) == before
    else:
        days = list((s.root / "buffer").glob("*.md"))
        assert len(days) == 1


@DOORS
@given(
    tool=st.sampled_from(["recall", "context", "forget"]),
    query=texts,
    session=labels,
    extra=st.dictionaries(
        st.sampled_from(["limit", "budget", "since", "until", "tags", "scopes", "types"]),
        st.one_of(st.integers(-3, 10**7), texts, st.lists(labels, max_size=2)),
        max_size=3,
    ),
)
def test_reading_tools_answer_or_say_why(
    tmp_path: Path, tool: str, query: str, session: str, extra: dict[str, Any]
) -> None:
    s = Server(tmp_path / "vaults")
    s.api.remember("The ferry to the harbour leaves at nine", tags=["travel"])
    outside = tree(tmp_path / "outside")
    args: dict[str, Any] = {"id": query} if tool == "forget" else {"query": query}
    if tool == "context":
        args["session"] = session
    if tool != "forget":
        args.update(extra)
    result, _error = s.tool(tool, args)
    if result is not None and tool == "context":
        text = result.content[0].text
        assert "\x00" not in text
    assert tree(tmp_path / "outside") == outside


@DOORS
@given(session=labels, name=labels)
def test_resources_never_leave_the_vault(tmp_path: Path, session: str, name: str) -> None:
    s = Server(tmp_path / "vaults")
    canary = tmp_path / "outside" / "canary.md"
    canary.parent.mkdir(exist_ok=True)
    canary.write_text("---\nid: mem_canary\ntitle: canary\n---\n\ncanary sings outside\n")
    for uri in (
        f"kenomem://working/{session}",
        f"kenomem://memory/{name}",
        f"kenomem://working/{name}/../../outside/canary",
        "kenomem://foundation",
    ):
        result, _error = s.resource(uri)
        if result is not None:
            assert "canary sings" not in "".join(str(c.content) for c in result), uri


# -- secrets --------------------------------------------------------------------------------


def secret_calls(secret: Secret) -> list[tuple[str, dict[str, Any]]]:
    calls = [
        ("remember", {"text": f"note: {secret.text}"}),
        ("remember", {"text": "a plain note", "title": secret.text}),
        ("log", {"text": f"said {secret.text}"}),
    ]
    if secret.label:
        calls += [
            ("remember", {"text": "a plain note", "scope": secret.text}),
            ("remember", {"text": "a plain note", "tags": [secret.text]}),
            ("remember", {"text": "scratch", "type": "working", "session": secret.text}),
            ("log", {"text": "said hello", "session": secret.text}),
            ("log", {"text": "said hello", "who": secret.text}),
            ("log", {"text": "said hello", "channel": secret.text}),
        ]
    return calls


@pytest.mark.parametrize("secret", SECRETS, ids=lambda s: s.kind)
def test_no_secret_the_model_sends_is_stored(tmp_path: Path, secret: Secret) -> None:
    for n, (tool, args) in enumerate(secret_calls(secret)):
        s = Server(tmp_path / f"v{n}")
        _result, error = s.tool(tool, args)
        assert secret_found(s.root, [secret.needle]) == [], (tool, args)
        if error is not None:
            assert secret.needle not in error, "the refusal quotes the secret"


def test_label_secrets_cover_every_label_argument() -> None:
    # The labels above are real secrets of each kind that can be one token.
    assert {s.kind for s in LABEL_SECRETS} >= {"GitHub token", "AWS access key"}
    assert all(" " not in s.text for s in LABEL_SECRETS)


# -- a memory file that becomes a link out of the vault -----------------------------------------


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symlinks")
def test_a_memory_swapped_for_a_link_out_is_not_served(tmp_path: Path) -> None:
    """The index knows the memory; the file is now a link to a file outside the vault."""
    s = Server(tmp_path / "vaults")
    made = s.api.remember("The alpaca sleeps in the barn", type="semantic")
    outside = tmp_path / "outside" / "secret.md"
    outside.parent.mkdir()
    outside.write_text(f"---\nid: {made.id}\ntitle: Alpaca\n---\n\nalpaca private key here\n")
    path = s.root / made.path
    path.unlink()
    path.symlink_to(outside)
    result, _error = s.resource(f"kenomem://memory/{made.id}")
    if result is not None:
        assert "private key" not in "".join(str(c.content) for c in result)
    result, _error = s.tool("recall", {"query": "alpaca barn"})
    if result is not None:
        assert "private key" not in str(result.structured_content)
    result, _error = s.tool("context", {"query": "alpaca"})
    if result is not None:
        assert "private key" not in result.content[0].text
    assert path.is_symlink() and outside.read_text().endswith("here\n")
