"""kenomem.files.paths: slugs, session file names, labels, and paths that stay in the vault."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kenomem.errors import InvalidInput, VaultNotFound
from kenomem.files.paths import (
    ENV_VAULT,
    check_label,
    check_tag,
    inside,
    label_filename,
    require_vault,
    resolve_vault,
    slugify,
)

SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
NAME_MAX = 255
# `atomic.temp_name` writes `.<name>.md.<pid>.<6 hex>.tmp` before renaming it into place.
TEMP_DECORATION = len(".") + len(".md") + len(".4194304") + len(".abcdef") + len(".tmp")


# -- slugify ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("Prefers direct communication", "prefers-direct-communication"),
        ("Hello, World!", "hello-world"),
        ("  --Leading and trailing--  ", "leading-and-trailing"),
        ("Café crème brûlée", "cafe-creme-brulee"),
        ("Straße", "strae"),
        ("ﬁle ①", "file-1"),
        ("C++ / C#", "c-c"),
        ("v1.2.3", "v1-2-3"),
        ("", "memory"),
        ("   ", "memory"),
        ("日本語のメモ", "memory"),
        ("😀😀", "memory"),
        ("../../etc/passwd", "etc-passwd"),
    ],
)
def test_slugify(text: str, slug: str) -> None:
    assert slugify(text) == slug


def test_slugify_long_text_cut_at_a_word() -> None:
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi"
    slug = slugify(text)
    assert len(slug) <= 60
    assert slug == "alpha-beta-gamma-delta-epsilon-zeta-eta-theta-iota-kappa"
    assert slugify("x" * 100) == "x" * 60
    assert slugify("one two three", max_len=8) == "one-two"


@settings(max_examples=200, deadline=None)
@given(st.text(), st.integers(1, 80))
def test_slugify_is_always_a_safe_name(text: str, max_len: int) -> None:
    slug = slugify(text, max_len=max_len)
    assert SLUG.fullmatch(slug)
    assert len(slug) <= max(max_len, len("memory"))


# -- label_filename ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "name"),
    [
        ("session-1", "session-1"),
        ("chat_42.telegram", "chat_42.telegram"),
        ("a/b", "a%2Fb"),
        ("..", "%2E."),
        (".hidden", "%2Ehidden"),
        ("a.b", "a.b"),
        ("100%", "100%25"),
        ("with space", "with%20space"),
        ("é", "%C3%A9"),
        ("a\\b", "a%5Cb"),
    ],
)
def test_label_filename(label: str, name: str) -> None:
    assert label_filename(label) == name


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1))
def test_label_filename_is_never_a_path(label: str) -> None:
    name = label_filename(label)
    assert "/" not in name and "\\" not in name and "\x00" not in name
    assert not name.startswith(".")
    assert name not in ("", ".", "..")
    assert re.fullmatch(r"[A-Za-z0-9_.%-]+", name)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=20))
def test_label_filename_is_one_to_one(a: str, b: str) -> None:
    if a != b:
        assert label_filename(a) != label_filename(b)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="./%2Ee", min_size=1, max_size=5), unique=True, max_size=30))
def test_label_filename_distinct_for_confusable_labels(labels: list[str]) -> None:
    names = [label_filename(label) for label in labels]
    assert len(set(names)) == len(names)


@settings(max_examples=100, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=128))
@example("é" * 128)
@example(" " * 128)
@example("日" * 128)
def test_every_accepted_session_id_fits_a_file_name(label: str) -> None:
    # A session id that check_label accepts becomes working/<name>.md, written through a
    # temporary file next to it; both names must fit the file system's limit.
    try:
        check_label(label, "session id")
    except InvalidInput:
        return
    name = label_filename(label)
    assert len(name.encode("utf-8")) + TEMP_DECORATION <= NAME_MAX


# -- check_label ------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["s1", "chat:telegram-123", "Ünïcödé", "x" * 128, "a b"])
def test_check_label_accepts(value: str) -> None:
    assert check_label(value, "session id") == value


@pytest.mark.parametrize("value", ["", "x" * 129, "two\nlines", "tab\there", "nul\x00", "\x1b[31m"])
def test_check_label_refuses(value: str) -> None:
    with pytest.raises(InvalidInput) as info:
        check_label(value, "session id")
    assert "session id" in info.value.message


def test_check_label_max_len() -> None:
    assert check_label("x" * 64, "tag", max_len=64) == "x" * 64
    with pytest.raises(InvalidInput):
        check_label("x" * 65, "tag", max_len=64)


# -- inside -----------------------------------------------------------------------------


def test_inside_accepts_paths_in_the_vault(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / "semantic").mkdir(parents=True)
    assert inside(root, root / "semantic" / "a.md") == (root / "semantic" / "a.md").resolve()
    assert inside(root, root) == root.resolve()
    assert inside(root, root / "semantic" / ".." / "b.md") == (root / "b.md").resolve()


@pytest.mark.parametrize("rel", ["../outside.md", "semantic/../../outside.md", "/etc/passwd"])
def test_inside_refuses_escapes(tmp_path: Path, rel: str) -> None:
    root = tmp_path / "vault"
    (root / "semantic").mkdir(parents=True)
    with pytest.raises(InvalidInput):
        inside(root, root / rel)


def test_inside_refuses_a_sibling_with_a_common_prefix(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (tmp_path / "vault2").mkdir()
    with pytest.raises(InvalidInput):
        inside(root, tmp_path / "vault2" / "a.md")


def test_inside_follows_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / "semantic").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "semantic" / "link").symlink_to(outside)
    with pytest.raises(InvalidInput):
        inside(root, root / "semantic" / "link" / "a.md")
    (root / "semantic" / "local").symlink_to(root / "semantic")
    assert (
        inside(root, root / "semantic" / "local" / "a.md") == (root / "semantic" / "a.md").resolve()
    )


def test_inside_works_when_the_root_is_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "semantic").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    assert inside(link, link / "semantic" / "a.md") == (real / "semantic" / "a.md")


# -- the rest of the layout -------------------------------------------------------------


def test_resolve_vault_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAULT, str(tmp_path / "from-env"))
    assert resolve_vault(str(tmp_path / "flag")) == tmp_path / "flag"
    assert resolve_vault(None) == tmp_path / "from-env"
    monkeypatch.delenv(ENV_VAULT)
    assert resolve_vault(None) == Path(os.environ["HOME"]) / "kenomem"


def test_resolve_vault_relative_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_vault("v") == tmp_path / "v"


def test_require_vault(tmp_path: Path) -> None:
    assert require_vault(tmp_path) == tmp_path
    with pytest.raises(VaultNotFound) as info:
        require_vault(tmp_path / "missing")
    assert info.value.hint is not None and "kenomem init" in info.value.hint


def test_check_tag_is_a_short_label_without_a_comma() -> None:
    assert check_tag(" deploy ") == "deploy"
    assert check_tag("x" * 64) == "x" * 64
    for bad, why in (("a,b", "cannot hold a comma"), ("x" * 65, "1-64 chars"), ("", "1-64")):
        with pytest.raises(InvalidInput, match=why):
            check_tag(bad)
