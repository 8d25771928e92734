"""The fastembed provider through fastembed's real loading code, offline: a tiny model
made in the test (tests/embed/tiny_model.py) is loaded from `model_path`, and `kenomem`
itself (reindex, recall, model show|pull) is run on a vault that uses it. The network
is off in every test here: a connection to the outside fails, and is counted.
"""

from __future__ import annotations

import json
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kenomem.config import EmbeddingsSettings
from kenomem.embed import local
from kenomem.embed.provider import EmbeddingsUnavailable
from tests.cli.helpers import SERVED_NOTE, Watch, kenomem, note
from tests.conftest import TEMPLATE, Cli, CliResult, write
from tests.embed.tiny_model import MODEL_NAME, make_model
from tests.helpers import accept

pytest.importorskip("fastembed")
pytest.importorskip("onnx")

DOG = ("semantic/biscuit.md", note("Biscuit", "Biscuit is our golden retriever.", "mem_dog1"))
DATABASE = (
    "semantic/database.md",
    note("Production database", "The production database is PostgreSQL 15.", "mem_db1"),
)
DINNER = ("semantic/dinner.md", note("Friday dinner", "We eat pizza every Friday.", "mem_food1"))
PULL = "kenomem model pull"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(autouse=True)
def network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The network is off: each attempt to reach a host is counted and fails."""
    tried: list[Any] = []
    connect = socket.socket.connect

    def refuse(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            tried.append(address)
            raise OSError("the network is off in this test")
        return connect(self, address)

    def no_names(host: Any, *args: Any, **kwargs: Any) -> Any:
        tried.append(host)
        raise socket.gaierror(socket.EAI_NONAME, "the network is off in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", no_names)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    yield tried


def use(vault_dir: Path, **values: str) -> None:
    """Set these keys of [embeddings] in the vault's kenomem.toml (and no others)."""
    config = vault_dir / "kenomem.toml"
    lines = config.read_text("utf-8").splitlines()
    start = lines.index("[embeddings]") + 1
    end = next((n for n in range(start, len(lines)) if lines[n].startswith("[")), len(lines))
    kept = [line for line in lines[start:end] if line.startswith("#") or "=" not in line]
    given = [f"{key} = {json.dumps(value)}" for key, value in values.items()]
    config.write_text("\n".join([*lines[:start], *given, *kept, *lines[end:]]) + "\n", "utf-8")
    accept(vault_dir)


def tiny(vault_dir: Path, model_dir: Path) -> None:
    use(vault_dir, provider="fastembed", model=MODEL_NAME, model_path=str(model_dir))


def memories(vault_dir: Path) -> None:
    for rel, text in (DOG, DATABASE, DINNER):
        write(vault_dir, rel, text)


def doc(result: CliResult) -> Any:
    assert result.code == 0, result.err
    return json.loads(result.out)


def ids(result: CliResult) -> list[str]:
    return [hit["id"] for hit in doc(result)["results"]]


# -- recall by meaning, end to end --------------------------------------------------------


@pytest.mark.both_engines
def test_a_memory_is_found_by_meaning_with_no_word_in_common(
    cli: Cli, vault_dir: Path, model_dir: Path, network: list[Any]
) -> None:
    tiny(vault_dir, model_dir)
    memories(vault_dir)

    made = doc(cli("reindex", "--json"))
    assert made["indexed"] == 3
    assert made["embedded"] == 3 and made["without_vector"] == 0

    by_words = cli("recall", "dog", "--json", "--no-semantic")
    assert "mem_dog1" not in ids(by_words)  # no memory says "dog"

    found = cli("recall", "dog", "--json")
    hits = doc(found)["results"]
    assert hits[0]["id"] == "mem_dog1", found.out
    assert hits[0]["semantic"] > 0.8
    assert all(hit["semantic"] < 0.5 for hit in hits[1:])
    assert "warning" not in found.err

    other = doc(cli("recall", "postgres", "schema", "--json"))["results"]
    assert other[0]["id"] == "mem_db1"
    assert network == []


@pytest.mark.both_engines
def test_a_memory_written_by_hand_gets_its_vector_at_the_next_recall(
    cli: Cli, vault_dir: Path, model_dir: Path
) -> None:
    tiny(vault_dir, model_dir)
    write(vault_dir, *DATABASE)
    assert doc(cli("reindex", "--json"))["embedded"] == 1
    write(vault_dir, *DOG)  # the word that matters is in the body, not the title

    found = cli("recall", "hound", "--json")

    assert ids(found)[0] == "mem_dog1", found.err
    assert "no vector yet" not in found.err


@pytest.mark.both_engines
def test_a_memory_remembered_gets_its_vector_at_once(
    cli: Cli, vault_dir: Path, model_dir: Path, network: list[Any]
) -> None:
    tiny(vault_dir, model_dir)
    assert cli("remember", "Our labrador loves the garden", "--json").code == 0

    hits = doc(cli("recall", "puppy", "--json"))["results"]
    assert hits and hits[0]["title"].startswith("Our labrador")
    assert hits[0]["semantic"] > 0.8
    assert network == []


# -- what is missing: a warning, keyword results, exit 0 ----------------------------------


def test_without_the_model_recall_warns_and_finds_by_keywords(
    cli: Cli, vault_dir: Path, network: list[Any]
) -> None:
    use(vault_dir, provider="fastembed")  # the default model, never pulled
    memories(vault_dir)

    result = cli("recall", "production", "database", "--json")

    assert ids(result) == ["mem_db1"]
    assert "warning:" in result.err
    assert "BAAI/bge-small-en-v1.5 is not in" in result.err and PULL in result.err
    assert "Traceback" not in result.err
    assert network == []  # a recall never goes to the network


def test_without_the_model_in_a_cache_of_other_models_the_same(
    cli: Cli, vault_dir: Path, tmp_path: Path, network: list[Any]
) -> None:
    cache = tmp_path / "models"
    (cache / "models--someone--another-model").mkdir(parents=True)
    use(vault_dir, provider="fastembed", cache_dir=str(cache))
    memories(vault_dir)

    result = cli("recall", "production", "database", "--json")

    assert ids(result) == ["mem_db1"]
    assert f"is not in {cache}" in result.err and PULL in result.err and "67 MB" in result.err
    assert network == []


def test_without_the_fastembed_package_recall_warns_and_finds_by_keywords(
    cli: Cli, vault_dir: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny(vault_dir, model_dir)
    memories(vault_dir)
    monkeypatch.setitem(sys.modules, "fastembed", None)  # as if it were not installed

    result = cli("recall", "production", "database", "--json")

    assert ids(result) == ["mem_db1"]
    assert "needs the fastembed package" in result.err
    assert "pip install 'kenomem[semantic]'" in result.err
    assert "Traceback" not in result.err


def test_a_model_file_that_does_not_load_is_a_warning(
    cli: Cli, vault_dir: Path, model_dir: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken-model"
    broken.mkdir()
    for path in model_dir.iterdir():
        (broken / path.name).write_bytes(path.read_bytes())
    (broken / "model.onnx").write_bytes(b"not an onnx graph at all")
    tiny(vault_dir, broken)
    memories(vault_dir)

    result = cli("recall", "production", "database", "--json")

    assert ids(result) == ["mem_db1"]
    assert f"in {broken} cannot be loaded" in result.err
    assert "Traceback" not in result.err

    made = doc(cli("reindex", "--json"))  # reindex too: the index is whole, no vector
    assert made["indexed"] == 3 and made["embedded"] == 0 and made["without_vector"] == 3


def test_a_model_path_that_is_not_there_is_a_warning(cli: Cli, vault_dir: Path) -> None:
    use(vault_dir, provider="fastembed", model_path="/nonexistent/model")
    memories(vault_dir)
    result = cli("recall", "production", "database", "--json")
    assert ids(result) == ["mem_db1"]
    assert "/nonexistent/model ([embeddings] model_path) does not exist" in result.err


def test_a_model_fastembed_does_not_know_says_so(tmp_path: Path) -> None:
    (tmp_path / "models--someone--another-model").mkdir()
    settings = EmbeddingsSettings(provider="fastembed", model="no/such", cache_dir=str(tmp_path))
    embedder = local.FastEmbedder(settings)
    with pytest.raises(EmbeddingsUnavailable, match="fastembed has no model named 'no/such'"):
        embedder.query("dog")


# -- kenomem model show | pull --------------------------------------------------------------


def test_model_show_tells_which_model_where_and_whether_it_is_here(
    cli: Cli, vault_dir: Path, model_dir: Path
) -> None:
    use(vault_dir, provider="fastembed")
    missing = doc(cli("model", "show", "--json"))
    assert missing["model"] == "BAAI/bge-small-en-v1.5" and missing["present"] is False
    assert missing["path"].endswith(".cache/kenomem/models")
    assert missing["source"] == "https://huggingface.co/Qdrant/bge-small-en-v1.5-onnx-Q"
    assert missing["size_bytes"] == 67_000_000 and missing["dimension"] == 384
    assert missing["query_prefix"].startswith("Represent this sentence")
    assert PULL in missing["problem"]
    assert 1 <= missing["threads"] <= local.MAX_THREADS

    text = cli("model", "show")
    assert text.code == 0 and "not here" in text.out and "67 MB" in text.out

    tiny(vault_dir, model_dir)
    here = doc(cli("model", "show", "--json"))
    assert here["present"] is True and here["path"] == str(model_dir)
    assert here["size_bytes"] > 0 and here["dimension"] == 8 and here["problem"] == ""


def test_model_pull_with_a_model_path_checks_that_it_loads(
    cli: Cli, vault_dir: Path, model_dir: Path, network: list[Any]
) -> None:
    tiny(vault_dir, model_dir)
    pulled = doc(cli("model", "pull", "--json"))
    assert pulled["fetched"] is False and pulled["dimension"] == 8
    assert pulled["path"] == str(model_dir) and "model_path" in pulled["note"]
    assert network == []


def test_model_pull_without_the_network_fails_with_the_reason(
    cli: Cli, vault_dir: Path, network: list[Any]
) -> None:
    use(vault_dir, provider="fastembed")
    result = cli("model", "pull")
    assert result.code == 1
    assert "could not be fetched from huggingface.co/Qdrant/bge-small-en-v1.5-onnx-Q" in (
        result.err
    )
    assert "model_path" in result.err and "Traceback" not in result.err
    assert network  # it did try


@pytest.mark.parametrize("provider", ["none", "openai"])
def test_model_pull_has_nothing_to_fetch_without_fastembed(
    cli: Cli, vault_dir: Path, provider: str, network: list[Any]
) -> None:
    if provider == "openai":
        use(vault_dir, provider="openai", model="nomic-embed-text")
    pulled = doc(cli("model", "pull", "--json"))
    assert pulled["fetched"] is False and pulled["note"].startswith("nothing to fetch")
    assert doc(cli("model", "show", "--json"))["provider"] == provider
    assert network == []


# -- the provider's choices ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "query", "document"),
    [
        ("", "Represent this sentence for searching relevant passages: ", ""),
        ("intfloat/multilingual-e5-large", "query: ", "passage: "),
        ("nomic-ai/nomic-embed-text-v1.5", "search_query: ", "search_document: "),
        ("sentence-transformers/all-MiniLM-L6-v2", "", ""),
    ],
)
def test_the_prefixes_are_the_model_s_own(model: str, query: str, document: str) -> None:
    embedder = local.FastEmbedder(EmbeddingsSettings(provider="fastembed", model=model))
    assert (embedder.query_prefix, embedder.document_prefix) == (query, document)


def test_prefixes_set_in_the_settings_replace_the_model_s() -> None:
    settings = EmbeddingsSettings(provider="fastembed", query_prefix="q: ")
    embedder = local.FastEmbedder(settings)
    assert (embedder.query_prefix, embedder.document_prefix) == ("q: ", "")
    default = local.FastEmbedder(settings._replace(query_prefix=""))
    assert embedder.fingerprint != default.fingerprint


def test_the_prefixes_reach_the_model(model_dir: Path) -> None:
    settings = EmbeddingsSettings(
        provider="fastembed",
        model=MODEL_NAME,
        model_path=str(model_dir),
        query_prefix="dog dog dog ",
    )
    plain = local.FastEmbedder(settings._replace(query_prefix="", document_prefix=" "))
    prefixed = local.FastEmbedder(settings)
    database = plain.documents(["postgres"])[0]
    assert plain.query("postgres") @ database > 0.9
    assert prefixed.query("postgres") @ database < 0.9


@pytest.mark.parametrize(
    ("cores", "quota", "expected"),
    [({0, 1}, None, 2), ({0}, None, 1), (set(range(64)), None, 4), (set(range(64)), 1.5, 1)],
)
def test_threads_are_the_cores_the_process_may_use_at_most_four(
    monkeypatch: pytest.MonkeyPatch, cores: set[int], quota: float | None, expected: int
) -> None:
    monkeypatch.setattr(local.os, "sched_getaffinity", lambda _pid: cores, raising=False)
    monkeypatch.setattr(local, "_cgroup_quota", lambda: quota)
    assert local.threads() == expected


# -- the watcher's command server keeps the model loaded -----------------------------------


@pytest.mark.slow  # a real watcher and its command server
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command server is Linux's")
def test_a_served_recall_uses_the_model_the_command_server_loaded(model_dir: Path) -> None:
    base = Path(tempfile.mkdtemp(prefix="km", dir="/tmp"))  # short enough for a socket
    try:
        vault, model = base / "v", base / "model"
        shutil.copytree(TEMPLATE, vault)
        shutil.copytree(model_dir, model)
        tiny(vault, model)
        memories(vault)
        assert kenomem("reindex", "--vault", str(vault)).returncode == 0
        watch = Watch(vault, base / "watch.log")
        try:
            shutil.rmtree(model)  # from now on only a model already loaded can answer
            args = ("recall", "dog", "--vault", str(vault), "--json", "--no-touch", "--verbose")
            served = kenomem(*args)
            assert SERVED_NOTE in served.stderr, served.stderr
            hits = json.loads(served.stdout)["results"]
            assert hits[0]["id"] == "mem_dog1" and hits[0]["semantic"] > 0.8, served.stderr
            alone = kenomem(*args, local=True)  # a process of its own must load it: it cannot
            assert "recall by meaning is off" in alone.stderr
            assert all(hit["semantic"] is None for hit in json.loads(alone.stdout)["results"])
        finally:
            watch.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)
