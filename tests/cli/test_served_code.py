"""The code the watcher's command server runs: it imports, before any call, everything a
served call needs (its preload list), and it never serves code other than what is
installed: once the files its code came from change, calls run on their own and the
server ends."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import kenomem
from kenomem.cli.handlers.upkeep import SERVED_MODULES
from kenomem.cli.served import client, fingerprint
from tests.conftest import TEMPLATE, set_engine, write
from tests.helpers import accept

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the command server runs on Linux"
)

DEADLINE = 15.0
SERVED_NOTE = "run by the watcher's command server"
NOW = ("--now", "2026-11-20T12:00:00")
ALPACA = "---\nid: mem_a1\ntype: semantic\ntitle: Alpacas\n---\nThe alpaca sleeps in the barn.\n"


def wait_for(condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


# -- the preload list ---------------------------------------------------------------------

# Run in a fresh interpreter: `kenomem watch` as far as the start of its command server,
# which is replaced by this: for each call, a fork of this process takes the call through
# the served call's own code (`call.handle`, the caller's side played over a socket pair,
# stdout on a pseudo-terminal so that rich is used as on a terminal) and reports the
# modules the call imported. Once from the state the watcher forks its server in, then
# again once the server's preloading is done.
PROBE = textwrap.dedent(
    """
    import json, os, pty, socket, sys

    out_path, vaults = sys.argv[1], sys.argv[2:]
    CALLS = [
        ["recall", "alpaca", "--no-touch"],
        ["recall", "alpaca", "--json", "--explain", "--no-touch"],
        ["recall", "last week alpaca", "--no-touch"],
        ["list"],
        ["list", "--json"],
        ["show", "mem_a1"],
        ["show", "mem_nothing"],
        ["context", "alpaca"],
        ["context", "--json"],
        ["hook", "claude-code", "UserPromptSubmit", '{"cwd": "/", "prompt": "alpaca"}'],
        ["hook", "claude-code", "Stop", '{"cwd": "/", "transcript_path": "/nowhere.jsonl"}'],
        ["recall", "alpaca"],
        "a file edited",
        ["recall", "alpaca", "--json"],
    ]

    def served_call(commands, loaded, vault, args):
        from kenomem.cli.served import call, client

        home = os.path.realpath(vault)
        mine, theirs = socket.socketpair(socket.AF_UNIX)
        report_r, report_w = os.pipe()
        _changed_r, changed_w = os.pipe()
        leader, follower = pty.openpty()
        pid = os.fork()
        if pid == 0:
            mine.close()
            before = set(sys.modules)

            def run(command, params):
                code = commands.run(command, params)
                os.write(report_w, json.dumps(sorted(set(sys.modules) - before)).encode())
                return code

            call.handle(
                theirs, home, run=run, parse=commands.parse, loaded=loaded, changed=changed_w
            )
        theirs.close()
        os.close(report_w)
        null = os.open(os.devnull, os.O_RDWR)
        environ = {"TERM": "xterm-256color", "COLUMNS": "100", "HOME": os.environ["HOME"]}
        request = client.request(
            [*args, "--vault", home], os.getcwd(), environ, 0o022, (("utf-8", "strict"),) * 3
        )
        rights = client.fd_rights([null, follower, null])
        mine.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)])
        os.close(null)
        os.close(follower)
        while True:  # what it shows, until the terminal is closed
            try:
                if not os.read(leader, 1 << 16):
                    break
            except OSError:
                break
        replies = b""
        while chunk := mine.recv(64):
            replies += chunk
        os.waitpid(pid, 0)
        report = b""
        while chunk := os.read(report_r, 1 << 16):
            report += chunk
        if replies[:1] != client.TAKEN:
            raise SystemExit(f"not taken: {args} {replies!r}")
        return json.loads(report)

    def probe(root, log, commands):
        from kenomem.cli.served import server

        found = {"preload": list(commands.preload)}
        for phase in ("before", "after"):
            loaded = server.preload(commands) if phase == "after" else ()
            found[phase] = {}
            for vault in vaults:
                for args in CALLS:
                    if isinstance(args, str):  # the next call scans and indexes it
                        with open(os.path.join(vault, "semantic", "new.md"), "w") as f:
                            f.write(f"---\\ntype: semantic\\ntitle: {phase}\\n---\\nAlpacas.\\n")
                        continue
                    name = " ".join([os.path.basename(vault), *args])
                    found[phase][name] = served_call(commands, loaded, vault, args)
        with open(out_path, "w") as f:
            json.dump(found, f)
        os._exit(0)

    from kenomem.cli.served import server

    server.start = probe
    from kenomem.cli.entry import main

    main(["watch", "--vault", vaults[0]])
    """
)


def outside_the_standard_library(module: str) -> bool:
    return module.partition(".")[0] not in sys.stdlib_module_names


@linux_only
@pytest.mark.slow
def test_the_server_preloads_what_served_calls_import_and_no_more(tmp_path: Path) -> None:
    pytest.importorskip("tantivy")
    vaults = []
    for engine in ("whoosh", "tantivy"):
        vault = tmp_path / engine
        shutil.copytree(TEMPLATE, vault)
        set_engine(vault, engine)
        write(vault, "semantic/alpaca.md", ALPACA)
        vaults.append(str(vault))
    out = tmp_path / "found.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), *vaults],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(out.read_text())
    assert found["preload"] == list(SERVED_MODULES)  # what the watch handler hands over
    # Preloaded, a call imports nothing of kenomem's or of its dependencies at call time.
    late = {
        call: [m for m in modules if outside_the_standard_library(m)]
        for call, modules in found["after"].items()
    }
    assert not any(late.values()), {call: m for call, m in late.items() if m}
    # And each module preloaded is one that some call would import itself.
    imported = set().union(*found["before"].values())
    assert set(SERVED_MODULES) <= imported, set(SERVED_MODULES) - imported


def test_each_preloaded_module_exists() -> None:
    missing = [name for name in SERVED_MODULES if importlib.util.find_spec(name) is None]
    assert not missing


# -- the fingerprint ----------------------------------------------------------------------


def test_the_fingerprint_sees_every_kind_of_change(tmp_path: Path) -> None:
    files = {name: tmp_path / f"{name}.py" for name in ("same", "touched", "grown", "new")}
    files["gone"] = tmp_path / "gone.py"
    for path in files.values():
        path.write_text("x = 1\n")
    taken = fingerprint.take(str(p) for p in files.values())
    assert fingerprint.changed(taken) is None
    past = time.time() - 100
    os.utime(files["touched"], (past, past))
    assert fingerprint.changed(taken) == str(files["touched"])
    taken = fingerprint.take(str(p) for p in files.values())
    with open(files["grown"], "a") as f:
        f.write("y = 2\n")
    assert fingerprint.changed(taken) == str(files["grown"])
    taken = fingerprint.take(str(p) for p in files.values())
    stat = files["new"].stat()
    replacement = tmp_path / "replacement"
    replacement.write_text("x = 1\n")  # the same bytes and times, another file (an upgrade)
    os.utime(replacement, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    os.replace(replacement, files["new"])
    assert fingerprint.changed(taken) == str(files["new"])
    taken = fingerprint.take(str(p) for p in files.values())
    files["gone"].unlink()
    assert fingerprint.changed(taken) == str(files["gone"])


def test_the_fingerprinted_files_are_kenomems_and_its_dependencies(tmp_path: Path) -> None:
    import json as stdlib_module

    import rich.text  # a dependency, by its top-level module only

    extra = tmp_path / "table.json"
    found = fingerprint.loaded([str(extra)])
    package = Path(kenomem.__file__).parent
    assert str(package / "cli" / "served" / "fingerprint.py") in found
    assert str(package / "__init__.py") in found
    assert str(extra) in found
    top = sys.modules["rich"].__file__
    assert top is not None and os.path.abspath(top) in found
    assert rich.text.__file__ not in found
    assert stdlib_module.__file__ not in found
    assert found == sorted(found)


# -- a server whose code changed ----------------------------------------------------------


@pytest.fixture
def installed_copy() -> Iterator[tuple[Path, Path]]:
    """A copy of the kenomem package, installed by PYTHONPATH, and a vault whose socket
    path fits a Unix socket address."""
    base = Path(tempfile.mkdtemp(prefix="km", dir="/tmp"))
    site = base / "site"
    shutil.copytree(
        Path(kenomem.__file__).parent,
        site / "kenomem",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    vault = base / "v"
    shutil.copytree(TEMPLATE, vault)
    write(vault, "semantic/alpaca.md", ALPACA)
    yield site, vault
    shutil.rmtree(base, ignore_errors=True)


def run_copy(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kenomem", *args],
        env=copy_env(site),
        cwd=site.parent,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def copy_env(site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != client.ENV_OFF}
    env.update(PYTHONPATH=str(site), NO_COLOR="1")
    return env


@linux_only
@pytest.mark.slow
def test_a_call_is_not_served_once_the_code_changed(installed_copy: tuple[Path, Path]) -> None:
    site, vault = installed_copy
    log = site.parent / "watch.log"
    with open(log, "w") as sink:
        watcher = subprocess.Popen(
            [sys.executable, "-m", "kenomem", "watch", "--vault", str(vault), "--verbose"],
            env=copy_env(site),
            cwd=site.parent,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    sock = Path(client.socket_path(str(vault)))
    try:
        wait_for(lambda: "watching" in log.read_text() and sock.exists(), "the watcher")
        before = run_copy(site, "show", "mem_nothing", "--vault", str(vault), "-v")
        assert SERVED_NOTE in before.stderr, log.read_text() + before.stderr
        assert "error: no memory matches 'mem_nothing'" in before.stderr
        recall = ("recall", "alpaca", "--vault", str(vault), "--json", "--no-touch", *NOW, "-v")
        found = run_copy(site, *recall)
        assert SERVED_NOTE in found.stderr

        # The installed code changes under the running server: a message is reworded.
        suggest = site / "kenomem" / "vault" / "suggest.py"
        text = suggest.read_text()
        assert 'f"no memory matches {wanted!r}",' in text
        suggest.write_text(text.replace("no memory matches {wanted!r}", "nothing is {wanted!r}"))

        after = run_copy(site, "show", "mem_nothing", "--vault", str(vault), "-v")
        assert SERVED_NOTE not in after.stderr
        assert "not used: kenomem changed since the watcher started" in after.stderr
        assert "error: nothing is 'mem_nothing'" in after.stderr  # the code installed now
        assert after.returncode == before.returncode != 0

        # The server ends and says so; the watcher runs on, and calls run on their own.
        wait_for(lambda: not sock.exists(), "the server to remove its socket")
        wait_for(lambda: "kenomem changed on disk" in log.read_text(), "the watcher's warning")
        again = run_copy(site, *recall)
        assert again.returncode == 0 and SERVED_NOTE not in again.stderr
        assert json.loads(again.stdout) == json.loads(found.stdout)
        assert watcher.poll() is None
    finally:
        watcher.send_signal(signal.SIGTERM)
        watcher.wait(DEADLINE)
    assert watcher.returncode == 0, log.read_text()


def test_a_vault_with_an_embeddings_provider_preloads_recall_by_meaning(tmp_path: Path) -> None:
    from kenomem.cli.handlers.upkeep import MEANING_MODULES, PROVIDER_MODULES, preloaded

    vault = tmp_path / "vault"
    shutil.copytree(TEMPLATE, vault)
    assert preloaded(vault) == SERVED_MODULES
    config = vault / "kenomem.toml"
    text = config.read_text("utf-8").replace("\n[embeddings]\n", "\n# [embeddings]\n")
    config.write_text(text + '\n[embeddings]\nprovider = "openai"\nmodel = "m"\n', "utf-8")
    accept(vault)
    assert preloaded(vault) == (*SERVED_MODULES, *MEANING_MODULES, *PROVIDER_MODULES["openai"])
    missing = [
        name
        for name in (*MEANING_MODULES, *PROVIDER_MODULES["openai"])
        if importlib.util.find_spec(name) is None
    ]
    assert not missing
