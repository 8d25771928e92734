"""Hostile input, shared by every door of the adversarial suite (`tests/adversarial/`).

One set of Hypothesis strategies (texts, labels, secrets, hand-written files) and one set of
checks (a clean exit, a vault tree unchanged, nothing outside the vault touched, no secret
stored), so that the command line, stdin, import, MCP and hand-written files are all held
to the same promises (docs/security.md).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Any, NamedTuple

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from tests.conftest import TEMPLATE

# Property tests that run the real commands: a fresh vault per example costs a few ms, an
# example a few tens; deadlines would only measure the machine. No shrinking: each step of it
# runs the commands again, minutes for one failure; the failing example is printed whole.
DOORS = settings(
    max_examples=25,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# -- characters -----------------------------------------------------------------------------

# What every door refuses in a text or a label: NUL and the C0 controls, ESC included, other
# than tab, line feed and carriage return (a CRLF text is text).
REFUSED_CONTROLS = tuple(chr(c) for c in range(0x20) if chr(c) not in "\t\n\r")
# Unusual but not refused by every door: kept or refused, never a crash, never raw output.
ODD_CHARACTERS = ("\x7f", "\x85", "\x9b", "\u2028", "\u2029", "\u202e", "\ufeff", "\ufffd")
# Sequences a terminal obeys: colours, clearing the screen, setting the window's title.
ESCAPES = ("\x1b[31;1m", "\x1b[2J", "\x1b]0;PWNED\x07", "\x9b31m")
YAML_SPECIALS = ("---", "...", "&a", "*a", "!!python/object", "{", "}", "[", "]", ": ", "#", "|")
SAFE_ALPHABET = st.characters(
    whitelist_categories=("Lu", "Ll", "Nd", "Zs"), whitelist_characters="-_.,;:!?()'\"/"
)


def refused_control(text: str) -> bool:
    return any(ch in text for ch in REFUSED_CONTROLS)


# Plain words: they match no secret pattern (no long mixed runs), and recall finds them.
words = st.lists(
    st.sampled_from(
        [
            *("ferry", "harbour", "kettle", "Lisbon", "tuesday", "deploy", "zeppelin", "alpaca"),
            *("the", "at", "nine", "blue", "42", "café", "naïve", "東京", "ünïcødé", "é"),
        ]
    ),
    min_size=1,
    max_size=12,
).map(" ".join)


def hostile_text(min_size: int = 1) -> st.SearchStrategy[str]:
    """Any text a caller could send: plain words, control characters, escapes, YAML and
    markdown syntax, long lines, CRLF."""
    pieces = st.one_of(
        words,
        st.text(min_size=1, max_size=30),
        st.sampled_from(REFUSED_CONTROLS + ODD_CHARACTERS + ESCAPES + YAML_SPECIALS),
        st.sampled_from(["\n", "\r\n", "\n## 14:30 Mallory @s1\n", "\n---\n", "\t"]),
        st.just("x" * 1000),
    )
    return st.lists(pieces, min_size=min_size, max_size=6).map("".join)


def clean_text() -> st.SearchStrategy[str]:
    """A text every door must accept and give back as it was (stripped of outer space)."""
    return (
        st.lists(
            st.one_of(words, st.text(SAFE_ALPHABET, min_size=1, max_size=40)),
            min_size=1,
            max_size=5,
        )
        .map(lambda parts: "\n".join(parts).strip())
        .filter(lambda t: len(t.split()) > 0)
    )


def hostile_label() -> st.SearchStrategy[str]:
    """Session ids, scopes, tags, speakers: paths, dots, percent signs, controls, lengths."""
    return st.one_of(
        st.sampled_from(
            [
                "..",
                ".",
                "../../outside",
                "/etc/passwd",
                "a/b",
                "%2e%2e%2f",
                ".hidden",
                "-dash",
                "--json",
                "con",
                "nul",
                "a b",
                "x" * 129,
                "é" * 120,
                "ok",
            ]
        ),
        st.text(min_size=1, max_size=20),
        st.text(st.sampled_from("./%\\\x00\x1b\n ab-"), min_size=1, max_size=12),
    )


def clean_label() -> st.SearchStrategy[str]:
    return st.text(
        st.characters(whitelist_categories=("Lu", "Ll", "Nd"), whitelist_characters="-_:."),
        min_size=1,
        max_size=30,
    ).filter(lambda s: not s.startswith("-"))


# -- secrets --------------------------------------------------------------------------------


class Secret(NamedTuple):
    kind: str
    text: str  # as a person would paste it
    needle: str  # what must never be found in the vault, whatever is done with the rest
    label: bool = False  # one token: it can be a session id, a scope or a tag


SECRETS: tuple[Secret, ...] = (
    Secret("GitHub token", *(["ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"] * 2), True),
    Secret("Anthropic key", *(["sk-ant-api03-Zq8mW2xV7nR4tY1uP6sK9dF3hJ5lB0cE"] * 2), True),
    Secret("AWS access key", *(["AKIAQX4ZTRW7PLMN3VBY"] * 2), True),
    Secret("Slack token", *(["xoxb-2048-93jfkQ8s7LmZx3bR"] * 2), True),
    Secret(
        "private key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5v\n"
        "-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5v",
    ),
    Secret("card", "4111 1111 1111 1111", "4111 1111 1111 1111"),
    # The detector's misses of issue 15:
    Secret("URL password, upper case", "Postgres://admin:Wq7pZ3xKv9@db.internal/app", "Wq7pZ3xKv9"),
    Secret("URL password, empty user", "redis://:Hx4mT8rQ2w@cache:6379", "Hx4mT8rQ2w"),
    Secret("URL password holding @", "postgres://app:Mz3@kP9vL2@db:5432/x", "kP9vL2"),
    Secret("card with dots", "4111.1111.1111.1111", "4111.1111.1111.1111"),
    Secret("bare AWS secret key", *(["Zx9/4kQ2bT7mN1pR8sV3wY6cF0hJ5gL2dA+eK7uW"] * 2), True),
    Secret(
        "bearer header",
        "Authorization: Bearer 9f8eZ7d6Qc5b4a3X9281706f5e4d3c2b1a0",
        "9f8eZ7d6Qc5b4a3X9281706f5e4d3c2b1a0",
    ),
    Secret("password variable", "DB_PASSWORD=Vb7nQ2xZ9kLm", "Vb7nQ2xZ9kLm"),
)
LABEL_SECRETS = tuple(s for s in SECRETS if s.label)

secrets = st.sampled_from(SECRETS)


@st.composite
def text_with_secret(draw: st.DrawFn) -> tuple[str, Secret]:
    """Plain words with a secret somewhere, on its own or on a line of its own."""
    secret = draw(secrets)
    before, after = draw(words), draw(words)
    glue = draw(st.sampled_from([" ", "\n", ": ", "\n\n"]))
    return f"{before}{glue}{secret.text}{glue}{after}", secret


def secret_found(root: Path, needles: list[str]) -> list[str]:
    """Where any needle is in the vault: a file's name or bytes, `.kenomem/` included."""
    hits = []
    raw = [n.encode() for n in needles]
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        hits += [f"{rel} (name)" for n in needles if n in rel]
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            hits += [rel for n in raw if n in data]
    return hits


# -- hand-written files -----------------------------------------------------------------------


def alias_bomb(levels: int, fan: int) -> str:
    """A frontmatter whose last key names fan**levels strings through aliases."""
    lines = ['a0: &a0 ["lol"]']
    for n in range(1, levels + 1):
        refs = ", ".join([f"*a{n - 1}"] * fan)
        lines.append(f"a{n}: &a{n} [{refs}]")
    lines.append(f"tags: *a{levels}")
    return "\n".join(lines)


scalar = st.one_of(
    words,
    st.text(max_size=20),
    st.sampled_from(["null", "~", "[a, b]", "{x: 1}", "'quoted'", '"dq"', "2026-02-30", "1e9"]),
    st.sampled_from(YAML_SPECIALS),
)


@st.composite
def frontmatter_lines(draw: st.DrawFn) -> list[str]:
    keys = ["id", "type", "title", "tags", "scope", "importance", "status", "created", "pinned"]
    lines = []
    for key in draw(st.lists(st.sampled_from([*keys, "note", "x-y"]), max_size=6)):
        shape = draw(st.sampled_from(["scalar", "flow", "block", "alias", "anchor"]))
        if shape == "scalar":
            lines.append(f"{key}: {draw(scalar)}")
        elif shape == "flow":
            items = draw(st.lists(scalar, max_size=3))
            lines.append(f"{key}: [{', '.join(items)}]")
        elif shape == "block":
            lines.append(f"{key}:")
            for item in draw(st.lists(scalar, min_size=1, max_size=3)):
                comment = draw(st.sampled_from(["", "  # a human's note"]))
                lines.append(f"  - {json.dumps(item, ensure_ascii=False)}{comment}")
        elif shape == "alias":
            lines.append(f"{key}: *base")
        else:
            lines.append(f"{key}: &base [{draw(scalar)}]")
    if draw(st.booleans()):
        lines.append(alias_bomb(draw(st.integers(1, 4)), draw(st.integers(1, 5))))
    return lines


@st.composite
def hand_written_file(draw: st.DrawFn) -> bytes:
    """What a person, an editor, a sync tool or an attacker may leave in a memory folder."""
    kind = draw(st.sampled_from(["frontmatter", "frontmatter", "plain", "bytes", "unclosed"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    body = draw(hostile_text())
    if kind == "plain":
        text = f"# {draw(words)}{newline}{newline}{body}{newline}"
    else:
        lines = draw(frontmatter_lines())
        close = [] if kind == "unclosed" else ["---"]
        text = newline.join(["---", *lines, *close, "", body, ""])
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    if draw(st.integers(0, 9)) == 0:
        data += b"\x00binary tail"
    return data


# -- vaults and checks ------------------------------------------------------------------------


def fresh_vault(base: Path) -> Path:
    """A new vault from the template in a new folder under `base` (one per example)."""
    base.mkdir(parents=True, exist_ok=True)
    n = len(list(base.iterdir()))
    target = base / f"v{n}"
    shutil.copytree(TEMPLATE, target)
    return target


def tree(root: Path, *, derived: bool = False) -> dict[str, Any]:
    """Every entry under `root`: a file's bytes and mode, a link's target, a folder.

    `.kenomem/` (derived, disposable) is left out unless `derived`."""
    found: dict[str, Any] = {}
    if not root.exists():
        return found
    for folder, dirs, names in os.walk(root):
        rel_folder = Path(folder).relative_to(root)
        if not derived and rel_folder.parts[:1] == (".kenomem",):
            continue
        for name in sorted([*dirs, *names]):
            path = Path(folder, name)
            rel = (rel_folder / name).as_posix()
            if not derived and rel == ".kenomem":
                continue
            st_ = path.lstat()
            if stat.S_ISLNK(st_.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st_.st_mode):
                found[rel] = ("dir",)
            elif stat.S_ISREG(st_.st_mode):
                found[rel] = ("file", stat.S_IMODE(st_.st_mode), path.read_bytes())
            else:
                found[rel] = ("other", stat.S_IFMT(st_.st_mode))
    return found


UNEXPECTED = re.compile(r"Traceback \(most recent call last\)|\bunexpected \w+(Error|Exception)\b")


def clean_exit(code: int, out: str, err: str, what: object = "") -> None:
    """Exit 0, 1 or 2; no traceback, no "unexpected" error; at most one error, said."""
    assert code in (0, 1, 2), (what, code, err[-2000:])
    assert not UNEXPECTED.search(err + out), (what, err[-2000:])
    assert err.count("error: ") <= 1, (what, err[-2000:])
    if code != 0:
        assert err.strip(), (what, code, "failed without a word")


def no_raw_escapes(text: str, what: object = "") -> None:
    """None of the escape sequences a memory may carry reaches the output as it is."""
    for seq in ESCAPES:
        assert seq not in text, (what, seq, text[:2000])


def strings_in(record: dict[str, Any]) -> list[str]:
    """Every string of a record or a tool's arguments, lists flattened (one level)."""
    out: list[str] = []
    for value in record.values():
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, str))
    return out
