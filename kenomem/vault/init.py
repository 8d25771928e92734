"""`init`: a new vault, copied from the template; an existing file is never overwritten."""

import shutil
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import KenomemError
from kenomem.files.paths import BUFFER_DIR, MEMORY_DIRS, outside


class InitResult(NamedTuple):
    path: str
    created: list[str]
    kept: list[str]  # already there, left untouched
    git: list[str] = []  # noqa: RUF012 - with --git: what was set up for sharing through git


def template_dir() -> Path:
    """The template inside an installed wheel, else the repository's `vault-template/`."""
    here = Path(__file__).resolve().parent.parent  # the package: kenomem/
    for candidate in (here / "vault_template", here.parent / "vault-template"):
        if candidate.is_dir():
            return candidate
    raise KenomemError("the vault template is missing from this installation")


def init_vault(target: Path, *, git: bool = False) -> InitResult:
    if target.exists() and not target.is_dir():
        raise KenomemError(f"{target} exists and is not a folder")
    source = template_dir()
    created: list[str] = []
    kept: list[str] = []
    target.mkdir(parents=True, exist_ok=True)
    for folder in (*MEMORY_DIRS, BUFFER_DIR):
        (target / folder).mkdir(exist_ok=True)
    for item in sorted(source.rglob("*")):
        rel = item.relative_to(source)
        dest = target / rel
        if item.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
            continue
        # Kept as it is: what is there, and what would be written through a folder that is
        # a symlink out of the vault (never written through).
        if dest.exists() or dest.is_symlink() or outside(target, rel.as_posix()):
            kept.append(rel.as_posix())
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(dest, "xb") as out, open(item, "rb") as src:
                shutil.copyfileobj(src, out)
        except FileExistsError:
            kept.append(rel.as_posix())
            continue
        created.append(rel.as_posix())
    shared = _init_git(target) if git else []
    return InitResult(str(target), created, kept, shared)


def _init_git(target: Path) -> list[str]:
    """Make the vault a git repository of its own (if it is not one yet) with kenomem's
    merge driver set up (`share/setup.py`)."""
    from kenomem.share import setup
    from kenomem.share.git import git

    done: list[str] = []
    top = git(target, "rev-parse", "--show-toplevel", check=False)
    if top.code != 0 or Path(top.out.strip()).resolve() != target.resolve():
        git(target, "init", "-q")
        done.append("git init")
    return done + setup.install(target)
