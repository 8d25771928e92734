"""Two machines sharing a vault through a bare remote: real git, real kenomem processes,
git configured through the environment only (never the user's global config)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if shutil.which("git") is None:  # pragma: no cover - every CI image has git
    pytest.skip("git is not installed", allow_module_level=True)


def git_env(home: Path, name: str = "tester") -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME=name,
        GIT_AUTHOR_EMAIL=f"{name}@example.com",
        GIT_COMMITTER_NAME=name,
        GIT_COMMITTER_EMAIL=f"{name}@example.com",
        NO_COLOR="1",
    )
    env.pop("KENOMEM_VAULT", None)
    return env


def console_script() -> list[str]:
    found = shutil.which("kenomem", path=os.path.dirname(sys.executable))
    return [found] if found else [sys.executable, "-m", "kenomem"]


def kenomem(
    root: Path, env: dict[str, str], *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*console_script(), *args, *(["--vault", str(root)] if args[0] != "init" else [])],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    if check:
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def git(root: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def two_machines(tmp_path: Path) -> tuple[Path, Path, Path, dict[str, str]]:
    """A bare remote and two clones of one vault, the driver set up on both; (remote, a,
    b, env)."""
    env = git_env(tmp_path)
    remote = tmp_path / "remote.git"
    git(tmp_path, env, "init", "-q", "--bare", "-b", "main", str(remote))
    a, b = tmp_path / "a", tmp_path / "b"
    kenomem(a, env, "init", str(a), "--git")
    git(a, env, "checkout", "-q", "-b", "main")
    git(a, env, "remote", "add", "origin", str(remote))
    kenomem(a, env, "sync")
    git(tmp_path, env, "clone", "-q", str(remote), str(b))
    kenomem(b, env, "sync", "--setup")
    return remote, a, b, env


MARKERS = re.compile(r"^(<<<<<<<|>>>>>>>|=======)( |$)", re.MULTILINE)


def vault_files(root: Path) -> dict[str, str]:
    found = {}
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith((".git/", ".kenomem/")):
            continue
        found[rel] = path.read_text(encoding="utf-8")
    return found


def copy_world(source: Path, dest: Path) -> tuple[Path, Path, Path]:
    """A copy of the remote and the two clones `two_machines` made under `source`, each
    clone's `origin` pointed at the copy of the remote (their `.kenomem/` left behind:
    each command rebuilds it); (remote, a, b)."""
    env = git_env(dest)
    ignore = shutil.ignore_patterns(".kenomem")
    for name in ("remote.git", "a", "b"):
        shutil.copytree(source / name, dest / name, symlinks=True, ignore=ignore)
    for name in ("a", "b"):
        git(dest / name, env, "remote", "set-url", "origin", str(dest / "remote.git"))
    return dest / "remote.git", dest / "a", dest / "b"


def crafted_commit(
    root: Path, env: dict[str, str], entries: list[tuple[str, bytes, str]], message: str
) -> str:
    """A commit on top of HEAD holding `entries` (mode, content, path), made with git's
    plumbing in an index of its own: any mode (a symlink's content is its target, a
    submodule's a commit's id), any name, the work tree untouched. Its id."""
    index = root / ".git" / "crafted.index"
    index.unlink(missing_ok=True)
    crafted = {**env, "GIT_INDEX_FILE": str(index)}
    git(root, crafted, "read-tree", "HEAD")
    for mode, content, path in entries:
        if mode == "160000":
            obj = content.decode()
        else:
            obj = subprocess.run(
                ["git", "hash-object", "-w", "--stdin"], cwd=root, env=env, input=content,
                capture_output=True, check=True,
            ).stdout.decode().strip()  # fmt: skip
        git(root, crafted, "update-index", "--add", "--cacheinfo", f"{mode},{obj},{path}")
    tree = git(root, crafted, "write-tree").strip()
    index.unlink()
    return git(root, env, "commit-tree", tree, "-p", "HEAD", "-m", message).strip()


def tree_state(root: Path, env: dict[str, str]) -> tuple[str, str, dict[str, str]]:
    """HEAD, `git status`, and the work tree (`work_tree`)."""
    head = git(root, env, "rev-parse", "HEAD")
    status = git(root, env, "status", "--porcelain", "--untracked-files=all")
    return head, status, work_tree(root)


def work_tree(root: Path) -> dict[str, str]:
    """Every file of the work tree but `.git/` and `.kenomem/` (each command makes it):
    its kind and a digest of its content (a link: its target)."""
    import hashlib

    files: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel in (".git", ".kenomem") or rel.startswith((".git/", ".kenomem/")):
            continue
        if path.is_symlink():
            files[rel] = "link " + os.readlink(path)
        elif path.is_dir():
            files[rel] = "dir"
        else:
            files[rel] = "file " + hashlib.sha256(path.read_bytes()).hexdigest()
    return files
