"""Helpers shared by test modules (fixtures live in conftest.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kenomem.config import accept_settings
from kenomem.files.paths import MEMORY_DIRS


def terminal_env(base: Mapping[str, str], **extra: str) -> dict[str, str]:
    """`base` as a colour terminal's environment: no NO_COLOR, a TERM that has colours."""
    environ = {k: v for k, v in base.items() if k != "NO_COLOR"}
    environ.update(TERM="xterm-256color", COLUMNS="120", LINES="40")
    environ.update(extra)
    return environ


def on_a_terminal(
    argv: Sequence[str], env: Mapping[str, str], *, stderr_apart: bool = False, timeout: float = 60
) -> tuple[int, bytes, str]:
    """Run `argv` with its stdout (and its stderr, unless `stderr_apart`) on a pseudo-
    terminal: its exit code, every byte the terminal got, and its stderr when apart."""
    import pty

    leader, follower = pty.openpty()
    with tempfile.TemporaryFile() as errors:
        try:
            proc = subprocess.Popen(
                list(argv),
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=follower,
                stderr=errors if stderr_apart else follower,
            )
            os.close(follower)
            follower = -1
            out = b""
            while True:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: the other side is closed and drained
                    break
                if not chunk:
                    break
                out += chunk
            code = proc.wait(timeout=timeout)
        finally:
            os.close(leader)
            if follower >= 0:
                os.close(follower)
        errors.seek(0)
        return code, out, errors.read().decode("utf-8", "replace")


def accept(vault_dir: Path) -> None:
    """Accept the commands and servers the vault's kenomem.toml names, as the user would
    with `kenomem trust` (they are not used until then)."""
    accept_settings(vault_dir)


def project_prose() -> str:
    """The project's own documentation as one text (the README, then each page of docs/):
    real English, for the tests of the analysis and of the secret finder."""
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    pages = [repo / "README.md", *sorted((repo / "docs").glob("*.md"))]
    return "\n\n".join(page.read_text(encoding="utf-8") for page in pages)


# -- from test_concurrency.py

KENOMEM = str(Path(sys.executable).with_name("kenomem"))


def env_for(vault: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["KENOMEM_VAULT"] = str(vault)
    env["NO_COLOR"] = "1"
    return env


def start(vault: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [KENOMEM, *args],
        env=env_for(vault),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


def memory_ids(vault: Path) -> dict[str, str]:
    """path -> id of every memory file, read from the files themselves."""
    ids = {}
    for folder in MEMORY_DIRS:
        for path in (vault / folder).rglob("*.md"):
            m = re.search(r"^id: (\S+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
            ids[path.relative_to(vault).as_posix()] = m.group(1) if m else ""
    return ids


def vault_files(vault: Path) -> dict[str, bytes]:
    """Every file of the vault but the derived ones under .kenomem/, by relative path."""
    return {
        p.relative_to(vault).as_posix(): p.read_bytes()
        for p in vault.rglob("*")
        if p.is_file() and ".kenomem" not in p.relative_to(vault).parts
    }


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def stop(process: subprocess.Popen[Any], seconds: float) -> None:
    """Ask a server process to end; kill it if it has not within `seconds`."""
    process.terminate()
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(seconds)
