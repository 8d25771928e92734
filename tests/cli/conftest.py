"""Fixtures of the command-line tests: a vault whose path is short enough for a socket."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.helpers import note
from tests.conftest import TEMPLATE, set_engine, write


@pytest.fixture
def short_vault(engine_name: str) -> Iterator[Path]:
    """A vault whose socket path fits a Unix socket address (pytest's tmp_path may not)."""
    base = Path(tempfile.mkdtemp(prefix="km", dir="/tmp"))
    vault = base / "v"
    shutil.copytree(TEMPLATE, vault)
    if engine_name != "whoosh":
        set_engine(vault, engine_name)
    write(vault, "semantic/alpaca.md", note("Alpacas", "The alpaca sleeps in the barn.", "mem_a1"))
    write(vault, "semantic/llama.md", note("Llamas", "A llama guards the alpaca herd.", "mem_l1"))
    yield vault
    shutil.rmtree(base, ignore_errors=True)
