"""`context`: the block for a system prompt, packed into a token budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.agents.context import Entry, fill
from kenomem.agents.progressive import ChatEntry, SummaryCache, heuristic_summary, plan_chat
from kenomem.agents.tokens import counter, estimate
from kenomem.api import Vault
from kenomem.files import fm
from tests.conftest import Cli, write

NOW = datetime(2026, 3, 10, 15, 0, tzinfo=UTC)


@pytest.fixture
def api(vault_dir: Path) -> Vault:
    return Vault(vault_dir)


def _foundation_first_line(vault_dir: Path) -> str:
    text = (vault_dir / "foundation.md").read_text(encoding="utf-8")
    body = text[fm.split(text).body_start :].strip()
    return body.splitlines()[0]


def _stock(api: Vault) -> None:
    api.remember("Deploys of the api go through the staging cluster first", type="semantic")
    api.remember("Prefers short direct answers", type="semantic", pinned=True)
    api.remember("The cat is called Biscuit", type="semantic")
    api.remember("Met Priya about the api migration", type="episodic", now=NOW - timedelta(days=1))


# -- the budget ----------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [1, 5, 20, 60, 150, 400, 2000, 20000])
def test_never_over_budget_and_foundation_first(api: Vault, vault_dir: Path, budget: int) -> None:
    _stock(api)
    api.remember("Task: ship it", type="working", session="s1")
    for i in range(30):
        api.log(f"entry {i} about the api deployment and the staging cluster", session="s1")
    result = api.context("deploy the api", session="s1", budget=budget, touch=False)
    assert estimate(result.text) <= budget
    assert result.tokens <= budget
    assert result.parts[0].name == "foundation"
    if result.text:
        assert result.text.startswith(_foundation_first_line(vault_dir))


def test_large_budget_shows_every_part(api: Vault) -> None:
    _stock(api)
    api.remember("Task: ship it", type="working", session="s1")
    api.log("we talked about the api", session="s1", who="Dana")
    result = api.context("api", session="s1", budget=5000, touch=False)
    names = [p.name for p in result.parts if p.text]
    assert names == ["foundation", "working", "facts", "recent", "chat"]
    assert "staging cluster" in result.text
    assert "Met Priya" in result.text
    assert "Dana: we talked about the api" in result.text
    assert "more memories not shown" not in result.text


def test_irrelevant_memories_do_not_pop_up(api: Vault) -> None:
    _stock(api)
    result = api.context("deploy the api", budget=5000, touch=False)
    assert "staging cluster" in result.text
    assert "Biscuit" not in result.text


def test_without_query_pinned_and_important_facts(api: Vault) -> None:
    _stock(api)
    result = api.context(budget=5000, touch=False)
    facts = next(p for p in result.parts if p.name == "facts").text
    assert facts.index("Prefers short direct answers") < facts.index("Biscuit")


def test_a_part_that_does_not_fit_says_what_it_left_out(api: Vault, vault_dir: Path) -> None:
    for i in range(40):
        text = f"Fact number {i} about the widget factory and its widgets"
        write(vault_dir, f"semantic/fact-{i}.md", f"---\ntitle: fact {i}\n---\n\n{text}\n")
    result = api.context("widget factory", budget=300, touch=False)
    facts = next(p for p in result.parts if p.name == "facts")
    assert facts.left_out > 0
    assert result.left_out == {"facts": facts.left_out}
    note = f"_Left out to fit the budget: {facts.left_out} memories_"
    assert result.left_out_note == note
    assert result.text.rstrip("\n").endswith(note)
    # cut between entries: every shown line is a whole memory
    for line in facts.text.splitlines()[2:]:
        assert line.startswith("- Fact number") and line.endswith("widgets")


def test_touches_what_it_shows_unless_told_not_to(api: Vault, vault_dir: Path) -> None:
    made = api.remember("Deploys of the api go through the staging cluster first", type="semantic")
    other = api.remember("The cat is called Biscuit", type="semantic")
    api.context("deploy the api", budget=2000, touch=False)
    assert api.show(made.id).memory.access_count == 0
    api.context("deploy the api", budget=2000)
    assert api.show(made.id).memory.access_count == 1
    assert api.show(other.id).memory.access_count == 0


# -- working memory and patterns ---------------------------------------------------------------


def test_working_memory_fresh_shows_age_stale_is_left_out(api: Vault, vault_dir: Path) -> None:
    api.remember("Task: migrate the api", type="working", session="s1")
    fresh = api.context(session="s1", budget=2000, touch=False)
    assert "## Working memory (session s1, updated just now)" in fresh.text
    assert "migrate the api" in fresh.text
    later = datetime.now(UTC) + timedelta(days=8)
    stale = api.context(session="s1", budget=2000, touch=False, now=later)
    assert "migrate the api" not in stale.text
    other = api.context(session="s2", budget=2000, touch=False)
    assert "migrate the api" not in other.text


def test_patterns_matching_the_query_and_pinned_ones(api: Vault, vault_dir: Path) -> None:
    write(
        vault_dir,
        "procedural/port.md",
        "---\ntype: procedural\ntitle: Port in use\ntrigger: docker + port\n---\n\n"
        "Stop the local Postgres first.\n",
    )
    write(
        vault_dir,
        "procedural/tone.md",
        "---\ntype: procedural\ntitle: Tone\npinned: true\n---\n\nAnswer in British English.\n",
    )
    hit = api.context("docker says the port is taken", budget=2000, touch=False)
    assert "- When docker + port: Stop the local Postgres first." in hit.text
    assert "Answer in British English." in hit.text
    miss = api.context("docker is slow", budget=2000, touch=False)
    assert "Postgres" not in miss.text
    assert "Answer in British English." in miss.text


# -- long sessions ------------------------------------------------------------------------------


def _entries(n: int) -> list[ChatEntry]:
    return [
        ChatEntry(f"buffer/2026-03-10.md#{i:05d}", f"{i // 60:02d}:{i % 60:02d}", "Dana", t)
        for i, t in enumerate(
            f"Entry {i} talks about topic{i} at some length. Then more words." for i in range(n)
        )
    ]


def test_short_session_is_verbatim() -> None:
    plan = plan_chat(_entries(5), 1000, estimate, heuristic_summary)
    assert [line.kind for line in plan.lines] == ["verbatim"] * 5
    assert plan.left_out == plan.summarised == 0


def test_long_session_older_is_coarser_latest_verbatim() -> None:
    entries = _entries(300)
    plan = plan_chat(entries, 400, estimate, heuristic_summary)
    assert plan.lines[-1].kind == "verbatim"
    assert "topic299" in plan.lines[-1].text
    summaries = [line for line in plan.lines if line.kind == "summary"]
    assert summaries, "older stretches are summarised"
    sizes = [line.entries for line in summaries]
    assert sizes == sorted(sizes, reverse=True), "older summaries cover more entries"
    shown = sum(line.entries for line in plan.lines)
    assert shown + plan.left_out == len(entries)
    assert sum(estimate(line.text + "\n") for line in plan.lines) <= 400


def test_query_pulls_raw_entries_back() -> None:
    entries = _entries(200)
    plan = plan_chat(
        entries, 400, estimate, heuristic_summary, wanted=lambda t: int("topic17 " in t)
    )
    recalled = [line for line in plan.lines if line.kind == "recalled"]
    assert len(recalled) == 1 and "Entry 17 talks about topic17" in recalled[0].text


def test_summaries_are_cached_as_derived_files(tmp_path: Path) -> None:
    cache = SummaryCache(tmp_path, "summaries", heuristic_summary)
    plan_chat(_entries(120), 300, estimate, cache)
    files = sorted((tmp_path / "summaries").iterdir())
    assert files and cache.written == len(files)
    again = SummaryCache(tmp_path, "summaries", lambda s, level: pytest.fail("regenerated"))
    plan_chat(_entries(120), 300, estimate, again)
    assert again.written == 0


def test_long_session_in_context_keeps_the_buffer(api: Vault, vault_dir: Path) -> None:
    for i in range(120):
        api.log(f"note {i}: talked about topic{i} and more", session="long", who="Dana")
    before = {p: p.read_bytes() for p in (vault_dir / "buffer").iterdir()}
    result = api.context("topic7", session="long", budget=500, touch=False)
    chat = next(p for p in result.parts if p.name == "chat").text
    assert "note 119" in chat
    assert "note 7: talked about topic7" in chat  # named by the query: back verbatim
    assert "entries (Dana)" in chat  # summaries of older stretches
    assert {p: p.read_bytes() for p in (vault_dir / "buffer").iterdir()} == before
    assert list((vault_dir / ".kenomem" / "summaries" / "long").iterdir())


# -- the pure packing -------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(min_size=1, max_size=120), max_size=30),
    allowance=st.integers(min_value=0, max_value=800),
)
def test_fill_never_over_its_allowance(texts: list[str], allowance: int) -> None:
    part = fill("facts", "## What you know", [Entry(t) for t in texts], allowance, estimate)
    assert part.tokens <= allowance
    assert estimate(part.text + "\n\n") <= allowance or not part.text
    assert part.shown + part.left_out == len(texts)


def test_unknown_tokenizer_falls_back_to_the_estimate() -> None:
    warned: list[str] = []
    count, name = counter("sentencepiece:foo", warned.append)
    assert name == "estimate" and count("abcdefgh") == 2 and warned


# -- the command line ---------------------------------------------------------------------------


def test_cli_prints_the_block_and_the_totals_on_stderr(cli: Cli, api: Vault) -> None:
    _stock(api)
    result = cli("context", "deploy", "the", "api", "--budget", "400", "--no-touch")
    assert result.code == 0
    assert "## What you know" in result.out and "staging cluster" in result.out
    assert "of 400 tokens (estimate)" in result.err
    assert estimate(result.out.rstrip("\n")) <= 400


def test_cli_json_has_each_part_and_its_tokens(cli: Cli, api: Vault) -> None:
    _stock(api)
    result = cli("context", "api", "--json", "--budget", "500", "--session", "s1")
    doc = json.loads(result.out)
    assert doc["budget"] == 500 and doc["tokens"] <= 500
    assert doc["parts"][0]["name"] == "foundation"
    assert sum(p["tokens"] for p in doc["parts"]) <= 500
    assert {"name", "text", "tokens", "shown", "left_out", "ids"} <= set(doc["parts"][0])


def test_cli_refuses_a_bad_budget_and_a_bad_session(cli: Cli) -> None:
    assert cli("context", "--budget", "0").code == 2
    bad = cli("context", "--session", "a\nb")
    assert bad.code != 0 and "session" in bad.err


def test_context_as_a_real_process(vault_dir: Path, api: Vault) -> None:
    _stock(api)
    env = dict(os.environ, KENOMEM_VAULT=str(vault_dir), NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, "-m", "kenomem", "context", "deploy", "--budget", "300"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(_foundation_first_line(vault_dir))


def test_procedural_preferences_are_always_loaded_most_important_first(api: Vault) -> None:
    api.remember("To restart the api, run systemctl restart api", type="procedural")
    api.remember("Prefers bullet points in summaries", type="procedural", importance=9)
    for query in ("restart the api", ""):
        result = api.context(query, budget=2000, touch=False)
        how = next(p for p in result.parts if p.name == "preferences").text
        assert how.startswith("## How to behave\n\n- Prefers bullet points in summaries\n")
        assert "- To restart the api, run systemctl restart api" in how


def test_structured_working_memory_reads_as_labelled_lines(api: Vault) -> None:
    api.set_working("s1", "Task: plan the launch\nPending:\n- confirm the date\n- book a slot\n")
    text = api.context(session="s1", budget=2000, touch=False).text
    assert "Task: plan the launch\nPending:\n- confirm the date\n- book a slot" in text
    assert "## Task" not in text


def test_one_scan_of_the_files_for_the_whole_block(
    api: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Working memory, patterns and the search each sync; the block scans once."""
    from kenomem.index import scanjob

    _stock(api)
    api.remember("Task: ship it", type="working", session="s1")
    scans: list[object] = []
    real = scanjob.start
    monkeypatch.setattr(scanjob, "start", lambda *a: scans.append(a) or real(*a))
    result = api.context("deploy the api", session="s1", budget=2000, touch=False)
    assert "ship it" in result.text and "staging cluster" in result.text
    assert len(scans) == 1
    api.recall("deploy")  # outside a block, each operation scans again
    assert len(scans) == 2
