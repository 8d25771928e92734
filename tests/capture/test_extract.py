"""`extract`: what an LLM's reply tags to remember is stored, and the reply comes back
without the tags; malformed tags are left alone and reported."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from kenomem.capture.extract import ExtractRequest, extract
from kenomem.files import buffer
from kenomem.vault.core import CoreVault
from tests.conftest import Cli

NOW = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


def frontmatter(path: Path) -> dict[str, object]:
    return yaml.load(path.read_text(encoding="utf-8").split("---\n")[1], Loader=yaml.BaseLoader)


def memory_files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for folder in ("semantic", "episodic", "procedural", "working", "archive")
        for p in (root / folder).rglob("*.md")
    )


def all_text(root: Path) -> str:
    return "".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in root.rglob("*")
        if p.is_file() and ".kenomem" not in p.parts
    )


# -- each tag kind ----------------------------------------------------------------------------


def test_memory_is_semantic_and_global_with_its_attributes(
    vault_dir: Path, vault: CoreVault
) -> None:
    reply = (
        'Noted.\n<memory importance="8" tags="drinks, morning" title="Coffee order">'
        "The user drinks oat milk flat whites</memory>\n"
    )
    result = extract(vault, ExtractRequest(reply), now=NOW)
    assert result.problems == []
    (stored,) = result.stored
    assert (stored.tag, stored.type, stored.action) == ("memory", "semantic", "created")
    assert stored.path.startswith("semantic/")
    meta = frontmatter(vault_dir / stored.path)
    assert meta["id"] == stored.id
    assert meta["type"] == "semantic"
    assert meta["scope"] == "global"
    assert meta["importance"] == "8"
    assert meta["tags"] == ["drinks", "morning"]
    assert meta["title"] == "Coffee order"
    assert meta["source"] == "extract"
    assert "The user drinks oat milk flat whites" in (vault_dir / stored.path).read_text()


def test_chat_memory_is_episodic_scoped_to_the_session(vault_dir: Path, vault: CoreVault) -> None:
    reply = "<chat-memory>We agreed to review the draft on Thursday</chat-memory>"
    result = extract(vault, ExtractRequest(reply, session="chat-1"), now=NOW)
    (stored,) = result.stored
    assert (stored.tag, stored.type) == ("chat-memory", "episodic")
    assert stored.path.startswith("episodic/")
    meta = frontmatter(vault_dir / stored.path)
    assert meta["type"] == "episodic"
    assert meta["scope"] == "chat-1"  # the chat id itself
    assert meta["session"] == "chat-1"


@pytest.mark.parametrize("kind", ["semantic", "procedural", "episodic"])
def test_chat_memory_keeps_its_chats_scope_whatever_its_type(
    vault_dir: Path, vault: CoreVault, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Should `<chat-memory>` be filed as another type (a router's choice), it still
    belongs to its chat alone."""
    from kenomem.capture import extract as module

    monkeypatch.setitem(module.TAGS, "chat-memory", kind)
    reply = "<chat-memory>The draft review is on Thursday mornings</chat-memory>"
    (stored,) = extract(vault, ExtractRequest(reply, session="chat-1"), now=NOW).stored
    assert stored.type == kind
    assert frontmatter(vault_dir / stored.path)["scope"] == "chat-1"


def test_working_memory_replaces_the_sessions_working_memory(
    vault_dir: Path, vault: CoreVault
) -> None:
    first = extract(
        vault, ExtractRequest("<working-memory>Task: draft the plan</working-memory>", session="s1")
    )
    second = extract(
        vault,
        ExtractRequest(
            "<working-memory>Task: send the plan to Maria</working-memory>", session="s1"
        ),
    )
    other = extract(
        vault, ExtractRequest("<working-memory>Task: unrelated</working-memory>", session="s2")
    )
    assert first.stored[0].type == second.stored[0].type == "working"
    assert first.stored[0].path == second.stored[0].path
    assert first.stored[0].id == second.stored[0].id
    assert other.stored[0].path != first.stored[0].path
    text = (vault_dir / second.stored[0].path).read_text(encoding="utf-8")
    assert "send the plan to Maria" in text
    assert "draft the plan" not in text
    assert frontmatter(vault_dir / second.stored[0].path)["session"] == "s1"
    assert len(list((vault_dir / "working").glob("*.md"))) == 2


def test_all_three_tags_in_one_reply(vault: CoreVault) -> None:
    reply = (
        "Sure, noted.\n"
        "<memory>The user is allergic to peanuts</memory>\n"
        "<chat-memory>We agreed to review the draft on Thursday</chat-memory>\n"
        "<working-memory>Task: review the draft.</working-memory>\n"
        "Anything else?\n"
    )
    result = extract(vault, ExtractRequest(reply, session="chat-1"), now=NOW)
    assert [(s.tag, s.type) for s in result.stored] == [
        ("memory", "semantic"),
        ("chat-memory", "episodic"),
        ("working-memory", "working"),
    ]
    assert result.text == "Sure, noted.\nAnything else?\n"
    assert result.problems == []


def test_a_bad_importance_attribute_falls_back_to_the_default(
    vault_dir: Path, vault: CoreVault
) -> None:
    result = extract(
        vault, ExtractRequest('<memory importance="very">The user owns a red bicycle</memory>')
    )
    (stored,) = result.stored
    assert frontmatter(vault_dir / stored.path)["importance"] == "5"


# -- the reply without the tags ---------------------------------------------------------------


def test_a_tag_alone_on_its_lines_takes_its_lines_with_it(vault: CoreVault) -> None:
    reply = "Hi.\n\n<memory>The user lives in Lisbon</memory>\n\nBye.\n"
    assert extract(vault, ExtractRequest(reply)).text == "Hi.\n\nBye.\n"
    multi = "Hi.\n<memory>\nThe user\nlives in Porto\n</memory>\nBye."
    assert extract(vault, ExtractRequest(multi)).text == "Hi.\nBye."


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            "I'll note that <memory>The user likes green tea</memory> for later.",
            "I'll note that for later.",
        ),
        (
            "Sure. <memory>The user likes jazz</memory> Anything else?",
            "Sure. Anything else?",
        ),
        ("Got it.<memory>The user likes chess</memory>", "Got it."),
    ],
)
def test_an_inline_tag_leaves_the_sentence_readable(
    vault: CoreVault, reply: str, expected: str
) -> None:
    result = extract(vault, ExtractRequest(reply))
    assert len(result.stored) == 1
    assert "<" not in result.text
    assert result.text == expected


def test_a_reply_without_tags_comes_back_unchanged(vault_dir: Path, vault: CoreVault) -> None:
    reply = "Plain answer.\n\nWith <b>html</b> and a < sign.\n"
    result = extract(vault, ExtractRequest(reply))
    assert (result.text, result.stored, result.problems) == (reply, [], [])
    assert memory_files(vault_dir) == []


# -- malformed tags ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "Start <memory>The user likes tea and never closes it",
        "Done.</memory> stray",
        "<memory>outer <chat-memory>inner episode</chat-memory> text</memory>",
        "<memory>outer <memory>inner fact</memory> text</memory>",
        "<memory importance=7>The user likes tea</memory>",
        "<memory importance='7'>The user likes tea</memory>",
        "<memory important>The user likes tea</memory>",
        "<memory>The user likes tea</chat-memory>",
    ],
    ids=[
        "unclosed",
        "stray-closing",
        "nested",
        "nested-same",
        "unquoted-attribute",
        "single-quoted-attribute",
        "bare-attribute",
        "mismatched-closing",
    ],
)
def test_a_malformed_tag_stays_in_the_text_is_reported_and_nothing_is_stored(
    vault_dir: Path, vault: CoreVault, reply: str
) -> None:
    result = extract(vault, ExtractRequest(reply, session="s1"), now=NOW)
    assert result.text == reply
    assert result.problems
    assert all("line 1" in p for p in result.problems)
    assert result.stored == []
    assert memory_files(vault_dir) == []


def test_a_malformed_tag_does_not_stop_a_good_one(vault_dir: Path, vault: CoreVault) -> None:
    reply = "Line one.\n<memory>The user likes tea\nLine three.\n</chat-memory>\n"
    good = "<memory>The user has a dog called Rex</memory>\n"
    result = extract(vault, ExtractRequest(good + reply), now=NOW)
    assert [s.tag for s in result.stored] == ["memory"]
    assert result.text == reply
    assert any("line 3" in p and "never closed" in p for p in result.problems)
    assert any("line 5" in p and "closes nothing" in p for p in result.problems)
    (path,) = memory_files(vault_dir)
    assert "Rex" in (vault_dir / path).read_text(encoding="utf-8")


def test_an_empty_tag_is_removed_and_reported(vault_dir: Path, vault: CoreVault) -> None:
    result = extract(vault, ExtractRequest("Hello <memory>  </memory> there"))
    assert result.stored == []
    assert any("empty" in p for p in result.problems)
    assert "<memory>" not in result.text
    assert memory_files(vault_dir) == []


# -- what cannot be stored --------------------------------------------------------------------


@pytest.mark.parametrize("tag", ["chat-memory", "working-memory"])
def test_session_tags_without_a_session_are_reported_and_not_stored(
    vault_dir: Path, vault: CoreVault, tag: str
) -> None:
    reply = f"Ok.\n<{tag}>We talked about the trip</{tag}>\n<memory>The user lives in Oslo</memory>"
    result = extract(vault, ExtractRequest(reply), now=NOW)
    assert [s.tag for s in result.stored] == ["memory"]
    assert any(f"<{tag}>" in p and "--session" in p for p in result.problems)
    assert memory_files(vault_dir) == [result.stored[0].path]
    assert "trip" not in all_text(vault_dir / "episodic") + all_text(vault_dir / "working")


def test_a_secret_in_a_tag_is_refused_and_the_rest_is_stored(
    vault_dir: Path, vault: CoreVault
) -> None:
    reply = (
        f"<memory>The deploy token is {TOKEN}</memory>\n"
        "Done.\n"
        "<memory>The user deploys on Fridays</memory>\n"
    )
    result = extract(vault, ExtractRequest(reply, session="s1", log=True), now=NOW)
    assert [s.tag for s in result.stored] == ["memory"]
    assert "Fridays" in (vault_dir / result.stored[0].path).read_text(encoding="utf-8")
    assert len(result.problems) == 1
    assert "not stored" in result.problems[0]
    assert TOKEN not in result.problems[0]
    assert TOKEN not in all_text(vault_dir)
    assert TOKEN not in result.text


# -- logging the exchange ---------------------------------------------------------------------


def test_log_writes_the_user_message_then_the_cleaned_reply(
    vault_dir: Path, vault: CoreVault
) -> None:
    reply = "Sure.\n<memory>The user likes rye bread</memory>\nAnything else?\n"
    result = extract(
        vault,
        ExtractRequest(
            reply, session="chat-7", log=True, user_message="Remember that I like rye bread"
        ),
        now=NOW,
    )
    assert result.logged == ["buffer/2026-03-01.md"]
    entries = buffer.read_day(vault.root, "buffer/2026-03-01.md").entries
    assert [(e.who, e.session, e.text) for e in entries] == [
        ("user", "chat-7", "Remember that I like rye bread"),
        ("assistant", "chat-7", "Sure.\nAnything else?"),
    ]
    assert all(e.at == NOW for e in entries)


def test_without_log_nothing_goes_to_the_buffer(vault_dir: Path, vault: CoreVault) -> None:
    extract(
        vault,
        ExtractRequest("Hi <memory>The user likes rye bread</memory>", user_message="hi"),
        now=NOW,
    )
    assert buffer.days(vault.root) == []


def test_a_reply_that_was_only_tags_logs_nothing_of_it(vault: CoreVault) -> None:
    result = extract(
        vault, ExtractRequest("<memory>The user likes rye bread</memory>\n", log=True), now=NOW
    )
    assert result.text.strip() == ""
    assert result.logged == []
    assert buffer.days(vault.root) == []


# -- the command ------------------------------------------------------------------------------


def test_cli_reads_stdin_and_prints_the_reply_without_tags(cli: Cli, vault_dir: Path) -> None:
    reply = "Noted.\n<memory>The user plays the cello</memory>\nSee you.\n"
    result = cli("extract", input=reply)
    assert result.code == 0, result.err
    assert result.out == "Noted.\nSee you.\n"
    (path,) = memory_files(vault_dir)
    assert "cello" in (vault_dir / path).read_text(encoding="utf-8")


def test_cli_json_shape(cli: Cli, vault_dir: Path) -> None:
    reply = (
        "Ok.\n<memory>The user plays the cello</memory>\n"
        "<chat-memory>Talked about the concert</chat-memory>\n"
    )
    result = cli(
        "extract",
        "--session",
        "c1",
        "--log",
        "--user-message",
        "I play cello",
        "--json",
        input=reply,
    )
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert set(doc) == {"text", "stored", "problems", "logged"}
    assert doc["text"] == "Ok.\n"
    assert [(s["tag"], s["type"], s["action"]) for s in doc["stored"]] == [
        ("memory", "semantic", "created"),
        ("chat-memory", "episodic", "created"),
    ]
    for item in doc["stored"]:
        assert set(item) == {
            "tag",
            "id",
            "path",
            "type",
            "action",
            "superseded",
            "may_contradict",
            "pinned_by",
        }
        assert (vault_dir / item["path"]).is_file()
    assert doc["problems"] == []
    (logged,) = doc["logged"]
    assert logged.startswith("buffer/") and (vault_dir / logged).is_file()
    texts = (vault_dir / logged).read_text(encoding="utf-8")
    assert texts.index("I play cello") < texts.index("Ok.")


def test_cli_reports_problems_on_stderr(cli: Cli, vault_dir: Path) -> None:
    result = cli("extract", input="<chat-memory>no session here</chat-memory>\nBye.\n")
    assert result.code == 0
    assert result.out == "Bye.\n"
    assert "--session" in result.err
    assert memory_files(vault_dir) == []


@pytest.mark.parametrize("session", ["", "chat\nB", "x" * 200, "sk-live-" + "a1B2" * 10])
def test_a_bad_session_id_is_refused_even_when_nothing_is_tagged(
    vault_dir: Path, cli: Cli, session: str
) -> None:
    result = cli("extract", "--session", session, input="A reply with no tags.\n")
    assert result.code == 1, (result.code, result.out, result.err)
    assert "session id" in result.err
    assert result.out == ""
