"""`.kenomem/` against symlinks planted at the names of its files (docs/security.md, "The
vault's own files"): a `git clone` of a vault whose remote force-added them, a `git pull`
run by hand, another program. Each test plants a link at one name, pointing at a file
(or a folder) outside the vault with known bytes, and runs the real command that reads
or writes it:

- the vector store, `.kenomem/vectors/` (recall by meaning, with a real embeddings server
  on 127.0.0.1): its journal, its `meta.json`, the temporary files of a compaction, the
  folder itself (`embed/store.py`);
- the query expansions cache, `.kenomem/expansions/` (`recall/query_llm.py`);
- the session summaries, `.kenomem/summaries/` (`agents/progressive.py`);
- the lock, read by `doctor` (`vault/doctor.py`);
- the index folders swapped by a rebuild, and an engine's folder that links to another
  vault's index (`index/engine.py`);
- the watcher's command server, whose `.kenomem` became a link after the vault was opened
  (`cli/served/server.py`).

Each time the outside file or folder keeps its bytes and nothing is made beside it, and
the command either works (the link replaced or left alone, what is derived made again)
or stops with the clear unsafe-path error: never a traceback, never "unexpected".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.adversarial.hostile import clean_exit, tree
from tests.conftest import Cli, CliResult, write

np = pytest.importorskip("numpy")

from kenomem.embed import store as store_mod  # noqa: E402
from kenomem.recall.query_llm import cache_file  # noqa: E402
from tests.embed.helpers import Misbehaving  # noqa: E402

PRECIOUS = b"precious bytes of a file outside the vault\n"
# What the command says when it stops at a link (beneath.private_link_error, `_judge`).
REFUSED = ("is a symlink", "is not a folder of the vault's own")
FACTS = (
    "The harbour ferry leaves at nine every morning",
    "The harbour office keeps the spare keys",
    "Ana repaints the harbour boats in spring",
)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the vault: a file with known bytes, and a folder with one."""
    folder = tmp_path / "outside"
    (folder / "sub").mkdir(parents=True)
    (folder / "target.txt").write_bytes(PRECIOUS)
    (folder / "sub" / "kept.txt").write_bytes(PRECIOUS)
    return folder


@pytest.fixture
def meaning(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], None]]:
    """What turns recall by meaning on, with an embeddings server on 127.0.0.1 named in
    the environment (the user's own: no acceptance of the vault's settings needed). Its
    vectors are all alike, so memories are remembered before it is on (else each would
    be taken for the first one said again)."""
    with Misbehaving("ok") as server:

        def on() -> None:
            monkeypatch.setenv("KENOMEM_EMBEDDINGS_PROVIDER", "openai")
            monkeypatch.setenv("KENOMEM_EMBEDDINGS_BASE_URL", server.url)
            monkeypatch.setenv("KENOMEM_EMBEDDINGS_MODEL", "stand-in")

        yield on


def state(vault_dir: Path) -> Path:
    folder = vault_dir / ".kenomem"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def plant(link: Path, target: Path) -> None:
    """`link` made a symlink to `target`, whatever was there."""
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.is_dir():
        import shutil

        shutil.rmtree(link)
    link.symlink_to(target, target_is_directory=target.is_dir())


def works_or_refuses(result: CliResult, what: object = "") -> None:
    """The command worked, or stopped with the clear unsafe-path error."""
    clean_exit(result.code, result.out, result.err, what)
    if result.code != 0:
        assert result.code == 1 and any(r in result.err for r in REFUSED), (what, result.err)


def remember_facts(cli: Cli) -> None:
    for text in FACTS:
        assert cli("remember", text).code == 0


# -- the vector store -----------------------------------------------------------------------


def new_memory(vault_dir: Path) -> None:
    """A memory written by hand (a person's editor): the next recall wants its vector."""
    write(vault_dir, "semantic/crane.md", "# Crane\n\nThe harbour crane is painted red.\n")


@pytest.mark.parametrize("name", ["journal-1", "meta.json"])
def test_a_file_of_the_vector_store_that_is_a_link_is_never_written_through(
    cli: Cli, vault_dir: Path, outside: Path, meaning: Callable[[], None], name: str
) -> None:
    remember_facts(cli)
    meaning()
    assert cli("recall", "harbour").code == 0  # the store is made
    vectors = vault_dir / ".kenomem" / "vectors"
    assert json.loads((vectors / "meta.json").read_bytes())["generation"] == 1
    plant(vectors / name, outside / "target.txt")
    before = tree(outside)

    new_memory(vault_dir)
    for args in (("remember", FACTS[0]), ("recall", "harbour", "--json")):
        result = cli(*args)
        clean_exit(result.code, result.out, result.err, args)
        assert result.code == 0, result.err
    assert tree(outside) == before
    assert not (vectors / name).is_symlink()  # replaced: the store was made again
    found = json.loads(result.out)
    assert any(r.get("semantic") is not None for r in found["results"]), found


def test_a_compaction_never_writes_through_a_link(
    cli: Cli,
    vault_dir: Path,
    outside: Path,
    meaning: Callable[[], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(store_mod, "COMPACT_MIN", 0)  # every vector kept folds the journal
    remember_facts(cli)
    meaning()
    assert cli("recall", "harbour").code == 0
    vectors = vault_dir / ".kenomem" / "vectors"
    g = json.loads((vectors / "meta.json").read_bytes())["generation"] + 1
    for part in ("base", "ids", "keys"):
        plant(vectors / f".{part}-{g}.npy.tmp", outside / "target.txt")
    before = tree(outside)

    new_memory(vault_dir)
    result = cli("recall", "crane")
    clean_exit(result.code, result.out, result.err)
    assert result.code == 0, result.err
    assert tree(outside) == before
    assert json.loads((vectors / "meta.json").read_bytes())["generation"] >= g


def test_a_vector_store_folder_that_is_a_link_is_refused(
    cli: Cli, vault_dir: Path, outside: Path, meaning: Callable[[], None]
) -> None:
    remember_facts(cli)
    meaning()
    plant(state(vault_dir) / "vectors", outside)
    before = tree(outside)
    result = cli("recall", "harbour")
    works_or_refuses(result)
    assert tree(outside) == before


# -- the query expansions cache -------------------------------------------------------------

ASKED = "asked.txt"


@pytest.fixture
def expanding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    """Query expansion on, by a small command that notes each time it is asked; the
    command and the file of its notes."""
    script = tmp_path / "expand.py"
    asked = tmp_path / ASKED
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.stdin.read()
            with open({str(asked)!r}, "a") as notes:
                notes.write("asked\\n")
            print('["ferry", "boats"]')
            """
        ),
        encoding="utf-8",
    )
    command = f"{sys.executable} {script}"
    monkeypatch.setenv("KENOMEM_RECALL_LLM_EXPAND", "true")
    monkeypatch.setenv("KENOMEM_RECALL_EXPAND_COMMAND", command)
    return command, asked


def test_an_expansion_that_is_a_link_is_asked_again_and_replaced(
    cli: Cli, vault_dir: Path, outside: Path, expanding: tuple[str, Path]
) -> None:
    command, asked = expanding
    remember_facts(cli)
    (outside / "answer.json").write_text('{"words": ["planted"]}\n', encoding="utf-8")
    cached = state(vault_dir) / cache_file(command, "harbour")
    plant(cached, outside / "answer.json")
    before = tree(outside)

    result = cli("recall", "harbour")
    clean_exit(result.code, result.out, result.err)
    assert result.code == 0, result.err
    assert tree(outside) == before
    assert asked.read_text() == "asked\n"  # the link was no answer
    assert not cached.is_symlink()
    assert json.loads(cached.read_bytes())["words"] == ["ferry", "boats"]


def test_an_expansions_folder_that_is_a_link_is_never_written_into(
    cli: Cli, vault_dir: Path, outside: Path, expanding: tuple[str, Path]
) -> None:
    remember_facts(cli)
    plant(state(vault_dir) / "expansions", outside)
    before = tree(outside)
    works_or_refuses(cli("recall", "harbour"))
    assert tree(outside) == before


# -- the session summaries ------------------------------------------------------------------


def long_session(cli: Cli) -> None:
    for i in range(100):
        text = f"note {i}: we talked about topic{i} at the harbour and more"
        assert cli("log", text, "--session", "long", "--who", "Dana").code == 0


def context(cli: Cli) -> CliResult:
    return cli("context", "--session", "long", "--budget", "500", "--no-touch")


def test_summaries_that_are_links_are_made_again_and_never_read_through(
    cli: Cli, vault_dir: Path, outside: Path
) -> None:
    long_session(cli)
    assert context(cli).code == 0
    folder = vault_dir / ".kenomem" / "summaries" / "long"
    made = sorted(folder.iterdir())
    assert made
    (outside / "summary.md").write_text("- PLANTED SUMMARY\n", encoding="utf-8")
    for path in made:
        plant(path, outside / "summary.md")
    before = tree(outside)

    result = context(cli)
    clean_exit(result.code, result.out, result.err)
    assert result.code == 0, result.err
    assert "PLANTED" not in result.out
    assert tree(outside) == before
    assert not any(path.is_symlink() for path in folder.iterdir())


def test_a_summaries_folder_that_is_a_link_is_never_written_into(
    cli: Cli, vault_dir: Path, outside: Path
) -> None:
    long_session(cli)
    plant(state(vault_dir) / "summaries", outside)
    before = tree(outside)
    works_or_refuses(context(cli))
    assert tree(outside) == before


# -- doctor and the lock --------------------------------------------------------------------


def test_doctor_never_reads_the_lock_through_a_link(
    cli: Cli, vault_dir: Path, outside: Path
) -> None:
    remember_facts(cli)
    (outside / "pid").write_text("999999\n")  # a pid no process has
    plant(state(vault_dir) / "lock", outside / "pid")
    before = tree(outside)
    result = cli("doctor")
    works_or_refuses(result)
    assert "999999" not in result.out + result.err  # it was not read
    assert tree(outside) == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_doctor_never_waits_on_a_pipe_linked_as_the_lock(vault_dir: Path, outside: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "kenomem", "remember", FACTS[0]],
        env={**os.environ, "KENOMEM_VAULT": str(vault_dir), "KENOMEM_NO_SERVE": "1"},
        check=True,
        capture_output=True,
        timeout=60,
    )
    os.mkfifo(outside / "pipe")
    plant(vault_dir / ".kenomem" / "lock", outside / "pipe")
    done = subprocess.run(
        [sys.executable, "-m", "kenomem", "doctor"],
        env={**os.environ, "KENOMEM_VAULT": str(vault_dir), "KENOMEM_NO_SERVE": "1"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,  # a read through the link waits forever for a writer
    )
    works_or_refuses(CliResult(done.returncode, done.stdout, done.stderr))


# -- the index folders a rebuild swaps --------------------------------------------------------


@pytest.mark.parametrize("name", ["index", "index/whoosh", "index/tantivy"])
def test_a_rebuild_never_removes_or_writes_what_an_index_link_points_to(
    cli: Cli, vault_dir: Path, outside: Path, name: str
) -> None:
    remember_facts(cli)
    for engine in ("whoosh", "tantivy"):
        (outside / engine).mkdir()
        (outside / engine / "segment").write_bytes(PRECIOUS)
    plant(vault_dir / ".kenomem" / name, outside if name == "index" else outside / "whoosh")
    before = tree(outside)

    result = cli("reindex")
    works_or_refuses(result, name)
    assert tree(outside) == before
    if name != "index":  # the link goes as the link; the index is made again
        assert result.code == 0, result.err
        assert not (vault_dir / ".kenomem" / name).is_symlink()
        assert cli("recall", "ferry").out.count("ferry") >= 1


def test_an_index_folder_that_links_to_another_vaults_index_is_never_used(
    cli: Cli, vault_dir: Path, tmp_path: Path
) -> None:
    """The link leads to an index of this user's (sealed by them, so it would load):
    another vault's. It is dropped and the index rebuilt: nothing of the other vault is
    found here, and nothing of this one is written there."""
    import shutil

    from tests.conftest import TEMPLATE

    other = tmp_path / "other"
    shutil.copytree(TEMPLATE, other)
    assert cli("remember", "The zebra crossing is painted blue", "--vault", str(other)).code == 0
    remember_facts(cli)
    whoosh = vault_dir / ".kenomem" / "index" / "whoosh"
    plant(whoosh, other / ".kenomem" / "index" / "whoosh")
    before = tree(other / ".kenomem" / "index")

    for args in (("remember", "The harbour crane is painted red"), ("recall", "zebra crane")):
        result = cli(*args)
        clean_exit(result.code, result.out, result.err, args)
        assert result.code == 0, result.err
    assert "zebra" not in result.out and "crane" in result.out
    assert tree(other / ".kenomem" / "index") == before
    assert not whoosh.is_symlink()


# -- the watcher's command server -----------------------------------------------------------

SERVE = """
import sys
from pathlib import Path
from kenomem.cli.served.server import start
said = []
server = start(Path(sys.argv[1]), lambda level, line: said.append((level, line)), None)
print(server is None)
print(said)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the server is Linux's")
def test_the_command_server_declines_a_state_folder_that_became_a_link(
    tmp_path: Path, outside: Path
) -> None:
    root = tmp_path / "v"  # short: the socket's path has a bound
    root.mkdir()
    (root / ".kenomem").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    done = subprocess.run(
        [sys.executable, "-c", SERVE, str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    declined, said = done.stdout.splitlines()
    assert declined == "True"
    assert "not serving commands" in said and "not a folder of the vault's own" in said
    assert tree(outside) == before
