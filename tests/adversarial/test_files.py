"""Hand-written files are hostile input too: random bytes, NULs, broken or aliased YAML, BOMs,
CRLF, huge lines, escape sequences, read-only files (docs/security.md).

Promises: every command still answers (a bad file is reported by path and skipped); a file
is never rewritten by a command that reads it; a touch or a reinforcement changes only the
lines of the keys kenomem owns, byte for byte; YAML aliases are refused by the one
frontmatter parser; what a memory holds never reaches a terminal as a raw escape sequence.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests import helpers
from tests.adversarial.hostile import (
    DOORS,
    ESCAPES,
    alias_bomb,
    clean_exit,
    fresh_vault,
    hand_written_file,
    no_raw_escapes,
    tree,
    words,
)
from tests.conftest import Cli
from tests.helpers import terminal_env

KETTLE = "---\nid: mem_20260101_090000_4e77\ntitle: Kettle\n---\n\nThe kettle is descaled.\n"


def run(cli: Cli, vault: Path, *args: str) -> tuple[int, str, str]:
    done = cli(*args, "--vault", str(vault))
    clean_exit(done.code, done.out, done.err, args)
    return done.code, done.out, done.err


@pytest.mark.slow
@DOORS
@given(data=hand_written_file(), folder=st.sampled_from(["semantic", "episodic", "archive"]))
def test_a_hand_written_file_never_breaks_a_command_nor_is_rewritten(
    cli: Cli, tmp_path: Path, data: bytes, folder: str
) -> None:
    vault = fresh_vault(tmp_path / "vaults")
    (vault / "semantic" / "kettle.md").write_text(KETTLE, encoding="utf-8")
    (vault / folder).mkdir(exist_ok=True)
    odd = vault / folder / "odd.md"
    odd.write_bytes(data)
    before = tree(vault)
    for args in (
        ("recall", "--json", "--no-touch", "--archive", "kettle"),
        ("list", "--json", "--archive", "--limit", "100"),
        ("stats", "--json"),
        ("reindex",),
        ("context", "kettle", "--no-touch"),
    ):
        code, out, err = run(cli, vault, *args)
        assert code == 0, (args, err)
    listed = json.loads(run(cli, vault, "list", "--json", "--archive", "--limit", "100")[1])
    ids = [m["id"] for m in listed["memories"]]
    assert "mem_20260101_090000_4e77" in ids
    for mem_id in ids:
        code, _out, err = run(cli, vault, "show", "--json", mem_id)
        assert code == 0, err
    code, out, _err = run(cli, vault, "doctor", "--json")
    findings = json.loads(out)["findings"]
    if len(ids) == 1:  # the odd file is not a memory: doctor says why
        assert f"{folder}/odd.md" in {f["path"] for f in findings}, findings
    assert tree(vault) == before


@DOORS
@given(
    levels=st.integers(1, 4),
    fan=st.integers(1, 6),
    where=st.sampled_from(["tags", "title", "other"]),
)
def test_yaml_aliases_are_refused_wherever_they_are(
    cli: Cli, tmp_path: Path, levels: int, fan: int, where: str
) -> None:
    vault = fresh_vault(tmp_path / "vaults")
    bomb = alias_bomb(levels, fan)
    if where != "tags":
        bomb = bomb.replace("\ntags: ", f"\n{where}: ")
    path = vault / "semantic" / "bomb.md"
    path.write_text(f"---\nid: mem_bomb\n{bomb}\n---\n\nlol lol\n", encoding="utf-8")
    code, out, err = run(cli, vault, "recall", "--json", "--no-touch", "lol")
    assert code == 0, err
    assert json.loads(out)["results"] == [], "a frontmatter with aliases was read"
    assert "semantic/bomb.md" in err
    findings = json.loads(run(cli, vault, "doctor", "--json")[1])["findings"]
    assert [f["kind"] for f in findings if f["path"] == "semantic/bomb.md"] == ["unreadable"]


@pytest.mark.slow
def test_a_billion_laughs_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """Nine levels of nine: expanded, 387 million strings. The process may use 1 GB."""
    vault = fresh_vault(tmp_path / "vaults")
    bomb = alias_bomb(9, 9)
    (vault / "semantic" / "bomb.md").write_text(f"---\nid: mem_bomb\n{bomb}\n---\n\nlol\n")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    env = {**os.environ, "KENOMEM_VAULT": str(vault), "NO_COLOR": "1", "KENOMEM_NO_SERVE": "1"}
    for args in (["show", "--json", "mem_bomb"], ["list", "--json"], ["doctor", "--json"]):
        done = subprocess.run(
            [sys.executable, "-m", "kenomem", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=limit,
            check=False,
        )
        clean_exit(done.returncode, done.stdout, done.stderr, args)
        assert "lol" * 3 not in done.stdout


# -- a touch and a reinforcement change only the keys kenomem owns ---------------------------


@st.composite
def human_frontmatter(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """(frontmatter lines a person wrote, the tags they hold) - valid YAML, varied style."""
    lines: list[str] = []
    tags = draw(st.lists(st.sampled_from(["travel", "project x", "home", "ops"]), unique=True))
    id_line = draw(
        st.sampled_from(
            [None, "id: mem_20260101_090000_abcd", "id: [a, b]", 'id: "mem_20260101_090000_ab12"']
        )
    )
    parts = {
        "id": [id_line] if id_line else [],
        "title": [f"title: {draw(words)}  # my own title"],
        "note": ["note: keep this   # a comment", "# a whole-line comment"],
        "tags": [],
        "seen": ["last_accessed: 2026-01-01T00:00:00Z"] if draw(st.booleans()) else [],
    }
    if tags and draw(st.booleans()):
        indent = draw(st.sampled_from(["  ", "    ", ""]))
        parts["tags"] = ["tags:   # topics"] + [
            f'{indent}- "{t}"  # why' if " " in t else f"{indent}- {t}" for t in tags
        ]
    elif tags:
        parts["tags"] = ["tags: [" + ", ".join(f'"{t}"' for t in tags) + "]  # flow"]
    for key in draw(st.permutations(list(parts))):
        lines += parts[key]
    return lines, tags


OWNED = ("last_accessed:", "access_count:", "reinforced:")


def human_lines(data: bytes, *, had_id: bool, tags: bool = False) -> list[bytes]:
    """The lines that are the person's: all but those of the keys kenomem owns (and, when
    it adds a tag, a flow list's one line, which is rewritten; a block list's lines stay)."""
    owned = OWNED if had_id else (*OWNED, "id:")
    if tags:
        owned = (*owned, "tags: [")
    return [
        line
        for line in data.split(b"\n")
        if not line.lstrip(b"\xef\xbb\xbf").startswith(tuple(k.encode() for k in owned))
    ]


def subsequence(small: list[bytes], big: list[bytes]) -> bool:
    it = iter(big)
    return all(any(line == other for other in it) for line in small)


@DOORS
@given(
    head=human_frontmatter(),
    newline=st.sampled_from(["\n", "\r\n"]),
    bom=st.booleans(),
    readonly=st.booleans(),
)
def test_touch_and_reinforce_change_only_the_keys_kenomem_owns(
    cli: Cli,
    tmp_path: Path,
    head: tuple[list[str], list[str]],
    newline: str,
    bom: bool,
    readonly: bool,
) -> None:
    lines, tags = head
    vault = fresh_vault(tmp_path / "vaults")
    body = "The zeppelin lands at the hangar on tuesday"
    text = newline.join(["---", *lines, "---", "", body, ""])
    path = vault / "semantic" / "zeppelin.md"
    path.write_bytes(("\ufeff" if bom else "").encode() + text.encode())
    if readonly:
        path.chmod(0o444)
    had_id = any(line.startswith("id:") for line in lines)
    original = path.read_bytes()

    code, out, err = run(cli, vault, "recall", "--json", "zeppelin hangar")
    assert code == 0, err
    (hit,) = json.loads(out)["results"]
    touched = path.read_bytes()
    if readonly:
        assert touched == original, "a touch rewrote a file its owner made read-only"
        return
    assert human_lines(touched, had_id=had_id) == human_lines(original, had_id=had_id)

    code, out, err = run(cli, vault, "remember", "--json", "--type=semantic", "--tag=fresh", body)
    assert code == 0, err
    assert json.loads(out)["action"] == "reinforced"
    after = path.read_bytes()
    mine = human_lines(original, had_id=had_id, tags=True)
    assert subsequence(mine, human_lines(after, had_id=had_id, tags=True)), (
        "a person's line was changed or dropped",
        original,
        after,
    )
    shown = json.loads(run(cli, vault, "show", "--json", hit["id"])[1])
    assert shown["tags"] == [*tags, "fresh"]


# -- what a memory holds never reaches a terminal raw --------------------------------------------


def on_a_terminal(vault: Path, *args: str) -> bytes:
    """What `kenomem args` writes to a pseudo-terminal (stdout and stderr)."""
    env = terminal_env(os.environ, KENOMEM_VAULT=str(vault), KENOMEM_NO_SERVE="1")
    code, out, _ = helpers.on_a_terminal([sys.executable, "-m", "kenomem", *args], env)
    assert code in (0, 1), out
    return out


@pytest.mark.slow
@pytest.mark.parametrize("escape", ESCAPES, ids=lambda e: repr(e))
def test_escape_sequences_in_a_memory_never_reach_a_terminal_raw(
    tmp_path: Path, escape: str
) -> None:
    vault = fresh_vault(tmp_path / "vaults")
    mem_id = "mem_20260101_090000_e5c0"
    (vault / "semantic" / "esc.md").write_text(
        # YAML's double quotes carry an escape sequence as \\u001b; the body holds it raw.
        f"---\nid: {mem_id}\ntitle: {json.dumps(f'Kettle {escape}title')}\n"
        f"tags: [kettle, {json.dumps(escape)}]\n---\n\nThe kettle {escape} is descaled.\n",
        encoding="utf-8",
    )
    (vault / "semantic" / f"kettle{escape}.md").write_text(f"# kettle {escape}\n\nkettle twice\n")
    for args in (
        ("show", mem_id),
        ("list",),
        ("recall", "--no-touch", "kettle"),
        ("recall", "--no-touch", "--explain", "kettle"),
        ("context", "--no-touch", "kettle"),
        ("doctor",),
    ):
        shown = on_a_terminal(vault, *args).decode("utf-8", "replace")
        no_raw_escapes(shown, args)
        assert not re.search("\x1b\\]0;", shown), args
        assert "kettle" in shown.lower() or args == ("doctor",), shown
