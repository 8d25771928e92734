"""`context` says a text once: a turn already in "This conversation" is not repeated as a
memory, a day summary and its episodes are not both shown, a fact drawn from a turn in
the block gives way to it; `--tag` gives each agent its own view; `--now` builds the
block as of a past moment."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.agents import repeats
from kenomem.api import Vault
from tests.conftest import TEMPLATE, Cli, write

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
BEFORE_SLEEP = datetime(2026, 3, 2, 2, 0, tzinfo=UTC)  # the day is consolidated at 03:00
SCRIPT = "We deploy the api with the blue-green script."
VPN = "The api deploy needs the VPN first."
BUFFER = f"""---
date: 2026-03-01
consolidated: 2026-03-02T03:00:00Z
consolidated_entries: 2
---

## 09:00:00 Ana @s1
{SCRIPT}

## 09:05:00 Ana @s1
{VPN}
"""


def memory(
    mem_id: str,
    kind: str,
    created: str,
    body: str,
    tags: str = "[]",
    importance: int = 6,
    **extra: str,
) -> str:
    more = "".join(f"{key}: {value}\n" for key, value in extra.items())
    return (
        f"---\nid: {mem_id}\ntype: {kind}\ncreated: {created}\nwhen: {created}\n"
        f"importance: {importance}\ntags: {tags}\n{more}---\n\n{body}\n"
    )


def deploy_day(vault_dir: Path) -> None:
    """The day of the issue's "deploy the api": two turns of session s1, their
    episodes (the speaker named), the day's summary, and a fact drawn from a turn."""
    write(vault_dir, "buffer/2026-03-01.md", BUFFER)
    write(
        vault_dir,
        "episodic/2026-03/script.md",
        memory(
            "mem_e1", "episodic", "2026-03-01T09:00:00Z", f"Ana: {SCRIPT}",
            buffer="buffer/2026-03-01.md#09:00:00",
        ),
    )  # fmt: skip
    write(
        vault_dir,
        "episodic/2026-03/vpn.md",
        memory(
            "mem_e2", "episodic", "2026-03-01T09:05:00Z", f"Ana: {VPN}",
            buffer="buffer/2026-03-01.md#09:05:00",
        ),
    )  # fmt: skip
    summary = (
        "2 entries, 2 kept as episodes, 0 trivia.\nWith: Ana.\n\nHighlights:\n"
        f"- 09:00 {SCRIPT}\n- 09:05 {VPN}"
    )
    write(
        vault_dir,
        "episodic/2026-03/day-summary.md",
        memory(
            "mem_sum", "episodic", "2026-03-01T09:05:00Z", summary, tags="[summary]",
            importance=9, buffer="buffer/2026-03-01.md",
        ),
    )  # fmt: skip
    write(
        vault_dir,
        "semantic/deploys.md",
        memory(
            "mem_f1", "semantic", "2026-03-01T09:00:00Z",
            "The api deploys with the blue-green script.", tags="[fact]",
            sources="[buffer/2026-03-01.md#09:00:00]",
        ),
    )  # fmt: skip


def test_a_turn_in_the_conversation_is_not_repeated_as_a_memory(vault_dir: Path) -> None:
    deploy_day(vault_dir)
    result = Vault(vault_dir).context(
        "deploy the api", session="s1", budget=2000, touch=False, now=BEFORE_SLEEP
    )
    text = result.text
    assert "## This conversation" in text
    assert text.count("blue-green script") == 1, text  # the turn; not the episode,
    assert text.count("VPN first") == 1, text  # the summary, nor the fact drawn from it
    assert "The api deploys with" not in text
    shown = {i for p in result.parts for i in p.ids}
    assert not shown & {"mem_e1", "mem_e2", "mem_sum", "mem_f1"}


def test_after_the_sleep_the_conversation_is_memory_found_by_relevance(vault_dir: Path) -> None:
    deploy_day(vault_dir)
    result = Vault(vault_dir).context(
        "deploy the api", session="s1", budget=2000, touch=False, now=NOW
    )
    text = result.text
    assert "## This conversation" not in text  # what it consumed is memory now
    assert text.count("blue-green script") == 1, text
    assert text.count("VPN first") == 1, text
    shown = {i for p in result.parts for i in p.ids}
    assert shown & {"mem_e1", "mem_e2", "mem_sum"}  # the episodes, or their day's summary


def test_a_day_summary_and_its_episodes_are_not_both_shown(vault_dir: Path) -> None:
    deploy_day(vault_dir)
    text = Vault(vault_dir).context("deploy the api", budget=2000, touch=False, now=NOW).text
    assert text.count("blue-green script") == 1, text
    assert text.count("VPN first") == 1, text
    assert "## Recent days" in text


def test_a_memory_saying_more_keeps_only_what_is_new(vault_dir: Path) -> None:
    deploy_day(vault_dir)
    write(
        vault_dir,
        "semantic/more.md",
        memory(
            "mem_f2", "semantic", "2026-03-01T10:00:00Z",
            f"{VPN} The VPN profile is called ops-east.", importance=9,
        ),
    )  # fmt: skip
    text = Vault(vault_dir).context(
        "VPN profile", session="s1", budget=2000, touch=False, now=BEFORE_SLEEP
    )
    assert text.text.count("VPN first") == 1, text.text
    assert "- The VPN profile is called ops-east." in text.text


def test_the_tag_gives_each_agent_its_own_view(cli: Cli, vault_dir: Path) -> None:
    for mem_id, tag, text in (
        ("mem_a", "[agent-a]", "The staging database is on port 5433."),
        ("mem_b", "[agent-b]", "The staging database password rotates monthly."),
        ("mem_ab", "[agent-a, agent-b]", "The staging database lives in Frankfurt."),
        ("mem_none", "[]", "The staging database was migrated in May."),
    ):
        write(
            vault_dir,
            f"semantic/{mem_id}.md",
            memory(mem_id, "semantic", "2026-03-01T09:00:00Z", text, tags=tag),
        )
    mine = cli("context", "staging database", "--tag", "agent-a", "--no-touch", "--json")
    assert mine.code == 0, mine.err
    import json

    ids = {i for p in json.loads(mine.out)["parts"] for i in p["ids"]}
    assert ids == {"mem_a", "mem_ab"}
    both = cli("context", "staging database", "--tag", "agent-a", "--tag", "agent-b", "--no-touch")
    assert "Frankfurt" in both.out and "5433" not in both.out and "rotates" not in both.out
    everyone = cli("context", "staging database", "--no-touch").out
    assert all(w in everyone for w in ("5433", "rotates", "Frankfurt", "migrated"))


def test_now_builds_the_block_as_of_then(cli: Cli, vault_dir: Path) -> None:
    deploy_day(vault_dir)
    then = cli("context", "--session", "s1", "--now", "2026-03-01T09:02", "--no-touch")
    assert then.code == 0, then.err
    assert "## This conversation" in then.out and "blue-green script" in then.out
    assert "VPN" not in then.out  # said at 09:05, and its memories made then
    today = cli("context", "--session", "s1", "--no-touch").out  # months later
    assert "## This conversation" not in today
    bad = cli("context", "--now", "not a time")
    assert bad.code == 2 or bad.code == 1


# -- a context never holds the same sentence twice ----------------------------------------

POOL = [
    "The release train leaves every second Thursday.",
    "Ana owns the n8n instance.",
    "The office wifi network is called Otter5G.",
    "Deploys go out with the blue-green script.",
    "The staging database is on port 5433.",
    "Buddy and I have a great time doing walks.",
]
_LEAD = re.compile(r"^- (?:\d{4}-\d{2}-\d{2}(?: \d\d:\d\d)?(?: \w+)?: |\d\d:\d\d (?:\w+: )?)")


def block_sentences(text: str) -> list[str]:
    """The sentences of the block's memory and conversation lines."""
    found = []
    for line in text.splitlines():
        if not line.startswith("- ") or line.startswith("- When "):
            continue
        line = _LEAD.sub("", line)
        for sentence in re.split(r"(?<=[.!?])\s+", line):
            sentence = re.sub(r"^(?:- )?(?:\d\d:\d\d )?(?:Ana: )?", "", sentence.strip())
            if sentence:
                found.append(sentence)
    return found


memories = st.lists(
    st.tuples(
        st.sampled_from(["semantic", "episodic", "summary"]),
        st.lists(st.integers(0, len(POOL) - 1), min_size=1, max_size=3, unique=True),
        st.booleans(),  # the speaker named
    ),
    min_size=1,
    max_size=6,
)
turns = st.lists(st.integers(0, len(POOL) - 1), max_size=3, unique=True)


@settings(max_examples=12)
@given(made=memories, said=turns)
def test_a_context_never_holds_the_same_sentence_twice(
    made: list[tuple[str, list[int], bool]], said: list[int]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        vault_dir = Path(tmp) / "vault"
        shutil.copytree(TEMPLATE, vault_dir)
        entries = "".join(f"## 08:{i:02d}:00 Ana @s1\n{POOL[n]}\n\n" for i, n in enumerate(said))
        write(vault_dir, "buffer/2026-03-02.md", f"---\ndate: 2026-03-02\n---\n\n{entries}")
        for i, (kind, picked, named) in enumerate(made):
            texts = [POOL[n] for n in picked]
            if kind == "summary":
                body = "Highlights:\n" + "\n".join(f"- 09:0{j} {t}" for j, t in enumerate(texts))
                doc = memory(f"mem_{i}", "episodic", "2026-03-01T09:00:00Z", body, "[summary]", 9)
            else:
                body = ("Ana: " if named else "") + " ".join(texts)
                doc = memory(f"mem_{i}", kind, f"2026-03-01T09:{i:02d}:00Z", body)
            write(vault_dir, f"{kind}/m{i}.md", doc)
        api = Vault(vault_dir)
        for query in ("", "release train wifi deploys staging walks n8n"):
            text = api.context(query, session="s1", budget=4000, touch=False, now=NOW).text
            counted = Counter(block_sentences(text))
            assert not [s for s, n in counted.items() if n > 1], text


# -- the pure rule ---------------------------------------------------------------------------


def test_pieces_and_what_counts_as_shown() -> None:
    seen = repeats.Seen()
    seen.add("- 09:01 Dana: The wifi is Otter5G. Thanks!")
    assert seen.holds("The wifi is Otter5G.")
    assert seen.holds("Dana: The wifi is Otter5G.")
    assert seen.holds("- 2026-03-01: the WIFI is otter5g")
    assert not seen.holds("The wifi is Otter6G.")
    assert not seen.holds("Sam: the wifi is down")
    summary = repeats.pieces("2 entries.\nWith: Dana.\n\n- 09:01 a\n- 09:02 b", summary=True)
    assert [p.counts for p in summary] == [False, False, True, True]
    assert all(p.counts for p in repeats.pieces("One. Two!\nThree?"))
    said = repeats.pieces("Dana: the wifi is Otter5G.\nSam: ok then.\n\n4 entries, 1 trivia.", True)
    assert [p.counts for p in said] == [True, True, False]


def test_a_sentence_cut_leaves_its_speaker_with_the_next() -> None:
    first = [repeats.Shown("- Gina: Long time no talk!")]
    episode = repeats.Shown(
        "Gina: Long time no talk! I just got accepted for a fashion internship!",
        repeats.pieces("Gina: Long time no talk! I just got accepted for a fashion internship!"),
    )
    [verdict] = repeats.walk(first, [episode])
    assert verdict.keep
    assert [p.text for p in verdict.pieces] == [
        "Gina: I just got accepted for a fashion internship!"
    ]


def test_after_the_sleep_cycle_a_turn_is_in_the_block_once(cli: Cli) -> None:
    said = [SCRIPT, VPN, "My dog Rex hates the vacuum cleaner and barks at it."]
    for minute, text in enumerate(said):
        logged = cli(
            "log", text, "--who", "Dana", "--session", "s1", "--at", f"2026-03-01T09:0{minute}"
        )
        assert logged.code == 0, logged.err
    assert cli("consolidate", "--date", "2026-03-01").code == 0
    for session in (["--session", "s1"], []):
        block = cli(
            "context", "deploy the api", *session, "--now", "2026-03-02T09:00", "--no-touch"
        )
        assert block.code == 0, block.err
        for text in said:
            assert block.out.count(text.rstrip(".")) <= 1, block.out
    block = cli("context", "deploy the api", "--session", "s1", "--now", "2026-03-02T09:00")
    assert block.out.count("blue-green script") == 1, block.out
