"""What comes from a memory (title, body, tags, path, a warning quoting a file) never sends
a control character to the screen: on a terminal and in plain text it is shown (ESC as
`^[`), in `--json` escaped; rich markup in a title is printed as written."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.cli.output import visible
from tests import helpers
from tests.cli.helpers import console_script
from tests.conftest import Cli, write
from tests.helpers import terminal_env

# A window title set by an OSC sequence, a cleared screen, a colour, a bell, a C1 CSI
# and a carriage return that would hide what precedes it.
TITLE = "Evil \x1b]0;pwned\x07 title \x1b[2J"
BODY = "The lighthouse \x1b[31mred\x1b[0m, a \x9b CSI, \x7f, a hidden\rline and a tab\there.\n"
EVIL = f"# {TITLE}\n\n{BODY}"
MARKUP = '---\ntitle: "[bold red]Markup \\e[5mblink"\ntags: ["t\\e[1mag"]\n---\n\nThe lighthouse.\n'
RAW = ("\x1b", "\x07", "\x9b", "\x7f", "\r")


def controls(text: str) -> list[str]:
    """The control characters in `text` other than newline and tab."""
    return [ch for ch in text if (ord(ch) < 32 and ch not in "\n\t") or 127 <= ord(ch) < 160]


@pytest.fixture
def evil(vault_dir: Path, cli: Cli) -> dict[str, str]:
    """Two hand-written memories full of escape sequences, and their ids."""
    write(vault_dir, "semantic/evil.md", EVIL)
    write(vault_dir, "semantic/markup.md", MARKUP)
    listed = json.loads(cli("list", "--json").out)["memories"]
    ids = {m["path"]: m["id"] for m in listed}
    return {"evil": ids["semantic/evil.md"], "markup": ids["semantic/markup.md"]}


def plain(cli: Cli, *args: str) -> str:
    result = cli(*args)
    assert result.code == 0, result.err
    assert controls(result.out) == [] and controls(result.err) == [], (result.out, result.err)
    return result.out


def test_plain_text_shows_control_characters(cli: Cli, evil: dict[str, str]) -> None:
    shown = plain(cli, "show", evil["evil"])
    assert "Evil ^[]0;pwned^G title ^[[2J" in shown
    assert "The lighthouse ^[[31mred^[[0m, a \\x9b CSI, ^?, a hidden" in shown
    assert "a tab\there." in shown  # tabs and newlines stay
    assert "^[]0;pwned" in plain(cli, "list")
    assert "^[]0;pwned" in plain(cli, "recall", "lighthouse", "--no-touch")
    assert "^[[31mred" in plain(cli, "context", "lighthouse")
    assert "t^[[1mag" in plain(cli, "show", evil["markup"])


def test_json_escapes_them_and_keeps_the_text(cli: Cli, evil: dict[str, str]) -> None:
    result = cli("show", "--json", evil["evil"])
    assert result.code == 0
    assert controls(result.out) == []
    assert "\\u009b" in result.out and "\\u007f" in result.out
    doc = json.loads(result.out)
    assert doc["title"] == TITLE
    assert doc["body"].endswith(BODY)


def test_a_warning_quoting_a_file_shows_its_controls(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/ok.md", "# Lighthouse\n\nThe lighthouse.\n")
    write(vault_dir, "semantic/bad\x1b[2J.md", "---\ntitle: [unclosed\n---\n\nx\n")
    result = cli("recall", "lighthouse")
    assert result.code == 0
    assert "bad^[[2J.md" in result.err
    assert controls(result.err) == []


def test_an_error_names_its_cause_without_controls(cli: Cli, vault_dir: Path) -> None:
    result = cli("show", "mem_\x1b[2J")
    assert result.code != 0
    assert "^[[2J" in result.err and controls(result.err) == []


def on_a_terminal(vault_dir: Path, *args: str) -> bytes:
    """What `kenomem args` writes to a pseudo-terminal (rich, colours on)."""
    env = terminal_env(
        os.environ, COLUMNS="200", KENOMEM_VAULT=str(vault_dir), KENOMEM_NO_SERVE="1"
    )
    code, out, _ = helpers.on_a_terminal([console_script(), *args], env)
    assert code == 0, out
    return out


SHOWN_TITLE = "Evil ^[]0;pwned^G title ^[[2J"
SHOWN_MARKUP = "[bold red]Markup ^[[5mblink"  # the markup printed, not applied


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals")
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("show", "{evil}"), [SHOWN_TITLE, "^[[31mred^[[0m, a \\x9b CSI"]),
        (("show", "{markup}"), [SHOWN_MARKUP, "t^[[1mag"]),
        (("list",), [SHOWN_TITLE, SHOWN_MARKUP]),
        (("recall", "lighthouse", "--no-touch"), [SHOWN_TITLE, SHOWN_MARKUP]),
    ],
    ids=["show", "show-markup", "list", "recall"],
)
def test_a_terminal_gets_no_escape_sequence_from_a_memory(
    vault_dir: Path, evil: dict[str, str], args: tuple[str, ...], expected: list[str]
) -> None:
    out = on_a_terminal(vault_dir, *(a.format(**evil) for a in args))
    assert b"\x1b[" in out  # rich's own colours: this is a terminal
    for sequence in (b"\x1b]0;pwned", b"\x1b[2J", b"\x07", b"\xc2\x9b", b"\x7f", b"\x1b[5m"):
        assert sequence not in out, (sequence, out)
    text = out.decode("utf-8")
    for shown in expected:
        assert shown in text, (shown, text)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_visible_leaves_no_control_and_is_stable(text: str) -> None:
    shown = visible(text)
    assert controls(shown) == []
    assert visible(shown) == shown
    assert shown.count("\n") == text.replace("\r\n", "\n").count("\n")
    # What is not a control character is kept as it was.
    assert visible("".join(ch for ch in text if not controls(ch))) == "".join(
        ch for ch in text.replace("\r\n", "\n") if not controls(ch)
    )


def test_visible_names_each_control() -> None:
    assert visible("\x00\x01\x1b\x1f\x7f\x80\x9b\x9f") == "^@^A^[^_^?\\x80\\x9b\\x9f"
    assert visible("a\r\nb\rc\td\n") == "a\nb^Mc\td\n"
