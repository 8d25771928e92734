"""What a remote may bring into the vault (`share/incoming.py`): the rules on names, modes
and git's rule files, as pure functions."""

from __future__ import annotations

import pytest

from kenomem.share.incoming import is_own, rules_differ, shown, why_refused

FILE, LINK, SUBMODULE, DELETED = "100644", "120000", "160000", "000000"


@pytest.mark.parametrize(
    "path",
    [
        "semantic/deploy.md",
        "semantic/2026/deploy.md",
        "episodic/2026-03/day.md",
        "archive/semantic/old.md",
        "buffer/2026-03-01.md",
        "working/.gitkeep",
        "foundation.md",
        "kenomem.toml",
        "README.md",
        "semantic/with\nnewline.md",
    ],
)
def test_the_vaults_own_files_may_arrive(path: str) -> None:
    assert why_refused(path, FILE) == ""
    assert why_refused(path, "100755") == ""
    assert why_refused(path, DELETED) == ""


@pytest.mark.parametrize(
    ("path", "why"),
    [
        (".kenomem/index/whoosh/_MAIN_999.toc", ".kenomem"),
        (".kenomem/lock", ".kenomem"),
        (".kenomem", ".kenomem"),
        ("semantic/.kenomem", ".kenomem"),
        ("semantic/.kenomem/x.md", ".kenomem"),
        (".KENOMEM/index/x", ".kenomem"),  # a case-insensitive file system
        (".Kenomem", ".kenomem"),
        ("\u200c.kenomem/x", ".kenomem"),  # HFS+ ignores zero-width characters
        (".kenomem\ufeff/x", ".kenomem"),
        (".kenomem. /lock", ".kenomem"),  # Windows drops trailing dots and spaces
        ("KENOME~1/lock", ".kenomem"),  # Windows' short name of .kenomem
        ("\uff0ekenomem/lock", ".kenomem"),  # a fullwidth dot, NFKC-normalised
        ("semantic/.hidden.md", "hidden"),
        ("semantic/.git/config", "hidden"),
        (".git/hooks/post-merge", "hidden"),
        ("GIT~1/hooks/post-merge", "hidden"),
        ("semantic/.gitignore", "hidden"),
        ("buffer/.gitattributes", "hidden"),
        (".gitmodules", "hidden"),
        ("notes.txt", "not one of the vault's own files"),
        ("scripts/run.sh", "not one of the vault's own files"),
        ("semantic/picture.png", "not one of the vault's own files"),
        ("Semantic/x.md", "not one of the vault's own files"),
        ("semantic", "not one of the vault's own files"),
        ("semantic/../x.md", "."),
        ("../x.md", "."),
        ("semantic//x.md", "."),
    ],
)
def test_what_is_refused_whatever_its_mode(path: str, why: str) -> None:
    assert why in why_refused(path, FILE)


@pytest.mark.parametrize(
    ("mode", "why"), [(LINK, "a symlink"), (SUBMODULE, "a submodule"), ("040000", "mode")]
)
def test_links_submodules_and_other_modes_are_refused_even_as_memory_files(
    mode: str, why: str
) -> None:
    assert why in why_refused("semantic/deploy.md", mode)
    assert why in why_refused("semantic/sub", mode)


def test_a_hidden_memory_file_is_not_the_vaults_own() -> None:
    assert not is_own("semantic/.deploy.md") and not is_own("semantic/.x/deploy.md")
    assert is_own("semantic/x/.gitkeep") and not is_own(".kenomem/x.md")


def test_git_rule_files_may_change_only_in_comments_and_blank_lines() -> None:
    ours = "# kenomem\n.kenomem/\n*.swp\n"
    assert not rules_differ(ours, "# derived\n\n.kenomem/\r\n*.swp")
    assert rules_differ(ours, ".kenomem/\n*.swp\n!.kenomem/\n")  # un-ignored
    assert rules_differ(ours, "*.swp\n")  # the line removed
    assert rules_differ(ours, "")  # the file deleted
    assert rules_differ(ours, " .kenomem/\n*.swp\n")  # a leading space is another name
    assert rules_differ(ours, "*.swp\n.kenomem/\n")  # order matters: the last match wins
    attributes = "semantic/**/*.md merge=kenomem\n"
    assert rules_differ(attributes, attributes + "semantic/**/*.md merge=union\n")
    assert rules_differ(attributes, attributes + "*.md working-tree-encoding=UTF-16\n")


def test_a_name_with_control_characters_is_quoted_in_a_message() -> None:
    assert shown("semantic/deploy.md") == "semantic/deploy.md"
    assert shown("semantic/a\nb.md") == "'semantic/a\\nb.md'"
    assert "\x1b" not in shown("semantic/\x1b[31mred.md")
