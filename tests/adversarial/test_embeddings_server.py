"""The embeddings server is a stranger: real `kenomem` processes (`remember`, `recall`,
`reindex`) against a hostile OpenAI-compatible server on 127.0.0.1 (`tests/embed/
stranger.py`) that redirects, drips, resets or answers garbage.

Each command ends in bounded time (about `timeout_seconds`, here well under three times
it), with one warning and the memory written or found by its words; the key never
reaches a host but base_url's, and the vault's lock is free while the server is asked.

The provider is named by `KENOMEM_EMBEDDINGS_*` variables, the user's own settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("numpy")

from tests.adversarial.hostile import clean_exit
from tests.conftest import write
from tests.embed.stranger import Hostile, Recorder
from tests.helpers import memory_ids

KEY = "sk-test-stranger-0123456789abcdef"
TEXT = "The staging server is called kiwi."


def environment(vault: Path, url: str, timeout: float, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "KENOMEM_VAULT": str(vault),
        "KENOMEM_NO_SERVE": "1",
        "NO_COLOR": "1",
        "KENOMEM_EMBEDDINGS_PROVIDER": "openai",
        "KENOMEM_EMBEDDINGS_BASE_URL": url,
        "KENOMEM_EMBEDDINGS_MODEL": "m",
        "KENOMEM_EMBEDDINGS_API_KEY_ENV": "STRANGER_TEST_KEY",
        "KENOMEM_EMBEDDINGS_TIMEOUT_SECONDS": str(timeout),
        "STRANGER_TEST_KEY": KEY,
        **extra,
    }


class Ran:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err
        self.asked = 0  # requests that reached the server meanwhile (`three_commands`)

    @property
    def warnings(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.startswith("warning:")]


def run(vault: Path, url: str, *args: str, timeout: float = 2.0, **extra: str) -> Ran:
    """One command, which must end within three times the server's deadline (and the
    start of a process): a hang fails the test instead of holding it up."""
    done = subprocess.run(
        [sys.executable, "-m", "kenomem", *args],
        env=environment(vault, url, timeout, **extra),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout * 3 + 5,
        check=False,
    )
    ran = Ran(done.returncode, done.stdout, done.stderr)
    clean_exit(ran.code, ran.out, ran.err, args)
    assert ran.code == 0, ran.err
    assert KEY not in ran.out + ran.err
    return ran


def hand_made(vault: Path, count: int) -> None:
    for n in range(count):
        write(vault, f"semantic/n{n}.md", f"---\nid: n{n}\n---\nNote number {n} on the harbour.\n")


def three_commands(vault: Path, server: Hostile, timeout: float = 2.0, **extra: str) -> list[Ran]:
    """`remember` (written whatever the server does), `recall` (found by its words) and
    `reindex` (the index built, the vectors left for later), each with one warning."""
    url = server.url
    ran = []
    for args in (
        ("remember", TEXT, "--type", "semantic"),
        ("recall", "staging server", "--json", "--no-touch"),
        ("reindex", "--json"),
    ):
        before = len(server.requests)
        one = run(vault, url, *args, timeout=timeout, **extra)
        one.asked = len(server.requests) - before
        assert len(one.warnings) == 1, one.err
        ran.append(one)
    assert any("kiwi" in (vault / path).read_text("utf-8") for path in memory_ids(vault))
    results = json.loads(ran[1].out)["results"]
    assert [r["title"] for r in results] == ["The staging server is called kiwi"]
    assert results[0]["semantic"] is None
    assert "by keywords alone" in ran[1].err
    assert json.loads(ran[2].out)["embedded"] == 0
    return ran


@pytest.mark.slow
@pytest.mark.parametrize("status", [302, 307])
def test_a_redirect_sends_nothing_to_another_host(vault_dir: Path, status: int) -> None:
    with Recorder() as elsewhere:
        location = f"{elsewhere.url}/embeddings"
        with Hostile("redirect", status=status, location=location) as server:
            for ran in three_commands(vault_dir, server):
                assert f"HTTP {status}" in ran.warnings[0] and location in ran.warnings[0]
                assert "not followed" in ran.warnings[0]
    assert server.requests
    assert all(r["headers"].get("authorization") == f"Bearer {KEY}" for r in server.requests)
    assert elsewhere.connections == 0 and not elsewhere.requests


@pytest.mark.slow
def test_a_dripping_server_costs_one_deadline_per_command(vault_dir: Path) -> None:
    hand_made(vault_dir, 6)
    with Hostile("drip", every=1.0) as server:
        # batches of one text: a reindex stops asking at the first deadline, not at each
        ran = three_commands(vault_dir, server, 2.0, KENOMEM_EMBEDDINGS_BATCH_SIZE="1")
    for one in ran:
        assert "within 2 s" in one.warnings[0], one.err
    remembered, recalled, reindexed = ran
    assert (remembered.asked, reindexed.asked) == (1, 1)
    assert recalled.asked == 2  # the query and the first vectors, at once
    assert json.loads(reindexed.out)["without_vector"] == 7


@pytest.mark.slow
@pytest.mark.parametrize("good_first", [0, 1])
def test_the_lock_is_free_while_the_server_is_asked(vault_dir: Path, good_first: int) -> None:
    """A remember whose own text the server holds back (or embeds, then holds back the
    other vectors wanted): another writer, which waits 1 s at most for the lock, writes
    meanwhile; the first writes its memory once the server lets go."""
    hand_made(vault_dir, 3)
    with Hostile("stall", good_first=good_first) as server:
        first = subprocess.Popen(
            [sys.executable, "-m", "kenomem", "remember", TEXT, "--type", "semantic"],
            env=environment(vault_dir, server.url, 60.0),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 30
            while len(server.requests) <= good_first and first.poll() is None:
                assert time.monotonic() < deadline, "the remember never asked the server"
                time.sleep(0.05)
            run(
                vault_dir,
                server.url,
                "remember",
                "The backup server is called lime.",
                KENOMEM_EMBEDDINGS_PROVIDER="none",
                KENOMEM_WRITE_LOCK_TIMEOUT_SECONDS="1",
            )
            assert first.poll() is None  # still waiting for the server meanwhile
            server.release()  # its connection closed, without an answer
            out, err = first.communicate(timeout=30)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
    clean_exit(first.returncode, out, err)
    assert first.returncode == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "broke the connection before answering" in warnings[0], err
    texts = [(vault_dir / path).read_text("utf-8") for path in memory_ids(vault_dir)]
    assert sum("kiwi" in t for t in texts) == 1 and sum("lime" in t for t in texts) == 1


@pytest.mark.slow
@pytest.mark.parametrize("how", ["reset", "garbage", "huge", "500"])
def test_a_broken_server_costs_one_warning(vault_dir: Path, how: str) -> None:
    with Hostile(how) as server:
        three_commands(vault_dir, server)
