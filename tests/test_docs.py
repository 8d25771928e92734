"""The documentation cannot drift from the code: the generated pages are current, the
settings template and `config.py` agree, links and the modules named resolve, and the
README stays a README."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from kenomem.config import Settings
from tests.conftest import REPO, TEMPLATE

README_MAX_BYTES = 16 * 1024
PAGES = sorted([REPO / "README.md", REPO / "CONTRIBUTING.md", *(REPO / "docs").glob("*.md")])


def test_the_generated_pages_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_docs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_readme_is_at_most_16_kb() -> None:
    size = (REPO / "README.md").stat().st_size
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes: move the detail to docs/"


def test_the_readme_keeps_the_two_newcomer_commands() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert "make demo   # installs into .venv" in text
    assert "make test   # installs into .venv with the test tools" in text


# -- the settings: config.py and the template that `init` copies --------------------------


def template_settings() -> dict[str, dict[str, object]]:
    """Each section of vault-template/kenomem.toml with the keys it lists, commented out."""
    sections: dict[str, dict[str, object]] = {}
    section = ""
    for line in (TEMPLATE / "kenomem.toml").read_text(encoding="utf-8").splitlines():
        if re.fullmatch(r"\[\w+\]", line.strip()):
            section = line.strip()[1:-1]
            sections[section] = {}
            continue
        candidate = line.removeprefix("# ")
        if not section or not re.match(r"\w+ = ", candidate):
            continue
        try:
            sections[section].update(tomllib.loads(candidate))
        except tomllib.TOMLDecodeError:
            continue  # prose with an `=` in it (the score's formula)
    return sections


def config_settings() -> dict[str, dict[str, object]]:
    return {name: record._asdict() for name, record in Settings().sections().items()}


def test_the_template_lists_every_setting_with_its_default() -> None:
    listed, known = template_settings(), config_settings()
    assert listed.keys() == known.keys()
    for section, keys in known.items():
        assert listed[section].keys() == keys.keys(), section
        for key, value in keys.items():
            shown = listed[section][key]
            assert (shown, type(shown)) == (value, type(value)), f"{section}.{key}"


# -- links, anchors and the modules the pages name -----------------------------------------

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`\n]+)`")


def prose(path: Path) -> str:
    """The page without its fenced code blocks."""
    return _FENCE.sub("", path.read_text(encoding="utf-8"))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for line in prose(path).splitlines():
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            name = slug(heading.group(1))
            n, unique = 0, name
            while unique in found:
                n += 1
                unique = f"{name}-{n}"
            found.add(unique)
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    text = _CODE.sub("", prose(page))
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        file_part, _, anchor = target.partition("#")
        linked = (page.parent / file_part).resolve() if file_part else page
        assert linked.exists(), f"{page.name}: {target} does not exist"
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(linked), f"{page.name}: no heading #{anchor} in {linked.name}"


_PATH = re.compile(r"(?<![\w./-])kenomem/[\w./-]*")
_DOTTED = re.compile(r"(?<![\w./-])kenomem(?:\.\w+)+(?::\w+)?")


def module_names_resolve(name: str) -> bool:
    """`kenomem.cli.entry:main` or `kenomem.api.Vault`: a module, then at most two names
    that its source defines (a class and its method)."""
    module, _, attribute = name.partition(":")
    parts = module.split(".")
    where = REPO / parts[0]
    n = 1
    while n < len(parts) and ((where / parts[n]).is_dir() or (where / f"{parts[n]}.py").exists()):
        where = where / parts[n]
        n += 1
    rest = [*parts[n:], *filter(None, [attribute])]
    if n == 1 or len(rest) > 2:
        return False
    source = where / "__init__.py" if where.is_dir() else where.with_suffix(".py")
    text = source.read_text(encoding="utf-8")
    return all(re.search(rf"\b(def|class) {name}\b|^{name}\b", text, re.M) for name in rest)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_the_modules_a_page_names_exist(page: Path) -> None:
    for span in _CODE.findall(page.read_text(encoding="utf-8")):
        for path in _PATH.findall(span):
            assert (REPO / path.rstrip(".")).exists(), f"{page.name}: {path} does not exist"
        for name in _DOTTED.findall(span):
            if name == "kenomem.toml":
                continue
            assert module_names_resolve(name), f"{page.name}: {name} names no module"


# -- docs/compared.md: what it says of kenomem comes from the code ------------------------


def gen_docs() -> Any:
    """scripts/gen_docs.py, loaded from its file."""
    spec = importlib.util.spec_from_file_location("_gen_docs", REPO / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lacks(page: str, peer: str) -> str:
    """The line of `page` that says what `peer` has and kenomem lacks."""
    return next(line for line in page.splitlines() if f"{peer} has what kenomem lacks" in line)


def test_the_comparison_says_what_the_code_has() -> None:
    generate = gen_docs()
    facts = generate.kenomem_facts()
    page = (REPO / "docs" / "compared.md").read_text(encoding="utf-8")
    # Recall by meaning is kenomem's as well: said so, not listed as what it lacks.
    assert facts.providers and "Both have search by meaning" in page
    for peer in ("basic-memory", "mem0"):
        assert "meaning" not in lacks(page, peer)
    # The lists follow the facts: without a provider, meaning moves to what it lacks;
    # with an `export` command, exports leave jrnl's.
    words_only = generate.render_compared(facts._replace(providers=()))
    assert "search by meaning (vector embeddings, hybrid with full text) (kenomem matches" in (
        lacks(words_only, "basic-memory")
    )
    assert "Both have search by meaning" not in words_only
    exporting = generate.render_compared(facts._replace(commands=facts.commands | {"export"}))
    assert "exports" in lacks(page, "jrnl") and "exports" not in lacks(exporting, "jrnl")
    # Every tool and command the page names exists.
    for name in re.findall(r"`kenomem ([a-z]+)`", page):
        assert name in facts.commands, name
    assert set(re.findall(r"`(\w+)`", page.split("an MCP server (")[1].split(")")[0])) <= set(
        facts.tools
    )
