"""What `sync` would commit and leave, from `git status` alone, and which side of a
delete/change conflict it keeps: pure functions."""

from __future__ import annotations

from kenomem.share.resume import kept_sides
from kenomem.share.sync import changed_paths, is_own, make_plan


def test_only_the_vaults_own_files_are_committed() -> None:
    status = "\0".join(
        [
            " M semantic/a.md",
            "?? episodic/2026-03/b.md",
            "?? buffer/2026-03-01.md",
            " M kenomem.toml",
            "?? .kenomem/index/x",
            "?? notes.txt",
            "R  archive/semantic/c.md",
            "semantic/c.md",
            "?? semantic/picture.png",
            "",
        ]
    )
    assert changed_paths(status)[-3:] == ["archive/semantic/c.md", "semantic/c.md",
                                          "semantic/picture.png"]  # fmt: skip
    plan = make_plan(status, "main", "origin", "", [])
    assert plan.commit == [
        "archive/semantic/c.md",
        "buffer/2026-03-01.md",
        "episodic/2026-03/b.md",
        "kenomem.toml",
        "semantic/a.md",
        "semantic/c.md",
    ]
    assert plan.left == ["notes.txt", "semantic/picture.png"]
    assert not is_own(".kenomem/lock") and not is_own(".kenomem")


def test_the_changed_side_of_a_delete_conflict_is_kept() -> None:
    listed = "\0".join(
        [
            "100644 aaa 1\tsemantic/gone-here.md",
            "100644 bbb 3\tsemantic/gone-here.md",
            "100644 aaa 1\tsemantic/gone-there.md",
            "100644 ccc 2\tsemantic/gone-there.md",
            "100644 aaa 1\tfoundation.md",
            "100644 ddd 2\tfoundation.md",
            "100644 eee 3\tfoundation.md",
            "",
        ]
    )
    assert kept_sides(listed) == {
        "semantic/gone-here.md": "theirs",
        "semantic/gone-there.md": "ours",
    }


def test_a_push_refused_as_behind_is_told_from_other_refusals() -> None:
    from kenomem.share.sync import refused_as_behind

    assert refused_as_behind(
        " ! [rejected]        HEAD -> main (fetch first)\nerror: failed to push some refs"
    )
    assert refused_as_behind(" ! [rejected]        HEAD -> main (non-fast-forward)\n")
    assert refused_as_behind(
        "remote: error: cannot lock ref 'refs/heads/main': is at a0cf but expected b50b\n"
        " ! [remote rejected] HEAD -> main (failed to update ref)\n"
    )
    assert not refused_as_behind(" ! [remote rejected] HEAD -> main (pre-receive hook declined)")
    assert not refused_as_behind("fatal: Could not read from remote repository.")
